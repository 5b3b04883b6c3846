//! What the user sets for a fit, what a fit request holds, what a running fit reports and what a
//! finished fit gives.

use std::sync::{Arc, Mutex};

use scatterlab_refl::fit::{DeResult, McmcResult};
use scatterlab_refl::model::Model;

use crate::Device;

/// The fitting method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Method {
    /// Differential evolution, polished by LM (uncertainties from LM's covariance).
    #[default]
    DeLm,
    /// Levenberg–Marquardt from the current values.
    Lm,
    /// DE, LM, then the ensemble sampler (values = medians, errors = 68 % half-widths).
    Mcmc,
}

impl Method {
    /// Every method, in selector order.
    pub const ALL: [Method; 3] = [Method::DeLm, Method::Lm, Method::Mcmc];

    /// The selector's label.
    pub fn label(self) -> &'static str {
        match self {
            Method::DeLm => "DE + LM polish",
            Method::Lm => "LM",
            Method::Mcmc => "MCMC (after DE + LM)",
        }
    }
}

/// Fit settings.
#[derive(Clone, Debug, PartialEq)]
pub struct FitSettings {
    /// Method.
    pub method: Method,
    /// Random seed of DE and MCMC.
    pub seed: u64,
    /// Engine for the batched DE/MCMC evaluations (LM always runs on the CPU in f64).
    pub device: Device,
    /// DE generations per run (Resume adds as many again).
    pub max_generations: usize,
    /// DE population = popsize × free parameters.
    pub popsize: usize,
    /// MCMC steps per walker (the first quarter is burn-in).
    pub mcmc_steps: usize,
    /// Fit ln R instead of R.
    pub log_transform: bool,
}

impl Default for FitSettings {
    fn default() -> Self {
        Self {
            method: Method::DeLm,
            seed: 1,
            device: Device::Cpu,
            // The library's defaults, as in the CLI and the npm package (one seed, one fit).
            max_generations: scatterlab_refl::fit::DeOptions::default().max_generations,
            popsize: scatterlab_refl::fit::DeOptions::default().popsize,
            mcmc_steps: 400,
            log_transform: false,
        }
    }
}

/// The MCMC part of a result.
#[derive(Clone, Debug, PartialEq)]
pub struct McmcSummary {
    /// Kept samples per free parameter: `samples[k]` holds every sample of parameter k.
    pub samples: Vec<Vec<f64>>,
    /// Medians.
    pub median: Vec<f64>,
    /// 16th percentiles.
    pub lower_68: Vec<f64>,
    /// 84th percentiles.
    pub upper_68: Vec<f64>,
    /// Accepted / proposed moves.
    pub acceptance_fraction: f64,
    /// Integrated autocorrelation time per parameter, steps.
    pub autocorrelation_time: Vec<f64>,
}

impl McmcSummary {
    /// Transposes the library's samples (member-major) into per-parameter columns.
    pub fn new(m: McmcResult) -> Self {
        let dim = m.median.len();
        let samples = (0..dim).map(|k| m.samples.iter().map(|s| s[k]).collect()).collect();
        Self { samples, median: m.median, lower_68: m.lower_68, upper_68: m.upper_68, acceptance_fraction: m.acceptance_fraction, autocorrelation_time: m.autocorrelation_time }
    }
}

/// A finished (or cancelled) fit.
#[derive(Clone, Debug, PartialEq)]
pub struct FitResult {
    /// The method that ran.
    pub method: Method,
    /// Names of the free parameters.
    pub names: Vec<String>,
    /// Fitted free values (MCMC: medians).
    pub x: Vec<f64>,
    /// 1σ errors (LM covariance; MCMC: 68 % half-widths); `None` when LM could not give them.
    pub stderr: Option<Vec<f64>>,
    /// The full parameter vector (fixed ones included), in the model's name order.
    pub values: Vec<f64>,
    /// χ² at `x` (CPU, f64).
    pub chi2: f64,
    /// χ² at the start values.
    pub start_chi2: f64,
    /// Number of data points.
    pub n_points: usize,
    /// Objective evaluations of this run.
    pub evaluations: usize,
    /// Wall time of the run, s.
    pub seconds: f64,
    /// The engine of the DE/MCMC batches (`"cpu f64"` or `"gpu f32 <device>"`); LM is CPU f64.
    pub engine: String,
    /// The DE population, for Resume.
    pub de: Option<DeState>,
    /// MCMC samples and summary.
    pub mcmc: Option<McmcSummary>,
    /// Whether the user cancelled the run (the values are the best found until then).
    pub cancelled: bool,
    /// Anything the user should know (a failed polish, an early MCMC stop).
    pub notes: Vec<String>,
}

impl FitResult {
    /// χ² per data point.
    pub fn chi2_per_point(&self) -> f64 {
        self.chi2 / self.n_points.max(1) as f64
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub enum Start {
    /// The chosen method from the model's start values (DE starts from a Latin hypercube).
    Fresh,
    /// Continue DE from a previous population, then polish (and sample, for MCMC).
    Resume(DeState),
    /// LM from the model's current values only.
    Polish,
}

/// A DE population that can be resumed.
#[derive(Clone, Debug, PartialEq)]
pub struct DeState {
    /// The last `differential_evolution` result (its population and χ²).
    pub result: DeResult,
    /// Generations run so far, over every resumed run (the global generation index).
    pub generations: usize,
    /// Whether DE's convergence criterion was met.
    pub converged: bool,
}

/// A fit to run: the model (with its current values, vary flags and bounds), settings, start.
#[derive(Clone, Debug)]
pub struct FitRequest {
    /// The model.
    pub model: Model,
    /// Method, seed, limits.
    pub settings: FitSettings,
    /// Fresh, resume or polish.
    pub start: Start,
}

/// The stage a progress report comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Differential evolution.
    De,
    /// Levenberg–Marquardt.
    Lm,
    /// Ensemble MCMC.
    Mcmc,
}

impl Stage {
    /// How the progress line names one step.
    pub fn step_name(self) -> &'static str {
        match self {
            Stage::De => "DE generation",
            Stage::Lm => "LM iteration",
            Stage::Mcmc => "MCMC step",
        }
    }
}

/// The latest progress of a running fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The stage.
    pub stage: Stage,
    /// Step just finished within this stage and run (from 1).
    pub iteration: usize,
    /// The stage's step limit.
    pub max_iterations: usize,
    /// Best χ² so far.
    pub best_chi2: f64,
    /// Objective evaluations in this run so far (all stages).
    pub evaluations: usize,
    /// DE's best parameter vector so far (every parameter, in the model's name order), so the
    /// plot can follow the fit generation by generation; `None` outside DE.
    pub best_values: Option<Vec<f64>>,
}

/// Where the fit writes its progress and the UI reads it (a `Mutex` also on the web, where it
/// is never contended).
pub type ProgressSink = Arc<Mutex<Option<Progress>>>;
