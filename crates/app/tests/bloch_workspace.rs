//! The Bloch workspace in a headless egui harness, driven by host commands as a page or
//! `--script` would: a fixture CIF opens (a broken one shows its line and tag), a static
//! zone-axis case simulates to exactly the intensities of `scatterlab bloch simulate`'s path
//! (`zone::case_from_zone` + `simulate_within`, ≤ 1e-12), the thickness slider re-indexes one
//! run; the synthetic quartz experiment refines two LM steps with progress and a lower wR2, and a
//! longer run is cancelled; the browser's worker answer reads into the native run's outputs; the
//! desktop's opens and export folders have the system's dialog beside their typed paths.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use scatterlab_app::landmarks;
use scatterlab_app::script::Command;
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::simulate::simulate_within;
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::zone::{case_from_zone, ZoneCase};
use scatterlab_bloch::{parse_cif, Limits};
use serde_json::Value;

mod bloch_common;
use bloch_common::{app, command, fixtures, settle, si_cif, status};

#[test]
fn a_static_case_equals_the_cli_path_and_the_slider_reindexes() {
    let mut harness = app();
    let cif = si_cif();
    let open = serde_json::json!({"do": "blochOpenCif", "name": "Si.cif", "text": cif}).to_string();
    assert_eq!(command(&mut harness, &open), None);
    let crystal = &status(&harness)["bloch"]["crystal"];
    assert_eq!((crystal["name"].as_str(), crystal["sites"].as_u64(), crystal["atomsP1"].as_u64()), (Some("Si"), Some(1), Some(8)), "{crystal}");
    assert!(harness.query_by_label_contains("asymmetric unit: 1 site").is_some());

    let thicknesses = [100.0, 250.0, 400.0];
    for (solver, name) in [(Solver::Eigen, "eigen"), (Solver::Expm, "expm")] {
        let run = serde_json::json!({"do": "blochSimulate", "kv": 200, "zone": [1, 1, 0], "thicknesses": thicknesses, "gMax": 1.2, "sgMax": 0.04, "solver": name}).to_string();
        assert_eq!(command(&mut harness, &run), None);
        settle(&mut harness, |app| app.bloch.simulate.is_running());
        let sim = status(&harness)["bloch"]["simulate"].clone();
        assert!(sim["error"].is_null(), "{sim}");
        let got_hkl: Vec<[i32; 3]> = serde_json::from_value(sim["result"]["hkl"].clone()).expect("hkl listed");
        let got: Vec<Vec<f64>> = serde_json::from_value(sim["result"]["I"].clone()).expect("I listed");

        // `scatterlab bloch simulate --cif Si.cif --kv 200 --zone 1,1,0 --thickness 100,250,400 --g-max 1.2 --solver …`.
        let p1 = parse_cif("Si", &cif).expect("Si parses");
        let case = ZoneCase { kv: 200.0, zone: [1, 1, 0], thicknesses_a: thicknesses.to_vec(), g_max: 1.2, sg_max: 0.04, ..ZoneCase::default() };
        let file = case_from_zone("Si", &cif, &p1, &case).expect("case builds");
        let direct = simulate_within(&file, Method { solver, conventions: Conventions::DiffBloch }, &Limits::default());
        let want = &direct.cases[0];
        assert_eq!(sim["result"]["id"].as_str(), Some(want.id.as_str()));
        assert_eq!(Some(&got_hkl), want.hkl.as_ref(), "{name}: same beams");
        let want_i = want.intensities.as_ref().expect("direct run has intensities");
        assert_eq!(got.len(), 3);
        let worst = got.iter().flatten().zip(want_i.iter().flatten()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        println!("{name}: {} beams, max |I_app − I_cli| = {worst:e}", got_hkl.len());
        assert!(worst <= 1e-12, "{name}: {worst}");
        assert!(got_hkl.len() > 10, "{} beams", got_hkl.len());
        for row in &got {
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-9, "flux conserved: {}", row.iter().sum::<f64>());
        }
    }
    assert!(landmarks::rect(&harness.ctx, "bloch pattern").is_some(), "pattern drawn");
    assert!(harness.query_by_label_contains("t = 100 Å (1 of 3)").is_some());
    assert_eq!(command(&mut harness, r#"{"do":"blochView","thicknessIndex":2,"log":true}"#), None);
    assert!(harness.query_by_label_contains("t = 400 Å (3 of 3)").is_some());
    let out = command(&mut harness, r#"{"do":"blochView","thicknessIndex":3}"#).expect("out of range");
    assert!(out.contains("thicknessIndex 3"), "{out}");
    let tpu = Command::parse(r#"{"do":"blochSimulate","device":"tpu"}"#).unwrap_err();
    assert!(tpu.contains("unknown device"), "{tpu}");
    // This harness has no wgpu device: the GPU is refused, never substituted.
    let gpu = command(&mut harness, r#"{"do":"blochSimulate","device":"gpu"}"#).expect("no GPU here");
    assert!(gpu.contains("no GPU device"), "{gpu}");
}

#[test]
fn a_broken_cif_names_its_line_and_tag() {
    let mut harness = app();
    let broken = si_cif().replace("_cell_length_a", "_cell_length_a oops\n_cell_length_q");
    let open = serde_json::json!({"do": "blochOpenCif", "name": "bad.cif", "text": broken}).to_string();
    let error = command(&mut harness, &open).expect("refused");
    let shown = &status(&harness)["bloch"]["crystal"]["error"];
    println!("{error}\n{shown}");
    assert!(shown["line"].as_u64().is_some_and(|l| l > 0) && shown["tag"].is_string(), "{shown}");
    assert!(harness.query_by_label_contains("line ").is_some(), "error shown with its line");
    let missing = command(&mut harness, r#"{"do":"blochOpenCif","path":"/nonexistent/x.cif"}"#).expect("refused");
    assert!(missing.contains("cannot read /nonexistent/x.cif"), "{missing}");
}

#[test]
fn the_quartz_experiment_refines_with_progress_and_cancels() {
    let mut harness = app();
    let dir = fixtures().join("synthetic_quartz");
    let open = serde_json::json!({"do": "blochOpenExperiment", "path": dir}).to_string();
    assert_eq!(command(&mut harness, &open), None);
    assert_eq!(status(&harness)["bloch"]["refine"]["experiment"].as_str(), Some("synthetic-quartz"));

    assert_eq!(command(&mut harness, r#"{"do":"blochRefine","steps":2}"#), None);
    assert!(harness.state().bloch.refine.is_running());
    settle(&mut harness, |app| app.bloch.refine.is_running());
    let refine = status(&harness)["bloch"]["refine"].clone();
    println!("{refine}");
    assert!(refine["error"].is_null(), "{refine}");
    assert_eq!(refine["steps"].as_u64(), Some(2));
    let result = &refine["result"];
    let (start, end) = (result["startWR2"].as_f64().expect("start wR2"), result["wR2"].as_f64().expect("wR2"));
    assert!(end < start, "wR2 decreased: {start} → {end}");
    let history: Vec<f64> = serde_json::from_value(refine["wR2History"].clone()).expect("history");
    assert!(history[1] <= history[0], "{history:?}");
    assert_eq!((result["iterations"].as_u64(), result["cancelled"].as_bool(), result["refinedCif"].as_bool()), (Some(2), Some(false), Some(true)));
    assert!(harness.query_by_label_contains("iteration 2 · wR2").is_some(), "progress shown");
    assert!(refine["frame"].as_i64().is_some(), "the frame browser shows a frame: {refine}");
    assert!(harness.query_by_label_contains("reflections · wR2").is_some(), "frame browser shown");

    // A long run, cancelled once it has made progress: it stops, is finished, and can resume.
    assert_eq!(command(&mut harness, r#"{"do":"blochRefine","steps":200}"#), None);
    let deadline = Instant::now() + Duration::from_secs(600);
    while harness.state().bloch.refine.history.len() < 3 {
        assert!(Instant::now() < deadline && harness.state().bloch.refine.is_running(), "no third step");
        std::thread::sleep(Duration::from_millis(5));
        harness.step();
    }
    assert_eq!(command(&mut harness, r#"{"do":"blochCancel"}"#), None);
    settle(&mut harness, |app| app.bloch.refine.is_running());
    let refine = status(&harness)["bloch"]["refine"].clone();
    let steps = refine["steps"].as_u64().expect("steps");
    assert!((3..50).contains(&steps), "cancelled early: {steps} steps");
    assert_eq!(refine["result"]["cancelled"].as_bool(), Some(true), "{refine}");
    assert!(refine["result"]["wR2"].as_f64().is_some_and(|w| w <= end), "{refine}");
    assert!(harness.query_by_label_contains("(cancelled)").is_some());
    assert!(harness.query_by_label("Resume").is_some(), "can resume");
}

#[test]
fn the_workers_answer_reads_into_the_native_outputs() {
    // In the browser a run is the npm Worker's `blochRefine`, whose answer holds result.json,
    // refined.cif and the CSV as the library writes them: the page must read it into exactly
    // what a native run of the same refiner gives.
    use scatterlab_app::bloch::refine_outputs::Outputs;
    use scatterlab_bloch::refine::{Experiment, LmOptions, Refiner};
    let experiment = Experiment::load(&fixtures().join("synthetic_quartz")).expect("experiment");
    let mut refiner = Refiner::new(experiment, LmOptions::default()).expect("refiner");
    refiner.step(&scatterlab_core::CancelToken::new()).expect("one step");
    let native = Outputs::from_refiner(&refiner, 1.5, true).expect("native outputs");
    let result: Value = serde_json::from_str(&native.result_json).expect("result.json");
    let cif = native.refined_cif.clone().expect("refined CIF");
    let answer = serde_json::json!({"result": result, "refinedCif": cif, "csv": native.csv, "cancelled": true, "warnings": []});
    let web = Outputs::from_answer(&answer.to_string()).expect("the answer reads");
    assert_eq!(web.result, native.result);
    assert_eq!(web.frames, native.frames);
    assert_eq!((web.refined_cif, web.cancelled), (Ok(cif), true));
    let rows: usize = native.frames.values().map(Vec::len).sum();
    assert_eq!(rows, native.csv.lines().count() - 1, "every CSV row is in the frame browser");
    assert_eq!(native.frames.len(), native.result.per_frame.len(), "one browser page per scored frame");
    let err = Outputs::from_answer(r#"{"result": {}, "refinedCif": "", "csv": "", "cancelled": false}"#).err().expect("a broken result.json is refused");
    assert!(err.contains("result.json"), "{err}");
}

/// On the desktop the opens and exports have the system's dialog (`rfd`, as the other
/// workspaces) beside their typed paths (which stay, for scripts and tests): Crystal's CIF
/// "Browse…", Simulate's export folder "Choose…", Refine's experiment folder "Browse…".
#[test]
fn desktop_opens_and_exports_offer_the_system_dialogs() {
    let mut harness = app();
    for (tab, button) in [("Crystal", "Browse…"), ("Simulate", "Choose…"), ("Refine", "Browse…")] {
        harness.get_by_label(tab).click();
        harness.step();
        harness.step();
        assert!(harness.query_by_label(button).is_some(), "{tab}: a {button} button");
    }
}
