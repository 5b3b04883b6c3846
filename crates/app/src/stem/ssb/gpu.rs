//! The SSB page on the GPU: the STEM crate's WGSL reconstruction ([`SsbGpu`], f32, the twin of
//! the CPU's `reconstruct`) on the workspace's device — kittest's or eframe's wgpu device
//! natively, the page's WebGPU in the browser.
//!
//! The kernels compile once per device in a background job; each change of the sliders then
//! starts one reconstruction of the gathered stack (readback is async: a worker thread natively,
//! the event loop in the browser). While one runs the previous image stays on screen; when it
//! lands and the sliders have moved on, the next starts, so dragging a slider shows a live
//! sequence of images. With the GPU picked the image is the GPU's or an error naming why —
//! never the CPU's.

use std::sync::Arc;
use std::time::Duration;

use scatterlab_core::CancelToken;
use scatterlab_gpu::GpuContext;
use scatterlab_stem::gpu::SsbGpu;
use scatterlab_stem::ssb::{Aberrations, BfStack};
use web_time::Instant;

use super::{SsbDevice, SsbInputs, SsbResult};
use crate::compute_job::{self, Job, JobPoll};
use crate::gpu_engine::WorkspaceGpu;
use crate::GpuSupport;

#[derive(Default)]
enum Kernels {
    /// Not compiled yet (nobody picked the GPU).
    #[default]
    Idle,
    Compiling(Job<Result<SsbGpu, String>>),
    Ready(Arc<SsbGpu>),
    Failed(String),
}

/// A reconstruction in flight.
struct Pending {
    inputs: SsbInputs,
    aberrations: Aberrations,
    scan: [usize; 2],
    job: Job<Result<(Vec<f64>, Duration), String>>,
}

/// The GPU side of the SSB page: the device (or why there is none), its compiled kernels and
/// the reconstruction in flight.
#[derive(Default)]
pub struct SsbGpuSide {
    gpu: WorkspaceGpu,
    kernels: Kernels,
    pending: Option<Pending>,
}

impl SsbGpuSide {
    /// The GPU of `support` (nothing compiled until it is picked).
    pub fn new(support: &GpuSupport) -> Self {
        Self { gpu: WorkspaceGpu::new(support), ..Self::default() }
    }

    /// The same device and compiled kernels, nothing in flight (new data).
    pub fn fresh(&self) -> Self {
        let kernels = match &self.kernels {
            Kernels::Ready(gpu) => Kernels::Ready(gpu.clone()),
            _ => Kernels::Idle,
        };
        Self { gpu: self.gpu.clone(), kernels, pending: None }
    }

    /// Why the GPU cannot run SSB at all, if it cannot.
    pub fn unavailable(&self) -> Option<&str> {
        self.gpu.unavailable()
    }

    /// The adapter, in words (for the page and the export's record).
    pub fn adapter(&self) -> Option<String> {
        self.gpu.context().ok().map(GpuContext::describe)
    }

    /// The compiled kernels, once ready (the native fit evaluates its losses on them).
    pub fn ready(&self) -> Option<Arc<SsbGpu>> {
        match &self.kernels {
            Kernels::Ready(gpu) => Some(gpu.clone()),
            _ => None,
        }
    }

    /// What the GPU side is doing, for the page; `None` before the GPU is first used and when
    /// it is ready and idle.
    pub fn status(&self) -> Option<String> {
        match (self.gpu.context(), &self.kernels) {
            (Err(why), _) => Some(format!("GPU unavailable: {why}")),
            (_, Kernels::Idle) => None,
            (_, Kernels::Compiling(_)) => Some("GPU: compiling the SSB kernels…".into()),
            (_, Kernels::Failed(e)) => Some(format!("GPU: {e}")),
            (_, Kernels::Ready(_)) if self.pending.is_some() => Some("GPU: reconstructing…".into()),
            _ => None,
        }
    }

    /// Advances with the GPU picked: compiles the kernels, returns a finished reconstruction,
    /// and starts one of `stack` for `inputs` and `aberrations` when none runs (the caller asks
    /// only when its result is not already on display). Failures come back as a result whose
    /// phase is the error.
    pub fn pump(&mut self, repaint: &egui::Context, stack: &Arc<BfStack>, inputs: &SsbInputs, aberrations: Aberrations) -> Option<SsbResult> {
        let finished = self.take_finished();
        let failed = |why: String| SsbResult { scan: stack.scan, inputs: inputs.clone(), aberrations, phase: Err(why), elapsed: Duration::ZERO, device: SsbDevice::Gpu };
        match &self.kernels {
            Kernels::Idle => {
                let ctx = match self.gpu.context() {
                    Ok(c) => c.clone(),
                    Err(why) => return finished.or_else(|| Some(failed(format!("GPU SSB: no GPU ({why})")))),
                };
                self.kernels = Kernels::Compiling(compute_job::spawn(repaint.clone(), move || async move { SsbGpu::new(&ctx).await.map_err(|e| e.to_string()) }));
            }
            Kernels::Compiling(job) => match job.poll() {
                JobPoll::Pending => {}
                JobPoll::Done(Ok(gpu)) => {
                    self.kernels = Kernels::Ready(Arc::new(gpu));
                    repaint.request_repaint();
                }
                JobPoll::Done(Err(e)) => self.kernels = Kernels::Failed(format!("GPU SSB: {e}")),
                JobPoll::Lost => self.kernels = Kernels::Failed("GPU SSB: compiling the kernels stopped without a result".into()),
            },
            Kernels::Ready(gpu) if self.pending.is_none() && finished.is_none() => {
                let (gpu, scan, stack, i, ab) = (gpu.clone(), stack.scan, stack.clone(), inputs.clone(), aberrations);
                let job = compute_job::spawn(repaint.clone(), move || async move {
                    let t0 = Instant::now();
                    let object = gpu.reconstruct(&stack, &i.optics, &ab, i.scan_step_a, i.rotation_deg, &CancelToken::new()).await.map_err(|e| e.to_string())?;
                    Ok((object.iter().map(|z| f64::from(z.arg())).collect(), t0.elapsed()))
                });
                self.pending = Some(Pending { inputs: inputs.clone(), aberrations, scan, job });
            }
            Kernels::Ready(_) => {}
            Kernels::Failed(e) => return finished.or_else(|| Some(failed(e.clone()))),
        }
        finished
    }

    fn take_finished(&mut self) -> Option<SsbResult> {
        let result = self.pending.as_ref()?.job.outcome("GPU SSB: the reconstruction stopped without a result")?;
        let p = self.pending.take()?;
        let (phase, elapsed) = match result {
            Ok((phase, dt)) => (Ok(phase), dt),
            Err(e) => (Err(e), Duration::ZERO),
        };
        Some(SsbResult { scan: p.scan, inputs: p.inputs, aberrations: p.aberrations, phase, elapsed, device: SsbDevice::Gpu })
    }
}
