//! [`FusedPassGpu`]: `shaders/stem/fused.wgsl`, the GPU twin of [`FusedPass`](crate::reduce::FusedPass)
//! with the same contract — `add` whole frames in any batches, `finish` → [`FusedResult`].
//!
//! The sum and max patterns and the per-frame records stay on the GPU across batches and are
//! read back once by `finish`; each batch uploads only its frames (u16 packed two per word, each
//! frame starting on a word boundary). All integer products are exact (paired-u32 sums), and
//! the centre of mass is computed from the exact moments exactly as the CPU does, so the whole
//! [`FusedResult`] equals the CPU's.

use bytemuck::{Pod, Zeroable};
use scatterlab_gpu::{wgpu, GpuContext, Kernel};

use crate::load::PixelSlice;
use crate::reduce::{FusedResult, ReduceError, VirtualDetector};

pub(super) const SHADER: &str = "stem/fused.wgsl";
/// Fixed (lo, hi) pairs per frame record: total, row moment, col moment.
pub(super) const FIXED: usize = 3;
/// Detectors one pass can carry (bits of the per-pixel label).
const MAX_DETECTORS: usize = 32;

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub(super) struct Params {
    pub(super) px: u32,
    pub(super) det_cols: u32,
    pub(super) n_frames: u32,
    pub(super) n_det: u32,
    pub(super) packed: u32,
    pub(super) words_per_frame: u32,
    pub(super) first_frame: u32,
    /// Bit 0: per-frame records only (no sum/max patterns).
    pub(super) flags: u32,
}

pub(super) fn gpu_err(e: scatterlab_gpu::GpuError) -> ReduceError {
    ReduceError::new("GPU fused pass", e.to_string())
}

/// Per-pixel detector labels (bit k = detector k) and each detector's pixel count.
pub(super) fn detector_labels(det: [usize; 2], detectors: &[VirtualDetector]) -> Result<(Vec<u32>, Vec<usize>), ReduceError> {
    if detectors.len() > MAX_DETECTORS {
        return Err(ReduceError::new("GPU fused pass", format!("carries at most {MAX_DETECTORS} virtual detectors in one pass (got {})", detectors.len())));
    }
    let mut labels = vec![0u32; det[0] * det[1]];
    let mut n_pixels = Vec::new();
    for (k, d) in detectors.iter().enumerate() {
        let runs = d.runs(det)?;
        n_pixels.push(runs.n_pixels());
        for (r, cols) in runs.runs {
            for c in cols {
                if let Some(l) = labels.get_mut(r * det[1] + c) {
                    *l |= 1 << k;
                }
            }
        }
    }
    Ok((labels, n_pixels))
}

/// Copies `words` u32 of `buffer` back to the CPU.
pub(super) async fn read_words(ctx: &GpuContext, buffer: &wgpu::Buffer, words: usize) -> Result<Vec<u32>, ReduceError> {
    ctx.read_back("stem readback", buffer, words).await.map_err(gpu_err)
}

/// A fused pass on the GPU over `n_frames` frames of one detector.
#[derive(Debug)]
pub struct FusedPassGpu {
    ctx: GpuContext,
    kernel: Kernel,
    det: [usize; 2],
    n_frames: usize,
    names: Vec<String>,
    n_pixels: Vec<usize>,
    labels: wgpu::Buffer,
    per_frame: wgpu::Buffer,
    sum_dp: wgpu::Buffer,
    max_dp: wgpu::Buffer,
    frames_done: usize,
}

impl FusedPassGpu {
    /// Compiles the kernel and allocates the accumulators (zeroed) on `ctx`'s device.
    pub async fn new(ctx: &GpuContext, det: [usize; 2], n_frames: usize, detectors: &[VirtualDetector]) -> Result<Self, ReduceError> {
        let px = det[0] * det[1];
        if px == 0 || n_frames == 0 || u32::try_from(px).is_err() || u32::try_from(n_frames).is_err() {
            return Err(ReduceError::new("GPU fused pass", format!("needs a non-empty detector and scan within u32 (got {det:?}, {n_frames} frames)")));
        }
        let (labels, n_pixels) = detector_labels(det, detectors)?;
        let stride = (FIXED + detectors.len()) * 2;
        let per_frame_bytes = (n_frames * stride * 4) as u64;
        for (what, bytes) in [("per-frame products", per_frame_bytes), ("sum pattern", (px * 8) as u64), ("detector labels", (px * 4) as u64)] {
            ctx.check_storage_size(what, bytes).map_err(gpu_err)?;
        }
        let kernel = Kernel::new(ctx, SHADER, "main").await.map_err(gpu_err)?;
        let zeroed = |label: &str, bytes: u64| ctx.storage(label, bytes.max(4), wgpu::BufferUsages::COPY_SRC);
        Ok(FusedPassGpu {
            ctx: ctx.clone(),
            kernel,
            det,
            n_frames,
            names: detectors.iter().map(|d| d.name.clone()).collect(),
            n_pixels,
            labels: ctx.storage_from("stem labels", &labels),
            per_frame: zeroed("stem per-frame", per_frame_bytes),
            sum_dp: zeroed("stem sum_dp", (px * 8) as u64),
            max_dp: zeroed("stem max_dp", (px * 4) as u64),
            frames_done: 0,
        })
    }

