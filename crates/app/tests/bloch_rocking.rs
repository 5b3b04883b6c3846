//! The Simulate page beyond one zone-axis case: Euler-angle orientations (Ω = 1 is the [001]
//! zone of a cubic crystal with (100) → +x, to 1e-12), the GPU device (f32 WGSL on the app's wgpu
//! device, within the fixture's f32 tolerance of the CPU), and rocking sweeps — every tilt equal
//! to the static case at that tilt (≤ 1e-12), progress, and a cancel that keeps the tilts done.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use scatterlab_app::bloch::simulate::{run_case, SimInputs};
use scatterlab_bloch::parse_cif;
use serde_json::Value;

mod bloch_common;
use bloch_common::{app, app_on, command, settle, si_cif, status};

fn open_si(harness: &mut egui_kittest::Harness<'_, scatterlab_app::ScatterlabApp>) {
    let open = serde_json::json!({"do": "blochOpenCif", "name": "Si.cif", "text": si_cif()}).to_string();
    assert_eq!(command(harness, &open), None);
}

fn simulated(harness: &egui_kittest::Harness<'_, scatterlab_app::ScatterlabApp>) -> (Vec<[i32; 3]>, Vec<Vec<f64>>, Value) {
    let sim = status(harness)["bloch"]["simulate"].clone();
    assert!(sim["error"].is_null(), "{sim}");
    let hkl = serde_json::from_value(sim["result"]["hkl"].clone()).expect("hkl listed");
    let i = serde_json::from_value(sim["result"]["I"].clone()).expect("I listed");
    (hkl, i, sim)
}

