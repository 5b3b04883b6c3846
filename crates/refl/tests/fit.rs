//! Fitting the fixture's two-energy s+p PRSoXR task: the task converts to a model whose χ² at the
//! truth is the fixture's `chi2_at_truth`; seeded DE (CPU and GPU) reaches ≤ 1.01 × that with every
//! parameter within 3 standard errors of the truth; LM from near the optimum agrees; MCMC 68 %
//! half-widths agree with LM's standard errors within a factor of 1.5.
//! The judged fields (`truth`, `chi2_at_truth`) are read here, by the test, never by the fitter.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{self, task::task_to_model, DeOptions, LmOptions, McmcOptions, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use scatterlab_refl::Engine;
use serde_json::Value;

struct Task {
    model: Model,
    truth: Vec<f64>,
    chi2_at_truth: f64,
}

fn task() -> Task {
    let text = common::read_fixture("refl/fit_task.json");
    let json: Value = serde_json::from_str(&text).unwrap();
    // The fitter's input with the judged fields removed: conversion must not need them.
    let mut blind = json.clone();
    for key in ["truth", "chi2_at_truth"] {
        blind.as_object_mut().unwrap().remove(key);
    }
    for d in blind["datasets"].as_array_mut().unwrap() {
        d.as_object_mut().unwrap().remove("R_true");
    }
    let file = task_to_model(&blind.to_string()).unwrap();
    // Both through the same serialise/parse route (serde_json's float parsing may differ by an ulp).
    assert!(file == task_to_model(&json.to_string()).unwrap(), "the judged fields changed the model");
    let model = Model::new(file).unwrap();
    let objective = Objective::new(&model, ObjectiveOptions::default()).unwrap();
    let truth = objective.names().iter().map(|n| json["truth"][*n].as_f64().unwrap_or_else(|| panic!("truth lacks {n}"))).collect();
    Task { model, truth, chi2_at_truth: json["chi2_at_truth"].as_f64().unwrap() }
}

fn quiet() -> impl FnMut(&fit::FitProgress) {
    |_| {}
}

#[test]
fn chi2_at_the_truth_matches_the_fixture() {
    let t = task();
    let objective = Objective::new(&t.model, ObjectiveOptions::default()).unwrap();
    let chi2 = pollster::block_on(objective.chi2_batch(Engine::Cpu, std::slice::from_ref(&t.truth))).unwrap()[0];
    println!("χ²(truth) = {chi2} vs fixture {}", t.chi2_at_truth);
    assert!((chi2 - t.chi2_at_truth).abs() <= 1e-6 * t.chi2_at_truth, "{chi2} vs {}", t.chi2_at_truth);
}

fn check_de(engine: Engine<'_>, label: &str) {
    let t = task();
    let objective = Objective::new(&t.model, ObjectiveOptions::default()).unwrap();
    let cancel = CancelToken::new();
    let de = pollster::block_on(fit::differential_evolution(&objective, engine, &DeOptions { seed: 7, ..Default::default() }, None, &mut quiet(), &cancel)).unwrap();
    let lm = fit::levenberg_marquardt(&objective, &de.x, &LmOptions::default(), &mut quiet(), &cancel).unwrap();
    println!("{label}: DE χ² {:.3} after {} generations / {} evaluations; LM polish χ² {:.3}", de.chi2, de.generations, de.evaluations, lm.chi2);
    assert!(lm.chi2 <= 1.01 * t.chi2_at_truth, "{label}: χ² {} > 1.01 × {}", lm.chi2, t.chi2_at_truth);
    for (k, name) in objective.names().iter().enumerate() {
        let z = (lm.x[k] - t.truth[k]) / lm.stderr[k];
        println!("  {name:>22} {:>12.6e} ± {:.2e} (truth {:.6e}, z = {z:+.2})", lm.x[k], lm.stderr[k], t.truth[k]);
        assert!(z.abs() <= 3.0, "{label}: {name} is {z:.2} standard errors from the truth");
    }
}

#[test]
fn de_on_the_cpu_recovers_the_truth() {
    check_de(Engine::Cpu, "cpu");
}

#[test]
fn de_on_the_gpu_recovers_the_truth() {
    let Some(ctx) = common::gpu() else { return };
    let pipeline = pollster::block_on(scatterlab_refl::gpu::ParrattGpu::new(&ctx)).unwrap();
    check_de(Engine::Gpu(&pipeline), "gpu");
}

