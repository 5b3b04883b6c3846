//! The 4D-STEM workspace in a headless egui harness: the built-in example loads progressively
//! and shows its pattern and BF image; moving a detector (programmatically, by a simulated drag,
//! by the arrow keys) changes the virtual image, which always equals a brute-force sum of the
//! example's frames; a scan region shows its mean pattern; DPC finds the example's rotation;
//! Cancel keeps the frames read. Files (the dev_small reference, broken inputs): stem_files.rs.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod stem_common;

use std::time::Duration;

use egui_kittest::kittest::Queryable as _;
use scatterlab_app::landmarks;
use scatterlab_app::stem::detectors::{Detector, Shape};
use scatterlab_app::stem::example;
use stem_common::{disc, example_disc_sums, settle, stem_app};

#[test]
fn example_loads_progressively_and_shows_pattern_and_bf_image() {
    let mut harness = stem_app();
    harness.state_mut().stem.load_budget = Duration::ZERO; // one batch per frame
    harness.state_mut().stem.open_example();
    harness.step();
    let loaded = harness.state().stem.data().map(|d| d.loaded()).unwrap_or(0);
    assert!(loaded > 0 && loaded < 1024, "{loaded} frames after one frame");
    harness.step();
    assert!(harness.query_by_label_contains("loading").is_some(), "progress bar shown");
    assert!(harness.state().stem.virtual_image(0).is_some_and(|v| v.len() >= loaded), "BF fills in while loading");
    settle(&mut harness);
    let stem = &harness.state().stem;
    let data = stem.data().expect("example open");
    assert_eq!((data.name.as_str(), data.loaded(), data.n_masked), (example::NAME, 1024, 4));
    assert!(stem.error().is_none(), "{:?}", stem.error());
    let probe = stem.probe().expect("beam centre found");
    assert!((probe.center[0] - example::CENTER[0]).abs() < 0.5 && (probe.center[1] - example::CENTER[1]).abs() < 0.5, "{probe:?}");
    assert!((probe.radius - example::RADIUS).abs() < 0.6, "{probe:?}");
    let mean = stem.mean_dp().expect("mean pattern");
    assert_eq!(mean.len(), 48 * 48);
    for (p, _) in example::BAD_PIXELS {
        assert_eq!(mean[p], 0.0, "masked pixel {p} zeroed");
    }
    assert_eq!(stem.detectors[0].name, "BF");
    let (center, radius) = disc(&stem.detectors[0].shape);
    let bf = stem.virtual_image(0).expect("BF image");
    assert_eq!(bf, example_disc_sums(center, radius).as_slice(), "BF = brute-force disc sums");
    let (lo, hi) = (bf.iter().min().copied().unwrap_or(0), bf.iter().max().copied().unwrap_or(0));
    assert!(hi > lo + 100, "BF image has contrast: {lo}…{hi}");
    for label in ["diffraction pattern", "virtual image", "centre of mass", "iDPC phase", "virtual image histogram"] {
        assert!(harness.query_by_label(label).is_some(), "{label} shown");
    }
    assert!(harness.query_by_label_contains("cpu · ").is_some(), "device and frame time shown");
    assert_eq!(stem.device(), "cpu");
    assert!(stem.frame_time().is_some());
}

