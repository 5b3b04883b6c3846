//! Shared helpers of the Fit tab tests: fixtures, the app harness, typing, loading, running.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui_kittest::kittest::{NodeT as _, Queryable as _};
use egui_kittest::Harness;
use scatterlab_app::{ReflTab, ScatterlabApp};

/// `shared/fixtures` beside the repository (or `$SCATTERLAB_FIXTURES`): the test kit's rule.
pub fn fixtures_dir() -> PathBuf {
    scatterlab_testkit::fixtures_dir()
}

/// The fixture fit task's path.
pub fn fit_task_path() -> PathBuf {
    fixtures_dir().join("refl/fit_task.json")
}

/// The app, tall enough that the whole Fit tab is on screen (clicks need visible widgets);
/// with kittest's wgpu render state (lavapipe here) when `gpu`.
pub fn app(gpu: bool) -> Harness<'static, ScatterlabApp> {
    let builder = Harness::builder().with_size(egui::vec2(1400.0, 2200.0));
    let builder = if gpu { builder.wgpu() } else { builder };
    builder.build_eframe(|cc| ScatterlabApp::new(cc))
}

/// A fresh temporary folder for one test.
pub fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("scatterlab-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Types `text` into the widget named `label` (a click selects its text first), then Enter.
pub fn type_into(harness: &mut Harness<'_, ScatterlabApp>, label: &str, text: &str) {
    harness.get_by_label(label).click();
    harness.step();
    harness.get_by_label(label).type_text(text);
    harness.key_press(egui::Key::Enter);
    harness.step();
    harness.step();
}

/// Opens the Fit tab and loads `path` through the path field and the Load button.
pub fn load(harness: &mut Harness<'_, ScatterlabApp>, path: &std::path::Path) {
    if harness.state().refl.tab != ReflTab::Fit {
        harness.get_by_label("Fit").click();
        harness.step();
        harness.step();
    }
    harness.get_by_label("file path").click();
    harness.step();
    harness.get_by_label("file path").type_text(path.to_str().expect("UTF-8 path"));
    harness.step();
    harness.get_by_label("Load").click();
    harness.step();
    harness.step();
}

/// The progress line on display, if any (a label's text is its accesskit value).
pub fn progress_line(harness: &Harness<'_, ScatterlabApp>) -> Option<String> {
    let node = harness.query_by_label_contains("best χ²")?;
    let node = node.accesskit_node();
    node.label().or_else(|| node.value())
}

/// Steps until the fit is done; returns every progress line seen while it ran.
pub fn run_to_end(harness: &mut Harness<'_, ScatterlabApp>, timeout: Duration) -> Vec<String> {
    let deadline = Instant::now() + timeout;
    let mut seen = Vec::new();
    harness.step();
    while harness.state().refl.fit.is_running() {
        assert!(Instant::now() < deadline, "fit not done within {timeout:?}");
        seen.extend(progress_line(harness));
        std::thread::sleep(Duration::from_millis(5));
        harness.step();
    }
    harness.step();
    seen
}
