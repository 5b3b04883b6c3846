//! Issue 17 item 20: `scatterlab refl fit --method de --seed S` follows the library's one DE
//! trajectory: its generations, evaluations (DE + LM), χ² and fitted values are bit for bit those
//! of `scatterlab_refl::fit::differential_evolution` + LM with the default options and that seed
//! (the same `DeRun` the desktop app and the npm worker step; `crates/refl/tests/de_trajectory.rs`
//! shows those equal the one-shot run).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;
use std::process::Command;

use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{self, DeOptions, LmOptions, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use scatterlab_refl::Engine;
use serde_json::Value;

/// A film on a substrate (3 free parameters, 40 points), shared with the library's test.
fn model_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../refl/tests/data/models/film_de_trajectory.json")
}

#[test]
fn the_cli_runs_the_libraries_de_trajectory() {
    let path = model_path();
    let text = std::fs::read_to_string(&path).expect("film model");
    let model = Model::from_json(&text).expect("model");
    let objective = Objective::new(&model, ObjectiveOptions::default()).expect("objective");
    let cancel = CancelToken::new();
    for seed in [3_u64, 2026] {
        let out = Command::new(env!("CARGO_BIN_EXE_scatterlab"))
            .args(["refl", "fit", path.to_str().expect("utf-8 path"), "--method", "de", "--device", "cpu", "--seed", &seed.to_string()])
            .output()
            .expect("run scatterlab");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "seed {seed}: {stderr}");
        let cli: Value = serde_json::from_slice(&out.stdout).expect("result JSON");

        let de =
            pollster::block_on(fit::differential_evolution(&objective, Engine::Cpu, &DeOptions { seed, ..Default::default() }, None, &mut |_| {}, &cancel)).expect("library DE");
        let lm = fit::levenberg_marquardt(&objective, &de.x, &LmOptions::default(), &mut |_| {}, &cancel).expect("library LM");
        let (x, chi2) = if lm.chi2 <= de.chi2 { (&lm.x, lm.chi2) } else { (&de.x, de.chi2) };
        println!(
            "seed {seed}: CLI {} generations, {} evaluations, χ² {}; library {} generations (converged {}), {} + {} evaluations, χ² {chi2}",
            cli["generations"], cli["evaluations"], cli["chi2"], de.generations, de.converged, de.evaluations, lm.evaluations
        );
        assert!(de.converged && de.generations < DeOptions::default().max_generations, "seed {seed}: DE did not converge");
        assert!(stderr.contains(&format!("DE converged in {} generations", de.generations)), "seed {seed}: {stderr}");
        assert_eq!(cli["generations"].as_u64(), Some(de.generations as u64), "seed {seed}: generations");
        assert_eq!(cli["evaluations"].as_u64(), Some((de.evaluations + lm.evaluations) as u64), "seed {seed}: evaluations");
        assert_eq!(cli["chi2"].as_f64().map(f64::to_bits), Some(chi2.to_bits()), "seed {seed}: χ² {} vs {chi2}", cli["chi2"]);
        for (name, v) in objective.names().iter().zip(x) {
            assert_eq!(cli["parameters"][*name]["value"].as_f64().map(f64::to_bits), Some(v.to_bits()), "seed {seed}: {name}");
        }
    }
}
