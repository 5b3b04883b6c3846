//! Where the refinement's model runs: the CPU (f64 eigen/Taylor, [`crate::gradient::GradientModel`])
//! or the GPU (f32 Taylor, [`GradientGpu`]). Only the intensities and their Jacobian move; the
//! Levenberg–Marquardt arithmetic, the scales and residuals stay f64 on the host, so every front
//! end drives the same [`Refiner`] loop on either device.
//!
//! The GPU API is async (the browser's WebGPU reads back through the event loop):
//! [`Refiner::new_on`] and [`Refiner::step_async`]. The blocking [`Refiner::new`] /
//! [`Refiner::step`] run the same futures without an executor: the CPU's never wait, and natively
//! wgpu completes its readback inside `Device::poll`; a future that still waits (the browser) is a
//! typed error pointing to the async calls, never a switch of device.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use scatterlab_core::CancelToken;
use scatterlab_gpu::GpuContext;

use super::lm::{Optimizer, Refiner, StepReport};
use super::problem::{Linearisation, Problem, State};
use super::{Experiment, RefineError};
use crate::gpu::GradientGpu;

/// The device of the refinement's model.
#[derive(Debug, Clone, Default)]
pub enum ModelDevice {
    /// f64 on the CPU: eigen path for Hermitian matrices, Taylor for absorptive ones.
    #[default]
    Cpu,
    /// f32 Taylor propagation on a GPU (the forward Jacobian by 2N block matrices).
    Gpu(Arc<GradientGpu>),
}

impl ModelDevice {
    /// The GPU device of `ctx` (compiles the propagation kernel).
    pub async fn gpu(ctx: &GpuContext) -> Result<Self, RefineError> {
        // Send + Sync natively; on wasm32 wgpu's handles are neither, and nothing crosses threads there.
        #[allow(clippy::arc_with_non_send_sync)]
        let gpu = Arc::new(GradientGpu::new(ctx).await?);
        Ok(Self::Gpu(gpu))
    }

    /// `result.json`'s `device`: `cpu`, or `gpu (<adapter>), f32 Taylor`.
    pub fn label(&self) -> String {
        match self {
            Self::Cpu => "cpu".to_owned(),
            Self::Gpu(gpu) => gpu.device_label(),
        }
    }
}

impl Problem {
    /// [`Problem::linearise`] with the model on `device`.
    pub async fn linearise_on(&self, experiment: &Experiment, state: &State, with_jacobian: bool, device: &ModelDevice) -> Result<Linearisation, RefineError> {
        let ModelDevice::Gpu(gpu) = device else {
            return self.linearise(experiment, state, with_jacobian);
        };
        let model = self.model(experiment, state)?;
        let (intensities, columns) = if with_jacobian { gpu.intensities_and_jacobian(&model, self.params()).await? } else { (gpu.intensities(&model).await?, Vec::new()) };
        Ok(self.assemble(&intensities, &columns, with_jacobian))
    }
}

impl Refiner {
    /// Starts at the experiment's start structure on the CPU (f64); one model evaluation with
    /// the Jacobian.
    pub fn new(experiment: Experiment, options: super::LmOptions) -> Result<Self, RefineError> {
        run_ready(Self::new_on(experiment, options, ModelDevice::Cpu))
    }

    /// Starts with the model on `device`. The GPU runs Levenberg–Marquardt's forward Jacobian;
    /// the first-order optimisers' reverse-mode gradient has no GPU path, so they refuse it.
    pub async fn new_on(experiment: Experiment, options: super::LmOptions, device: ModelDevice) -> Result<Self, RefineError> {
        if matches!(device, ModelDevice::Gpu(_)) && options.optimizer != Optimizer::Lm {
            return Err(RefineError::Unsupported {
                key: "device".to_owned(),
                message: format!("optimizer {} runs on the CPU only (its reverse-mode gradient has no GPU path); the GPU runs lm", options.optimizer.name()),
            });
        }
        Self::begin(experiment, options, device).await
    }

    /// The model's device.
    pub fn device(&self) -> &ModelDevice {
        &self.device
    }

    /// [`Refiner::step_async`] without an executor: the CPU device, or natively the GPU (see
    /// the module). Cancellation is checked between model evaluations.
    pub fn step(&mut self, cancel: &CancelToken) -> Result<StepReport, RefineError> {
        run_ready(self.step_async(cancel))
    }
}

/// Polls `future` once: ready futures (the CPU's; natively the GPU's) give their result, a
/// waiting one is an error naming the async call to use.
fn run_ready<T>(future: impl Future<Output = Result<T, RefineError>>) -> Result<T, RefineError> {
    let mut future = pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => result,
        Poll::Pending => Err(RefineError::Unsupported {
            key: "device".to_owned(),
            message: "the GPU model waits for its readback on an event loop here: drive the refinement with Refiner::new_on / Refiner::step_async".to_owned(),
        }),
    }
}
