//! The stages of a fit — DE one generation at a time, then the LM polish — and how they report
//! progress. DE is `scatterlab_refl`'s [`DeRun`], the one the CLI and the npm worker drive: each
//! generation is seeded from (seed, global generation) there, and it stops by the same rule, so
//! one seed gives one trajectory on every front end, and n generations resumed for m more equal
//! one run of n + m.

use std::future::Future;

use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{self, DeOptions, DeRun, FitProgress, LmOptions, LmResult, Objective};
use scatterlab_refl::Engine;

use super::{DeState, FitSettings, Progress, ProgressSink, Stage};

/// Writes progress and wakes the UI.
pub(super) struct Reporter<'a> {
    pub sink: &'a ProgressSink,
    pub repaint: &'a egui::Context,
}

impl Reporter<'_> {
    pub fn send(&self, stage: Stage, iteration: usize, max_iterations: usize, best_chi2: f64, evaluations: usize) {
        self.publish(Progress { stage, iteration, max_iterations, best_chi2, evaluations, best_values: None });
    }

    /// Writes `p` to the sink and asks for a repaint.
    pub fn publish(&self, p: Progress) {
        if let Ok(mut slot) = self.sink.lock() {
            *slot = Some(p);
        }
        self.repaint.request_repaint();
    }
}

/// χ² of one free vector on the CPU.
pub(super) async fn chi2_at(objective: &Objective<'_>, x: &[f64]) -> Result<f64, String> {
    let values = objective.chi2_batch(Engine::Cpu, &[x.to_vec()]).await.map_err(|e| e.to_string())?;
    values.first().copied().ok_or_else(|| "the objective returned no χ²".to_owned())
}

/// The DE options of a run: the base seed, popsize and generation limit of the settings, the rest
/// scipy's defaults, as the CLI and the npm worker use them.
pub fn de_options(s: &FitSettings) -> DeOptions {
    DeOptions { popsize: s.popsize, max_generations: s.max_generations, seed: s.seed, ..Default::default() }
}

/// DE, one generation per step of a [`DeRun`] (pausing in between), continuing `resume`'s
/// population and global generation count; stops by the run's own rule (converged, or
/// `max_generations` more generations) or a cancel.
pub(super) async fn de_stage<P, F>(
    objective: &Objective<'_>,
    engine: Engine<'_>,
    s: &FitSettings,
    resume: Option<&DeState>,
    report: &Reporter<'_>,
    cancel: &CancelToken,
    pause: &P,
) -> Result<DeState, String>
where
    P: Fn() -> F,
    F: Future<Output = ()>,
{
    let base_evaluations = resume.map_or(0, |d| d.result.evaluations);
    let mut run = DeRun::start(objective, engine, &de_options(s), resume.map(|d| &d.result)).await.map_err(|e| e.to_string())?;
    while !run.is_done() && !cancel.is_cancelled() {
        let p = run.step(objective, engine).await.map_err(|e| e.to_string())?;
        // The best vector goes with the report so the plot shows each generation's best.
        report.publish(Progress {
            stage: Stage::De,
            iteration: p.iteration,
            max_iterations: s.max_generations,
            best_chi2: p.best_chi2,
            evaluations: p.evaluations - base_evaluations,
            best_values: Some(objective.full(&run.state().x)),
        });
        pause().await;
    }
    let result = run.finish().map_err(|e| e.to_string())?;
    Ok(DeState { generations: result.generations, converged: result.converged, result })
}

/// LM polish in one call with the default options, as the CLI and the npm worker run it (LM is
/// tens of milliseconds; chunks restarted LM's damping and counted extra evaluations, so the
/// evaluation count differed between front ends). Cancel stops it between iterations.
pub(super) fn lm_stage(objective: &Objective<'_>, x0: &[f64], evaluations_before: usize, report: &Reporter<'_>, cancel: &CancelToken) -> Result<LmResult, String> {
    let options = LmOptions::default();
    let mut progress = |p: &FitProgress| report.send(Stage::Lm, p.iteration, options.max_iterations, p.best_chi2, evaluations_before + p.evaluations);
    fit::levenberg_marquardt(objective, x0, &options, &mut progress, cancel).map_err(|e| e.to_string())
}
