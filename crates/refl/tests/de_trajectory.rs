//! Issue 17 item 20: one seed, one DE trajectory on every front end. The CLI runs
//! `differential_evolution` in one call; the desktop app steps a `DeRun` generation by generation;
//! the web worker steps one too and, across calls, resumes from the returned `DeResult`. On a small
//! film model (3 free parameters, 45 members) each way of driving DE must give bit-identical best
//! parameters, χ², population, generation and evaluation counts, and the same per-generation
//! reports, and stop by the same rule (here: converged well before the generation limit).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{self, generation_seed, DeOptions, DeResult, DeRun, FitProgress, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use scatterlab_refl::Engine;

/// Generation limit of every driver: far above where these runs converge (seen 35–39).
const MAX_GENERATIONS: usize = 400;

/// A 150–400 Å film on a substrate at 250 eV, s-polarised, 40 q points; data = the model at
/// (240 Å, 4 Å, δ 1.8e-3) times a deterministic ±3 % ripple, with 3 % errors. The CLI, app and
/// worker tests fit the same file.
const FILM: &str = include_str!("data/models/film_de_trajectory.json");

fn model() -> Model {
    Model::from_json(FILM).expect("film model")
}

fn options(seed: u64) -> DeOptions {
    DeOptions { seed, max_generations: MAX_GENERATIONS, ..Default::default() }
}

/// What a driver saw: the final state and (best χ², evaluations) after every generation.
struct Run {
    result: DeResult,
    reports: Vec<(f64, usize)>,
}

/// The CLI: one call.
fn one_shot(objective: &Objective<'_>, seed: u64) -> Run {
    let mut reports = Vec::new();
    let mut progress = |p: &FitProgress| reports.push((p.best_chi2, p.evaluations));
    let result = pollster::block_on(fit::differential_evolution(objective, Engine::Cpu, &options(seed), None, &mut progress, &CancelToken::new())).expect("one-shot DE");
    Run { result, reports }
}

/// The desktop app (`refl_fit/stages.rs`) and the worker within one call: a `DeRun` stepped
/// generation by generation, pausing (here: nothing) in between, `max_generations` generations at
/// most per call. `resume` continues an earlier call's state, as both front ends' Resume does.
fn stepped(objective: &Objective<'_>, seed: u64, max_generations: usize, resume: Option<&DeResult>, reports: &mut Vec<(f64, usize)>) -> DeResult {
    let cancel = CancelToken::new();
    let options = DeOptions { max_generations, ..options(seed) };
    let mut run = pollster::block_on(DeRun::start(objective, Engine::Cpu, &options, resume)).expect("DE start");
    while !run.is_done() && !cancel.is_cancelled() {
        let p = pollster::block_on(run.step(objective, Engine::Cpu)).expect("DE step");
        reports.push((p.best_chi2, p.evaluations));
    }
    run.finish().expect("DE result")
}

/// The web worker across calls: a call is cut off after `chunk` generations (a cancel, or a
/// small `maxGenerations`), and the next call resumes from the returned state with the rest of
/// the generation budget, until DE converges or the budget is spent.
fn in_calls(objective: &Objective<'_>, seed: u64, chunk: usize) -> Run {
    let mut reports = Vec::new();
    let mut state = stepped(objective, seed, chunk, None, &mut reports);
    while !state.converged && state.generations < MAX_GENERATIONS {
        // Between calls the state crosses JSON (the worker protocol): f64 survives exactly.
        let text = serde_json::to_string(&(&state.population, &state.energies)).expect("state to JSON");
        let (population, energies): (Vec<Vec<f64>>, Vec<f64>) = serde_json::from_str(&text).expect("state from JSON");
        let crossed = DeResult { population, energies, converged: false, ..state.clone() };
        let left = MAX_GENERATIONS - state.generations;
        state = stepped(objective, seed, chunk.min(left), Some(&crossed), &mut reports);
    }
    Run { result: state, reports }
}

/// One generation per call of the one-shot function, each resuming the last (the pattern the
/// app and the worker used before `DeRun`): still the same trajectory.
fn one_per_call(objective: &Objective<'_>, seed: u64) -> Run {
    let mut reports = Vec::new();
    let mut state: Option<DeResult> = None;
    loop {
        let mut progress = |p: &FitProgress| reports.push((p.best_chi2, p.evaluations));
        let o = DeOptions { max_generations: 1, ..options(seed) };
        let r = pollster::block_on(fit::differential_evolution(objective, Engine::Cpu, &o, state.as_ref(), &mut progress, &CancelToken::new())).expect("DE call");
        let done = r.converged || r.generations >= MAX_GENERATIONS;
        state = Some(r);
        if done {
            break;
        }
    }
    Run { result: state.expect("at least one call"), reports }
}

