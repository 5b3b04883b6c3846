//! The protocol of `Scatterlab.fit`: its options, progress reports and result
//! (`web/src/generated/fit.ts`).

use std::collections::HashMap;

use serde::Serialize;
use ts_rs::TS;

/// A fitting method: `"de"` (differential evolution + LM polish), `"lm"` (Levenberg–Marquardt), `"mcmc"` (DE, LM, ensemble sampler).
#[derive(Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum FitMethod {
    De,
    Lm,
    Mcmc,
}

/// Options of `Scatterlab.fit`; every field is optional.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct FitOptions {
    /// The method (default `"de"`). `"lm"` starts from the model's values, or from the best member of `resume`.
    pub method: Option<FitMethod>,
    /// Random seed, a whole number (default 0): one seed gives one result.
    pub seed: Option<f64>,
    /// DE generations to run (default 1000; DE stops earlier when it converges).
    pub max_generations: Option<f64>,
    /// DE population = popsize × free parameters (default 15).
    pub popsize: Option<f64>,
    /// Sampler steps per walker for `"mcmc"` (default 2000, a quarter of them burn-in).
    pub steps: Option<f64>,
    /// Fit ln R instead of R.
    pub log: Option<bool>,
    /// A previous result's `state`: DE continues from its population, LM starts from its best member.
    pub resume: Option<FitState>,
}

/// A progress report, after each DE generation, LM iteration and sampler step.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FitProgress {
    /// The running phase.
    pub method: FitMethod,
    /// Generation, iteration or step within the phase (from 1).
    pub iteration: f64,
    /// Its limit.
    pub max_iterations: f64,
    /// Best χ² so far.
    pub best_chi2: f64,
    /// Objective evaluations so far (all phases, a resumed state's included).
    pub evaluations: f64,
    /// Seconds since the fit started.
    pub seconds: f64,
    /// Evaluations of this fit per second.
    pub evaluations_per_second: f64,
}

/// A DE population and its χ², to resume a fit from (plain arrays: it survives `JSON.stringify`).
#[derive(Serialize, TS)]
pub struct FitState {
    /// Free-parameter vectors, one per member.
    pub population: Vec<Vec<f64>>,
    /// χ² of each member.
    pub energies: Vec<f64>,
    /// Evaluations so far.
    pub evaluations: f64,
    /// Generations so far.
    pub generations: f64,
}

/// A fitted parameter.
#[derive(Serialize, TS)]
pub struct FitParameter {
    /// The fitted value.
    pub value: f64,
    /// Its 1σ uncertainty.
    pub stderr: f64,
}

/// The result of `Scatterlab.fit`: the fields of `scatterlab refl fit`'s output, plus what is needed to go on.
#[derive(Serialize, TS)]
pub struct FitResult {
    /// Fitted value and 1σ uncertainty per free parameter (`stderr` NaN when cancelled before LM ran).
    #[ts(inline)]
    pub parameters: HashMap<String, FitParameter>,
    /// χ² at the fitted values.
    pub chi2: f64,
    /// Data points fitted.
    pub n_points: f64,
    /// Objective evaluations.
    pub evaluations: f64,
    /// Wall time, s.
    pub seconds: f64,
    /// The device of the instance, `"cpu"` or `"gpu"` (LM always runs on the CPU, f64).
    #[ts(type = r#""cpu" | "gpu""#)]
    pub device: String,
    /// The method.
    pub method: FitMethod,
    /// The engines in words.
    pub backend: String,
    /// Whether the fit was cancelled (the values are then the best point reached).
    pub cancelled: bool,
    /// Whether DE met its convergence criterion.
    pub converged: bool,
    /// DE generations run, resumed ones included.
    pub generations: f64,
    /// The final DE state (absent for `"lm"`): pass it as `resume` to continue.
    #[ts(optional)]
    pub state: Option<FitState>,
    /// The model file with the fitted values, JSON: fit it with `method: "lm"` to polish.
    pub model: String,
    /// The sampler's summary (`"mcmc"` only).
    #[ts(optional, inline)]
    pub mcmc: Option<crate::fit::McmcSummary>,
}

/// The declarations of `web/src/generated/fit.ts`, in order.
pub fn declarations(cfg: &ts_rs::Config) -> Vec<String> {
    use super::declaration as d;
    vec![d::<FitMethod>(cfg), d::<FitOptions>(cfg), d::<FitProgress>(cfg), d::<FitState>(cfg), d::<FitResult>(cfg)]
}
