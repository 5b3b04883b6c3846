//! The Fit tab at 1280 × 800 (issue 17, item 17): with the fixture task loaded and after a fit,
//! the data and residual plots are on screen without scrolling, and the wheel over a plot
//! scrolls the page (the plot's zoom is on Ctrl + wheel).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::ScatterlabApp;

#[test]
fn plots_are_visible_after_a_fit_at_1280_by_800() {
    let mut harness = Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_eframe(|cc| ScatterlabApp::new(cc));
    harness.step();
    common::load(&mut harness, &common::fit_task_path());
    assert!(harness.state().refl.fit.model().is_some(), "task loaded");
    harness.get_by_label("Polish").click();
    common::run_to_end(&mut harness, std::time::Duration::from_secs(300));
    assert!(harness.state().refl.fit.result().is_some(), "fit done");
    harness.step();
    let rect = harness.state().refl.fit.plot_rect().expect("plots drawn");
    println!("plots at {rect:?} in a 1280 × 800 window");
    assert!(rect.top() >= 0.0 && rect.bottom() <= 800.0 && rect.right() <= 1280.0, "plots {rect:?} not fully on screen");
    assert!(rect.height() >= 300.0, "plots {rect:?} too small to read");
    assert!(harness.query_by_label_contains("double-click to reset").is_some(), "the reset gesture is shown");

    // The wheel over the data plot scrolls the page (the parameter table is below) and leaves
    // the plot's bounds alone.
    let bounds = harness.state().refl.fit.plot_bounds().expect("bounds");
    harness.hover_at(rect.left_top() + egui::vec2(200.0, 150.0));
    harness.step();
    harness.event(egui::Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, -120.0),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Unknown,
        modifiers: egui::Modifiers::NONE,
    });
    for _ in 0..20 {
        harness.step();
    }
    let after = harness.state().refl.fit.plot_rect().expect("plots drawn");
    println!("after the wheel: {after:?}");
    assert!(after.top() < rect.top() - 50.0, "the page did not scroll: {rect:?} → {after:?}");
    assert!((after.height() - rect.height()).abs() < 1.0, "the plot did not change size");
    let bounds_after = harness.state().refl.fit.plot_bounds().expect("bounds");
    println!("plot bounds {bounds:?} → {bounds_after:?}");
    assert_eq!(bounds_after, bounds, "the wheel panned the plot");
}

/// At 800 × 900 nothing hides past the right edge: Simulate puts beam and device under the
/// layer table (they were scrolled out of sight beside it), Fit puts the datasets under the
/// parameter table, and the plots keep their room.
#[test]
fn narrow_window_stacks_the_panels() {
    let (width, height) = (800.0, 900.0);
    let mut harness = Harness::builder().with_size(egui::vec2(width, height)).build_eframe(|cc| ScatterlabApp::new(cc));
    for _ in 0..3 {
        harness.step();
    }
    let table = harness.get_by_label("Layers (fronting medium first, substrate last)").rect();
    for label in ["Beam and q grid", "Device"] {
        let r = harness.get_by_label(label).rect();
        println!("Simulate: {label} at {r:?}");
        assert!(r.right() <= width && r.bottom() <= height, "{label} off screen: {r:?}");
        assert!(r.top() > table.bottom(), "{label} not under the layer table: {r:?} vs {table:?}");
    }
    common::load(&mut harness, &common::fit_task_path());
    for _ in 0..3 {
        harness.step();
    }
    let params = harness.get_by_label("Parameters").rect();
    let datasets = harness.get_by_label("Datasets").rect();
    println!("Fit: parameters at {params:?}, datasets at {datasets:?}");
    assert!(params.right() <= width && datasets.right() <= width);
    assert!(datasets.top() > params.bottom(), "datasets under the parameter table");
    let plots = harness.state().refl.fit.plot_rect().expect("plots drawn");
    assert!(plots.right() <= width && plots.bottom() <= height, "plots {plots:?} off screen");
}
