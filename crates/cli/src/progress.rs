//! Progress bars and one-line summaries on stderr, so that long commands are not silent.
//!
//! Bars are drawn only when stderr is a terminal and `--quiet` is off: piped or logged stderr
//! (tests, batch scripts) never receives cursor escapes. Summaries are plain lines, printed
//! unless `--quiet`, whatever stderr is, because a log of a batch run wants them most.
//!
//! Hooks for the library callbacks:
//! - frame pipelines (`stem reduce`, `stem ssb`): `&mut progress::frames("ssb")` as the
//!   `progress: &mut dyn FnMut(u64, u64)` argument; the bar clears when the closure is dropped;
//! - fits: [`fit`] as the `progress: &mut dyn FnMut(&FitProgress)` of DE, LM and MCMC;
//! - counted items (Bloch cases): [`counter`].

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use scatterlab_refl::fit::FitProgress;

/// `--quiet`: set once from the command line before any command runs.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Records the global `--quiet` flag.
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Whether `--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// Whether bars are drawn at all: only for a person watching a terminal.
fn drawing() -> bool {
    !quiet() && std::io::stderr().is_terminal()
}

/// Prints one summary line on stderr unless `--quiet`.
pub fn summary(line: &str) {
    if !quiet() {
        eprintln!("{line}");
    }
}

/// One progress bar on stderr (hidden when not [`drawing`]); cleared when dropped, so a failing
/// command's error message is not printed behind a half-drawn bar.
pub struct Bar {
    bar: ProgressBar,
    label: String,
    /// Passes over the data so far (frame pipelines restart their count on each pass).
    pass: u32,
    /// Last count seen, to notice a new pass.
    last: u64,
    /// The fit method of the current bar (`""` before the first report).
    method: &'static str,
}

impl Bar {
    /// A bar labelled `label`, counting `unit` (e.g. "frames").
    pub fn new(label: &str, unit: &str) -> Self {
        let bar = if drawing() { ProgressBar::new(0) } else { ProgressBar::hidden() };
        // The template is ours and fixed: a bad one is a programming error, caught by any test run
        // on a terminal; the default style is a usable fallback rather than a panic.
        let unit = if unit.is_empty() { String::new() } else { format!(" {unit}") };
        let template = format!("{{prefix}} [{{bar:30}}] {{pos}}/{{len}}{unit}{{msg}} ({{elapsed}}, eta {{eta}})");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(label.to_owned());
        Self { bar, label: label.to_owned(), pass: 1, last: 0, method: "" }
    }

    /// `done` of `total` items; a count below the previous one starts the next pass over the data
    /// (the reduce and SSB pipelines read the frames once for the mean pattern, then again).
    pub fn frames(&mut self, done: u64, total: u64) {
        if done < self.last {
            self.pass += 1;
            self.bar.set_prefix(format!("{} (pass {})", self.label, self.pass));
            self.bar.reset();
        }
        self.last = done;
        self.bar.set_length(total);
        self.bar.set_position(done);
    }

    /// A fit's report: one bar per method (DE generations, LM iterations, MCMC steps), with the
    /// best χ² and the evaluations so far.
    pub fn fit(&mut self, p: &FitProgress) {
        if p.method != self.method {
            self.method = p.method;
            self.bar.set_prefix(format!("{} {}", self.label, p.method.to_uppercase()));
            self.bar.reset();
        }
        self.bar.set_length(p.max_iterations as u64);
        self.bar.set_position(p.iteration as u64);
        self.bar.set_message(format!(" χ² {:.5e}, {} evaluations", p.best_chi2, p.evaluations));
    }

    /// A spinner for work with no count to report (e.g. the GPU path of a whole cases file).
    pub fn spin(&self, message: &str) {
        if let Ok(style) = ProgressStyle::with_template("{prefix} {spinner} {msg} ({elapsed})") {
            self.bar.set_style(style);
        }
        self.bar.set_message(message.to_owned());
        self.bar.enable_steady_tick(Duration::from_millis(120));
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}

/// A `(done, total)` frame callback with its own bar, for `reduce` and `ssb`.
pub fn frames(label: &str) -> impl FnMut(u64, u64) {
    let mut bar = Bar::new(label, "frames");
    move |done, total| bar.frames(done, total)
}

/// A fit-progress callback with its own bar, for DE, LM and the ensemble sampler in turn.
pub fn fit(label: &str) -> impl FnMut(&FitProgress) {
    let mut bar = Bar::new(label, "");
    move |p| bar.fit(p)
}

/// A `(done, total)` callback counting `unit` (Bloch cases) with its own bar.
pub fn counter(label: &str, unit: &str) -> impl FnMut(usize, usize) {
    let mut bar = Bar::new(label, unit);
    move |done, total| bar.frames(done as u64, total as u64)
}

/// Wall time for a summary, in seconds (one unit, so logs compare at a glance).
pub fn seconds(s: f64) -> String {
    format!("{s:.3} s")
}
