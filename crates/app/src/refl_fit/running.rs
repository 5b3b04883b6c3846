//! Starting, cancelling and collecting fits.

use scatterlab_core::CancelToken;

#[cfg(not(target_arch = "wasm32"))]
use super::job;
use super::update::fmt_chi2;
use super::{FitPanel, FitRequest, FitResult, ProgressSink, RunningFit, Start};
use crate::compute_job::JobPoll;
use crate::gpu_engine::GpuEngine;
#[cfg(not(target_arch = "wasm32"))]
use crate::{gpu_engine::GpuReadiness, Device};

impl FitPanel {
    /// Starts a fit of the current model (queued until the GPU pipeline is ready, if on the GPU).
    pub fn start(&mut self, start: Start, gpu: &mut GpuEngine, ctx: &egui::Context) {
        if self.is_running() {
            return;
        }
        let Some(model) = self.model.clone() else {
            self.message = Some(Err("load a model (or make one from the layer table) first".into()));
            return;
        };
        self.message = None;
        self.queued = Some(FitRequest { model, settings: self.settings.clone(), start });
        self.start_queued(gpu, ctx);
    }

    /// Starts the queued fit once its engine is ready.
    pub(super) fn start_queued(&mut self, gpu: &mut GpuEngine, ctx: &egui::Context) {
        let Some(request) = self.queued.take() else {
            return;
        };
        // The web build hands every fit to the npm package's worker, which opens its own device.
        #[cfg(target_arch = "wasm32")]
        {
            let _ = gpu;
            let (progress, cancel) = (ProgressSink::default(), CancelToken::new());
            self.last_progress = None;
            self.run =
                Some(RunningFit { job: super::worker_fit::spawn(request, progress.clone(), cancel.clone(), ctx.clone()), progress, cancel, started: web_time::Instant::now() });
        }
        #[cfg(not(target_arch = "wasm32"))]
        self.start_here(request, gpu, ctx);
    }

    /// Natively: runs the fit on a thread, on the CPU or eframe's GPU (once its pipeline is ready).
    #[cfg(not(target_arch = "wasm32"))]
    fn start_here(&mut self, request: FitRequest, gpu: &mut GpuEngine, ctx: &egui::Context) {
        let pipeline = match request.settings.device {
            Device::Cpu => None,
            Device::Gpu => match gpu.readiness(ctx) {
                GpuReadiness::Compiling => {
                    self.queued = Some(request);
                    return;
                }
                GpuReadiness::Unusable(why) => {
                    self.message = Some(Err(why));
                    return;
                }
                GpuReadiness::Ready(p) => Some(p),
            },
        };
        let progress = ProgressSink::default();
        let cancel = CancelToken::new();
        self.last_progress = None;
        self.run = Some(RunningFit { job: job::spawn(request, pipeline, progress.clone(), cancel.clone(), ctx.clone()), progress, cancel, started: web_time::Instant::now() });
    }

    /// Asks the running fit to stop; it finishes with its best values so far.
    pub fn cancel(&mut self) {
        if let Some(run) = &self.run {
            run.cancel.cancel();
        }
        self.queued = None;
    }

    /// Writes a fit's values into the table (and so into a new model).
    fn apply_result(&mut self, result: &FitResult) {
        let Some(model) = &self.model else { return };
        let names = model.parameter_names().to_vec();
        if names.len() != result.values.len() {
            self.message = Some(Err("the model changed during the fit; values not applied".into()));
            return;
        }
        for (name, &v) in names.iter().zip(&result.values) {
            if let Some(spec) = self.edits.get_mut(name) {
                spec.value = v;
            }
        }
        self.apply_edits();
    }

    /// Takes a finished fit: keeps its result and puts its values into the table.
    pub(super) fn poll_job(&mut self) {
        let Some(run) = &self.run else { return };
        let outcome = match run.job.poll() {
            JobPoll::Pending => return,
            JobPoll::Done(outcome) => outcome,
            JobPoll::Lost => Err("the fit ended without a result (its worker stopped)".into()),
        };
        self.last_progress = self.progress();
        self.run = None;
        match outcome {
            // A fit cancelled before it beat the start values leaves the table as it was.
            Ok(result) if result.cancelled && result.chi2.partial_cmp(&result.start_chi2) != Some(std::cmp::Ordering::Less) => {
                self.message = Some(Ok(format!("fit cancelled: its best χ² {} is above the start's {}; values kept", fmt_chi2(result.chi2), fmt_chi2(result.start_chi2))));
                self.result = Some(result);
            }
            Ok(result) => {
                self.apply_result(&result);
                let how = if result.cancelled { "cancelled" } else { "finished" };
                self.message =
                    Some(Ok(format!("fit {how}: χ² {} → {} in {:.2} s ({} evaluations)", fmt_chi2(result.start_chi2), fmt_chi2(result.chi2), result.seconds, result.evaluations)));
                self.result = Some(result);
            }
            Err(e) => self.message = Some(Err(format!("fit failed: {e}"))),
        }
    }
}
