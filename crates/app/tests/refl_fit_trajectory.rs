//! Issue 17 item 20: with the default DE settings a desktop fit (`run_fit`, DE stepped generation
//! by generation, then the LM polish) follows `scatterlab refl fit`'s trajectory: the same DE state,
//! generations, evaluations, fitted values and χ² for one seed. The model the web build hands to the
//! npm worker (JSON) gives the trajectory of the model the desktop fits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use scatterlab_app::refl_fit::worker_protocol::fit_options;
use scatterlab_app::refl_fit::{run_fit, FitRequest, FitSettings, Method, ProgressSink, Start};
use scatterlab_core::CancelToken;
use scatterlab_refl::fit::task::task_to_model;
use scatterlab_refl::fit::{self, DeOptions, LmOptions, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use scatterlab_refl::Engine;

/// A film on a substrate (3 free parameters, 40 points; the library's DE trajectory test model):
/// small enough for DE to converge quickly.
fn film_model() -> Model {
    Model::from_json(include_str!("../../refl/tests/data/models/film_de_trajectory.json")).expect("film model")
}

#[test]
fn a_desktop_fit_follows_the_cli_trajectory() {
    let model = film_model();
    let objective = Objective::new(&model, ObjectiveOptions::default()).expect("objective");
    let cancel = CancelToken::new();
    for seed in [3, 2026] {
        let request = FitRequest { model: model.clone(), settings: FitSettings { method: Method::DeLm, seed, ..FitSettings::default() }, start: Start::Fresh };
        let (sink, ctx) = (ProgressSink::default(), egui::Context::default());
        let app = pollster::block_on(run_fit(&request, Engine::Cpu, &sink, &ctx, &cancel, || async {})).expect("app fit");
        // The CLI's pipeline (`crates/cli/src/refl_fit.rs`): default DE options with the seed, LM.
        let de = pollster::block_on(fit::differential_evolution(&objective, Engine::Cpu, &DeOptions { seed, ..Default::default() }, None, &mut |_| {}, &cancel)).expect("DE");
        let lm = fit::levenberg_marquardt(&objective, &de.x, &LmOptions::default(), &mut |_| {}, &cancel).expect("LM");
        let state = app.de.as_ref().expect("DE state");
        println!(
            "seed {seed}: app {} generations, {} evaluations, χ² {}; CLI pipeline {} generations, {} + {} evaluations, χ² {}",
            state.generations, app.evaluations, app.chi2, de.generations, de.evaluations, lm.evaluations, lm.chi2
        );
        assert!(de.converged && state.converged, "seed {seed}: converged");
        assert_eq!((state.generations, &state.result), (de.generations, &de), "seed {seed}: DE state");
        assert_eq!(app.evaluations, de.evaluations + lm.evaluations, "seed {seed}: evaluations");
        assert_eq!(app.x, lm.x, "seed {seed}: fitted values");
        // The app reports χ² re-evaluated on the CPU; LM sums its residuals: equal to rounding.
        assert!((app.chi2 - lm.chi2).abs() <= 1e-12 * lm.chi2, "seed {seed}: χ² {} vs {}", app.chi2, lm.chi2);
    }
}

#[test]
fn the_model_sent_to_the_worker_gives_the_same_trajectory() {
    let text = std::fs::read_to_string(common::fit_task_path()).expect("fixture fit task");
    let model = Model::new(task_to_model(&text).expect("task")).expect("model");
    let settings = FitSettings { seed: 1, popsize: 5, max_generations: 8, ..FitSettings::default() };
    let request = FitRequest { model: model.clone(), settings: settings.clone(), start: Start::Fresh };
    let (json, _) = fit_options(&request).expect("worker request");
    // What the worker's `parse_model` does with model JSON.
    let sent = Model::from_json(&json).expect("model JSON");
    let de = |model: &Model| {
        let objective = Objective::new(model, ObjectiveOptions::default()).expect("objective");
        let options = DeOptions { seed: settings.seed, popsize: settings.popsize, max_generations: settings.max_generations, ..Default::default() };
        pollster::block_on(fit::differential_evolution(&objective, Engine::Cpu, &options, None, &mut |_| {}, &CancelToken::new())).expect("DE")
    };
    let (here, there) = (de(&model), de(&sent));
    println!("seed 1, 8 generations × 60: desktop χ² {}, worker's model χ² {}", here.chi2, there.chi2);
    assert_eq!(here, there, "the JSON model changed the DE trajectory");
}
