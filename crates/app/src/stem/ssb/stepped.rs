//! The aberration fit in slices, for the browser (no threads in wasm32 here): the same search as
//! [`fit_aberrations`](scatterlab_stem::ssb::fit_aberrations) — grid, coarse Nelder–Mead from
//! the best distinct grid points, full polish — run a few milliseconds per UI frame.
//!
//! Each slice replays the search from the start with every loss computed so far remembered, and
//! computes new losses until its time is up, then stops ([`Stop::Pause`]); the next slice replays
//! to that point at the cost of table look-ups. The search itself is deterministic, so slices
//! change nothing: the result equals `fit_aberrations` with one thread exactly (the native test
//! `stepped_fit_equals_the_library` holds the two together). Losses are always taken one trial
//! per `PhaseVariance::losses` call, which is what the library's batches compute per trial.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use scatterlab_core::CancelToken;
use scatterlab_stem::reduce::ReduceError;
use scatterlab_stem::ssb::{aberrations_of, BfStack, FitLevel, FitOptions, FitReport, FitStart, LossPoint, Optics, PhaseVariance, Trial};
use web_time::Instant;

use scatterlab_stem::ssb::simplex::nelder_mead;
use scatterlab_stem::ssb::{distinct_seeds, CANDIDATES, COARSE_EVALS};

/// Why a replay stopped short.
#[derive(Debug)]
pub enum Stop {
    /// Out of time for this slice: call [`SteppedFit::step`] again.
    Pause,
    /// A real error (bad options, cancelled).
    Failed(ReduceError),
}

impl From<ReduceError> for Stop {
    fn from(e: ReduceError) -> Self {
        Stop::Failed(e)
    }
}

/// An even crop of `n` keeping `|ν| < f` (Å⁻¹) for step `step`, at least 16 (or `n`): the
/// library's level grids.
fn crop(n: usize, f: f64, step: f64) -> usize {
    let m = (2.0 * f * n as f64 * step).ceil().max(0.0) as usize;
    (m + m % 2).clamp(16.min(n), n)
}

fn trial_of(ab: &scatterlab_stem::ssb::Aberrations, rotation_deg: f64) -> Trial {
    let (s, c) = (2.0 * ab.phi12_rad).sin_cos();
    Trial { c10_nm: ab.c10_nm, c12a_nm: ab.c12_nm * c, c12b_nm: ab.c12_nm * s, rotation_deg }
}

/// The library's nudge off the exactly-unaberrated point, nm (fit.rs `ZERO_NUDGE_NM`, not
/// re-exported; the default start is that point, so the twin test covers it).
const ZERO_NUDGE_NM: f64 = 1e-3;

/// The trial the library evaluates for `t` (the unaberrated point nudged).
fn regular(t: &Trial) -> Trial {
    if t.c10_nm == 0.0 && t.c12a_nm == 0.0 && t.c12b_nm == 0.0 {
        Trial { c10_nm: ZERO_NUDGE_NM, ..*t }
    } else {
        *t
    }
}

fn bits(t: &Trial) -> [u64; 4] {
    [t.c10_nm.to_bits(), t.c12a_nm.to_bits(), t.c12b_nm.to_bits(), t.rotation_deg.to_bits()]
}

/// A fit run in slices.
pub struct SteppedFit {
    stack: Arc<BfStack>,
    optics: Optics,
    step_a: f64,
    start: FitStart,
    options: FitOptions,
    /// The grid, coarse and full losses, built one per slice.
    levels: Vec<PhaseVariance>,
    memo: HashMap<(usize, [u64; 4]), f64>,
    /// Evaluations known after the last slice, and planned.
    progress: (u64, u64),
}

/// One replay's bookkeeping.
struct Replay<'a> {
    fit: &'a mut SteppedFit,
    deadline: Instant,
    computed: bool,
    curve: Vec<LossPoint>,
    total: u64,
    cancel: &'a CancelToken,
}

