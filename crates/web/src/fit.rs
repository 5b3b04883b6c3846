//! Fitting behind `Scatterlab.fit`: the methods of `scatterlab refl fit` (DE + LM polish, LM, and
//! DE + LM + ensemble sampler), driven so that the Web Worker running them stays responsive.
//!
//! # Why differential evolution runs one generation per step
//! A worker handles its next message (a cancel) only when the running wasm call returns to the
//! event loop. On the CPU, [`fit::differential_evolution`]'s future never waits on anything (its
//! batches are computed synchronously), so awaiting it once would run the whole fit without ever
//! returning. [`run_fit`] therefore steps a [`fit::DeRun`] one generation at a time and awaits
//! [`FitHost::pause`] between generations: the JS host lets
//! the event loop turn there (a `setTimeout(0)` promise, after the first generation and then once
//! 20 ms of work have passed) and, if the caller's `AbortSignal` was aborted meanwhile, cancels the
//! [`CancelToken`]. The fit then stops and returns its best point and its population (`state`), from
//! which a later call resumes (DE) or polishes (LM). DE is `scatterlab_refl`'s [`fit::DeRun`]: each
//! generation's random stream is seeded from (seed, global generation) and indices are drawn at
//! 64-bit width, and the stop rule is the library's, so one seed gives the generations, evaluations
//! and population of `scatterlab refl fit` and of the desktop app (a resumed fit included).
//!
//! LM is synchronous and short (tens of iterations on the CPU): it reports progress but is not
//! paused. The ensemble sampler runs one step per call ([`fit::EnsembleSampler`]), pausing in
//! between like DE, so it can be cancelled; cancelled before the end of burn-in, the fit keeps LM's
//! result.

use std::future::Future;

use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{self, DeOptions, DeResult, DeRun, FitProgress, LmOptions, McmcOptions, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use scatterlab_refl::{Engine, ReflError};

/// The fitting method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitMethod {
    /// Differential evolution, polished by LM (uncertainties from LM).
    De,
    /// Levenberg–Marquardt from the model's start values (or the best member of `resume`).
    Lm,
    /// DE, LM, then the ensemble sampler (values = medians, errors = 68 % half-widths).
    Mcmc,
}

impl FitMethod {
    /// `"de"`, `"lm"` or `"mcmc"`.
    pub fn name(self) -> &'static str {
        match self {
            FitMethod::De => "de",
            FitMethod::Lm => "lm",
            FitMethod::Mcmc => "mcmc",
        }
    }
}

/// Settings of one fit.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// The method.
    pub method: FitMethod,
    /// Random seed of DE and the sampler.
    pub seed: u64,
    /// DE generations to run in this call (≥ 1).
    pub max_generations: usize,
    /// DE population = popsize × free parameters (at least 5).
    pub popsize: usize,
    /// Sampler steps per walker (a quarter is burn-in).
    pub steps: usize,
    /// Fit ln R instead of R.
    pub log: bool,
    /// A previous fit's DE state: DE continues from its population, LM starts from its best member.
    pub resume: Option<DeResult>,
}

impl Default for FitOptions {
    fn default() -> Self {
        let de = DeOptions::default();
        FitOptions { method: FitMethod::De, seed: 0, max_generations: de.max_generations, popsize: de.popsize, steps: McmcOptions::default().steps, log: false, resume: None }
    }
}

/// A progress report with the fit's clock: `progress.evaluations` counts from the start of the
/// fit across its phases (DE, LM, sampler).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitReport {
    /// The fitter's report (iteration within the phase named by `method`).
    pub progress: FitProgress,
    /// Seconds since this call started.
    pub seconds: f64,
    /// Evaluations made by this call per second.
    pub evaluations_per_second: f64,
}

/// What the driver needs from where it runs.
pub trait FitHost {
    /// Receives every report (each DE generation, LM iteration and sampler step).
    fn progress(&mut self, report: &FitReport);
    /// Awaited after each DE generation: the place to let an event loop run and to cancel.
    fn pause(&mut self) -> impl Future<Output = ()>;
    /// A clock in milliseconds (any origin).
    fn now_ms(&self) -> f64;
}

/// The sampler's summary (as in the CLI's output). Also `FitResult.mcmc` of the JS protocol
/// (`crate::protocol`, native tests only): its TypeScript is generated from this type.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(all(test, not(target_arch = "wasm32")), derive(serde::Serialize, ts_rs::TS))]
pub struct McmcSummary {
    /// Accepted / proposed moves.
    pub acceptance_fraction: f64,
    /// Integrated autocorrelation time per parameter, in steps.
    pub autocorrelation_time: Vec<f64>,
    /// 16th percentile per parameter.
    pub lower_68: Vec<f64>,
    /// 84th percentile per parameter.
    pub upper_68: Vec<f64>,
    /// The LM optimum the sampler started from.
    pub lm_value: Vec<f64>,
    /// LM's standard errors there.
    pub lm_stderr: Vec<f64>,
    /// Kept samples.
    pub samples: usize,
    /// The kept samples' values, row-major: `samples` rows of one value per free parameter (in the
    /// order of `parameters`).
    #[cfg_attr(all(test, not(target_arch = "wasm32")), ts(type = "Float64Array"))]
    pub sample_values: Vec<f64>,
}

