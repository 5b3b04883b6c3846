//! The live path on the GPU: the loaded frames kept in GPU memory ([`ResidentGpu`], split over
//! storage buffers within the adapter's limits) and every detector change recomputed there with
//! one dispatch per buffer, the result read back asynchronously (a background job natively, the
//! event loop in the browser). Frames go up as they load, a bounded amount per UI frame.
//!
//! The user picks the device ([`StemDevice`]); with the GPU picked, images come only from the GPU:
//! while it is being prepared the image says so, and if it cannot be used the error is shown —
//! the CPU is never substituted.

use std::sync::Arc;
use std::time::Duration;

use scatterlab_stem::gpu::ResidentGpu;
use scatterlab_stem::load::{PixelKind, PixelSlice};
use scatterlab_stem::reduce::{DetectorImages, VirtualDetector};
use web_time::Instant;

use super::resident::Resident;
use crate::compute_job::{self, Job, JobPoll};
use crate::gpu_engine::WorkspaceGpu;
use crate::GpuSupport;

/// Which device computes the virtual images.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StemDevice {
    /// Exact u64 sums over the frames in memory, on the UI thread.
    #[default]
    Cpu,
    /// The frames resident on the GPU, `shaders/stem/fused.wgsl` (exact: paired u32 words).
    Gpu,
}

impl StemDevice {
    /// The name the UI and the status show.
    pub fn name(self) -> &'static str {
        match self {
            StemDevice::Cpu => "cpu",
            StemDevice::Gpu => "gpu",
        }
    }
}

/// Pixel bytes uploaded per UI frame at most: a large scan goes up over several frames, and the
/// packed copy each upload makes (two 16-bit pixels per word) stays small on the wasm heap.
const UPLOAD_PER_FRAME: usize = 16 << 20;

#[derive(Default)]
enum State {
    /// Nothing on the GPU.
    #[default]
    Idle,
    /// Buffers and pipeline being made.
    Creating(Job<Result<ResidentGpu, String>>),
    /// Frames `0..uploaded` are on the GPU.
    Resident { gpu: Arc<ResidentGpu>, uploaded: usize },
    /// The GPU cannot hold or sum these frames.
    Failed(String),
}

/// A detector computation in flight.
struct Pending {
    detectors: Vec<VirtualDetector>,
    version: u64,
    frames: usize,
    job: Job<Result<(DetectorImages, Duration), String>>,
}

/// Images the GPU finished: for `detectors` at data `version` over frames `0..frames`.
pub struct GpuImages {
    /// The detectors summed.
    pub detectors: Vec<VirtualDetector>,
    /// The data version they were asked for.
    pub version: u64,
    /// Frames covered.
    pub frames: usize,
    /// The sums (cut to `frames`), or why there are none.
    pub images: Result<DetectorImages, String>,
    /// Dispatch plus readback.
    pub elapsed: Duration,
}

/// The GPU side of the workspace: the device (if any), the resident frames and the job in flight.
#[derive(Default)]
pub struct GpuLive {
    gpu: WorkspaceGpu,
    state: State,
    pending: Option<Pending>,
}

impl GpuLive {
    /// The GPU of `support` (or why there is none), nothing resident yet.
    pub fn new(support: &GpuSupport) -> Self {
        Self { gpu: WorkspaceGpu::new(support), ..Self::default() }
    }

    /// The same device with nothing resident (new data).
    pub fn fresh(&self) -> Self {
        Self { gpu: self.gpu.clone(), ..Self::default() }
    }

    /// Why the GPU cannot be picked at all, if it cannot.
    pub fn unavailable(&self) -> Option<&str> {
        self.gpu.unavailable()
    }

    /// Frames on the GPU.
    pub fn uploaded(&self) -> usize {
        match &self.state {
            State::Resident { uploaded, .. } => *uploaded,
            _ => 0,
        }
    }

    /// Whether a computation is in flight.
    pub fn busy(&self) -> bool {
        self.pending.is_some()
    }

    /// What the GPU side is doing, for the UI; `None` once every loaded frame is resident.
    pub fn status(&self, data: &Resident) -> Option<String> {
        match &self.state {
            _ if self.unavailable().is_some() => self.unavailable().map(|w| format!("GPU unavailable: {w}")),
            State::Idle | State::Creating(_) => Some("GPU: allocating buffers, compiling the kernel…".into()),
            State::Resident { uploaded, .. } if *uploaded < data.loaded() => Some(format!("GPU: {uploaded} of {} frames uploaded", data.loaded())),
            State::Resident { .. } => None,
            State::Failed(e) => Some(format!("GPU: {e}")),
        }
    }

