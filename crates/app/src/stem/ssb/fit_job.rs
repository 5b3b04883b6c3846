//! "Fit aberrations": [`fit_aberrations`] on the gathered BF stack from the current sliders.
//!
//! Natively the fit runs on a worker thread (all cores, as `stem ssb --fit`; with the GPU picked
//! its losses are evaluated there, many trials per dispatch, as `stem ssb --fit --device gpu`), reporting
//! evaluations through a shared counter and stopping at Cancel (the STEM crate checks the token
//! between loss batches). wasm32 has no threads here, so in the browser the same search runs a
//! slice per UI frame ([`super::stepped::SteppedFit`], equal to `fit_aberrations` on one
//! thread), and Cancel takes effect at the next slice. That browser fit is always the CPU's (the
//! fit waits on each loss, which the page's event loop cannot do on its GPU): the page says so.

#[cfg(not(target_arch = "wasm32"))]
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use scatterlab_core::CancelToken;
#[cfg(not(target_arch = "wasm32"))]
use scatterlab_stem::ssb::{fit_aberrations, fit_aberrations_on};
use scatterlab_stem::ssb::{BfStack, FitOptions, FitReport, FitStart};

use super::SsbInputs;
use crate::stem::StemPanel;

/// What the fit works on (owned, so that it can move to a thread).
struct FitTask {
    stack: Arc<BfStack>,
    inputs: SsbInputs,
    start: FitStart,
    options: FitOptions,
    /// The GPU whose kernels evaluate the losses (natively, with the GPU picked).
    #[cfg(not(target_arch = "wasm32"))]
    gpu: Option<Arc<scatterlab_stem::gpu::SsbGpu>>,
}

impl FitTask {
    #[cfg(not(target_arch = "wasm32"))]
    fn run(&self, done: &AtomicU64, total: &AtomicU64, cancel: &CancelToken, repaint: &dyn Fn()) -> Result<FitReport, String> {
        let mut progress = |d: u64, t: u64| {
            done.store(d, Ordering::Relaxed);
            total.store(t, Ordering::Relaxed);
            repaint();
        };
        let (stack, optics, step) = (&self.stack, &self.inputs.optics, self.inputs.scan_step_a);
        match &self.gpu {
            Some(gpu) => {
                let mut losses = scatterlab_stem::gpu::GpuLosses::new(gpu);
                fit_aberrations_on(stack, optics, step, &self.start, &self.options, &mut losses, &mut progress, cancel)
            }
            None => fit_aberrations(stack, optics, step, &self.start, &self.options, &mut progress, cancel),
        }
        .map_err(|e| e.to_string())
    }
}

/// A running fit.
pub struct FitJob {
    cancel: CancelToken,
    #[cfg(not(target_arch = "wasm32"))]
    done: Arc<AtomicU64>,
    #[cfg(not(target_arch = "wasm32"))]
    total: Arc<AtomicU64>,
    /// The inputs it fits for (the result applies only while they hold).
    inputs: SsbInputs,
    /// Where the losses are evaluated, in words.
    pub(crate) device: String,
    #[cfg(not(target_arch = "wasm32"))]
    result: std::sync::mpsc::Receiver<Result<FitReport, String>>,
    #[cfg(target_arch = "wasm32")]
    task: super::stepped::SteppedFit,
}

impl FitJob {
    /// `(evaluations done, planned)`.
    pub fn progress(&self) -> (u64, u64) {
        #[cfg(target_arch = "wasm32")]
        return self.task.progress();
        #[cfg(not(target_arch = "wasm32"))]
        (self.done.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed))
    }

    fn start(task: FitTask, device: String, repaint: Option<egui::Context>) -> Self {
        let cancel = CancelToken::new();
        let inputs = task.inputs.clone();
        #[cfg(not(target_arch = "wasm32"))]
        {
            let (done, total) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
            let (tx, rx) = std::sync::mpsc::channel();
            let (c, d, t) = (cancel.clone(), done.clone(), total.clone());
            std::thread::spawn(move || {
                let repaint = || {
                    if let Some(ctx) = &repaint {
                        ctx.request_repaint();
                    }
                };
                let r = task.run(&d, &t, &c, &repaint);
                // The receiver is gone when the workspace moved on: nothing to report to.
                let _ = tx.send(r);
                repaint();
            });
            FitJob { cancel, done, total, inputs, device, result: rx }
        }
        #[cfg(target_arch = "wasm32")]
        {
            if let Some(ctx) = &repaint {
                ctx.request_repaint();
            }
            let task = super::stepped::SteppedFit::new(task.stack, task.inputs.optics, task.inputs.scan_step_a, task.start, task.options);
            FitJob { cancel, inputs, device, task }
        }
    }

    /// The result once the fit has ended (in the browser: after one more slice of `_budget`).
    fn poll(&mut self, _budget: std::time::Duration) -> Option<Result<FitReport, String>> {
        #[cfg(not(target_arch = "wasm32"))]
        {
            match self.result.try_recv() {
                Ok(r) => Some(r),
                Err(std::sync::mpsc::TryRecvError::Empty) => None,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => Some(Err("the fit thread ended without a result".into())),
            }
        }
        #[cfg(target_arch = "wasm32")]
        {
            use super::stepped::Stop;
            match self.task.step(_budget, &self.cancel) {
                Ok(report) => Some(Ok(report)),
                Err(Stop::Pause) => None,
                Err(Stop::Failed(e)) => Some(Err(e.to_string())),
            }
        }
    }
}