    /// Packs a batch into kernel words; returns (words, packed flag, words per frame).
    fn pack(&self, data: PixelSlice<'_>) -> Result<(Vec<u32>, u32, usize), ReduceError> {
        let px = self.det[0] * self.det[1];
        if !data.len().is_multiple_of(px) {
            return Err(ReduceError::new("GPU fused pass", format!("{} values are not whole {}×{} frames", data.len(), self.det[0], self.det[1])));
        }
        let pack16 = |values: &mut dyn Iterator<Item = u16>| {
            let wpf = px.div_ceil(2);
            let mut words = Vec::with_capacity(data.len() / px * wpf);
            let frame: Vec<u16> = values.collect();
            for f in frame.chunks_exact(px) {
                for pair in f.chunks(2) {
                    words.push(u32::from(pair[0]) | (u32::from(*pair.get(1).unwrap_or(&0)) << 16));
                }
            }
            (words, 1, wpf)
        };
        Ok(match data {
            PixelSlice::U8(d) => pack16(&mut d.iter().map(|&v| u16::from(v))),
            PixelSlice::U16(d) => pack16(&mut d.iter().copied()),
            PixelSlice::U32(d) => (d.to_vec(), 0, px),
            PixelSlice::U64(d) => {
                let words = d
                    .iter()
                    .map(|&v| u32::try_from(v))
                    .collect::<Result<Vec<u32>, _>>()
                    .map_err(|_| ReduceError::new("GPU fused pass", "64-bit pixel values above u32 cannot be summed on the GPU"))?;
                (words, 0, px)
            }
        })
    }

    /// Adds whole frames starting at frame `first` (one dispatch).
    pub async fn add(&mut self, first: u64, data: PixelSlice<'_>) -> Result<(), ReduceError> {
        let px = self.det[0] * self.det[1];
        let (words, packed, wpf) = self.pack(data)?;
        let n = data.len() / px;
        let first = usize::try_from(first).unwrap_or(usize::MAX);
        if first.checked_add(n).is_none_or(|end| end > self.n_frames) {
            return Err(ReduceError::new("GPU fused pass", format!("frames {first}..{} lie outside the scan's {} frames", first.saturating_add(n), self.n_frames)));
        }
        if n == 0 {
            return Ok(());
        }
        let ctx = &self.ctx;
        ctx.check_storage_size("frame batch", (words.len() * 4) as u64).map_err(gpu_err)?;
        let params = Params {
            px: px as u32,
            det_cols: self.det[1] as u32,
            n_frames: n as u32,
            n_det: self.names.len() as u32,
            packed,
            words_per_frame: wpf as u32,
            first_frame: first as u32,
            flags: 0,
        };
        let (params_buf, frames_buf) = (ctx.uniform_from("stem params", &params), ctx.storage_from("stem frames", &words));
        let bind = self.kernel.bind(ctx, &[&params_buf, &frames_buf, &self.labels, &self.per_frame, &self.sum_dp, &self.max_dp]);
        let mut encoder = ctx.encoder("stem fused");
        // One workgroup per frame.
        self.kernel.dispatch(&mut encoder, &bind, n as u32).map_err(gpu_err)?;
        ctx.submit_checked("stem/fused.wgsl dispatch", encoder.finish()).await.map_err(gpu_err)?;
        self.frames_done += n;
        Ok(())
    }

    async fn read(&self, buffer: &wgpu::Buffer, words: usize) -> Result<Vec<u32>, ReduceError> {
        read_words(&self.ctx, buffer, words).await
    }

    /// Reads the products back (one copy each) as the CPU pass's [`FusedResult`].
    pub async fn finish(self) -> Result<FusedResult, ReduceError> {
        let px = self.det[0] * self.det[1];
        let nd = self.names.len();
        let stride = (FIXED + nd) * 2;
        let per_frame = self.read(&self.per_frame, self.n_frames * stride).await?;
        let sums = self.read(&self.sum_dp, 2 * px).await?;
        let maxes = self.read(&self.max_dp, px).await?;
        let pair = |w: &[u32], i: usize| u64::from(w[2 * i]) | (u64::from(w[2 * i + 1]) << 32);
        let mut result = FusedResult {
            det: self.det,
            n_frames: self.n_frames,
            frames_done: self.frames_done,
            sum_dp: (0..px).map(|i| pair(&sums, i)).collect(),
            max_dp: maxes.iter().map(|&v| u64::from(v)).collect(),
            total: vec![0; self.n_frames],
            detectors: self.names.iter().zip(&self.n_pixels).map(|(n, &p)| (n.clone(), p, vec![0; self.n_frames])).collect(),
            com_raw: [vec![0.0; self.n_frames], vec![0.0; self.n_frames]],
        };
        for (f, rec) in per_frame.chunks_exact(stride).enumerate() {
            let total = pair(rec, 0);
            result.total[f] = total;
            if total > 0 {
                // As the CPU: the exact moment (u128 there, u64 here) over the total, in f64.
                result.com_raw[0][f] = pair(rec, 1) as f64 / total as f64;
                result.com_raw[1][f] = pair(rec, 2) as f64 / total as f64;
            }
            for (k, d) in result.detectors.iter_mut().enumerate() {
                d.2[f] = pair(rec, FIXED + k);
            }
        }
        Ok(result)
    }
}