impl Replay<'_> {
    fn batch(&mut self, level: usize, name: &'static str, trials: &[Trial]) -> Result<Vec<f64>, Stop> {
        let mut out = Vec::with_capacity(trials.len());
        for t in trials.iter().map(regular) {
            let key = (level, bits(&t));
            let loss = match self.fit.memo.get(&key) {
                Some(&l) => l,
                None => {
                    // At least one new loss per slice, however short the slice.
                    if self.computed && Instant::now() >= self.deadline {
                        return Err(Stop::Pause);
                    }
                    let pv = self.fit.levels.get(level).ok_or(Stop::Pause)?;
                    let l = pv.losses(std::slice::from_ref(&t), self.cancel)?.first().copied().unwrap_or(f64::NAN);
                    self.computed = true;
                    self.fit.memo.insert(key, l);
                    l
                }
            };
            let ab = aberrations_of(&t);
            let evaluation = self.curve.len() + 1;
            self.curve.push(LossPoint { evaluation, level: name, loss, c10_nm: ab.c10_nm, c12_nm: ab.c12_nm, phi12_rad: ab.phi12_rad, rotation_deg: t.rotation_deg });
            out.push(loss);
        }
        self.total = self.total.max(self.curve.len() as u64);
        self.fit.progress = (self.fit.progress.0.max(self.curve.len() as u64), self.total);
        Ok(out)
    }

    fn polish(&mut self, level: usize, name: &'static str, start: &Trial, step: &[f64], max_evals: usize, fit_rotation: bool) -> Result<(Trial, f64), Stop> {
        let d = if fit_rotation { 4 } else { 3 };
        let to_trial = |x: &[f64]| Trial { c10_nm: x[0], c12a_nm: x[1], c12b_nm: x[2], rotation_deg: if fit_rotation { x[3] } else { start.rotation_deg } };
        let x0 = [start.c10_nm, start.c12a_nm, start.c12b_nm, start.rotation_deg];
        let mut f = |x: &[f64]| -> Result<f64, Stop> { Ok(self.batch(level, name, &[to_trial(x)])?[0]) };
        let (x, v) = nelder_mead(&x0[..d], &step[..d], 0.05, max_evals, &mut f)?;
        Ok((regular(&to_trial(&x)), v))
    }
}

impl SteppedFit {
    /// A fit of `stack` from `start` (the library's checks come with the first slice).
    pub fn new(stack: Arc<BfStack>, optics: Optics, step_a: f64, start: FitStart, options: FitOptions) -> Self {
        Self { stack, optics, step_a, start, options, levels: Vec::new(), memo: HashMap::new(), progress: (0, 0) }
    }

    /// `(evaluations done, planned)` after the last slice.
    pub fn progress(&self) -> (u64, u64) {
        self.progress
    }

    /// One slice of about `budget`: `Err(Stop::Pause)` until the fit is done.
    pub fn step(&mut self, budget: Duration, cancel: &CancelToken) -> Result<FitReport, Stop> {
        if cancel.is_cancelled() {
            return Err(Stop::Failed(ReduceError::new("SSB fit", "cancelled")));
        }
        let deadline = Instant::now() + budget;
        if self.levels.len() < 3 {
            let (rows, cols, nb, ka, s) = (self.stack.scan[0], self.stack.scan[1], self.stack.pixels.len(), self.optics.k_alpha_inv_a, self.step_a);
            if self.levels.is_empty() {
                self.check()?;
            }
            let level = match self.levels.len() {
                0 => PhaseVariance::new(&self.stack, &self.optics, s, nb.div_ceil(32).max(1), [crop(rows, 0.5 * ka, s), crop(cols, 0.5 * ka, s)], 1, cancel)?,
                1 => PhaseVariance::new(&self.stack, &self.optics, s, nb.div_ceil(128).max(1), [crop(rows, ka, s), crop(cols, ka, s)], 1, cancel)?,
                _ => PhaseVariance::new(&self.stack, &self.optics, s, 1, [rows, cols], 1, cancel)?,
            };
            self.levels.push(level);
            return Err(Stop::Pause);
        }
        let mut replay = Replay { fit: self, deadline, computed: false, curve: Vec::new(), total: 0, cancel };
        search(&mut replay)
    }