/// The result of [`run_fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct FitOutcome {
    /// Free-parameter names, in the order of `x` and `stderr`.
    pub names: Vec<String>,
    /// Fitted values.
    pub x: Vec<f64>,
    /// 1σ uncertainties (NaN where the fit stopped before LM computed them).
    pub stderr: Vec<f64>,
    /// χ² at `x`.
    pub chi2: f64,
    /// Data points fitted.
    pub n_points: usize,
    /// Objective evaluations, those of a resumed state included.
    pub evaluations: usize,
    /// Wall time of this call.
    pub seconds: f64,
    /// The method.
    pub method: FitMethod,
    /// Whether the fit was cancelled (then `x` is the best point reached).
    pub cancelled: bool,
    /// DE generations run, those of a resumed state included (0 for LM).
    pub generations: usize,
    /// Whether DE met its convergence criterion.
    pub converged: bool,
    /// The final DE state (population and its χ²), to resume from; `None` for LM.
    pub state: Option<DeResult>,
    /// The model file with the fitted values, as JSON (an LM run from it polishes the fit).
    pub model_json: String,
    /// The sampler's summary, for MCMC.
    pub mcmc: Option<McmcSummary>,
}

/// Reads model JSON or a fixture fit task (`"format": "refl-oracle-v1-fit"`) into a model.
pub fn parse_model(text: &str) -> Result<Model, ReflError> {
    if fit::task::is_fit_task(text) {
        Model::new(fit::task::task_to_model(text)?)
    } else {
        Model::from_json(text)
    }
}

/// Turns the fitters' reports into [`FitReport`]s: evaluations offset by the earlier phases.
struct Reporter<'h, H: FitHost> {
    host: &'h mut H,
    start_ms: f64,
    start_evaluations: usize,
}

impl<H: FitHost> Reporter<'_, H> {
    fn report(&mut self, p: &FitProgress, offset: usize, iteration: usize) {
        let seconds = (self.host.now_ms() - self.start_ms) / 1e3;
        let evaluations = offset + p.evaluations;
        let rate = (evaluations - self.start_evaluations.min(evaluations)) as f64 / seconds.max(1e-9);
        let progress = FitProgress { iteration, evaluations, ..*p };
        self.host.progress(&FitReport { progress, seconds, evaluations_per_second: rate });
    }
}

/// Runs DE for `options.max_generations` more generations, one [`DeRun`] step per generation,
/// pausing in between. `DeRun` seeds each generation from (seed, global generation) and applies
/// the stop rule, so this is the trajectory of `scatterlab refl fit` and of the desktop app.
/// A resumed state's own `converged` is ignored: resuming asks for more generations.
async fn run_de<H: FitHost>(
    objective: &Objective<'_>,
    engine: Engine<'_>,
    options: &FitOptions,
    reporter: &mut Reporter<'_, H>,
    cancel: &CancelToken,
) -> Result<DeResult, ReflError> {
    let de_options = DeOptions { popsize: options.popsize, max_generations: options.max_generations, seed: options.seed, ..Default::default() };
    let mut run = DeRun::start(objective, engine, &de_options, options.resume.as_ref()).await?;
    let target = run.state().generations + options.max_generations;
    while !run.is_done() && !cancel.is_cancelled() {
        let p = run.step(objective, engine).await?;
        let generation = run.state().generations;
        reporter.report(&FitProgress { max_iterations: target, ..p }, 0, generation);
        reporter.host.pause().await;
    }
    run.finish()
}

