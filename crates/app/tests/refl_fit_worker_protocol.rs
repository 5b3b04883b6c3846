//! The web build's fit messages (`refl_fit::worker_protocol`), natively: a request becomes the npm
//! worker's `fit` options (method, seed, limits, resume state, model with the current values) and a
//! result in the worker's shape (as `tests/e2e/fit.html` sees it) becomes the app's `FitResult`.
//! The real worker round trip runs in the browser (`tests/e2e/app.mjs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use scatterlab_app::refl_fit::worker_protocol::{fit_options, fit_result, progress};
use scatterlab_app::refl_fit::{DeState, FitRequest, FitSettings, Method, Stage, Start};
use scatterlab_refl::fit::{task::task_to_model, DeResult, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use serde_json::{json, Value};

fn request(method: Method, start: Start) -> FitRequest {
    let text = std::fs::read_to_string(common::fit_task_path()).unwrap();
    let model = Model::new(task_to_model(&text).unwrap()).unwrap();
    let settings = FitSettings { method, seed: 9, max_generations: 40, popsize: 7, mcmc_steps: 20, ..FitSettings::default() };
    FitRequest { model, settings, start }
}

#[test]
fn requests_carry_method_limits_state_and_values() {
    let r = request(Method::DeLm, Start::Fresh);
    let (model, o) = fit_options(&r).unwrap();
    assert_eq!(o, json!({"method": "de", "seed": 9.0, "maxGenerations": 40, "popsize": 7, "steps": 20, "log": false}));
    let back = Model::from_json(&model).unwrap();
    assert_eq!(back.values(), r.model.values(), "the model travels with its current values");
    assert_eq!(fit_options(&request(Method::Mcmc, Start::Polish)).unwrap().1["method"], "lm", "polish is LM from the current values");
    assert_eq!(fit_options(&request(Method::Mcmc, Start::Fresh)).unwrap().1["method"], "mcmc");
    let state = DeState {
        result: DeResult { x: vec![1.0; 12], chi2: 3.0, evaluations: 84, generations: 5, converged: false, population: vec![vec![1.0; 12]; 2], energies: vec![3.0, 4.0] },
        generations: 6,
        converged: false,
    };
    let (_, o) = fit_options(&request(Method::DeLm, Start::Resume(state))).unwrap();
    assert_eq!(o["resume"], json!({"population": vec![vec![1.0; 12]; 2], "energies": [3.0, 4.0], "evaluations": 84, "generations": 6}));
}

#[test]
fn progress_messages_become_progress() {
    let p =
        progress(&json!({"method": "mcmc", "iteration": 3, "maxIterations": 20, "bestChi2": 701.5, "evaluations": 900, "seconds": 1.0, "evaluationsPerSecond": 900.0})).unwrap();
    assert_eq!((p.stage, p.iteration, p.max_iterations, p.best_chi2, p.evaluations), (Stage::Mcmc, 3, 20, 701.5, 900));
    assert!(progress(&json!({"method": "nope", "iteration": 1})).is_none());
}

#[test]
fn results_become_fit_results() {
    let r = request(Method::Mcmc, Start::Fresh);
    let objective = Objective::new(&r.model, ObjectiveOptions::default()).unwrap();
    let names = objective.names();
    let x: Vec<f64> = objective.start().iter().map(|v| v * 1.01).collect();
    let parameters: serde_json::Map<String, Value> = names.iter().zip(&x).rev().map(|(n, v)| (n.to_string(), json!({"value": v, "stderr": 0.5 * v}))).collect();
    let mut population = vec![x.clone(); 3];
    population[1][0] += 1.0;
    let result = json!({
        "parameters": parameters, "chi2": 695.28, "n_points": 720, "evaluations": 12345, "seconds": 2.5,
        "device": "cpu", "method": "mcmc", "backend": "cpu f64", "cancelled": false, "converged": true, "generations": 77,
        "state": {"population": population, "energies": [900.0, 695.0, 710.0], "evaluations": 12000, "generations": 77},
        "model": "{}",
        "mcmc": {"acceptance_fraction": 0.31, "autocorrelation_time": vec![40.0; 12], "lower_68": vec![0.0; 12], "upper_68": vec![1.0; 12],
                 "lm_value": x, "lm_stderr": vec![0.1; 12], "samples": 2},
    });
    let samples: Vec<f64> = (0..24).map(f64::from).collect();
    let f = fit_result(&result.to_string(), Some(samples), &r, 1.0e5).unwrap();
    assert_eq!(f.x, x, "values are matched by name, not by position");
    assert_eq!(f.values, objective.full(&x));
    assert_eq!(f.stderr.as_ref().unwrap()[0], 0.5 * x[0]);
    assert_eq!((f.chi2, f.start_chi2, f.n_points, f.evaluations, f.cancelled), (695.28, 1.0e5, 720, 12345, false));
    assert_eq!(f.engine, "web worker: cpu f64");
    let de = f.de.unwrap();
    assert_eq!((de.generations, de.result.chi2, de.result.x[0], de.converged), (77, 695.0, population[1][0], true), "best member = lowest χ²");
    let m = f.mcmc.unwrap();
    assert_eq!(m.samples[0], vec![0.0, 12.0], "row-major samples become per-parameter columns");
    assert_eq!(m.samples[11], vec![11.0, 23.0]);
    assert_eq!(m.acceptance_fraction, 0.31);

    // A fit cancelled before LM: NaN errors arrive as null and leave no standard errors.
    let mut cut = result.clone();
    let o = cut.as_object_mut().unwrap();
    o.remove("mcmc");
    o.insert("cancelled".into(), json!(true));
    for p in o["parameters"].as_object_mut().unwrap().values_mut() {
        p["stderr"] = Value::Null;
    }
    let f = fit_result(&cut.to_string(), None, &r, 1.0e5).unwrap();
    assert!(f.stderr.is_none() && f.mcmc.is_none() && f.cancelled && f.notes[0].contains("burn-in"));

    // Malformed results are named errors.
    let e = fit_result("{\"parameters\": {}}", None, &r, 0.0).unwrap_err();
    assert!(e.contains("lacks parameter"), "{e}");
    let e = fit_result(&result.to_string(), Some(vec![1.0; 5]), &r, 0.0).unwrap_err();
    assert!(e.contains("rows of 12"), "{e}");
}