    /// The library's checks of the options and the start (the same messages).
    fn check(&self) -> Result<(), Stop> {
        let o = &self.options;
        let [lo, hi] = o.c10_range_nm;
        let bad = |name: &str, what: String| Err(Stop::Failed(ReduceError::new(name, what)));
        if !(lo.is_finite() && hi.is_finite()) || lo >= hi {
            return bad("C10 range", format!("empty search range [{lo}, {hi}] nm"));
        }
        if !(o.c12_max_nm.is_finite() && o.c12_max_nm > 0.0) {
            return bad("C12 range", format!("empty search range [0, {}] nm", o.c12_max_nm));
        }
        if o.max_full_evaluations == 0 {
            return bad("fit evaluations", "at least one evaluation on the full data is needed".into());
        }
        let a = &self.start.aberrations;
        for (v, name) in [(a.c10_nm, "C10"), (a.c12_nm, "C12"), (a.phi12_rad, "phi12"), (self.start.rotation_deg, "scan rotation")] {
            if !v.is_finite() {
                return bad(name, format!("the start must be a finite number (got {v})"));
            }
        }
        Ok(())
    }
}

/// The library's search (fit.rs `fit_aberrations`), replayed against the remembered losses.
fn search(r: &mut Replay<'_>) -> Result<FitReport, Stop> {
    let (o, rotation_deg) = (r.fit.options.clone(), r.fit.start.rotation_deg);
    let [lo, hi] = o.c10_range_nm;
    let ka = r.fit.optics.k_alpha_inv_a;
    let spacing = (0.08 / (r.fit.optics.wavelength_a * ka * ka)).clamp(0.25, 10.0);
    let start_trial = trial_of(&r.fit.start.aberrations, rotation_deg);
    let mut trials = vec![start_trial];
    if o.global {
        let (n10, na) = (((hi - lo) / spacing).ceil() + 1.0, (o.c12_max_nm / spacing).ceil());
        if n10 > 200.0 {
            return Err(Stop::Failed(ReduceError::new("C10 range", format!("[{lo}, {hi}] nm needs {n10} grid steps of {spacing:.3} nm (at most 200)"))));
        }
        if na > 25.0 {
            return Err(Stop::Failed(ReduceError::new("C12 range", format!("C12 up to {} nm needs {na} grid steps of {spacing:.3} nm (at most 25)", o.c12_max_nm))));
        }
        let (n10, na) = (n10 as usize, na as isize);
        for c10 in (0..n10).map(|i| lo + (hi - lo) * i as f64 / (n10 - 1) as f64) {
            for i in -na..=na {
                for j in -na..=na {
                    let (a, b) = (i as f64 * spacing, j as f64 * spacing);
                    if a.hypot(b) <= o.c12_max_nm + 0.5 * spacing {
                        trials.push(Trial { c10_nm: c10, c12a_nm: a, c12b_nm: b, rotation_deg });
                    }
                }
            }
        }
    }
    r.total = (trials.len() + CANDIDATES * COARSE_EVALS + o.max_full_evaluations) as u64;
    let grid_losses = r.batch(0, "grid", &trials)?;
    let grid_evals = r.curve.len();
    let seeds = distinct_seeds(&trials, &grid_losses, spacing, if o.global { CANDIDATES } else { 1 });
    let step = [0.5 * spacing, 0.5 * spacing, 0.5 * spacing, 1.0];
    let mut best: Option<(Trial, f64)> = None;
    for s in &seeds {
        let p = r.polish(1, "coarse", s, &step, COARSE_EVALS, o.fit_rotation)?;
        if best.is_none_or(|b| p.1 < b.1) {
            best = Some(p);
        }
    }
    let coarse_evals = r.curve.len() - grid_evals;
    let from = best.map_or(start_trial, |b| b.0);
    let fine = [0.1 * spacing, 0.1 * spacing, 0.1 * spacing, 0.25];
    let (t, loss) = r.polish(2, "full", &from, &fine, o.max_full_evaluations, o.fit_rotation)?;
    let full_evals = r.curve.len() - grid_evals - coarse_evals;
    let lv = |pv: &PhaseVariance, evaluations| FitLevel { grid: pv.grid(), bf_pixels: pv.pixels(), evaluations };
    let levels = &r.fit.levels;
    Ok(FitReport {
        aberrations: aberrations_of(&t),
        rotation_deg: t.rotation_deg,
        loss,
        evaluations: r.curve.len(),
        levels: [lv(&levels[0], grid_evals), lv(&levels[1], coarse_evals), lv(&levels[2], full_evals)],
        grid_step_nm: spacing,
        threads: 1,
        options: o,
        loss_curve: std::mem::take(&mut r.curve),
    })
}
