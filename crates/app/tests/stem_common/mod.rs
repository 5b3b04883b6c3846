//! Shared helpers of the 4D-STEM workspace tests: the app with the workspace shown, settling a
//! load, reading a disc detector.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::stem::detectors::Shape;
use scatterlab_app::stem::example;
use scatterlab_app::{ScatterlabApp, Workspace};

/// The app with the 4D-STEM workspace shown (clicked in the top bar), in a large window.
pub fn stem_app() -> Harness<'static, ScatterlabApp> {
    stem_app_on(false)
}

/// [`stem_app`], with kittest's wgpu render state (lavapipe here) when `gpu`: the app then
/// shares that device for the GPU live path.
pub fn stem_app_on(gpu: bool) -> Harness<'static, ScatterlabApp> {
    let builder = Harness::builder().with_size(egui::vec2(1800.0, 1400.0));
    let builder = if gpu { builder.wgpu() } else { builder };
    let mut harness = builder.build_eframe(|cc| ScatterlabApp::new(cc));
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

/// The closed-disc sum of every example frame, brute force (CONVENTIONS.md: `d ≤ r`).
pub fn example_disc_sums(center: [f64; 2], radius: f64) -> Vec<u64> {
    let [rows, cols] = example::DET;
    let mut frame = vec![0u16; rows * cols];
    (0..example::SCAN[0] * example::SCAN[1])
        .map(|f| {
            example::frame(f, &mut frame);
            frame
                .iter()
                .enumerate()
                .filter(|(p, _)| {
                    let (dr, dc) = ((p / cols) as f64 - center[0], (p % cols) as f64 - center[1]);
                    dr * dr + dc * dc <= radius * radius
                })
                .map(|(_, &v)| u64::from(v))
                .sum()
        })
        .collect()
}
