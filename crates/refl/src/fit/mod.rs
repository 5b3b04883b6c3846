//! Fitting a reflectivity model to its data: differential evolution (batched), Levenberg–Marquardt
//! (exact Jacobian) and an affine-invariant ensemble sampler, over one [`Objective`].
//!
//! Every method reports progress through a callback and stops early when its [`CancelToken`](scatterlab_core::CancelToken)
//! is cancelled. The library never reads a clock (there is none in plain wasm);
//! callers time their runs.

mod de;
mod de_run;
mod lm;
mod mcmc;
mod objective;
pub mod task;

pub use de::{de_converged, differential_evolution, generation_seed, latin_hypercube, DeOptions, DeResult, DeRun, Strategy};
pub use lm::{levenberg_marquardt, LmOptions, LmResult};
pub use mcmc::{ensemble_sampler, integrated_time, EnsembleSampler, McmcOptions, McmcResult};
pub use objective::{check_point, Objective, ObjectiveOptions};

/// A progress report from a running fit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitProgress {
    /// `"de"`, `"lm"` or `"mcmc"`.
    pub method: &'static str,
    /// Generation, iteration or step just finished (from 1).
    pub iteration: usize,
    /// Its limit.
    pub max_iterations: usize,
    /// Best χ² so far.
    pub best_chi2: f64,
    /// Objective evaluations so far.
    pub evaluations: usize,
}