fn max_diff(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    a.iter().flatten().zip(b.iter().flatten()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn euler_identity_is_the_001_zone_of_silicon() {
    let mut harness = app();
    open_si(&mut harness);
    let base = r#""kv": 200, "thicknesses": [150, 300], "gMax": 1.2, "sgMax": 0.04, "solver": "eigen""#;
    assert_eq!(command(&mut harness, &format!(r#"{{"do": "blochSimulate", {base}, "zone": [0, 0, 1], "reference": [1, 0, 0]}}"#)), None);
    settle(&mut harness, |a| a.bloch.simulate.is_running());
    let (zone_hkl, zone_i, _) = simulated(&harness);
    assert_eq!(command(&mut harness, &format!(r#"{{"do": "blochSimulate", {base}, "euler": [0, 0, 0]}}"#)), None);
    settle(&mut harness, |a| a.bloch.simulate.is_running());
    let (euler_hkl, euler_i, sim) = simulated(&harness);
    assert!(sim["result"]["id"].as_str().is_some_and(|id| id.contains("euler(0,0,0)")), "{sim}");
    assert_eq!(euler_hkl, zone_hkl);
    let worst = max_diff(&euler_i, &zone_i);
    println!("{} beams, max |I_euler − I_zone| = {worst:e}", zone_hkl.len());
    assert!(worst <= 1e-12, "{worst}");
    let app = harness.state_mut();
    app.bloch.simulate.inputs.euler_deg = Some([0.0, f64::NAN, 0.0]);
    let bad = app.bloch.simulate.start(&app.bloch.crystal).expect_err("a non-finite angle is refused");
    assert!(bad.contains("euler"), "{bad}");
}

#[test]
fn the_gpu_device_runs_f32_on_the_apps_wgpu_device() {
    let mut harness = app_on(true);
    open_si(&mut harness);
    let run = |device: &str| {
        format!(r#"{{"do": "blochSimulate", "kv": 200, "zone": [1, 1, 0], "thicknesses": [100, 300], "gMax": 1.0, "sgMax": 0.04, "solver": "expm", "device": "{device}"}}"#)
    };
    assert_eq!(command(&mut harness, &run("cpu")), None);
    settle(&mut harness, |a| a.bloch.simulate.is_running());
    let (cpu_hkl, cpu_i, _) = simulated(&harness);
    assert_eq!(command(&mut harness, &run("gpu")), None);
    settle(&mut harness, |a| a.bloch.simulate.is_running());
    let (gpu_hkl, gpu_i, sim) = simulated(&harness);
    assert_eq!(sim["result"]["device"].as_str(), Some("gpu"), "{sim}");
    assert_eq!(gpu_hkl, cpu_hkl);
    let worst = max_diff(&gpu_i, &cpu_i);
    println!("{} beams, max |I_gpu − I_cpu| = {worst:e}", cpu_hkl.len());
    // The fixture README's f32/WebGPU expectation: ~1e-4 absolute.
    assert!(worst <= 1e-4, "{worst}");
    assert!(harness.query_by_label_contains("· GPU f32 ·").is_some(), "the device that ran is shown");
}

#[test]
fn a_rocking_sweep_equals_the_static_cases_and_cancels() {
    let mut harness = app();
    open_si(&mut harness);
    // Inputs first (no run needed), then a 5-tilt sweep about lab x.
    let inputs = r#"{"do": "blochSimulate", "kv": 200, "zone": [0, 0, 1], "thicknesses": [200], "gMax": 0.9, "sgMax": 0.03, "solver": "eigen"}"#;
    assert_eq!(command(&mut harness, inputs), None);
    settle(&mut harness, |a| a.bloch.simulate.is_running());
    assert_eq!(command(&mut harness, r#"{"do": "blochRocking", "axis": "x", "fromDeg": -0.4, "toDeg": 0.4, "n": 5}"#), None);
    settle(&mut harness, |a| a.bloch.simulate.is_running());
    let rocking = status(&harness)["bloch"]["simulate"]["rocking"].clone();
    println!("{rocking}");
    assert!(rocking["error"].is_null(), "{rocking}");
    assert_eq!((rocking["result"]["tilts"].as_u64(), rocking["done"].as_u64(), rocking["result"]["cancelled"].as_bool()), (Some(5), Some(5), Some(false)));
    assert!(rocking["shown"].as_array().is_some_and(|s| !s.is_empty()), "strongest beams drawn");

    // Every tilt is the static case at that tilt, on the union's columns (0 where absent).
    let app_state = harness.state();
    let result = app_state.bloch.simulate.rocking.result.as_ref().expect("sweep result");
    let (union, flat) = (result.series.hkl(), result.series.intensities());
    let p1 = parse_cif("Si", &si_cif()).expect("Si");
    for (i, offset) in result.series.tilts().iter().enumerate() {
        let at = SimInputs { tilt_deg: [*offset, 0.0], ..app_state.bloch.simulate.inputs.clone() };
        let direct = run_case("Si", &si_cif(), &p1, &at).expect("static case");
        for (j, h) in union.iter().enumerate() {
            let want = direct.hkl.iter().position(|d| d == h).map_or(0.0, |k| direct.intensities[0][k]);
            let got = flat[i * union.len() + j];
            assert!((got - want).abs() <= 1e-12, "tilt {offset}, {h:?}: {got} vs {want}");
        }
    }

    // A long sweep, cancelled after two tilts: it keeps what it did.
    assert_eq!(command(&mut harness, r#"{"do": "blochRocking", "fromDeg": -2, "toDeg": 2, "n": 400}"#), None);
    let deadline = Instant::now() + Duration::from_secs(600);
    while harness.state().bloch.simulate.rocking.progress().0 < 2 {
        assert!(Instant::now() < deadline && harness.state().bloch.simulate.rocking.is_running(), "no progress");
        std::thread::sleep(Duration::from_millis(5));
        harness.step();
    }
    assert_eq!(command(&mut harness, r#"{"do": "blochRocking", "cancel": true}"#), None);
    settle(&mut harness, |a| a.bloch.simulate.is_running());
    let rocking = status(&harness)["bloch"]["simulate"]["rocking"].clone();
    let tilts = rocking["result"]["tilts"].as_u64().expect("tilts");
    assert!((2..400).contains(&tilts), "{rocking}");
    assert_eq!(rocking["result"]["cancelled"].as_bool(), Some(true));
    assert!(harness.query_by_label_contains("(cancelled)").is_some());
}