#[test]
fn lm_and_mcmc_agree_near_the_optimum() {
    let t = task();
    let objective = Objective::new(&t.model, ObjectiveOptions::default()).unwrap();
    let cancel = CancelToken::new();
    // Start LM near the optimum (the truth, nudged by 2 % of each bound range).
    let start: Vec<f64> = t.truth.iter().enumerate().map(|(k, v)| v + 0.02 * (objective.bounds(k)[1] - objective.bounds(k)[0])).collect();
    let lm = fit::levenberg_marquardt(&objective, &start, &LmOptions::default(), &mut quiet(), &cancel).unwrap();
    assert!(lm.chi2 <= 1.01 * t.chi2_at_truth, "LM χ² {}", lm.chi2);
    let options = McmcOptions { steps: 1500, burn: 400, seed: 11, ..Default::default() };
    let m = pollster::block_on(fit::ensemble_sampler(&objective, Engine::Cpu, &lm.x, &lm.stderr, &options, &mut quiet(), &cancel)).unwrap();
    println!("MCMC acceptance {:.3}, τ {:?}", m.acceptance_fraction, m.autocorrelation_time.iter().map(|t| format!("{t:.0}")).collect::<Vec<_>>());
    assert!((0.1..0.7).contains(&m.acceptance_fraction), "acceptance {}", m.acceptance_fraction);
    for (k, name) in objective.names().iter().enumerate() {
        let half = 0.5 * (m.upper_68[k] - m.lower_68[k]);
        let ratio = half / lm.stderr[k];
        println!("  {name:>22} LM ±{:.3e}  MCMC ±{half:.3e}  ratio {ratio:.2}", lm.stderr[k]);
        assert!((1.0 / 1.5..=1.5).contains(&ratio), "{name}: MCMC half-width / LM stderr = {ratio:.2}");
    }
}

#[test]
fn a_cancelled_fit_stops_at_once() {
    let t = task();
    let objective = Objective::new(&t.model, ObjectiveOptions::default()).unwrap();
    let cancel = CancelToken::new();
    cancel.cancel();
    let de = pollster::block_on(fit::differential_evolution(&objective, Engine::Cpu, &DeOptions::default(), None, &mut quiet(), &cancel)).unwrap();
    assert_eq!(de.generations, 0);
    assert!(!de.converged);
}

#[test]
fn the_sampler_run_in_pieces_equals_one_run() {
    let t = task();
    let objective = Objective::new(&t.model, ObjectiveOptions::default()).unwrap();
    let cancel = CancelToken::new();
    let spread: Vec<f64> = (0..objective.dimension()).map(|k| 1e-3 * (objective.bounds(k)[1] - objective.bounds(k)[0])).collect();
    let options = McmcOptions { steps: 30, burn: 10, thin: 2, seed: 5, ..Default::default() };
    let whole = pollster::block_on(fit::ensemble_sampler(&objective, Engine::Cpu, &t.truth, &spread, &options, &mut quiet(), &cancel)).unwrap();
    let mut sampler = pollster::block_on(fit::EnsembleSampler::start(&objective, Engine::Cpu, &t.truth, &spread, &options)).unwrap();
    let mut steps_seen = Vec::new();
    while !sampler.is_done() {
        let taken = pollster::block_on(sampler.run_steps(&objective, Engine::Cpu, 7, &mut |p| steps_seen.push(p.iteration), &cancel)).unwrap();
        assert!((1..=7).contains(&taken), "{taken} steps");
    }
    assert_eq!(steps_seen, (1..=30).collect::<Vec<_>>());
    let pieces = sampler.finish().unwrap();
    assert_eq!(pieces, whole, "a run split into pieces of 7 steps differs from one run");
    assert_eq!(whole.samples.len(), 10 * 4 * objective.dimension());
    // A cancel stops the pieces too, and finishing before the end of burn-in is a named error.
    let mut early = pollster::block_on(fit::EnsembleSampler::start(&objective, Engine::Cpu, &t.truth, &spread, &options)).unwrap();
    pollster::block_on(early.run_steps(&objective, Engine::Cpu, 5, &mut quiet(), &cancel)).unwrap();
    cancel.cancel();
    assert_eq!(pollster::block_on(early.run_steps(&objective, Engine::Cpu, 5, &mut quiet(), &cancel)).unwrap(), 0);
    let e = early.finish().unwrap_err().to_string();
    assert!(e.contains("burn-in"), "{e}");
}
