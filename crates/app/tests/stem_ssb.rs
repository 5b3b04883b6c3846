//! The SSB page of the 4D-STEM workspace (egui_kittest): on dev_small opened by path, the phase
//! image equals `scatterlab_stem::ssb::ssb` on the same files with the same defaults (auto probe,
//! θ from DPC, the file's calibration) and with aberrations set on the sliders; "Fit
//! aberrations" gives the aberrations and phase of `ssb` with the default fit; the export's
//! `.npy` holds the phase on display; without a GPU the GPU is refused by name, never replaced by
//! the CPU; on kittest's wgpu device (lavapipe) the GPU's f32 phase equals the CPU's (RMS 1e-3 rad)
//! and the Fit button evaluates its losses there; the browser's sliced fit (`SteppedFit`, a slice per UI frame) equals `fit_aberrations` exactly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;
mod stem_common;

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::stem::ssb::SsbDevice;
use scatterlab_app::ScatterlabApp;
use scatterlab_core::CancelToken;
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints};
use scatterlab_stem::ssb::{fit_aberrations, ssb, Aberrations, FitOptions, FitStart, SsbOptions, SsbProducts};
use stem_common::{settle, stem_app_on};

/// The library's reconstruction of `path` with `options`.
fn library(path: &std::path::Path, options: &SsbOptions) -> SsbProducts {
    let (files, master) = DirFileSet::for_file(path).expect("file set");
    let acq = Acquisition::open(&files, &master, &Hints::default()).expect("open");
    ssb(&acq, &files, options, &mut |_, _| {}, &CancelToken::new()).expect("ssb")
}

/// The largest wrapped difference between two phase images, radians.
fn max_phase_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y + std::f64::consts::PI).rem_euclid(2.0 * std::f64::consts::PI) - std::f64::consts::PI).fold(0.0, |m, d| m.max(d.abs()))
}

