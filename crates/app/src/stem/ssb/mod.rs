//! Single-sideband ptychography in the workspace (the SSB page): the STEM crate's CPU f64
//! reconstruction ([`scatterlab_stem::ssb`]) on the frames already in memory.
//!
//! The BF pixels' scan images ([`BfStack`]) are gathered once from the resident frames, a few
//! frames per UI frame with a progress bar ([`build`]), because that is the only pass over the
//! data; after that every slider change re-runs [`reconstruct`](scatterlab_stem::ssb::reconstruct)
//! on the stack. The defaults are the workspace's: the auto probe's centre and radius, the DPC
//! rotation in use (θ = −a, CONVENTIONS.md § SSB), the file's calibration; each can be
//! overridden. "Fit aberrations" runs [`fit_aberrations`](scatterlab_stem::ssb::fit_aberrations)
//! ([`fit_job`]: natively on a thread with cancel; in the browser on the page's thread).

pub mod build;
mod export;
pub mod fit_job;
pub mod gpu;
pub mod stepped;
mod ui;

use std::sync::Arc;
use std::time::Duration;

use scatterlab_stem::ssb::{Aberrations, BfStack, FitReport};

pub use build::SsbInputs;
use fit_job::FitJob;

use super::view::{Display, ImageView};

/// The device an SSB reconstruction runs on, as the user picked it: the GPU's result is the
/// GPU's or an error naming why ([`gpu::SsbGpuSide`]) — never the CPU's without saying so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SsbDevice {
    /// `scatterlab_stem::ssb::reconstruct`, f64 with rustfft.
    #[default]
    Cpu,
    /// `scatterlab_stem::gpu::ssb::SsbGpu`, f32 WGSL on the workspace's device.
    Gpu,
}

impl SsbDevice {
    /// How the result names the device.
    pub fn name(self) -> &'static str {
        match self {
            SsbDevice::Cpu => "cpu (f64, rustfft)",
            SsbDevice::Gpu => "gpu (f32, WGSL)",
        }
    }
}

/// The user's SSB settings; `None` takes the workspace's value (shown beside the control).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SsbSettings {
    /// Beam centre (row, col), px; `None` = the auto probe's.
    pub center: Option<[f64; 2]>,
    /// BF radius, px; `None` = the auto probe's.
    pub bf_radius: Option<f64>,
    /// Scan rotation θ, degrees, and whether the detector is transposed; `None` = from the DPC
    /// rotation `a` in use, θ = −a.
    pub rotation: Option<(f64, bool)>,
    /// C10, C12 (nm) and φ12 (rad) of the reconstruction.
    pub aberrations: Aberrations,
    /// The device the user picked.
    pub device: SsbDevice,
}

/// One reconstruction on display.
#[derive(Clone, Debug)]
pub struct SsbResult {
    /// What it was computed from.
    pub inputs: SsbInputs,
    /// Aberrations used.
    pub aberrations: Aberrations,
    /// Scan shape (rows, cols).
    pub scan: [usize; 2],
    /// `angle(O)`, radians, row-major — or why there is none.
    pub phase: Result<Vec<f64>, String>,
    /// Wall time of the reconstruction from the stack.
    pub elapsed: Duration,
    /// The device that ran it.
    pub device: SsbDevice,
}

/// The BF stack being gathered from the resident frames, or gathered.
pub(crate) struct StackState {
    /// Data version, centre and radius bits it belongs to.
    key: (u64, [u64; 3]),
    /// Frames added so far.
    frames_done: usize,
    stack: Arc<BfStack>,
}

/// The SSB page's state: settings, the stack, the last reconstruction and the fit.
pub struct SsbView {
    /// The user's settings (edit freely; the next frame recomputes).
    pub settings: SsbSettings,
    /// How the phase image is displayed.
    pub display: Display,
    pub(crate) stack: Option<StackState>,
    pub(crate) result: Option<SsbResult>,
    /// Why the inputs are not complete (no calibration, still loading, …).
    pub(crate) blocked: Option<String>,
    pub(crate) fit: Option<FitJob>,
    /// The last fit's report (or why it failed / was cancelled).
    pub(crate) last_fit: Option<Result<FitReport, String>>,
    /// Where the last fit evaluated its losses, in words.
    pub(crate) last_fit_device: Option<String>,
    pub(crate) view: ImageView,
    pub(crate) export_status: Option<Result<Vec<String>, String>>,
    /// The GPU side (device, kernels, the reconstruction in flight).
    pub(crate) gpu: gpu::SsbGpuSide,
}

