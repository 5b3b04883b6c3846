//! The stages of a fit — DE one generation at a time, LM in chunks — and how they report progress.
//! Each DE generation uses the seed [`generation_seed`]`(seed, g)` for its global generation
//! index g, so a run of n generations resumed for m more equals one run of n + m generations.

use std::future::Future;

use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{self, DeOptions, FitProgress, LmOptions, LmResult, Objective};
use scatterlab_refl::Engine;

use super::{DeState, FitSettings, Progress, ProgressSink, Stage};

/// LM iterations per chunk (between chunks the web build yields to the browser).
pub const LM_CHUNK: usize = 8;
/// LM iterations in all.
pub const LM_MAX: usize = 200;

/// Writes progress and wakes the UI.
pub(super) struct Reporter<'a> {
    pub sink: &'a ProgressSink,
    pub repaint: &'a egui::Context,
}

impl Reporter<'_> {
    pub fn send(
        &self,
        stage: Stage,
        iteration: usize,
        max_iterations: usize,
        best_chi2: f64,
        evaluations: usize,
    ) {
        let p = Progress {
            stage,
            iteration,
            max_iterations,
            best_chi2,
            evaluations,
        };
        if let Ok(mut slot) = self.sink.lock() {
            *slot = Some(p);
        }
        self.repaint.request_repaint();
    }
}

/// The DE seed of global generation `g` (splitmix64 of the user seed and g).
pub fn generation_seed(seed: u64, g: usize) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    mix(seed ^ mix(g as u64))
}

/// χ² of one free vector on the CPU.
pub(super) async fn chi2_at(objective: &Objective<'_>, x: &[f64]) -> Result<f64, String> {
    let values = objective
        .chi2_batch(Engine::Cpu, &[x.to_vec()])
        .await
        .map_err(|e| e.to_string())?;
    values
        .first()
        .copied()
        .ok_or_else(|| "the objective returned no χ²".to_owned())
}

/// DE, one generation per call, resuming from the previous result.
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
    let mut state = resume.cloned();
    let first = state.as_ref().map_or(0, |d| d.generations);
    let base_evaluations = state.as_ref().map_or(0, |d| d.result.evaluations);
    loop {
        let g = state.as_ref().map_or(0, |d| d.generations);
        if g >= first + s.max_generations || cancel.is_cancelled() {
            break;
        }
        let options = DeOptions {
            popsize: s.popsize,
            max_generations: 1,
            seed: generation_seed(s.seed, g),
            ..Default::default()
        };
        let mut progress = |p: &FitProgress| {
            report.send(
                Stage::De,
                g + 1 - first,
                s.max_generations,
                p.best_chi2,
                1 + p.evaluations - base_evaluations,
            )
        };
        let previous = state.as_ref().map(|d| &d.result);
        let r = fit::differential_evolution(
            objective,
            engine,
            &options,
            previous,
            &mut progress,
            cancel,
        )
        .await
        .map_err(|e| e.to_string())?;
        let (ran, converged) = (r.generations, r.converged);
        state = Some(DeState {
            result: r,
            generations: g + ran,
            converged,
        });
        if ran == 0 || converged {
            break;
        }
        pause().await;
    }
    state.ok_or_else(|| "the fit was cancelled before DE had a population".to_owned())
}

/// LM in chunks of [`LM_CHUNK`] iterations, each starting where the last stopped.
pub(super) async fn lm_stage<P, F>(
    objective: &Objective<'_>,
    x0: &[f64],
    evaluations_before: usize,
    report: &Reporter<'_>,
    cancel: &CancelToken,
    pause: &P,
) -> Result<LmResult, String>
where
    P: Fn() -> F,
    F: Future<Output = ()>,
{
    let mut x = x0.to_vec();
    let (mut iterations, mut evaluations) = (0, 0);
    loop {
        let options = LmOptions {
            max_iterations: LM_CHUNK,
            ..Default::default()
        };
        let mut progress = |p: &FitProgress| {
            report.send(
                Stage::Lm,
                iterations + p.iteration,
                LM_MAX,
                p.best_chi2,
                evaluations_before + evaluations + p.evaluations,
            )
        };
        let mut r = fit::levenberg_marquardt(objective, &x, &options, &mut progress, cancel)
            .map_err(|e| e.to_string())?;
        iterations += r.iterations;
        evaluations += r.evaluations;
        // Fewer iterations than allowed: LM stopped by its own criteria.
        if r.iterations < LM_CHUNK || iterations >= LM_MAX || cancel.is_cancelled() {
            r.iterations = iterations;
            r.evaluations = evaluations;
            return Ok(r);
        }
        x.clone_from(&r.x);
        pause().await;
    }
}
