//! The reflectivity panel in a headless egui harness: numbers, not pixels.
//!
//! The CPU tests use kittest's default (no GPU device: the app sees "GPU unavailable");
//! the GPU test gives the app kittest's wgpu render state (lavapipe here), as eframe would.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::{Device, ReflInputs, ScatterlabApp};
use scatterlab_refl::{cpu, CurveRequest};

/// The app as eframe would create it, in a window the size of the desktop default.
fn app(with_gpu: bool) -> Harness<'static, ScatterlabApp> {
    let builder = Harness::builder().with_size(egui::vec2(1280.0, 800.0));
    let builder = if with_gpu { builder.wgpu() } else { builder };
    builder.build_eframe(|cc| ScatterlabApp::new(cc))
}

/// Steps the harness until the panel has a result for its current inputs.
fn settle(harness: &mut Harness<'_, ScatterlabApp>, timeout: Duration) {
    let deadline = Instant::now() + timeout;
    harness.step();
    while harness.state().refl.is_busy() {
        assert!(Instant::now() < deadline, "no result within {timeout:?}: {}", harness.state().refl.status_text());
        std::thread::sleep(Duration::from_millis(5));
        harness.step();
    }
    harness.step(); // draw the result once
}

/// The CPU reference for `inputs` on the grid `q`.
fn reference_on(inputs: &ReflInputs, q: &[f64]) -> scatterlab_refl::Reflectivity {
    cpu::reflectivity(&CurveRequest { stack: &inputs.stack, energy_ev: inputs.energy_ev, q }).expect("valid inputs")
}

/// The CPU reference for `inputs`, computed directly by the engine.
fn reference(inputs: &ReflInputs) -> scatterlab_refl::Reflectivity {
    let q = inputs.q_grid();
    cpu::reflectivity(&CurveRequest { stack: &inputs.stack, energy_ev: inputs.energy_ev, q: &q }).expect("valid example")
}

#[test]
fn opens_on_example_stack_with_cpu_curves() {
    let mut harness = app(false);
    settle(&mut harness, Duration::from_secs(5));
    let panel = &harness.state().refl;
    assert_eq!(panel.inputs, ReflInputs::example());
    assert_eq!(panel.inputs.stack.layers.len(), 4);
    let curve = panel.curve().unwrap_or_else(|| panic!("no curve: {}", panel.status_text()));
    assert_eq!(curve.device, "cpu f64");
    assert_eq!(curve.q.len(), 400);
    assert_eq!(curve.reflectivity.r_s.len(), 400);
    assert_eq!(curve.reflectivity.r_p.len(), 400);
    let want = reference(&panel.inputs);
    for i in [0, 57, 200, 333, 399] {
        // Same f64 code path: equal, not merely close.
        assert_eq!(curve.reflectivity.r_s[i], want.r_s[i], "R_s at q[{i}]={}", curve.q[i]);
        assert_eq!(curve.reflectivity.r_p[i], want.r_p[i], "R_p at q[{i}]={}", curve.q[i]);
        assert!(curve.reflectivity.r_s[i] > 0.0 && curve.reflectivity.r_s[i] < 1.0);
    }
    // Below the critical edge of Si (q_c ~ 0.028 A^-1) the stack reflects strongly; far out it has decayed.
    assert!(curve.reflectivity.r_s[0] > 0.1, "R_s(q_min) = {}", curve.reflectivity.r_s[0]);
    assert!(curve.reflectivity.r_s[399] < curve.reflectivity.r_s[0]);
    // The status line names the device that ran, and the plot legend names both curves.
    harness.get_by_label_contains("cpu f64");
    harness.get_by_label("R_s");
    harness.get_by_label("R_p");
}

#[test]
fn editing_a_layer_thickness_changes_the_curve() {
    let mut harness = app(false);
    settle(&mut harness, Duration::from_secs(5));
    let before = harness.state().refl.curve().expect("example curve").reflectivity.clone();

    harness.state_mut().refl.inputs.stack.layers[1].thickness = 300.0;
    settle(&mut harness, Duration::from_secs(5));

    let panel = &harness.state().refl;
    let after = panel.curve().expect("curve after the edit");
    assert_eq!(after.inputs.stack.layers[1].thickness, 300.0);
    assert_ne!(after.reflectivity, before, "a thicker film must change the fringes");
    assert_eq!(after.reflectivity, reference(&panel.inputs));
}

#[test]
fn add_film_layer_button_adds_a_row_and_recomputes() {
    let mut harness = app(false);
    settle(&mut harness, Duration::from_secs(5));
    let before = harness.state().refl.curve().expect("example curve").reflectivity.clone();

    harness.get_by_label("Add film layer").click();
    settle(&mut harness, Duration::from_secs(5));

    let panel = &harness.state().refl;
    assert_eq!(panel.inputs.stack.layers.len(), 5);
    let after = panel.curve().expect("curve after adding a layer");
    assert_ne!(after.reflectivity, before);
    assert_eq!(after.reflectivity, reference(&panel.inputs));
}

