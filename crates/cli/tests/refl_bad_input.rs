//! Issue 25 on the command line (reflectivity): the campaign's absurd inputs end in a clean error
//! naming the case/layer/field, the value and the limit, with a non-zero exit status; never a
//! `null` R or χ², never a panic or an 8 TB allocation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixtures() -> PathBuf {
    scatterlab_testkit::fixtures_dir()
}

fn model_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../refl/tests/data/models/film_two_energies.json")
}

fn scatterlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(args).output().expect("run scatterlab")
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("scatterlab-refl-bad-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Fails with a message on stderr containing every `expected` piece.
fn fails_with(out: &Output, expected: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "must fail; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for piece in expected {
        assert!(stderr.contains(piece), "missing {piece:?} in: {stderr}");
    }
    stderr
}

const GOOD: &str = r#"{"id":"good","energy_ev":250,"q_inv_A":[0.01,0.1],"thickness_A":[0,100,0],"roughness_A":[0,3,2],
    "delta_o":[0,1e-3,5e-3],"beta_o":[0,1e-4,4e-3],"delta_e":[0,2e-3,5e-3],"beta_e":[0,1e-4,4e-3]}"#;

/// The campaign's silent-NaN cases: (id, text replaced in GOOD, text expected in the case's error).
const ABSURD: [(&str, &str, &str, &str); 9] = [
    ("energy", "\"energy_ev\":250", "\"energy_ev\":1e12", "energy: 1e12 eV is above the limit 1e6 eV"),
    ("thickness", "[0,100,0]", "[0,1e200,0]", "layer 1 thickness: 1e200 Å is above the limit 1e7 Å"),
    ("roughness", "[0,3,2]", "[0,1e154,2]", "layer 1 roughness: 1e154 Å is above the limit 10000 Å"),
    ("delta_plus", "\"delta_o\":[0,1e-3,5e-3]", "\"delta_o\":[0,1e308,5e-3]", "layer 1 delta_o: 1e308 is above the limit 1"),
    ("delta_minus", "\"delta_e\":[0,2e-3,5e-3]", "\"delta_e\":[0,-1e308,5e-3]", "layer 1 delta_e: -1e308 is below the limit -1"),
    ("beta_plus", "\"beta_o\":[0,1e-4,4e-3]", "\"beta_o\":[0,1e308,4e-3]", "layer 1 beta_o: 1e308 is above the limit 1"),
    ("beta_minus", "\"beta_e\":[0,1e-4,4e-3]", "\"beta_e\":[0,-1e308,4e-3]", "layer 1 beta_e: -1e308 is below the limit -1"),
    ("epsilon_zero", "\"delta_o\":[0,1e-3,5e-3],\"beta_o\":[0,1e-4,4e-3]", "\"delta_o\":[0,0.5,5e-3],\"beta_o\":[0,0,4e-3]", "layer 1 delta_o, beta_o: δ = 0.5, β = 0 give |ε|"),
    // Inside every limit, but the Névot–Croce factor of two evanescent films overflows at 1 MeV:
    // the output check turns the NaN into this case's error, naming the first q point.
    (
        "overflow",
        "\"energy_ev\":250,\"q_inv_A\":[0.01,0.1],\"thickness_A\":[0,100,0],\"roughness_A\":[0,3,2],\n    \"delta_o\":[0,1e-3,5e-3],\"beta_o\":[0,1e-4,4e-3],\"delta_e\":[0,2e-3,5e-3],\"beta_e\":[0,1e-4,4e-3]",
        "\"energy_ev\":1e6,\"q_inv_A\":[1.0,2.0],\"thickness_A\":[0,10,0],\"roughness_A\":[0,0,1e4],\"delta_o\":[0,1,0.9],\"beta_o\":[0,0,0],\"delta_e\":[0,1,0.9],\"beta_e\":[0,0,0]",
        "non-finite result: q[0]:",
    ),
];

