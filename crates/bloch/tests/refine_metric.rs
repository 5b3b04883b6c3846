//! Issue 18, deliverables 1 and 3 on `shared/fixtures/bloch/synthetic_quartz`: the experiment
//! directory read as diffBloch reads it, diffBloch's geometry recipe (frames, union coupling,
//! scored set) and its metrics. At `true.cif` and `start.cif` the mean per-frame wR2 and R_obs
//! must equal diffBloch 0.2.0rc1's values in `truth.json` to 1e-3 relative. Run with
//! `--nocapture` for the per-frame table.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;
use std::time::Instant;

use scatterlab_bloch::refine::{Experiment, RefineError};
use serde_json::Value;

fn fixture_dir() -> PathBuf {
    scatterlab_testkit::fixture("bloch/synthetic_quartz")
}

fn truth() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture_dir().join("truth.json")).expect("read truth.json")).expect("truth.json")
}

fn relative(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

#[test]
fn geometry_recipe_matches_diffbloch() {
    let experiment = Experiment::load(&fixture_dir()).expect("load the experiment");
    let truth = truth();
    let plan = &experiment.plan;
    assert_eq!(plan.energy_ev, 200e3);
    assert_eq!(plan.frames.len(), 41);
    // diffBloch's union beam count per frame (its adaptive union coupling, 21 tilts).
    let expected: Vec<usize> = truth["n_union_beams_per_frame"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
    let ours: Vec<usize> = (0..plan.frames.len()).map(|i| plan.frame(i).unwrap().union().len()).collect();
    assert_eq!(ours, expected);
    // Every PETS reflection falls in the Klar window and the solved union of its frame.
    let scored: usize = plan.frames.iter().map(|f| f.scored.len()).sum();
    assert_eq!(scored, truth["n_reflections"].as_u64().unwrap() as usize);
    // U0 of the start structure (diffBloch's plan: 0.11600144669112258 Å⁻²).
    assert!(relative(plan.optics.u0_a2, 0.11600144669112258) < 1e-12, "U0 {}", plan.optics.u0_a2);
}

#[test]
fn metrics_match_diffbloch_at_true_and_start() {
    let experiment = Experiment::load(&fixture_dir()).expect("load the experiment");
    let reference = &truth()["diffbloch_0.2.0rc1_reference_run"]["metrics_mean_over_41_rotations"];
    for (cif, key) in [("true.cif", "true_model"), ("start.cif", "start_model")] {
        let structure = experiment.read_structure(&fixture_dir().join(cif)).expect("read the structure");
        let started = Instant::now();
        let evaluation = experiment.evaluate(&structure).expect("evaluate");
        let seconds = started.elapsed().as_secs_f64();
        for frame in &evaluation.frames {
            println!("{cif} frame {:>2}: n {:>2} wR2 {:.6} R_obs {:.6}", frame.id, frame.metrics.n, frame.metrics.wr2.value, frame.metrics.r_obs.value);
        }
        let (wr2, r_obs) = (reference[key]["wR2"].as_f64().unwrap(), reference[key]["R_obs"].as_f64().unwrap());
        println!("{cif}: wR2 {:.6} (diffBloch {wr2}), R_obs {:.6} (diffBloch {r_obs}), {seconds:.2} s", evaluation.wr2, evaluation.r_obs);
        // truth.json rounds to 5 decimals: 1e-3 relative is well above that rounding.
        assert!(relative(evaluation.wr2, wr2) < 1e-3, "{cif}: wR2 {} vs {wr2}", evaluation.wr2);
        assert!(relative(evaluation.r_obs, r_obs) < 1e-3, "{cif}: R_obs {} vs {r_obs}", evaluation.r_obs);
    }
}

/// diffBloch's own plan and numbers (`crates/bloch/data/diffbloch_refine_plan.py`).
fn diffbloch_plan() -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/diffbloch_synthetic_quartz_plan.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("read the diffBloch plan")).expect("plan JSON")
}

fn hkl_list(value: &Value) -> Vec<[i32; 3]> {
    value.as_array().unwrap().iter().map(|h| std::array::from_fn(|i| h[i].as_i64().unwrap() as i32)).collect()
}