impl StemPanel {
    /// Starts fitting C10, C12 and φ12 from the current sliders with `options` on the gathered
    /// stack (the DPC or given rotation stays fixed unless `options.fit_rotation`); `repaint` is
    /// woken as evaluations finish. An error says why it cannot start.
    pub fn start_ssb_fit(&mut self, options: FitOptions, repaint: Option<egui::Context>) -> Result<(), String> {
        if self.ssb.fit.is_some() {
            return Err("a fit is already running".into());
        }
        let inputs = self.ssb_inputs()?;
        let state = self.ssb.stack.as_ref().filter(|s| s.frames_done == s.stack.scan[0] * s.stack.scan[1] && s.key == inputs.stack_key());
        let state = state.ok_or("the BF stack is not gathered yet (open the SSB page and wait for it)")?;
        // The reconstruction for these inputs also set the stack's k vectors (dk, transpose).
        if self.ssb.result.as_ref().is_none_or(|r| r.inputs != inputs) {
            return Err("the reconstruction is not up to date yet; try again next frame".into());
        }
        let start = FitStart { aberrations: self.ssb.settings.aberrations, rotation_deg: inputs.rotation_deg };
        #[cfg(not(target_arch = "wasm32"))]
        let (gpu, device) = match self.ssb.settings.device {
            super::SsbDevice::Gpu => {
                let gpu = self.ssb.gpu.ready().ok_or("the GPU's SSB kernels are not ready yet (see the GPU status under the image)")?;
                let device = format!("gpu: {} (f32 WGSL)", gpu.context().describe());
                (Some(gpu), device)
            }
            super::SsbDevice::Cpu => (None, "cpu (f64, all cores)".to_owned()),
        };
        #[cfg(target_arch = "wasm32")]
        let device = match self.ssb.settings.device {
            super::SsbDevice::Gpu => "cpu (f64, one thread: the browser's fit cannot wait on the GPU)".to_owned(),
            super::SsbDevice::Cpu => "cpu (f64, one thread)".to_owned(),
        };
        let task = FitTask {
            stack: state.stack.clone(),
            inputs,
            start,
            options,
            #[cfg(not(target_arch = "wasm32"))]
            gpu,
        };
        self.ssb.last_fit = None;
        self.ssb.fit = Some(FitJob::start(task, device, repaint));
        Ok(())
    }

    /// Asks the running fit to stop (natively it ends at its next loss batch).
    pub fn cancel_ssb_fit(&mut self) {
        if let Some(job) = &self.ssb.fit {
            job.cancel.cancel();
        }
    }

    /// Takes a finished fit's result: its aberrations go to the sliders while the fit's inputs
    /// (centre, radius, rotation, calibration, data) still hold; with `fit_rotation` the rotation
    /// too.
    pub(crate) fn poll_ssb_fit(&mut self, budget: std::time::Duration) {
        let Some(job) = self.ssb.fit.as_mut() else { return };
        let Some(result) = job.poll(budget) else { return };
        let inputs = job.inputs.clone();
        self.ssb.last_fit_device = Some(job.device.clone());
        self.ssb.fit = None;
        let result = match result {
            Ok(report) => {
                let now = self.ssb_inputs();
                if now.as_ref().is_ok_and(|n| *n == inputs) {
                    self.ssb.settings.aberrations = report.aberrations;
                    if report.options.fit_rotation {
                        self.ssb.settings.rotation = Some((report.rotation_deg, inputs.transposed));
                    }
                    Ok(report)
                } else {
                    Err("the fit finished after the centre, radius, rotation or data changed; its result was not applied".to_owned())
                }
            }
            Err(e) => Err(e),
        };
        self.ssb.last_fit = Some(result);
    }
}
