//! [`GpuLosses`]: the aberration fit's [`LossBackend`] on the GPU — each level's spectra uploaded
//! once ([`PhaseVarianceGpu`]) and every batch of trials evaluated in as few dispatches as the
//! buffers allow. Native only: the fit is synchronous, so it waits on the device here, which the
//! browser's event loop cannot do.

use scatterlab_core::CancelToken;

use super::{PhaseVarianceGpu, SsbGpu};
use crate::reduce::ReduceError;
use crate::ssb::{LossBackend, PhaseVariance, Trial};

/// The GPU's loss evaluation for [`crate::ssb::fit_aberrations_on`].
#[derive(Debug)]
pub struct GpuLosses<'a> {
    gpu: &'a SsbGpu,
    levels: [Option<PhaseVarianceGpu<'a>>; 3],
}

impl<'a> GpuLosses<'a> {
    /// Evaluates on `gpu`'s device.
    pub fn new(gpu: &'a SsbGpu) -> Self {
        GpuLosses { gpu, levels: [None, None, None] }
    }
}

impl LossBackend for GpuLosses<'_> {
    fn reset(&mut self) {
        self.levels = [None, None, None];
    }

    fn losses(&mut self, level: usize, pv: &PhaseVariance, trials: &[Trial], cancel: &CancelToken) -> Result<Vec<f64>, ReduceError> {
        let Some(slot) = self.levels.get_mut(level) else {
            return Err(ReduceError::new("SSB fit", format!("no fit level {level} (0 grid, 1 coarse, 2 full)")));
        };
        let uploaded = match slot {
            Some(g) => g,
            None => slot.insert(PhaseVarianceGpu::new(self.gpu, pv)?),
        };
        pollster::block_on(uploaded.losses(trials, cancel))
    }

    fn device(&self) -> String {
        format!("gpu: {} (f32 WGSL)", self.gpu.ctx.describe())
    }
}
