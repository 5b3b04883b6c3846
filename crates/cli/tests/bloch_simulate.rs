//! `scatterlab bloch simulate` on the Bloch fixture: expm meets I_ref within 1e-6 on every case;
//! eigen fails only the absorptive case (typed error, other cases still written); --device gpu
//! (f32 Taylor propagation) meets the GPU gate of 1e-4 on every case and says so in the file.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixture() -> PathBuf {
    std::env::var("SCATTERLAB_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures"))
        .join("bloch/reference.json")
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("scatterlab-cli-bloch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn simulate(args: &[&str], out: &Path) -> Output {
    let cases = fixture();
    let mut all = vec!["bloch", "simulate", cases.to_str().unwrap()];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--out", out.to_str().unwrap()]);
    Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(&all).output().expect("run scatterlab")
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Max |I − I_ref| of one result case, matching beams by hkl.
fn max_error(got: &Value, expected: &Value) -> f64 {
    let got_hkl = got["hkl"].as_array().unwrap();
    let mut worst: f64 = 0.0;
    for (t, row) in expected["intensities"]["I_ref"].as_array().unwrap().iter().enumerate() {
        for (hkl, value) in expected["beams"]["hkl"].as_array().unwrap().iter().zip(row.as_array().unwrap()) {
            let i = got_hkl.iter().position(|h| h == hkl).expect("beam present");
            worst = worst.max((got["I"][t][i].as_f64().unwrap() - value.as_f64().unwrap()).abs());
        }
    }
    worst
}

#[test]
fn expm_meets_i_ref_on_every_case() {
    let out = scratch("expm.json");
    let run = simulate(&["--solver", "expm"], &out);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let got = read(&out);
    let expected = read(&fixture());
    assert_eq!(got["solver"], "expm");
    let cases = got["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 14);
    for (g, e) in cases.iter().zip(expected["cases"].as_array().unwrap()) {
        assert_eq!(g["id"], e["id"]);
        assert_eq!(g["hkl"].as_array().unwrap().len(), e["beams"]["hkl"].as_array().unwrap().len(), "{}", g["id"]);
        let error = max_error(g, e);
        assert!(error <= 1e-6, "{}: {error:e}", g["id"]);
    }
}

#[test]
fn eigen_fails_only_the_absorptive_case() {
    let out = scratch("eigen.json");
    let run = simulate(&["--solver", "eigen"], &out);
    assert!(!run.status.success());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("1 of 14 case(s) failed") && stderr.contains("SrTiO3-200kV-09") && stderr.contains("expm"), "{stderr}");
    let got = read(&out);
    for case in got["cases"].as_array().unwrap() {
        assert_eq!(case.get("error").is_some(), case["id"] == "SrTiO3-200kV-09", "{}", case["id"]);
    }
}

#[test]
fn gpu_meets_1e_4_on_every_case() {
    let out = scratch("gpu.json");
    let run = simulate(&["--device", "gpu"], &out);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let results = read(&out);
    assert_eq!(results["solver"], "taylor-f32");
    assert!(results["device"].as_str().unwrap().starts_with("gpu "), "{}", results["device"]);
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(fixture()).unwrap()).unwrap();
    for (got, want) in results["cases"].as_array().unwrap().iter().zip(reference["cases"].as_array().unwrap()) {
        let error = max_error(got, want);
        assert!(error <= 1e-4, "{}: GPU vs I_ref {error:.3e}", want["id"]);
    }
}