#[test]
fn moving_the_detector_changes_the_virtual_image() {
    let mut harness = stem_app();
    settle(&mut harness);
    let before = harness.state().stem.virtual_image(0).expect("BF").to_vec();
    let (center, radius) = disc(&harness.state().stem.detectors[0].shape);

    // Programmatically: the image follows the public state on the next frame.
    let moved = [center[0] + 3.0, center[1] - 2.0];
    harness.state_mut().stem.detectors[0] = Detector { name: "BF".into(), shape: Shape::Disc { center: moved, radius } };
    harness.state_mut().stem.touch_detectors();
    harness.step();
    let after = harness.state().stem.virtual_image(0).expect("BF").to_vec();
    assert_ne!(after, before, "moved detector, new image");
    assert_eq!(after, example_disc_sums(moved, radius));

    // A simulated drag from the disc's centre, 40 points to the right.
    let rect = landmarks::rect(&harness.ctx, "stem dp").expect("pattern drawn");
    let scale = rect.width() / 48.0;
    let at = |c: [f64; 2]| egui::pos2(rect.left() + (c[1] as f32 + 0.5) * scale, rect.top() + (c[0] as f32 + 0.5) * scale);
    let start = at(moved);
    harness.hover_at(start);
    harness.step();
    harness.drag_at(start);
    harness.step();
    for k in 1..=4 {
        harness.hover_at(start + egui::vec2(10.0 * k as f32, 0.0));
        harness.step();
    }
    harness.drop_at(start + egui::vec2(40.0, 0.0));
    harness.step();
    harness.step();
    let (dragged, r2) = disc(&harness.state().stem.detectors[0].shape);
    assert_eq!(r2, radius, "a drag inside moves, it does not resize");
    assert!((dragged[1] - moved[1] - f64::from(40.0 / scale)).abs() < 0.05, "dragged to {dragged:?} from {moved:?}");
    assert!((dragged[0] - moved[0]).abs() < 0.05);
    let image = harness.state().stem.virtual_image(0).expect("BF").to_vec();
    assert_eq!(image, example_disc_sums(dragged, radius));

    // Arrow keys nudge the selected detector by a pixel.
    harness.key_press(egui::Key::ArrowUp);
    harness.step();
    let (nudged, _) = disc(&harness.state().stem.detectors[0].shape);
    assert!((nudged[0] - (dragged[0] - 1.0)).abs() < 1e-9 && nudged[1] == dragged[1], "{nudged:?}");

    // Dragging the rim resizes.
    let rim = at([nudged[0], nudged[1] + radius]);
    harness.hover_at(rim);
    harness.step();
    harness.drag_at(rim);
    harness.step();
    for k in 1..=3 {
        harness.hover_at(rim + egui::vec2(5.0 * k as f32, 0.0));
        harness.step();
    }
    harness.drop_at(rim + egui::vec2(15.0, 0.0));
    harness.step();
    let (c3, r3) = disc(&harness.state().stem.detectors[0].shape);
    assert_eq!(c3, nudged);
    assert!((r3 - radius - f64::from(15.0 / scale)).abs() < 0.1, "radius {r3} from {radius}");
}

#[test]
fn presets_and_several_detectors() {
    let mut harness = stem_app();
    settle(&mut harness);
    assert_eq!(harness.state().stem.detectors.len(), 2, "BF and ADF to start");
    harness.get_by_label("+ rect").click();
    harness.step();
    harness.step();
    let stem = &harness.state().stem;
    assert_eq!((stem.detectors.len(), stem.selected), (3, 2));
    assert!(matches!(stem.detectors[2].shape, Shape::Rect { .. }));
    let images = stem.virtual_images().expect("images");
    assert_eq!(images.detectors.len(), 3, "every detector summed in one pass");
    harness.get_by_label("DF").click();
    harness.step();
    harness.step();
    let stem = &harness.state().stem;
    assert!(matches!(stem.detectors[2].shape, Shape::Annulus { outer, .. } if outer.is_infinite()));
    let df = stem.virtual_image(2).expect("DF image");
    let total = &stem.fused().expect("products").total;
    let bf_plus_df: Vec<u64> = stem.virtual_image(0).expect("BF").iter().zip(df).map(|(a, b)| a + b).collect();
    // BF [0, R] and DF [R, ∞) share only the ring d = R exactly, which a non-integer centre misses.
    assert_eq!(&bf_plus_df, total, "BF + DF = total");
}

