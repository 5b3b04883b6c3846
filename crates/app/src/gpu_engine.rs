//! The GPU engine as the app sees it: eframe's own render device (if eframe renders with
//! wgpu) and the reflectivity pipeline, compiled on it the first time the user picks the GPU.
//!
//! Reusing the render device rather than requesting a second one matters on the web: a page
//! gets one WebGPU adapter, and sharing it keeps compute and drawing on the same device.

use std::sync::Arc;

use scatterlab_gpu::{wgpu, GpuContext};
use scatterlab_refl::gpu::ParrattGpu;

use crate::compute_job::{self, Job, JobPoll};

/// Whether GPU compute can run at all in this app instance.
#[derive(Clone, Debug)]
pub enum GpuSupport {
    /// A wgpu device with compute shaders, shared with eframe's renderer (boxed: it is large).
    Available(Box<GpuContext>),
    /// No usable device; the text says why (shown to the user when they pick the GPU).
    Unavailable(String),
}

impl GpuSupport {
    /// Reads eframe's wgpu render state (`CreationContext::wgpu_render_state`).
    pub fn from_render_state(render_state: Option<&eframe::egui_wgpu::RenderState>) -> Self {
        let Some(rs) = render_state else {
            return Self::Unavailable("eframe is not rendering with wgpu, so there is no GPU device to compute on".into());
        };
        let info = rs.adapter.get_info();
        // WebGL2 (the "gl" backend in the browser) draws fine but has no compute shaders.
        let flags = rs.adapter.get_downlevel_capabilities().flags;
        if !flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS) {
            return Self::Unavailable(format!("the {} backend of {:?} has no compute shaders (GPU compute needs WebGPU, Vulkan, Metal or DX12)", backend_name(&info), info.name));
        }
        Self::Available(Box::new(GpuContext::from_device(rs.device.clone(), rs.queue.clone(), info)))
    }
}

/// A workspace's device as each of its GPU sides (live images, SSB) keeps it: the context, or
/// why there is none — shown when the user picks the GPU; the CPU is never substituted.
#[derive(Clone, Debug)]
pub struct WorkspaceGpu(Result<GpuContext, String>);

impl WorkspaceGpu {
    /// The device of `support`, or why there is none.
    pub fn new(support: &GpuSupport) -> Self {
        Self(match support {
            GpuSupport::Available(c) => Ok(GpuContext::clone(c)),
            GpuSupport::Unavailable(why) => Err(why.clone()),
        })
    }

    /// The device, or why there is none.
    pub fn context(&self) -> Result<&GpuContext, &str> {
        self.0.as_ref().map_err(String::as_str)
    }

    /// Why the GPU cannot be picked at all, if it cannot.
    pub fn unavailable(&self) -> Option<&str> {
        self.context().err()
    }
}

impl Default for WorkspaceGpu {
    /// No device: the workspace was made before the app handed it one.
    fn default() -> Self {
        Self(Err("no GPU was given to the 4D-STEM workspace".into()))
    }
}

/// The lower-case wgpu backend name, e.g. `"vulkan"`, `"browserwebgpu"`, `"gl"`.
pub fn backend_name(info: &wgpu::AdapterInfo) -> String {
    format!("{:?}", info.backend).to_lowercase()
}

/// The compiled pipeline's life cycle.
#[derive(Debug)]
enum Pipeline {
    NotStarted,
    Compiling(Job<Result<ParrattGpu, String>>),
    Ready(Arc<ParrattGpu>),
    Failed(String),
}

/// What the panel can do with the GPU right now.
#[derive(Clone, Debug)]
pub enum GpuReadiness {
    /// The pipeline is compiled; compute jobs may start.
    Ready(Arc<ParrattGpu>),
    /// The pipeline is still compiling; try again on a later frame.
    Compiling,
    /// The GPU cannot be used; the text says why.
    Unusable(String),
}

/// GPU support plus the lazily compiled reflectivity pipeline.
#[derive(Debug)]
pub struct GpuEngine {
    support: GpuSupport,
    pipeline: Pipeline,
}

impl GpuEngine {
    /// Wraps a device (or the reason there is none); nothing is compiled yet.
    pub fn new(support: GpuSupport) -> Self {
        Self { support, pipeline: Pipeline::NotStarted }
    }

    /// The device as the status line names it (`GpuContext::describe`), or why there is none.
    pub fn describe(&self) -> String {
        match &self.support {
            GpuSupport::Available(ctx) => ctx.describe(),
            GpuSupport::Unavailable(why) => format!("unavailable: {why}"),
        }
    }

    /// Whether a device exists (the pipeline may still fail to compile).
    pub fn is_available(&self) -> bool {
        matches!(self.support, GpuSupport::Available(_))
    }

    /// Advances the pipeline's life cycle, starting compilation on first use.
    pub fn readiness(&mut self, repaint: &egui::Context) -> GpuReadiness {
        let ctx = match &self.support {
            GpuSupport::Available(ctx) => ctx,
            GpuSupport::Unavailable(why) => return GpuReadiness::Unusable(format!("GPU not available: {why}")),
        };
        if let Pipeline::NotStarted = self.pipeline {
            let ctx = GpuContext::clone(ctx);
            self.pipeline = Pipeline::Compiling(compute_job::spawn(repaint.clone(), move || async move { ParrattGpu::new(&ctx).await.map_err(|e| e.to_string()) }));
        }
        if let Pipeline::Compiling(job) = &self.pipeline {
            match job.poll() {
                JobPoll::Pending => return GpuReadiness::Compiling,
                JobPoll::Done(Ok(pipeline)) => self.pipeline = Pipeline::Ready(Arc::new(pipeline)),
                JobPoll::Done(Err(e)) => self.pipeline = Pipeline::Failed(format!("GPU pipeline failed: {e}")),
                JobPoll::Lost => self.pipeline = Pipeline::Failed("GPU pipeline compilation was lost (worker ended)".into()),
            }
        }
        match &self.pipeline {
            Pipeline::Ready(p) => GpuReadiness::Ready(p.clone()),
            Pipeline::Failed(e) => GpuReadiness::Unusable(e.clone()),
            Pipeline::NotStarted | Pipeline::Compiling(_) => GpuReadiness::Compiling,
        }
    }
}
