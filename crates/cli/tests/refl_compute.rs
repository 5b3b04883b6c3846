//! `scatterlab refl compute` on the fixture, both devices, against the README's tolerances,
//! and a broken case that must fail alone (with a non-zero exit status).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

fn fixture() -> PathBuf {
    scatterlab_testkit::fixture("refl/reference.json")
}

fn run(args: &[&str]) -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(args).output().expect("run scatterlab");
    assert!(out.status.success(), "scatterlab {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("results JSON on stdout")
}

fn check_against_fixture(device: &str, tol: f64) -> Value {
    check_against_fixture_with(device, &[], tol, 0.0)
}

/// The 40 cases with `--device device` and `extra` flags: |R − R_hp| ≤ tol · R_hp + floor.
fn check_against_fixture_with(device: &str, extra: &[&str], tol: f64, floor: f64) -> Value {
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    let fixture_path = fixture();
    let mut args = vec!["refl", "compute", fixture_path.to_str().unwrap(), "--device", device];
    args.extend_from_slice(extra);
    let got = run(&args);
    assert_eq!(got["device"], device);
    let cases = got["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 40);
    for (g, e) in cases.iter().zip(expected["cases"].as_array().unwrap()) {
        assert_eq!(g["id"], e["id"]);
        for pol in ["R_s", "R_p"] {
            for (x, y) in g[pol].as_array().unwrap().iter().zip(e["expected_hp"][pol].as_array().unwrap()) {
                let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                assert!((x - y).abs() <= tol * y + floor, "{} {pol} ({device} {extra:?}): {x} vs {y}", g["id"]);
            }
        }
    }
    got
}

#[test]
fn cpu_results_meet_1e9() {
    check_against_fixture("cpu", 1e-9);
}

#[test]
fn gpu_results_meet_2e3() {
    if scatterlab_testkit::skip_gpu("refl compute --device gpu") {
        return;
    }
    check_against_fixture("gpu", 2e-3);
}

/// Issue 21: `--precision df64` runs the uniaxial cases through the double-float 4×4 kernel,
/// within 1e-6 of the high-precision reference (the f32 recursion needs 2e-3), and says so.
#[test]
fn gpu_df64_results_meet_1e6() {
    if scatterlab_testkit::skip_gpu("refl compute --device gpu --precision df64") {
        return;
    }
    let got = check_against_fixture_with("gpu", &["--precision", "df64"], 1e-6, 1e-13);
    assert_eq!(got["provenance"]["accumulation"], "df64", "{}", got["provenance"]);
    assert!(got["backend"].as_str().unwrap().ends_with("df64"), "{}", got["backend"]);
}

#[test]
fn df64_without_a_gpu_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(["refl", "compute", fixture().to_str().unwrap(), "--device", "cpu", "--precision", "df64"]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--precision df64 needs --device gpu"), "{stderr}");
}

#[test]
fn a_bad_case_fails_alone() {
    let dir = std::env::temp_dir().join(format!("scatterlab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cases.json");
    let good = r#"{"id":"good","energy_ev":250,"q_inv_A":[0.01,0.1],"thickness_A":[0,100,0],"roughness_A":[0,3,2],
        "delta_o":[0,1e-3,5e-3],"beta_o":[0,1e-4,4e-3],"delta_e":[0,2e-3,5e-3],"beta_e":[0,1e-4,4e-3]}"#;
    let bad_q = good.replace("\"good\"", "\"bad_q\"").replace("0.1]", "0.3]");
    let bad_thickness = good.replace("\"good\"", "\"negative\"").replace("[0,100,0]", "[0,-5,0]");
    let missing = r#"{"id":"missing","energy_ev":250}"#;
    std::fs::write(&path, format!(r#"{{"cases":[{good},{bad_q},{bad_thickness},{missing}]}}"#)).unwrap();
    // Every case is still written, but the command fails (issue 25) and lists the failed cases.
    let out = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(["refl", "compute", path.to_str().unwrap(), "--device", "cpu"]).output().unwrap();
    assert!(!out.status.success(), "three of four cases failed: the exit status must say so");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("3 of 4 case(s) failed") && stderr.contains("case bad_q:") && stderr.contains("case missing:"), "{stderr}");
    let got: Value = serde_json::from_slice(&out.stdout).expect("results JSON on stdout");
    let cases = got["cases"].as_array().unwrap();
    assert_eq!(cases[0]["R_s"].as_array().unwrap().len(), 2);
    assert!(cases[1]["error"].as_str().unwrap().contains("q[1]"), "{}", cases[1]);
    assert!(cases[2]["error"].as_str().unwrap().contains("layer 1 thickness"), "{}", cases[2]);
    assert!(cases[3]["error"].as_str().unwrap().contains("missing"), "{}", cases[3]);
}
