//! [`ssb_gpu`]: the whole reconstruction of an opened acquisition with the final step on the GPU —
//! the same parameters, frame streaming, DPC rotation and fit as the CPU's
//! [`crate::ssb::ssb`] ([`crate::ssb::prepare_with`]: frames on the CPU, the fit's losses on the
//! GPU natively), then [`SsbGpu::reconstruct`] in f32.
//! The record's `device` names the adapter; nothing falls back to the CPU.

use num_complex::Complex32;
use scatterlab_core::CancelToken;
use scatterlab_gpu::GpuContext;

use super::SsbGpu;
use crate::load::{Acquisition, FileSet, LoadProvenance};
use crate::reduce::ReduceError;
use crate::ssb::{prepare_with, LossBackend, SsbOptions, SsbRecord};

/// The GPU reconstruction: the complex64 object over the scan with its record and provenance
/// (the sibling of [`crate::ssb::SsbProducts`]).
#[derive(Clone, Debug)]
pub struct SsbGpuProducts {
    /// Scan shape (rows, cols).
    pub scan: [usize; 2],
    /// `ssb_object`, row-major, f32.
    pub object: Vec<Complex32>,
    /// Parameters used (`device` names the adapter).
    pub record: SsbRecord,
    /// Sources and how they were read.
    pub provenance: LoadProvenance,
}

impl SsbGpuProducts {
    /// `ssb_phase = angle(ssb_object)`, radians.
    pub fn phase(&self) -> Vec<f32> {
        self.object.iter().map(|z| z.arg()).collect()
    }

    /// `ssb_amplitude = |ssb_object|`.
    pub fn amplitude(&self) -> Vec<f32> {
        self.object.iter().map(|z| z.norm()).collect()
    }
}

/// Reconstructs `acq` (opened from `files`) as [`crate::ssb::ssb`] does, the last step on `ctx`'s
/// GPU in f32; `progress` and `cancel` as there.
pub async fn ssb_gpu(
    ctx: &GpuContext,
    acq: &Acquisition,
    files: &dyn FileSet,
    options: &SsbOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &CancelToken,
) -> Result<SsbGpuProducts, ReduceError> {
    // Compile first: a device that cannot run the kernels fails before the frames are read.
    let gpu = SsbGpu::new(ctx).await?;
    // The fit's losses on the GPU too where the fit may wait on it (natively).
    #[cfg(not(target_arch = "wasm32"))]
    let mut backend = super::GpuLosses::new(&gpu);
    #[cfg(target_arch = "wasm32")]
    let mut backend = crate::ssb::CpuLosses;
    let p = prepare_with(acq, files, options, &mut backend, progress, cancel)?;
    let mut record = p.record;
    if record.fitted {
        record.notes.push(format!("fit losses evaluated on {}", backend.device()));
    }
    let object = gpu.reconstruct(&p.stack, &p.optics, &record.aberrations, record.scan_step_a, record.rotation_deg, cancel).await?;
    record.device = format!("gpu: {} (f32 WGSL)", ctx.describe());
    Ok(SsbGpuProducts { scan: p.stack.scan, object, record, provenance: p.provenance })
}