fn assert_same(label: &str, a: &Run, b: &Run) {
    let (x, y) = (&a.result, &b.result);
    assert_eq!(x.x, y.x, "{label}: best parameters");
    assert_eq!(x.chi2.to_bits(), y.chi2.to_bits(), "{label}: χ² {} vs {}", x.chi2, y.chi2);
    assert_eq!((x.generations, x.evaluations, x.converged), (y.generations, y.evaluations, y.converged), "{label}: generations, evaluations, converged");
    assert_eq!(x.population, y.population, "{label}: population");
    assert_eq!(x.energies, y.energies, "{label}: population χ²");
    assert_eq!(a.reports, b.reports, "{label}: per-generation (best χ², evaluations)");
}

#[test]
fn every_driver_follows_one_trajectory() {
    let model = model();
    let objective = Objective::new(&model, ObjectiveOptions::default()).expect("objective");
    let start_chi2 = pollster::block_on(objective.chi2_batch(Engine::Cpu, &[objective.start()])).expect("χ² at the start")[0];
    for seed in [0, 7, 12_345] {
        let reference = one_shot(&objective, seed);
        let r = &reference.result;
        println!(
            "seed {seed}: {} generations, {} evaluations, converged {}, χ² {:.6} (at the generating values {start_chi2:.3}), x {:?}",
            r.generations, r.evaluations, r.converged, r.chi2, r.x
        );
        // Converged well inside the limit: the shared stop rule, not the limit, ended every run.
        assert!(r.converged && r.generations > 5 && r.generations < MAX_GENERATIONS, "seed {seed}: {} generations, converged {}", r.generations, r.converged);
        assert_eq!(r.evaluations, 45 * (r.generations + 1), "seed {seed}: 45 members × (start + generations)");
        assert_eq!(reference.reports.len(), r.generations, "seed {seed}: one report per generation");
        // The fit is a fit: χ² at or below the generating values' (the data carry a ±3 % ripple).
        assert!(r.chi2 <= start_chi2 * 1.05, "seed {seed}: χ² {} vs {start_chi2}", r.chi2);

        let mut reports = Vec::new();
        let app = Run { result: stepped(&objective, seed, MAX_GENERATIONS, None, &mut reports), reports };
        assert_same(&format!("seed {seed}, stepped (app)"), &reference, &app);
        for chunk in [1, 7] {
            assert_same(&format!("seed {seed}, worker calls of {chunk}"), &reference, &in_calls(&objective, seed, chunk));
        }
        assert_same(&format!("seed {seed}, one generation per call"), &reference, &one_per_call(&objective, seed));
    }
}

#[test]
fn different_seeds_differ_and_generation_seeds_are_distinct() {
    let model = model();
    let objective = Objective::new(&model, ObjectiveOptions::default()).expect("objective");
    let cancel = CancelToken::new();
    let short = |seed| {
        pollster::block_on(fit::differential_evolution(&objective, Engine::Cpu, &DeOptions { seed, max_generations: 3, ..Default::default() }, None, &mut |_| {}, &cancel))
            .expect("DE")
    };
    assert_ne!(short(1).population, short(2).population, "the seed has no effect");
    assert_eq!(short(1).population, short(1).population, "one seed, two results");
    for seed in [0, 7, u64::MAX] {
        let seeds: std::collections::HashSet<u64> = (0..10_000).map(|g| generation_seed(seed, g)).collect();
        assert_eq!(seeds.len(), 10_000, "seed {seed}: generation seeds repeat");
    }
    assert_ne!(generation_seed(7, 0), generation_seed(8, 0));
    // Pinned: the definition every front end (and every saved state) relies on.
    assert_eq!(generation_seed(0, 0), 0xE220_A839_7B1D_CDAF, "splitmix64's first output from 0");
}

#[test]
fn a_bad_resume_state_is_a_named_error() {
    let model = model();
    let objective = Objective::new(&model, ObjectiveOptions::default()).expect("objective");
    let good =
        pollster::block_on(fit::differential_evolution(&objective, Engine::Cpu, &DeOptions { max_generations: 1, ..Default::default() }, None, &mut |_| {}, &CancelToken::new()))
            .expect("DE");
    let wrong_dim = DeResult { population: vec![vec![1.0; 2]; good.population.len()], ..good.clone() };
    let e = pollster::block_on(DeRun::start(&objective, Engine::Cpu, &DeOptions::default(), Some(&wrong_dim))).expect_err("2 values for 3 parameters");
    assert!(e.to_string().contains("population[0]") && e.to_string().contains("has 2 values for 3"), "{e}");
    let short_energies = DeResult { energies: good.energies[1..].to_vec(), ..good };
    let e = pollster::block_on(DeRun::start(&objective, Engine::Cpu, &DeOptions::default(), Some(&short_energies))).expect_err("fewer χ² than members");
    assert!(e.to_string().contains("45 members but 44"), "{e}");
}
