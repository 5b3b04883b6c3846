//! `scatterlab refl fit <fit_task.json> --method de` on both devices: χ² ≤ 1.01 × the fixture's
//! `chi2_at_truth` and every parameter within 3 reported standard errors of the truth (read here, by
//! the test; the CLI never reads it). Also LM from the task's start, and a typo'd method rejected.
//! Issue 17 item 11: a fit is not silent (one summary line on stderr: method, χ², stop reason,
//! evaluations, wall time, device), draws no bar when stderr is no terminal, and `--quiet` hushes it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn task() -> PathBuf {
    scatterlab_testkit::fixture("refl/fit_task.json")
}

fn fit(args: &[&str]) -> Value {
    let task = task();
    let mut all = vec!["refl", "fit", task.to_str().unwrap()];
    all.extend_from_slice(args);
    let out = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(&all).output().expect("run scatterlab");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scatterlab {all:?} failed: {stderr}");
    // DE's way out is named; no bar off a terminal (a GPU driver may add its own lines).
    assert!(stderr.contains("refl fit: de + lm: χ² = ") && (stderr.contains("DE converged in") || stderr.contains("DE stopped at")), "{stderr}");
    assert!(!stderr.contains('\x1b') && stderr.lines().filter(|l| l.contains("refl fit:")).count() == 1, "{stderr}");
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
    if scatterlab_testkit::skip_gpu("refl fit --device gpu") {
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

fn fit_to_file(extra: &[&str]) -> (std::process::Output, Value) {
    let task = task();
    let out = std::env::temp_dir().join(format!("scatterlab-cli-fit-summary-{}-{}.json", std::process::id(), extra.len()));
    let mut args = vec!["refl", "fit", task.to_str().unwrap(), "--method", "lm", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let run = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(&args).output().expect("run scatterlab");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let result = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    (run, result)
}

#[test]
fn a_fit_to_a_file_prints_a_one_line_summary() {
    let (run, result) = fit_to_file(&[]);
    assert!(run.stdout.is_empty(), "the result went to the file");
    let stderr = String::from_utf8_lossy(&run.stderr);
    let line = stderr.trim_end();
    assert!(!line.contains('\n'), "one line: {stderr}");
    let chi2 = result["chi2"].as_f64().unwrap();
    let evaluations = result["evaluations"].as_u64().unwrap();
    for part in ["refl fit: lm: ", &format!("χ² = {chi2:.6e}"), "χ²/N = ", "N = 720", "LM converged in", &format!("{evaluations} evaluations"), "cpu f64"] {
        assert!(line.contains(part), "{part:?} not in {line:?}");
    }
    // Wall time in seconds, before the device.
    let time = line.split("; ").find(|p| p.ends_with(" s")).unwrap_or_else(|| panic!("no time in {line:?}"));
    assert!(time.trim_end_matches(" s").parse::<f64>().is_ok_and(|t| t >= 0.0), "{time:?}");
    // stderr is a pipe here: no progress bar, so no cursor or colour escapes at all.
    assert!(!stderr.contains('\x1b') && !stderr.contains('\r'), "{stderr:?}");
}

#[test]
fn quiet_suppresses_the_summary() {
    for flag in ["--quiet", "-q"] {
        let (run, result) = fit_to_file(&[flag]);
        assert!(run.stderr.is_empty(), "{flag}: {}", String::from_utf8_lossy(&run.stderr));
        assert!(result["chi2"].as_f64().unwrap() > 0.0, "the fit still ran and wrote its result");
    }
}
