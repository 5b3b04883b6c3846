//! Shared helpers of the 4D-STEM workspace tests: the app with the workspace shown, settling a
//! load, reading a disc detector.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::stem::detectors::Shape;
use scatterlab_app::{ScatterlabApp, Workspace};

/// The app with the 4D-STEM workspace shown (clicked in the top bar), in a large window.
pub fn stem_app() -> Harness<'static, ScatterlabApp> {
    let mut harness = Harness::builder().with_size(egui::vec2(1800.0, 1400.0)).build_eframe(|cc| ScatterlabApp::new(cc));
    harness.step();
    harness.get_by_label("4D-STEM").click();
    harness.step();
    assert_eq!(harness.state().workspace, Workspace::Stem);
    harness
}

/// Steps until nothing is loading.
pub fn settle(harness: &mut Harness<'_, ScatterlabApp>) {
    let deadline = Instant::now() + Duration::from_secs(60);
    harness.step();
    while harness.state().stem.is_loading() {
        assert!(Instant::now() < deadline, "still loading after 60 s");
        harness.step();
    }
    harness.step();
}

/// The centre and radius of a disc detector.
pub fn disc(shape: &Shape) -> ([f64; 2], f64) {
    match *shape {
        Shape::Disc { center, radius } => (center, radius),
        ref s => panic!("not a disc: {s:?}"),
    }
}
