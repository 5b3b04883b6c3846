//! `scatterlab refl fit <fit_task.json> --method de` on both devices: χ² ≤ 1.01 × the fixture's
//! `chi2_at_truth` and every parameter within 3 reported standard errors of the truth (read here, by
//! the test; the CLI never reads it). Also LM from the task's start, and a typo'd method rejected.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn task() -> PathBuf {
    std::env::var("SCATTERLAB_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures"))
        .join("refl/fit_task.json")
}

fn fit(args: &[&str]) -> Value {
    let task = task();
    let mut all = vec!["refl", "fit", task.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(&all).output().expect("run scatterlab");
    assert!(out.status.success(), "scatterlab {all:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("result JSON on stdout")
}

fn check(result: &Value, device: &str) {
    let truth: Value = serde_json::from_str(&std::fs::read_to_string(task()).unwrap()).unwrap();
    let chi2_truth = truth["chi2_at_truth"].as_f64().unwrap();
    let chi2 = result["chi2"].as_f64().unwrap();
    assert!(chi2 <= 1.01 * chi2_truth, "{device}: χ² {chi2} > 1.01 × {chi2_truth}");
    assert_eq!(result["device"], device);
    assert_eq!(result["n_points"], 720);
    assert!(result["evaluations"].as_u64().unwrap() > 1000);
    let params = result["parameters"].as_object().unwrap();
    assert_eq!(params.len(), 12);
    for (name, p) in params {
        let (v, s) = (p["value"].as_f64().unwrap(), p["stderr"].as_f64().unwrap());
        let t = truth["truth"][name].as_f64().unwrap();
        assert!(s > 0.0 && ((v - t) / s).abs() <= 3.0, "{device}: {name} = {v} ± {s}, truth {t}");
    }
}

#[test]
fn de_on_the_cpu_meets_the_acceptance() {
    check(&fit(&["--method", "de", "--device", "cpu", "--seed", "3"]), "cpu");
}

#[test]
fn de_on_the_gpu_meets_the_acceptance() {
    if std::env::var("SCATTERLAB_SKIP_GPU").is_ok_and(|v| v == "1") {
        return;
    }
    check(&fit(&["--method", "de", "--device", "gpu", "--seed", "3"]), "gpu");
}

#[test]
fn an_unknown_method_is_rejected() {
    let task = task();
    let out = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(["refl", "fit", task.to_str().unwrap(), "--method", "simplex"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("simplex"));
}