    /// Advances: makes the resident buffers for `data`, uploads newly loaded frames (while no
    /// computation reads them), and takes a finished computation's images.
    pub fn pump(&mut self, repaint: &egui::Context, data: &Resident) -> Option<GpuImages> {
        let finished = self.take_finished();
        match &mut self.state {
            State::Idle => {
                let Ok(ctx) = self.gpu.context().cloned() else { return finished };
                let (det, n, wide) = (data.det, data.n_frames(), data.kind() == PixelKind::U32);
                self.state =
                    State::Creating(compute_job::spawn(repaint.clone(), move || async move { ResidentGpu::new(&ctx, det, n, wide, None).await.map_err(|e| e.to_string()) }));
            }
            State::Creating(job) => match job.poll() {
                JobPoll::Pending => {}
                JobPoll::Done(Ok(gpu)) => self.state = State::Resident { gpu: Arc::new(gpu), uploaded: 0 },
                JobPoll::Done(Err(e)) => self.state = State::Failed(e),
                JobPoll::Lost => self.state = State::Failed("making the resident buffers stopped without a result".into()),
            },
            State::Resident { gpu, uploaded } => {
                if *uploaded < data.loaded() && self.pending.is_none() {
                    if let Some(gpu) = Arc::get_mut(gpu) {
                        match upload(gpu, data, *uploaded) {
                            Ok(n) => *uploaded = n,
                            Err(e) => self.state = State::Failed(e),
                        }
                    }
                    repaint.request_repaint();
                }
            }
            State::Failed(_) => {}
        }
        finished
    }

    /// Starts summing `detectors` over the resident frames (data `version`) unless a computation
    /// is in flight or nothing is resident; returns whether it started.
    pub fn request(&mut self, repaint: &egui::Context, detectors: &[VirtualDetector], version: u64) -> bool {
        let State::Resident { gpu, uploaded } = &self.state else { return false };
        if self.pending.is_some() || *uploaded == 0 {
            return false;
        }
        let (gpu, dets, frames) = (gpu.clone(), detectors.to_vec(), *uploaded);
        let job = compute_job::spawn(repaint.clone(), move || async move {
            let t0 = Instant::now();
            let images = gpu.detector_images(&dets).await.map_err(|e| e.to_string())?;
            Ok((images, t0.elapsed()))
        });
        self.pending = Some(Pending { detectors: detectors.to_vec(), version, frames, job });
        true
    }

    fn take_finished(&mut self) -> Option<GpuImages> {
        let result = self.pending.as_ref()?.job.outcome("the GPU computation stopped without a result")?;
        let p = self.pending.take()?;
        let (images, elapsed) = match result {
            Ok((mut im, dt)) => {
                // Frames not uploaded yet are zeros on the GPU; the images cover the uploaded ones.
                im.total.truncate(p.frames);
                im.detectors.iter_mut().for_each(|d| d.2.truncate(p.frames));
                (Ok(im), dt)
            }
            Err(e) => (Err(e), Duration::ZERO),
        };
        Some(GpuImages { detectors: p.detectors, version: p.version, frames: p.frames, images, elapsed })
    }
}

/// Uploads frames from `from` on, up to [`UPLOAD_PER_FRAME`] bytes; returns the frames now up.
fn upload(gpu: &mut ResidentGpu, data: &Resident, from: usize) -> Result<usize, String> {
    let px = data.det[0] * data.det[1];
    let frame_bytes = (px * data.kind().size()).max(1);
    let end = data.loaded().min(from + (UPLOAD_PER_FRAME / frame_bytes).max(1));
    let range = from * px..end * px;
    let part = match data.frames() {
        PixelSlice::U8(v) => v.get(range).map(PixelSlice::U8),
        PixelSlice::U16(v) => v.get(range).map(PixelSlice::U16),
        PixelSlice::U32(v) => v.get(range).map(PixelSlice::U32),
        PixelSlice::U64(v) => v.get(range).map(PixelSlice::U64),
    };
    let part = part.ok_or_else(|| format!("frames {from}..{end} are not loaded"))?;
    gpu.upload(from as u64, part).map_err(|e| e.to_string())?;
    Ok(end)
}
