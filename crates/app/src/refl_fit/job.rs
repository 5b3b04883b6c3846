//! One fit, run as a background job on the desktop: DE (generation by generation), LM polish,
//! optional MCMC, on a worker thread (`compute_job::spawn`; `pause` does nothing there).
//!
//! [`run_fit`] is written against an async `pause`, awaited between DE generations,
//! so a host that must return to an event loop could drive it; the web build does not use it: it
//! sends every fit to the npm package's Web Worker instead (`worker_fit.rs`), which runs the same
//! fitters with their own pauses, so the egui thread never computes.

use std::future::Future;

use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{self, FitProgress, McmcOptions, Objective, ObjectiveOptions};
use scatterlab_refl::Engine;

use super::stages::{chi2_at, de_stage, lm_stage, Reporter};
use super::{FitRequest, FitResult, McmcSummary, Method, ProgressSink, Stage, Start};

/// Runs `request` on `engine` (DE and MCMC batches; LM always runs on the CPU in f64).
/// `pause()` is awaited between DE generations.
pub async fn run_fit<P, F>(request: &FitRequest, engine: Engine<'_>, sink: &ProgressSink, repaint: &egui::Context, cancel: &CancelToken, pause: P) -> Result<FitResult, String>
where
    P: Fn() -> F,
    F: Future<Output = ()>,
{
    let started = web_time::Instant::now();
    let s = &request.settings;
    let options = ObjectiveOptions { log_transform: s.log_transform, roughness_limit: None };
    let objective = Objective::new(&request.model, options).map_err(|e| e.to_string())?;
    let report = Reporter { sink, repaint };
    let start = objective.start();
    let start_chi2 = chi2_at(&objective, &start).await?;
    // The fit's own evaluations (DE, LM, MCMC), as the CLI and the npm worker count them; the
    // start χ² above is for display and not counted.
    let mut evaluations = 0;
    let mut notes = Vec::new();

    let de = match &request.start {
        Start::Polish => None,
        Start::Fresh if s.method == Method::Lm => None,
        Start::Fresh => Some(de_stage(&objective, engine, s, None, &report, cancel, &pause).await?),
        Start::Resume(state) => Some(de_stage(&objective, engine, s, Some(state), &report, cancel, &pause).await?),
    };
    let resumed_evaluations = match &request.start {
        Start::Resume(state) => state.result.evaluations,
        _ => 0,
    };
    let mut x = de.as_ref().map_or(start, |d| d.result.x.clone());
    evaluations += de.as_ref().map_or(0, |d| d.result.evaluations - resumed_evaluations);
    let mut stderr = None;
    let mut mcmc = None;
    if !cancel.is_cancelled() {
        match lm_stage(&objective, &x, evaluations, &report, cancel) {
            Ok(lm) => {
                evaluations += lm.evaluations;
                x = lm.x;
                stderr = Some(lm.stderr);
            }
            Err(e) => notes.push(format!("LM polish failed, showing the previous best: {e}")),
        }
    }
    let sample = s.method == Method::Mcmc && !matches!(request.start, Start::Polish);
    if sample && !cancel.is_cancelled() {
        let spread = stderr.clone().unwrap_or_else(|| vec![f64::NAN; x.len()]);
        let steps = s.mcmc_steps.max(2);
        let options = McmcOptions { steps, burn: steps / 4, seed: s.seed, ..Default::default() };
        let mut progress = |p: &FitProgress| report.send(Stage::Mcmc, p.iteration, p.max_iterations, p.best_chi2, evaluations + p.evaluations);
        match fit::ensemble_sampler(&objective, engine, &x, &spread, &options, &mut progress, cancel).await {
            Ok(m) => {
                evaluations += m.evaluations;
                x.clone_from(&m.median);
                stderr = Some(m.upper_68.iter().zip(&m.lower_68).map(|(u, l)| 0.5 * (u - l)).collect());
                mcmc = Some(McmcSummary::new(m));
            }
            Err(e) => notes.push(format!("MCMC: {e}")),
        }
    }
    // Reported χ² always on the CPU in f64, whatever engine ran the batches.
    let chi2 = chi2_at(&objective, &x).await?;
    Ok(FitResult {
        method: s.method,
        names: objective.names().iter().map(|n| n.to_string()).collect(),
        values: objective.full(&x),
        x,
        stderr,
        chi2,
        start_chi2,
        n_points: objective.n_points(),
        evaluations,
        seconds: started.elapsed().as_secs_f64(),
        engine: match engine {
            Engine::Cpu => "cpu f64".to_owned(),
            Engine::Gpu(p) => format!("gpu f32 {}", p.context().describe()),
            Engine::GpuDf64(p) => format!("gpu df64 {}", p.context().describe()),
        },
        de,
        mcmc,
        cancelled: cancel.is_cancelled(),
        notes,
    })
}

#[cfg(not(target_arch = "wasm32"))]
pub use native::spawn;

#[cfg(not(target_arch = "wasm32"))]
mod native {
    use std::sync::Arc;

    use scatterlab_core::CancelToken;
    use scatterlab_refl::gpu::ParrattGpu;
    use scatterlab_refl::Engine;

    use super::super::{FitRequest, FitResult, ProgressSink};
    use super::run_fit;
    use crate::compute_job::{self, Job};

    /// Starts `request` in the background on the GPU pipeline if given, else the CPU.
    pub fn spawn(request: FitRequest, gpu: Option<Arc<ParrattGpu>>, sink: ProgressSink, cancel: CancelToken, repaint: egui::Context) -> Job<Result<FitResult, String>> {
        let ctx = repaint.clone();
        compute_job::spawn(repaint, move || async move {
            let engine = gpu.as_deref().map_or(Engine::Cpu, Engine::Gpu);
            run_fit(&request, engine, &sink, &ctx, &cancel, pause).await
        })
    }

    /// The fit has its own thread: nothing to yield to.
    fn pause() -> std::future::Ready<()> {
        std::future::ready(())
    }
}
