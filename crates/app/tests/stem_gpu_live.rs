//! The 4D-STEM workspace's GPU live path on kittest's wgpu device (lavapipe here): with "GPU"
//! picked, the example's frames go up to the GPU as they load and the virtual images come from
//! the resident buffers — equal to the brute-force sums exactly, the device shown as "gpu" — and
//! a moved detector is recomputed there; picking "CPU" goes back to CPU sums. Nothing is
//! substituted: until the GPU has answered the images are the GPU's or none.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod stem_common;

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::stem::detectors::Shape;
use scatterlab_app::stem::gpu_live::StemDevice;
use scatterlab_app::ScatterlabApp;
use stem_common::{disc, example_disc_sums, settle, stem_app_on};

/// Steps until the images on display are the GPU's over all 1024 frames for the current
/// detectors (60 s at most).
fn gpu_images(harness: &mut Harness<'_, ScatterlabApp>) -> Vec<u64> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        harness.step();
        let stem = &harness.state().stem;
        let wanted: Vec<_> = stem.detectors.iter().map(|d| d.to_virtual([48, 48])).collect();
        if let Some(i) = stem.virtual_images() {
            if i.device == StemDevice::Gpu && i.frames == 1024 && i.detectors == wanted {
                assert!(i.images.is_ok(), "{:?}", i.images);
                return stem.virtual_image(0).expect("BF").to_vec();
            }
        }
        assert!(stem.gpu_status().is_none_or(|s| !s.contains("unavailable")), "{:?}", stem.gpu_status());
        assert!(Instant::now() < deadline, "no GPU images after 60 s ({:?})", stem.gpu_status());
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn gpu_live_path_equals_brute_force_sums() {
    if scatterlab_testkit::skip_gpu("app GPU live path") {
        return;
    }
    let mut harness = stem_app_on(true);
    // Picked before loading: frames go up while they load.
    harness.get_by_label("GPU").click();
    harness.state_mut().stem.load_budget = Duration::ZERO;
    harness.state_mut().stem.open_example();
    settle(&mut harness);
    assert_eq!(harness.state().stem.device, StemDevice::Gpu);
    let bf = gpu_images(&mut harness);
    let (center, radius) = disc(&harness.state().stem.detectors[0].shape);
    assert_eq!(bf, example_disc_sums(center, radius), "GPU BF = brute force");
    assert_eq!(harness.state().stem.device(), "gpu");
    assert!(harness.query_by_label_contains("gpu · ").is_some(), "the device shown under the image");

    // A moved detector is recomputed on the GPU.
    let moved = [center[0] - 2.0, center[1] + 3.5];
    harness.state_mut().stem.set_detector(0, None, Shape::Disc { center: moved, radius: radius + 1.0 }).expect("detector 0");
    let after = gpu_images(&mut harness);
    assert_eq!(after, example_disc_sums(moved, radius + 1.0), "moved on the GPU = brute force");

    // Back to the CPU: CPU sums, shown as such.
    harness.get_by_label("CPU").click();
    harness.step();
    harness.step();
    let stem = &harness.state().stem;
    assert_eq!(stem.virtual_images().map(|i| i.device), Some(StemDevice::Cpu));
    assert_eq!(stem.virtual_image(0).expect("BF"), after.as_slice());
}

#[test]
fn without_a_gpu_the_gpu_cannot_be_picked() {
    let mut harness = stem_app_on(false);
    settle(&mut harness);
    harness.get_by_label("GPU").click();
    harness.step();
    assert_eq!(harness.state().stem.device, StemDevice::Cpu, "a disabled button does nothing");
    assert_eq!(harness.state().stem.device(), "cpu");
}