/// Fits the model or fit task in `text` on `engine` (LM always on the CPU, in f64).
pub async fn run_fit<H: FitHost>(text: &str, options: &FitOptions, engine: Engine<'_>, host: &mut H, cancel: &CancelToken) -> Result<FitOutcome, ReflError> {
    if options.max_generations == 0 || options.popsize == 0 || options.steps < 2 {
        return Err(ReflError::input("fit options", "need maxGenerations ≥ 1, popsize ≥ 1 and steps ≥ 2"));
    }
    let start_ms = host.now_ms();
    let model = parse_model(text)?;
    let objective = Objective::new(&model, ObjectiveOptions { log_transform: options.log, roughness_limit: None })?;
    if let Some(s) = &options.resume {
        if let Some((i, x)) = s.population.iter().enumerate().find(|(_, x)| x.len() != objective.dimension()) {
            return Err(ReflError::input(format!("fit options resume.population[{i}]"), format!("has {} values for {} free parameters", x.len(), objective.dimension())));
        }
    }
    let start_evaluations = options.resume.as_ref().map_or(0, |s| s.evaluations);
    let mut reporter = Reporter { host, start_ms, start_evaluations };
    let lm_options = LmOptions::default();
    let names: Vec<String> = objective.names().iter().map(|s| s.to_string()).collect();
    let mut out = FitOutcome {
        names,
        x: Vec::new(),
        stderr: vec![f64::NAN; objective.dimension()],
        chi2: f64::NAN,
        n_points: objective.n_points(),
        evaluations: 0,
        seconds: 0.0,
        method: options.method,
        cancelled: false,
        generations: 0,
        converged: false,
        state: None,
        model_json: String::new(),
        mcmc: None,
    };
    if options.method == FitMethod::Lm {
        let x0 = options.resume.as_ref().map_or_else(|| objective.start(), |s| s.x.clone());
        let lm = fit::levenberg_marquardt(&objective, &x0, &lm_options, &mut |p| reporter.report(p, start_evaluations, p.iteration), cancel)?;
        (out.x, out.stderr, out.chi2, out.evaluations) = (lm.x, lm.stderr, lm.chi2, start_evaluations + lm.evaluations);
    } else {
        let de = run_de(&objective, engine, options, &mut reporter, cancel).await?;
        (out.x, out.chi2, out.evaluations, out.generations, out.converged) = (de.x.clone(), de.chi2, de.evaluations, de.generations, de.converged);
        out.state = Some(de);
        if !cancel.is_cancelled() {
            let offset = out.evaluations;
            let lm = fit::levenberg_marquardt(&objective, &out.x, &lm_options, &mut |p| reporter.report(p, offset, p.iteration), cancel)?;
            out.evaluations += lm.evaluations;
            if lm.chi2 <= out.chi2 {
                (out.x, out.chi2) = (lm.x.clone(), lm.chi2);
            }
            out.stderr = lm.stderr.clone();
            if options.method == FitMethod::Mcmc {
                sample(&objective, engine, options, &mut reporter, cancel, &lm.stderr, &mut out).await?;
            }
        }
    }
    out.cancelled = cancel.is_cancelled();
    out.model_json = model.to_json(&objective.full(&out.x))?;
    out.seconds = (reporter.host.now_ms() - start_ms) / 1e3;
    Ok(out)
}

/// The sampler from the LM optimum in `out`; on success `out` takes the medians and half-widths.
/// A cancel before the end of burn-in keeps the LM result.
async fn sample<H: FitHost>(
    objective: &Objective<'_>,
    engine: Engine<'_>,
    options: &FitOptions,
    reporter: &mut Reporter<'_, H>,
    cancel: &CancelToken,
    lm_stderr: &[f64],
    out: &mut FitOutcome,
) -> Result<(), ReflError> {
    let mcmc_options = McmcOptions { steps: options.steps, burn: options.steps / 4, seed: options.seed, ..Default::default() };
    let offset = out.evaluations;
    // One step per call, pausing in between (the host yields every ~20 ms), like DE's generations.
    let result = async {
        let mut sampler = fit::EnsembleSampler::start(objective, engine, &out.x, lm_stderr, &mcmc_options).await?;
        while !sampler.is_done() && !cancel.is_cancelled() {
            sampler.run_steps(objective, engine, 1, &mut |p| reporter.report(p, offset, p.iteration), cancel).await?;
            reporter.host.pause().await;
        }
        sampler.finish()
    }
    .await;
    let m = match result {
        Err(_) if cancel.is_cancelled() => return Ok(()),
        r => r?,
    };
    let chi2_median = objective.chi2_batch(Engine::Cpu, std::slice::from_ref(&m.median)).await?[0];
    out.mcmc = Some(McmcSummary {
        acceptance_fraction: m.acceptance_fraction,
        autocorrelation_time: m.autocorrelation_time,
        lower_68: m.lower_68.clone(),
        upper_68: m.upper_68.clone(),
        lm_value: out.x.clone(),
        lm_stderr: lm_stderr.to_vec(),
        samples: m.samples.len(),
        sample_values: m.samples.concat(),
    });
    out.stderr = m.upper_68.iter().zip(&m.lower_68).map(|(u, l)| 0.5 * (u - l)).collect();
    (out.x, out.chi2) = (m.median, chi2_median);
    out.evaluations += m.evaluations;
    Ok(())
}