impl Default for SsbView {
    fn default() -> Self {
        Self {
            settings: SsbSettings::default(),
            display: Display::new(scatterlab_stem::reduce::colormap::Colormap::Gray, super::view::Transform::Linear),
            stack: None,
            result: None,
            blocked: None,
            fit: None,
            last_fit: None,
            last_fit_device: None,
            view: ImageView::default(),
            export_status: None,
            gpu: gpu::SsbGpuSide::default(),
        }
    }
}

impl SsbView {
    /// The reconstruction on display (after the stack is gathered).
    pub fn result(&self) -> Option<&SsbResult> {
        self.result.as_ref()
    }

    /// The phase on display, radians, row-major.
    pub fn phase(&self) -> Option<&[f64]> {
        self.result.as_ref().and_then(|r| r.phase.as_deref().ok())
    }

    /// `(frames gathered, frames in the scan)` of the BF stack.
    pub fn stack_progress(&self) -> Option<(usize, usize)> {
        self.stack.as_ref().map(|s| (s.frames_done, s.stack.scan[0] * s.stack.scan[1]))
    }

    /// The gathered stack, once complete.
    pub fn stack(&self) -> Option<&BfStack> {
        self.stack.as_ref().filter(|s| s.frames_done == s.stack.scan[0] * s.stack.scan[1]).map(|s| s.stack.as_ref())
    }

    /// Why SSB cannot run on the open data, if it cannot.
    pub fn blocked(&self) -> Option<&str> {
        self.blocked.as_deref()
    }

    /// Whether a fit is running.
    pub fn fitting(&self) -> bool {
        self.fit.is_some()
    }

    /// Why the GPU cannot run SSB here, if it cannot.
    pub fn gpu_unavailable(&self) -> Option<&str> {
        self.gpu.unavailable()
    }

    /// The page's state for a host, as JSON: the device picked, the reconstruction on display
    /// (device, aberrations, Σ|phase|, whether it is for the current settings, its error).
    pub fn status_json(&self, current: Option<&SsbInputs>) -> serde_json::Value {
        let result = self.result.as_ref().map(|r| {
            let ab = r.aberrations;
            serde_json::json!({
                "device": r.device.name(),
                "aberrations": [ab.c10_nm, ab.c12_nm, ab.phi12_rad],
                "absPhaseSum": r.phase.as_ref().ok().map(|p| p.iter().map(|v| v.abs()).sum::<f64>()),
                "error": r.phase.as_ref().err(),
                "current": current.is_some_and(|i| *i == r.inputs) && r.aberrations == self.settings.aberrations && r.device == self.settings.device,
                "elapsedMs": r.elapsed.as_secs_f64() * 1e3,
            })
        });
        serde_json::json!({
            "device": self.settings.device.name(),
            "gpu": self.gpu.status(),
            "blocked": self.blocked,
            "result": result,
        })
    }

    /// Where the running fit (else the last one) evaluates its losses, in words.
    pub fn fit_device(&self) -> Option<&str> {
        self.fit.as_ref().map(|f| f.device.as_str()).or(self.last_fit_device.as_deref())
    }

    /// `(evaluations done, planned)` of the running fit.
    pub fn fit_progress(&self) -> Option<(u64, u64)> {
        self.fit.as_ref().map(FitJob::progress)
    }

    /// What the last SSB export wrote, or why it failed.
    pub fn export_status(&self) -> Option<&Result<Vec<String>, String>> {
        self.export_status.as_ref()
    }

    /// The last fit's report, or why it ended without one.
    pub fn last_fit(&self) -> Option<&Result<FitReport, String>> {
        self.last_fit.as_ref()
    }
}