/// Steps until the SSB page shows a phase for the current settings (and no fit runs).
fn settle_ssb(harness: &mut Harness<'_, ScatterlabApp>) {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        harness.step();
        let s = &harness.state().stem.ssb;
        let stack_done = s.stack_progress().is_some_and(|(d, t)| d == t);
        let current =
            harness.state().stem.ssb_inputs().ok().zip(s.result()).is_some_and(|(i, r)| r.inputs == i && r.aberrations == s.settings.aberrations && r.device == s.settings.device);
        if stack_done && current && !s.fitting() {
            break;
        }
        assert!(s.blocked().is_none(), "SSB blocked: {:?}", s.blocked());
        assert!(Instant::now() < deadline, "SSB page did not settle in 300 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    harness.step();
}

fn open_dev_small() -> (Harness<'static, ScatterlabApp>, std::path::PathBuf) {
    open_dev_small_on(false)
}

/// dev_small on the SSB page, with kittest's wgpu device (lavapipe) in the app when `gpu`.
fn open_dev_small_on(gpu: bool) -> (Harness<'static, ScatterlabApp>, std::path::PathBuf) {
    let path = common::fixtures_dir().join("stem/dev_small_master.h5");
    let mut harness = stem_app_on(gpu);
    settle(&mut harness);
    harness.state_mut().stem.open_path(&path);
    settle(&mut harness);
    assert!(harness.state().stem.error().is_none(), "{:?}", harness.state().stem.error());
    harness.get_by_label("SSB").click();
    harness.step();
    (harness, path)
}

#[test]
fn phase_equals_the_library_with_defaults_and_slider_aberrations() {
    let (mut harness, path) = open_dev_small();
    settle_ssb(&mut harness);
    let want = library(&path, &SsbOptions::default());
    let ssb_view = &harness.state().stem.ssb;
    let r = ssb_view.result().expect("result");
    let (i, rec) = (&r.inputs, &want.record);
    println!(
        "app: centre {:?} R {} θ {} transposed {} dk {}; library: {:?} {} {} {} {}",
        i.center,
        i.bf_radius,
        i.rotation_deg,
        i.transposed,
        i.optics.dk_inv_a_per_px,
        rec.center_row_col,
        rec.bf_radius_px,
        rec.rotation_deg,
        rec.transposed,
        rec.optics.dk_inv_a_per_px
    );
    assert_eq!((i.center, i.bf_radius, i.transposed), (rec.center_row_col, rec.bf_radius_px, rec.transposed));
    assert!((i.rotation_deg - rec.rotation_deg).abs() < 1e-9, "θ {} vs {}", i.rotation_deg, rec.rotation_deg);
    assert!((i.optics.dk_inv_a_per_px / rec.optics.dk_inv_a_per_px - 1.0).abs() < 1e-12);
    assert_eq!(ssb_view.stack().map(|s| s.pixels.len()), Some(rec.bf_pixels));
    assert_eq!(r.device, SsbDevice::Cpu);
    let d = max_phase_diff(ssb_view.phase().expect("phase"), &want.phase());
    println!("defaults: max |Δphase| = {d:e} rad");
    assert!(d <= 1e-9, "{d}");
    assert!(harness.query_by_label("SSB phase").is_some(), "phase image on screen");

    // Sliders: the library with the same aberrations (and the rotation it found).
    let ab = Aberrations { c10_nm: 3.0, c12_nm: 0.6, phi12_rad: 0.7 };
    harness.state_mut().stem.ssb.settings.aberrations = ab;
    settle_ssb(&mut harness);
    let want = library(&path, &SsbOptions { aberrations: ab, ..SsbOptions::default() });
    let d = max_phase_diff(harness.state().stem.ssb.phase().expect("phase"), &want.phase());
    println!("C10 3 nm, C12 0.6 nm, φ12 0.7 rad: max |Δphase| = {d:e} rad");
    assert!(d <= 1e-9, "{d}");

    // A given rotation (transposed) too.
    harness.state_mut().stem.ssb.settings.rotation = Some((-30.0, true));
    settle_ssb(&mut harness);
    let want = library(&path, &SsbOptions { aberrations: ab, rotation_deg: Some(-30.0), transposed: Some(true), ..SsbOptions::default() });
    let d = max_phase_diff(harness.state().stem.ssb.phase().expect("phase"), &want.phase());
    println!("θ −30°, transposed: max |Δphase| = {d:e} rad");
    assert!(d <= 1e-9, "{d}");

    // Without a GPU in the app, the GPU is refused by name (not computed on the CPU instead).
    harness.state_mut().stem.ssb.settings.device = SsbDevice::Gpu;
    settle_ssb(&mut harness);
    let r = harness.state().stem.ssb.result().expect("result");
    assert_eq!(r.device, SsbDevice::Gpu);
    let e = r.phase.as_ref().expect_err("no GPU in this harness");
    assert!(e.contains("GPU SSB: no GPU"), "{e}");
}

#[test]
fn gpu_phase_equals_the_cpu_and_the_fit_runs_on_gpu_losses() {
    if std::env::var("SCATTERLAB_SKIP_GPU").is_ok_and(|v| v == "1") {
        eprintln!("SCATTERLAB_SKIP_GPU=1: GPU test skipped");
        return;
    }
    let (mut harness, path) = open_dev_small_on(true);
    settle_ssb(&mut harness);
    let ab = Aberrations { c10_nm: 2.0, c12_nm: 0.5, phi12_rad: 1.0 };
    harness.state_mut().stem.ssb.settings.aberrations = ab;
    harness.get_by_label("SSB GPU").click();
    settle_ssb(&mut harness);
    let r = harness.state().stem.ssb.result().expect("result");
    assert_eq!(r.device, SsbDevice::Gpu);
    let gpu = r.phase.clone().expect("GPU phase");
    let want = library(&path, &SsbOptions { aberrations: ab, ..SsbOptions::default() }).phase();
    // f32 on the GPU against the f64 CPU: the object's relative L2 gate is 1e-3 (fixture README);
    // on unit phasors that is the RMS phase difference.
    let d = max_phase_diff(&gpu, &want);
    let rms = (gpu.iter().zip(&want).map(|(a, b)| 2.0 - 2.0 * (a - b).cos()).sum::<f64>() / gpu.len() as f64).sqrt();
    println!("GPU vs CPU phase on dev_small: RMS |Δ| {rms:.2e}, max |Δ| {d:.2e} rad");
    assert!(rms <= 1e-3, "{rms}");
    assert!(harness.query_by_label_contains("gpu (f32, WGSL)").is_some(), "the device shown under the image");

    // A moved slider is recomputed on the GPU.
    let ab2 = Aberrations { c10_nm: -1.5, ..ab };
    harness.state_mut().stem.ssb.settings.aberrations = ab2;
    settle_ssb(&mut harness);
    let r = harness.state().stem.ssb.result().expect("result");
    assert_eq!((r.device, r.aberrations), (SsbDevice::Gpu, ab2));

    // The fit with the GPU picked evaluates its losses there and finds no defocus (unaberrated set).
    harness.get_by_label("Fit aberrations").click();
    harness.step();
    assert!(harness.state().stem.ssb.fit_device().is_some_and(|d| d.starts_with("gpu:")), "{:?}", harness.state().stem.ssb.fit_device());
    settle_ssb(&mut harness);
    let report = harness.state().stem.ssb.last_fit().expect("fit ended").clone().expect("fit ok");
    println!("app fit on GPU losses: {:?}, {} evaluations", report.aberrations, report.evaluations);
    assert!(report.aberrations.c10_nm.abs() < 1.0, "{:?}", report.aberrations);
    assert!(harness.query_by_label_contains("fit losses on gpu:").is_some(), "the fit's device shown");
}

#[test]
fn fit_button_equals_the_library_fit_and_exports() {
    let (mut harness, path) = open_dev_small();
    settle_ssb(&mut harness);
    harness.get_by_label("Fit aberrations").click();
    harness.step();
    assert!(harness.state().stem.ssb.fitting() || harness.state().stem.ssb.last_fit().is_some(), "fit started");
    let t0 = Instant::now();
    settle_ssb(&mut harness);
    let report = harness.state().stem.ssb.last_fit().expect("fit ended").clone().expect("fit ok");
    println!("app fit in {:.1} s: {:?}, {} evaluations", t0.elapsed().as_secs_f64(), report.aberrations, report.evaluations);
    let want = library(&path, &SsbOptions { fit: Some(FitOptions::default()), ..SsbOptions::default() });
    let fitted = want.record.aberrations;
    println!("library fit: {fitted:?}");
    assert_eq!(report.aberrations, fitted, "same fit, same numbers");
    assert_eq!(harness.state().stem.ssb.settings.aberrations, fitted, "the sliders take the fit");
    // dev_small is unaberrated (fixture README): the fit's gate is |C10| < 1 nm.
    assert!(fitted.c10_nm.abs() < 1.0, "{fitted:?}");
    let phase = harness.state().stem.ssb.phase().expect("phase").to_vec();
    let d = max_phase_diff(&phase, &want.phase());
    assert!(d <= 1e-9, "fitted phase: {d}");

    // Export: the .npy is the phase on display, the sidecar names the fit.
    let dir = common::temp_dir("stem-ssb-export");
    harness.state_mut().stem.export.folder = dir.display().to_string();
    harness.get_by_label("Export SSB phase").click();
    harness.step();
    let status = harness.state().stem.ssb.export_status().cloned();
    let files = status.expect("exported").expect("export ok");
    assert!(files.iter().any(|f| f.ends_with("dev_small_master_ssb_phase.npy")), "{files:?}");
    let npy = std::fs::read(dir.join("dev_small_master_ssb_phase.npy")).expect("npy");
    let header_len = u16::from_le_bytes([npy[8], npy[9]]) as usize;
    let header = String::from_utf8_lossy(&npy[10..10 + header_len]).to_string();
    assert!(header.contains("'<f8'") && header.contains("(16, 16)"), "{header}");
    let values: Vec<f64> = npy[10 + header_len..].chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
    assert_eq!(values, phase);
    let sidecar: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("dev_small_master_ssb_phase.json")).expect("json")).expect("parse");
    assert_eq!(sidecar["ssb"]["fitted"], serde_json::Value::Bool(true));
    assert_eq!(sidecar["ssb"]["aberrations"]["C10_nm"].as_f64(), Some(fitted.c10_nm));
    assert!(sidecar["ssb"]["device"].as_str().is_some_and(|d| d.starts_with("cpu")));
}