#[test]
fn q_max_above_2k0_is_clamped_with_a_note() {
    let mut harness = app(false);
    settle(&mut harness, Duration::from_secs(5));
    let limit = harness.state().refl.inputs.q_limit();
    harness.state_mut().refl.inputs.q_max = limit + 0.05;
    settle(&mut harness, Duration::from_secs(5));

    // No error: the points below 2k0 are computed and plotted, and a note says where it stops.
    let panel = &harness.state().refl;
    let curve = panel.curve().unwrap_or_else(|| panic!("expected a clamped curve, got: {}", panel.status_text()));
    assert!(*curve.q.last().expect("points") < limit);
    assert_eq!(curve.q, panel.inputs.valid_q_grid());
    assert_eq!(curve.reflectivity, reference_on(&panel.inputs, &curve.q));
    assert!(harness.state().refl.inputs.is_clamped());

    // Back in range, the full grid and no note.
    harness.state_mut().refl.inputs.q_max = 0.25;
    settle(&mut harness, Duration::from_secs(5));
    assert_eq!(harness.state().refl.curve().expect("curve").q.len(), 400);
    assert!(!harness.state().refl.inputs.is_clamped());
}

#[test]
fn gpu_without_a_device_says_so_instead_of_falling_back() {
    let mut harness = app(false);
    settle(&mut harness, Duration::from_secs(5));
    harness.get_by_label(Device::Gpu.label()).click();
    settle(&mut harness, Duration::from_secs(5));

    let panel = &harness.state().refl;
    assert_eq!(panel.inputs.device, Device::Gpu);
    let error = panel.error().expect("an explicit GPU-unavailable error");
    assert!(error.starts_with("GPU not available"), "{error}");
    assert!(panel.curve().is_none(), "no silent CPU fallback");
}

#[test]
fn gpu_curve_matches_cpu_within_f32_tolerance() {
    if scatterlab_testkit::skip_gpu("app refl panel GPU curve") {
        return;
    }
    let mut harness = app(true);
    settle(&mut harness, Duration::from_secs(5));
    harness.state_mut().refl.inputs.device = Device::Gpu;
    settle(&mut harness, Duration::from_secs(60));

    let panel = &harness.state().refl;
    let curve = panel.curve().unwrap_or_else(|| panic!("no GPU curve: {}", panel.status_text()));
    assert!(curve.device.starts_with("gpu f32 "), "{}", curve.device);
    assert!(curve.device.ends_with(&panel.gpu_description()), "{} vs {}", curve.device, panel.gpu_description());
    let want = reference(&panel.inputs);
    for (got, want, pol) in [(&curve.reflectivity.r_s, &want.r_s, "R_s"), (&curve.reflectivity.r_p, &want.r_p, "R_p")] {
        assert_eq!(got.len(), want.len());
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            // The tolerance the engine's own f32 fixture tests use.
            assert!((g - w).abs() <= 2e-3 * w.abs(), "{pol} at q[{i}]: gpu {g} vs cpu {w}");
        }
    }
    eprintln!("status: {}", panel.status_text());
    harness.get_by_label_contains("gpu f32");
}

#[test]
fn ready_hook_runs_once_after_the_first_frame() {
    use std::cell::Cell;
    use std::rc::Rc;
    let calls = Rc::new(Cell::new(0));
    let seen = calls.clone();
    let mut harness = Harness::builder().build_eframe(move |cc| {
        let seen = seen.clone();
        ScatterlabApp::new(cc).on_first_frame(move || seen.set(seen.get() + 1))
    });
    // Building the harness ran frame 0; the hook fires when frame 1 starts.
    assert!(harness.state().frames() >= 1);
    harness.step();
    harness.step();
    assert_eq!(calls.get(), 1);
    assert_eq!(harness.state().render_backend, "none");
}

#[test]
fn typing_a_thickness_into_the_table_changes_the_curve() {
    let mut harness = app(false);
    settle(&mut harness, Duration::from_secs(5));
    let before = harness.state().refl.curve().expect("example curve").reflectivity.clone();

    // A click turns the drag value into a text field with its text selected; typing replaces it.
    harness.get_by_label("film 1 thickness (Å)").click();
    harness.step();
    harness.get_by_label("film 1 thickness (Å)").type_text("123.5");
    harness.key_press(egui::Key::Enter);
    settle(&mut harness, Duration::from_secs(5));

    let panel = &harness.state().refl;
    assert_eq!(panel.inputs.stack.layers[1].thickness, 123.5);
    let after = panel.curve().expect("curve after typing");
    assert_ne!(after.reflectivity, before);
    assert_eq!(after.reflectivity, reference(&panel.inputs));
}