fn absurd_cases_file(dir: &Path) -> PathBuf {
    let mut cases = vec![GOOD.to_owned()];
    for (id, from, to, _) in ABSURD {
        assert!(GOOD.contains(from), "{id}: the test's replacement does not apply");
        cases.push(GOOD.replace("\"good\"", &format!("\"{id}\"")).replace(from, to));
    }
    let path = dir.join("absurd.json");
    std::fs::write(&path, format!(r#"{{"cases":[{}]}}"#, cases.join(","))).unwrap();
    path
}

fn check_absurd_results(device: &str) {
    let dir = temp_dir(&format!("compute-{device}"));
    let cases = absurd_cases_file(&dir);
    let results = dir.join("results.json");
    let out = scatterlab(&["refl", "compute", cases.to_str().unwrap(), "--device", device, "--out", results.to_str().unwrap()]);
    fails_with(&out, &["9 of 10 case(s) failed", "case energy:", "case overflow:", "non-finite result"]);
    // The results file is still written: the good case with finite R, every other with its error.
    let got: Value = serde_json::from_str(&std::fs::read_to_string(&results).unwrap()).unwrap();
    let got = got["cases"].as_array().unwrap();
    for pol in ["R_s", "R_p"] {
        assert!(got[0][pol].as_array().unwrap().iter().all(|r| r.as_f64().is_some_and(f64::is_finite)), "{}", got[0]);
    }
    for (case, (id, _, _, expected)) in got[1..].iter().zip(ABSURD) {
        assert_eq!(case["id"], id);
        assert!(case.get("R_s").is_none() && case.get("R_p").is_none(), "{case}");
        let error = case["error"].as_str().unwrap_or_default();
        assert!(error.contains(expected), "{id} ({device}): {error}");
    }
}

#[test]
fn absurd_cases_fail_by_name_and_the_exit_status_says_so() {
    check_absurd_results("cpu");
}

#[test]
fn the_gpu_results_are_checked_alike() {
    if scatterlab_testkit::skip_gpu("refl bad input --device gpu") {
        return;
    }
    check_absurd_results("gpu");
}

#[test]
fn bad_model_values_are_rejected() {
    let dir = temp_dir("model");
    let cases: [(&str, Value, &str); 3] = [
        ("/layers/2/density_scale", 1e154.into(), "layer 2 'oxide' density_scale: 1e154 is above the limit 100"),
        ("/layers/2/density_scale", (-1.0).into(), "layer 2 'oxide' density_scale: -1 is below the limit 0"),
        ("/datasets/1/instrument/scale", (-2.0).into(), "dataset 1 '285.1 eV p' scale: -2 is below the limit 0"),
    ];
    for (k, (pointer, value, expected)) in cases.into_iter().enumerate() {
        let mut model: Value = serde_json::from_str(&std::fs::read_to_string(model_path()).unwrap()).unwrap();
        *model.pointer_mut(pointer).unwrap() = value;
        let path = dir.join(format!("model{k}.json"));
        std::fs::write(&path, model.to_string()).unwrap();
        fails_with(&scatterlab(&["refl", "compute", "--model", path.to_str().unwrap()]), &[path.to_str().unwrap(), expected]);
    }
}

#[test]
fn bounds_of_the_wrong_length_say_so() {
    let dir = temp_dir("bounds");
    for (k, bounds) in [serde_json::json!([1.0, 2.0, 3.0]), serde_json::json!([1.0])].into_iter().enumerate() {
        let mut model: Value = serde_json::from_str(&std::fs::read_to_string(model_path()).unwrap()).unwrap();
        let parameters = model["parameters"].as_object_mut().unwrap();
        let first = parameters.keys().next().unwrap().clone();
        parameters[&first]["bounds"] = bounds;
        let path = dir.join(format!("bounds{k}.json"));
        std::fs::write(&path, model.to_string()).unwrap();
        fails_with(&scatterlab(&["refl", "compute", "--model", path.to_str().unwrap()]), &["bounds must be [lower, upper] (2 numbers)"]);
    }
}

#[test]
fn q_grid_sizes_are_budgeted_before_allocation() {
    let model = model_path();
    for n in ["18446744073709551615", "1000000000000", "99999999999999999999999"] {
        let grid = format!("0.01:0.25:{n}");
        let out = scatterlab(&["refl", "compute", "--model", model.to_str().unwrap(), "--q-grid", &grid]);
        fails_with(&out, &["--q-grid", &format!("{n} points is more than the limit of 10000000 points")]);
    }
}

#[test]
fn q_grid_without_a_model_is_an_error() {
    let cases = fixtures().join("refl/reference.json");
    let out = scatterlab(&["refl", "compute", cases.to_str().unwrap(), "--q-grid", "0.01:0.2:5"]);
    fails_with(&out, &["--q-grid needs --model"]);
    assert!(out.stdout.is_empty(), "nothing is computed");
}

#[test]
fn endless_inputs_stop_at_the_size_limit() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    for args in [&["refl", "compute", "/dev/zero"][..], &["refl", "compute", "--model", "/dev/zero"], &["refl", "fit", "/dev/zero"]] {
        fails_with(&scatterlab(args), &["/dev/zero", "larger than the input limit of 268435456 bytes"]);
    }
}

fn fit_task_text() -> String {
    std::fs::read_to_string(fixtures().join("refl/fit_task.json")).expect("fixture fit_task.json")
}

#[test]
fn a_fit_data_point_of_1e154_is_named() {
    let mut task: Value = serde_json::from_str(&fit_task_text()).unwrap();
    task["datasets"][0]["R"][5] = 1e154.into();
    let path = temp_dir("fit").join("task.json");
    std::fs::write(&path, task.to_string()).unwrap();
    let out = scatterlab(&["refl", "fit", path.to_str().unwrap(), "--method", "lm"]);
    fails_with(&out, &[path.to_str().unwrap(), "dataset 0", "point 5", "R = 1e154 is beyond the limit |R| ≤ 1e12"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("null"), "no result with a null χ² is written");
}

#[test]
fn a_json_syntax_error_in_a_fit_task_is_reported_where_it_is() {
    // Drop the comma after `"seed": 3`: the file has an unknown-to-a-model key (`description`)
    // earlier, which used to hide the real error.
    let text = fit_task_text();
    let broken = text.replacen("\"seed\": 3,", "\"seed\": 3 ", 1);
    assert_ne!(broken, text, "the fixture changed: pick another place to break");
    // serde_json's column is 1-based, at the first byte that cannot follow: the next key's quote.
    let seed = broken.find("\"seed\": 3 ").unwrap();
    let column = seed + broken[seed + 9..].find('"').unwrap() + 9 + 1;
    let path = temp_dir("syntax").join("task.json");
    std::fs::write(&path, broken).unwrap();
    let stderr = fails_with(&scatterlab(&["refl", "fit", path.to_str().unwrap()]), &["JSON syntax error", &format!("line 1 column {column}")]);
    assert!(!stderr.contains("unknown field"), "{stderr}");
}