#[test]
fn region_selection_shows_its_mean_pattern() {
    let mut harness = stem_app();
    settle(&mut harness);
    let rect = landmarks::rect(&harness.ctx, "stem virtual image").expect("image drawn");
    let scale = rect.width() / 32.0;
    let at = |r: f32, c: f32| egui::pos2(rect.left() + (c + 0.5) * scale, rect.top() + (r + 0.5) * scale);
    harness.hover_at(at(5.0, 9.0));
    harness.step();
    harness.drag_at(at(5.0, 9.0));
    harness.step();
    harness.drop_at(at(5.0, 9.0));
    harness.step();
    harness.step();
    let stem = &harness.state().stem;
    let region = stem.selection.expect("a click selects a point");
    assert_eq!((region.rows, region.cols), ([5, 6], [9, 10]));
    let dp = stem.region_dp().expect("region pattern").as_ref().expect("computed");
    let mut frame = vec![0u16; 48 * 48];
    example::frame(5 * 32 + 9, &mut frame);
    assert_eq!(dp, &frame.iter().map(|&v| f64::from(v)).collect::<Vec<_>>());

    harness.hover_at(at(2.0, 3.0));
    harness.step();
    harness.drag_at(at(2.0, 3.0));
    harness.step();
    for k in 1..=4 {
        harness.hover_at(at(2.0 + k as f32, 3.0 + 2.0 * k as f32));
        harness.step();
    }
    harness.drop_at(at(6.0, 11.0));
    harness.step();
    let region = harness.state().stem.selection.expect("a drag selects a rectangle");
    assert_eq!((region.rows, region.cols), ([2, 7], [3, 12]));
}

#[test]
fn dpc_finds_the_examples_rotation_and_phase() {
    let mut harness = stem_app();
    settle(&mut harness);
    let stem = &harness.state().stem;
    let auto = stem.auto_rotation().expect("rotation").as_ref().expect("found");
    assert!(!auto.transpose);
    assert!((auto.degrees - example::ROTATION_DEG).abs() < 2.0, "auto rotation {} vs {}", auto.degrees, example::ROTATION_DEG);
    let dpc = stem.dpc().expect("DPC products");
    assert_eq!(dpc.wheel.len(), 32 * 32);
    let phase = dpc.idpc.as_ref().expect("calibrated example: iDPC");
    let truth: Vec<f64> = (0..1024).map(|f| example::phase((f / 32) as f64, (f % 32) as f64).0).collect();
    let r = scatterlab_stem::reduce::idpc::correlation(phase, &truth);
    assert!(r > 0.9, "iDPC correlates {r} with the example's phase");
    // A rotation typed in is used as is; "auto" goes back.
    harness.state_mut().stem.rotation = Some(scatterlab_app::stem::dpc::DpcRotation { degrees: 200.0, transpose: false });
    harness.step();
    let flipped = harness.state().stem.dpc().and_then(|d| d.idpc.as_ref().ok()).expect("phase").clone();
    let r = scatterlab_stem::reduce::idpc::correlation(&flipped, &truth);
    assert!(r < -0.9, "half a turn more flips the phase: {r}");
    harness.get_by_label("auto rotation").click();
    harness.step();
    assert!(harness.state().stem.rotation.is_none());
}

#[test]
fn cancel_keeps_the_frames_read_so_far() {
    let mut harness = stem_app();
    harness.state_mut().stem.load_budget = Duration::ZERO;
    harness.state_mut().stem.open_example();
    harness.step();
    harness.step();
    harness.get_by_label("Cancel").click();
    harness.step();
    harness.step();
    let stem = &harness.state().stem;
    assert!(!stem.is_loading());
    let n = stem.data().map_or(0, |d| d.loaded());
    assert!(n > 0 && n < 1024, "{n} frames kept");
    assert_eq!(stem.virtual_image(0).map(<[u64]>::len), Some(n));
    assert!(stem.notes().iter().any(|s| s.contains("cancelled")));
}
