//! Where the aberration fit evaluates its batches of trials: [`CpuLosses`] (the default:
//! [`PhaseVariance::losses`] on the CPU's threads) or another device's batched evaluation
//! (natively `crate::gpu::GpuLosses`: many trials per GPU dispatch). The search itself
//! ([`super::fit_aberrations_on`]) is the same whichever evaluates.

use scatterlab_core::CancelToken;

use super::{PhaseVariance, Trial};
use crate::reduce::ReduceError;

/// Evaluates the fit's loss for batches of trials on one of its levels.
pub trait LossBackend {
    /// A new fit begins: levels built before are gone (drop anything cached for them).
    fn reset(&mut self) {}

    /// The losses of `trials` on `pv`, the fit's level `level` (0 grid, 1 coarse, 2 full; the
    /// same index always comes with the same `pv` between two [`LossBackend::reset`]s), as
    /// [`PhaseVariance::losses`] computes them.
    fn losses(&mut self, level: usize, pv: &PhaseVariance, trials: &[Trial], cancel: &CancelToken) -> Result<Vec<f64>, ReduceError>;

    /// The device, in words (for records and notes).
    fn device(&self) -> String;
}

/// The CPU: [`PhaseVariance::losses`] (f64, the level's threads).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuLosses;

impl LossBackend for CpuLosses {
    fn losses(&mut self, _level: usize, pv: &PhaseVariance, trials: &[Trial], cancel: &CancelToken) -> Result<Vec<f64>, ReduceError> {
        pv.losses(trials, cancel)
    }

    fn device(&self) -> String {
        "cpu (f64)".into()
    }
}