#[test]
fn fit_cancel_keeps_the_sliders_and_says_so() {
    let (mut harness, _) = open_dev_small();
    settle_ssb(&mut harness);
    let before = harness.state().stem.ssb.settings.aberrations;
    // Cancelled before the worker thread can finish its first grid batch (thousands of trials).
    harness.state_mut().stem.start_ssb_fit(FitOptions::default(), None).expect("fit starts");
    assert!(harness.state_mut().stem.start_ssb_fit(FitOptions::default(), None).is_err(), "one fit at a time");
    harness.state_mut().stem.cancel_ssb_fit();
    settle_ssb(&mut harness);
    let last = harness.state().stem.ssb.last_fit().expect("fit ended").clone();
    let e = last.expect_err("cancelled");
    assert!(e.contains("cancelled"), "{e}");
    assert_eq!(harness.state().stem.ssb.settings.aberrations, before, "sliders untouched");
    assert!(harness.query_by_label_contains("cancelled").is_some(), "the UI says so");
}

#[test]
fn stepped_fit_equals_the_library() {
    use scatterlab_app::stem::ssb::stepped::{SteppedFit, Stop};
    let (mut harness, _) = open_dev_small();
    settle_ssb(&mut harness);
    let stem = &harness.state().stem;
    let inputs = stem.ssb_inputs().expect("inputs");
    let stack = std::sync::Arc::new(stem.ssb.stack().expect("stack").clone());
    // From a non-zero start with the rotation fitted too, and from zero with the defaults.
    let starts = [
        (
            Aberrations { c10_nm: 2.0, c12_nm: 0.5, phi12_rad: 1.0 },
            FitOptions { threads: Some(1), fit_rotation: true, c10_range_nm: [-20.0, 20.0], max_full_evaluations: 40, ..FitOptions::default() },
        ),
        (Aberrations::default(), FitOptions { threads: Some(1), ..FitOptions::default() }),
    ];
    for (ab, options) in starts {
        let start = FitStart { aberrations: ab, rotation_deg: inputs.rotation_deg };
        let cancel = CancelToken::new();
        let want = fit_aberrations(&stack, &inputs.optics, inputs.scan_step_a, &start, &options, &mut |_, _| {}, &cancel).expect("library fit");
        let mut fit = SteppedFit::new(stack.clone(), inputs.optics, inputs.scan_step_a, start, options.clone());
        let mut slices = 0;
        let got = loop {
            slices += 1;
            // Slices far shorter than one frame: many pauses, each resumed by a replay.
            match fit.step(Duration::from_micros(300), &cancel) {
                Ok(r) => break r,
                Err(Stop::Pause) => assert!(slices < 1_000_000, "no end"),
                Err(Stop::Failed(e)) => panic!("{e}"),
            }
        };
        println!("{ab:?}: {} evaluations in {slices} slices → {:?}", got.evaluations, got.aberrations);
        assert!(slices > 10, "the fit was sliced ({slices})");
        assert_eq!(got, want, "the sliced fit is the library's, evaluation for evaluation");
    }
    // Cancel stops at the next slice.
    let cancel = CancelToken::new();
    let mut fit = SteppedFit::new(stack, inputs.optics, inputs.scan_step_a, FitStart::default(), FitOptions::default());
    assert!(matches!(fit.step(Duration::from_micros(300), &cancel), Err(Stop::Pause)));
    cancel.cancel();
    match fit.step(Duration::from_micros(300), &cancel) {
        Err(Stop::Failed(e)) => assert!(e.to_string().contains("cancelled"), "{e}"),
        other => panic!("{other:?}"),
    }
}
