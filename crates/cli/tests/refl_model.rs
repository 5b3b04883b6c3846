//! `scatterlab refl compute --model`: a model file evaluated on its own q grids and on a given grid,
//! equal to the library's evaluation; a typo in the model is reported by key name.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn model_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../refl/tests/data/models/film_two_energies.json")
}

fn scatterlab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(args).output().expect("run scatterlab")
}

#[test]
fn model_curves_match_the_library() {
    let path = model_path();
    let out = scatterlab(&["refl", "compute", "--model", path.to_str().unwrap(), "--device", "cpu"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let model = scatterlab_refl::model::Model::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let values = model.values().to_vec();
    let expect = pollster::block_on(model.evaluate(scatterlab_refl::Engine::Cpu, &[&values])).unwrap().remove(0);
    let datasets = got["datasets"].as_array().unwrap();
    assert_eq!(datasets.len(), 2);
    for (d, e) in datasets.iter().zip(&expect) {
        let r: Vec<f64> = d["R"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(r.len(), e.len());
        // Through JSON text: serde_json's float parsing may differ from the value by an ulp.
        for (a, b) in r.iter().zip(e) {
            assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs(), "{a} vs {b}");
        }
    }
    assert_eq!(got["device"], "cpu");
    assert_eq!(got["provenance"]["accumulation"], "f64");
}

#[test]
fn a_given_grid_replaces_the_datasets_q() {
    let path = model_path();
    let out = scatterlab(&["refl", "compute", "--model", path.to_str().unwrap(), "--q-grid", "0.01:0.2:50"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let q = got["datasets"][1]["q_inv_A"].as_array().unwrap();
    assert_eq!(q.len(), 50);
    assert_eq!(q[49].as_f64().unwrap(), 0.2);
}

#[test]
fn a_typo_is_named() {
    let text = std::fs::read_to_string(model_path()).unwrap().replacen("\"thickness\"", "\"thicknes\"", 1);
    let dir = std::env::temp_dir().join(format!("scatterlab-cli-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, text).unwrap();
    let out = scatterlab(&["refl", "compute", "--model", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("thicknes"), "{err}");
}

/// Issue 21: a tilted model on `--device gpu` runs the df64 4×4 kernel (it used to be refused) and
/// equals the library's CPU evaluation within 1e-6 · R + 1e-13.
#[test]
fn a_tilted_model_runs_on_the_gpu() {
    if scatterlab_testkit::skip_gpu("refl compute --model <tilted> --device gpu") {
        return;
    }
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(model_path()).unwrap()).unwrap();
    v["layers"][1]["euler_deg"] = serde_json::json!([25.0, 40.0, 0.0]);
    let text = v.to_string();
    let dir = std::env::temp_dir().join(format!("scatterlab-cli-tilted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("tilted.json");
    std::fs::write(&path, &text).unwrap();
    let out = scatterlab(&["refl", "compute", "--model", path.to_str().unwrap(), "--device", "gpu"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["device"], "gpu");
    assert_eq!(got["provenance"]["accumulation"], "df64");
    let model = scatterlab_refl::model::Model::from_json(&text).unwrap();
    let values = model.values().to_vec();
    let expect = pollster::block_on(model.evaluate(scatterlab_refl::Engine::Cpu, &[&values])).unwrap().remove(0);
    for (d, e) in got["datasets"].as_array().unwrap().iter().zip(&expect) {
        let r: Vec<f64> = d["R"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
        assert_eq!(r.len(), e.len());
        for (a, b) in r.iter().zip(e) {
            assert!((a - b).abs() <= 1e-6 * b.abs() + 1e-13, "{a} vs {b}");
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