#[test]
fn frames_and_intensities_match_diffbloch_frame_by_frame() {
    let experiment = Experiment::load(&fixture_dir()).expect("load the experiment");
    let reference = diffbloch_plan();
    let frames = reference["frames"].as_array().unwrap();
    assert_eq!(experiment.plan.frames.len(), frames.len());
    assert!(relative(experiment.plan.optics.u0_a2, reference["u0_A2"].as_f64().unwrap()) < 1e-14);
    for (ours, theirs) in experiment.plan.frames.iter().zip(frames) {
        assert_eq!(ours.id, theirs["id"].as_i64().unwrap());
        // The same segments: beam sets (diffBloch's in grid order, ours sorted) and tilt covers.
        let segments = theirs["segments"].as_array().unwrap();
        assert_eq!(ours.segments.len(), segments.len(), "frame {}", ours.id);
        for (s, t) in ours.segments.iter().zip(segments) {
            let mut expected = hkl_list(&t["hkl"]);
            expected.sort_unstable();
            assert_eq!(s.hkl, expected, "frame {}", ours.id);
            let tilts: Vec<usize> = t["tilts"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
            assert_eq!(s.tilts, tilts, "frame {}", ours.id);
        }
        let scored: Vec<[i32; 3]> = ours.scored.iter().map(|s| s.hkl).collect();
        assert_eq!(scored, hkl_list(&theirs["scored_hkl"]), "frame {}", ours.id);
    }
    for cif in ["true.cif", "start.cif"] {
        let model = &reference["models"][cif];
        let evaluation = experiment.evaluate(&experiment.read_structure(&fixture_dir().join(cif)).unwrap()).unwrap();
        let (mut worst_row, mut worst_frame, mut worst_metric) = (0.0_f64, 0.0_f64, 0.0_f64);
        for (f, frame) in evaluation.frames.iter().enumerate() {
            let theirs: Vec<f64> = model["calculated"][f].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
            let largest = theirs.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            for (a, b) in frame.calculated.iter().zip(&theirs) {
                worst_row = worst_row.max((a - b).abs() / b.abs());
                worst_frame = worst_frame.max((a - b).abs() / largest);
            }
            worst_metric = worst_metric.max(relative(frame.metrics.wr2.value, model["wr2"][f].as_f64().unwrap()));
            worst_metric = worst_metric.max(relative(frame.metrics.r_obs.value, model["r_obs"][f].as_f64().unwrap()));
        }
        let mean_wr2 = relative(evaluation.wr2, model["mean_wr2"].as_f64().unwrap());
        let mean_r_obs = relative(evaluation.r_obs, model["mean_r_obs"].as_f64().unwrap());
        println!(
            "{cif}: calculated vs diffBloch: max relative per row {worst_row:.2e} (of the frame's largest {worst_frame:.2e}); per-frame metrics {worst_metric:.2e}; means wR2 {mean_wr2:.2e}, R_obs {mean_r_obs:.2e}"
        );
        // Issue 18: the same structure gives the same intensities, ≤ 1e-4 relative on every scored
        // row (measured 3.6e-5: diffBloch propagates in complex64, whose matrix_exp carries ~1e-5).
        assert!(worst_row < 1e-4, "{cif}: {worst_row:e}");
        // That 1e-5 noise moves a frame's wR2 by ~1e-5/wR2 relative: up to 6e-4 at the true
        // model's wR2 of 0.015 (measured), so per-frame metrics are held to 2e-3 and the means,
        // where it averages out, to the acceptance's 1e-3.
        assert!(worst_metric < 2e-3, "{cif}: {worst_metric:e}");
        assert!(mean_wr2 < 1e-3 && mean_r_obs < 1e-3, "{cif}: {mean_wr2:e} {mean_r_obs:e}");
    }
}

/// A copy of the fixture directory with one file's text changed, in a fresh temporary folder.
fn altered(name: &str, file: &str, change: impl Fn(&str) -> String) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("scatterlab-refine-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in ["experiment.yaml", "exp_data.cif_pets", "start.cif"] {
        let text = std::fs::read_to_string(fixture_dir().join(entry)).unwrap();
        let text = if entry == file { change(&text) } else { text };
        std::fs::write(dir.join(entry), text).unwrap();
    }
    dir
}

#[test]
fn bad_inputs_are_typed_errors_naming_the_item() {
    let unknown = altered("yaml", "experiment.yaml", |t| t.replace("  sg_max: 0.01", "  sg_max: 0.01\n  sg_maxx: 0.02"));
    let err = Experiment::load(&unknown).unwrap_err();
    assert!(matches!(&err, RefineError::Yaml { key, .. } if key == "blochwave.sg_maxx"), "{err}");

    let wrong_type = altered("yaml-type", "experiment.yaml", |t| t.replace("rocking_curve_sampling: 21", "rocking_curve_sampling: many"));
    let err = Experiment::load(&wrong_type).unwrap_err();
    assert!(err.to_string().contains("blochwave.rocking_curve_sampling"), "{err}");

    let malformed = altered("pets-row", "exp_data.cif_pets", |t| t.replacen("   1    1    2     12294.5329", "   1    1    x     12294.5329", 1));
    let err = Experiment::load(&malformed).unwrap_err();
    assert!(matches!(&err, RefineError::Pets { line: 90, .. }), "{err}");

    let orphan = altered("pets-frame", "exp_data.cif_pets", |t| t.replacen("239.9587    1", "239.9587   99", 1));
    let err = Experiment::load(&orphan).unwrap_err();
    assert!(matches!(&err, RefineError::Pets { line: 90, .. }) && err.to_string().contains("frame 99"), "{err}");

    let cubic = altered("cif-cell", "start.cif", |t| t.replace("_cell_angle_gamma 120.0", "_cell_angle_gamma 90.0"));
    let err = Experiment::load(&cubic).unwrap_err();
    assert!(matches!(&err, RefineError::Inconsistent { item, .. } if item.contains("cell gamma")), "{err}");

    // P4 operators on the hexagonal data cell: the space group contradicts the cell.
    let tetragonal = altered("cif-symmetry", "start.cif", |t| t.replace("'-y,x-y,z+2/3'", "'-y,x,z'"));
    let err = Experiment::load(&tetragonal).unwrap_err();
    assert!(matches!(&err, RefineError::Inconsistent { item, .. } if item.contains("symmetry operator 2")), "{err}");
}
