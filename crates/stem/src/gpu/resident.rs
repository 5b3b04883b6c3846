//! [`ResidentGpu`]: a whole acquisition kept on the GPU, so that moving a virtual detector
//! recomputes its images with one dispatch per buffer and no upload — the live path of the
//! viewer. The kernel is `shaders/stem/fused.wgsl` with its pattern updates switched off; the CPU
//! twin is [`detector_images`](crate::reduce::detector_images) (compared exactly).
//!
//! Frames are split over several storage buffers of whole frames, each within the adapter's
//! binding and buffer limits (WebGPU's defaults are 128 MiB per binding, 256 MiB per buffer), so
//! any acquisition that fits the device's memory can be resident. Uploads may come in any
//! batches (progressive loading), each frame written once.

use scatterlab_gpu::{wgpu, GpuContext, Kernel};

use super::fused::{detector_labels, gpu_err, read_words, Params, FIXED, SHADER};
use crate::load::PixelSlice;
use crate::reduce::{DetectorImages, ReduceError, VirtualDetector};

/// One storage buffer of whole frames.
#[derive(Debug)]
struct Slab {
    first: usize,
    n: usize,
    buffer: wgpu::Buffer,
}

/// Frames of one acquisition resident in GPU memory.
#[derive(Debug)]
pub struct ResidentGpu {
    ctx: GpuContext,
    kernel: Kernel,
    det: [usize; 2],
    n_frames: usize,
    /// Two 16-bit values per word (u8/u16 data) or one u32 per word.
    packed: bool,
    words_per_frame: usize,
    slabs: Vec<Slab>,
    /// Bound to the kernel's two pattern slots, never written (the flag skips them). Two
    /// buffers: WebGPU rejects one buffer bound to two writable bindings of a bind group.
    unused: [wgpu::Buffer; 2],
}

impl ResidentGpu {
    /// Allocates room for `n_frames` frames of a `det` detector; `wide` = 32-bit pixels (else
    /// 8/16-bit, stored two per word). `max_slab_bytes` caps each buffer below the adapter's
    /// limits (`None`: the limits themselves).
    pub async fn new(ctx: &GpuContext, det: [usize; 2], n_frames: usize, wide: bool, max_slab_bytes: Option<u64>) -> Result<Self, ReduceError> {
        let px = det[0] * det[1];
        if px == 0 || n_frames == 0 || u32::try_from(px).is_err() || u32::try_from(n_frames).is_err() {
            return Err(ReduceError::new("resident GPU data", format!("needs a non-empty detector and scan within u32 (got {det:?}, {n_frames} frames)")));
        }
        let words_per_frame = if wide { px } else { px.div_ceil(2) };
        let frame_bytes = (words_per_frame * 4) as u64;
        let limit = ctx.limits.max_storage_buffer_binding_size.min(ctx.limits.max_buffer_size);
        let cap = max_slab_bytes.map_or(limit, |m| m.min(limit));
        let per_slab = usize::try_from(cap / frame_bytes).unwrap_or(usize::MAX).min(n_frames);
        if per_slab == 0 {
            return Err(ReduceError::new("resident GPU data", format!("one frame ({frame_bytes} bytes) exceeds the adapter's storage buffer limit ({cap} bytes)")));
        }
        let kernel = Kernel::new(ctx, SHADER, "main").await.map_err(gpu_err)?;
        let mut slabs = Vec::new();
        let mut first = 0;
        while first < n_frames {
            let n = per_slab.min(n_frames - first);
            let buffer = ctx.storage("stem resident frames", n as u64 * frame_bytes, wgpu::BufferUsages::COPY_DST);
            slabs.push(Slab { first, n, buffer });
            first += n;
        }
        let unused = [0, 1].map(|_| ctx.storage("stem unused patterns", 8, wgpu::BufferUsages::empty()));
        Ok(ResidentGpu { ctx: ctx.clone(), kernel, det, n_frames, packed: !wide, words_per_frame, slabs, unused })
    }

    /// Frames this holds.
    pub fn n_frames(&self) -> usize {
        self.n_frames
    }

    /// Storage buffers the frames are split over.
    pub fn n_buffers(&self) -> usize {
        self.slabs.len()
    }

    /// Writes whole frames starting at frame `first` (any batch size; slabs are crossed).
    pub fn upload(&mut self, first: u64, data: PixelSlice<'_>) -> Result<(), ReduceError> {
        let px = self.det[0] * self.det[1];
        let err = |m: String| ReduceError::new("resident GPU upload", m);
        if !data.len().is_multiple_of(px) {
            return Err(err(format!("{} values are not whole {}×{} frames", data.len(), self.det[0], self.det[1])));
        }
        let n = data.len() / px;
        let first = usize::try_from(first).unwrap_or(usize::MAX);
        if first.checked_add(n).is_none_or(|end| end > self.n_frames) {
            return Err(err(format!("frames {first}..{} lie outside the scan's {} frames", first.saturating_add(n), self.n_frames)));
        }
        let words = match (data, self.packed) {
            (PixelSlice::U8(d), true) => pack16(d.iter().map(|&v| u16::from(v)), px),
            (PixelSlice::U16(d), true) => pack16(d.iter().copied(), px),
            (PixelSlice::U32(d), false) => d.to_vec(),
            (PixelSlice::U64(d), false) => {
                d.iter().map(|&v| u32::try_from(v)).collect::<Result<Vec<u32>, _>>().map_err(|_| err("64-bit pixel values above u32 cannot be summed on the GPU".into()))?
            }
            _ => return Err(err("pixel width differs from the one the resident buffers were made for".into())),
        };
        for slab in &self.slabs {
            let (lo, hi) = (first.max(slab.first), (first + n).min(slab.first + slab.n));
            if lo >= hi {
                continue;
            }
            let src = &words[(lo - first) * self.words_per_frame..(hi - first) * self.words_per_frame];
            let offset = ((lo - slab.first) * self.words_per_frame * 4) as u64;
            self.ctx.queue.write_buffer(&slab.buffer, offset, bytemuck::cast_slice(src));
        }
        Ok(())
    }

    /// Every frame's total and `detectors`' sums (at most 32), one dispatch per buffer.
    pub async fn detector_images(&self, detectors: &[VirtualDetector]) -> Result<DetectorImages, ReduceError> {
        let ctx = &self.ctx;
        let (labels, n_pixels) = detector_labels(self.det, detectors)?;
        let stride = (FIXED + detectors.len()) * 2;
        let out_bytes = (self.n_frames * stride * 4) as u64;
        ctx.check_storage_size("per-frame products", out_bytes).map_err(gpu_err)?;
        let labels = ctx.storage_from("stem labels", &labels);
        let out = ctx.storage("stem per-frame", out_bytes.max(4), wgpu::BufferUsages::COPY_SRC);
        let mut encoder = ctx.encoder("stem resident detectors");
        let mut keep = Vec::new();
        for slab in &self.slabs {
            let params = Params {
                px: (self.det[0] * self.det[1]) as u32,
                det_cols: self.det[1] as u32,
                n_frames: slab.n as u32,
                n_det: detectors.len() as u32,
                packed: u32::from(self.packed),
                words_per_frame: self.words_per_frame as u32,
                first_frame: slab.first as u32,
                flags: 1,
            };
            let params = ctx.uniform_from("stem params", &params);
            let bind = self.kernel.bind(ctx, &[&params, &slab.buffer, &labels, &out, &self.unused[0], &self.unused[1]]);
            // One workgroup per frame of the slab.
            self.kernel.dispatch(&mut encoder, &bind, slab.n as u32).map_err(gpu_err)?;
            keep.push((params, bind));
        }
        ctx.submit_checked("stem/fused.wgsl resident dispatch", encoder.finish()).await.map_err(gpu_err)?;
        let words = read_words(ctx, &out, self.n_frames * stride).await?;
        let pair = |w: &[u32], i: usize| u64::from(w[2 * i]) | (u64::from(w[2 * i + 1]) << 32);
        let mut images = DetectorImages {
            total: Vec::with_capacity(self.n_frames),
            detectors: detectors.iter().zip(&n_pixels).map(|(d, &p)| (d.name.clone(), p, Vec::with_capacity(self.n_frames))).collect(),
        };
        for rec in words.chunks_exact(stride) {
            images.total.push(pair(rec, 0));
            for (k, d) in images.detectors.iter_mut().enumerate() {
                d.2.push(pair(rec, FIXED + k));
            }
        }
        Ok(images)
    }
}

/// Two u16 per word, low half first, each frame starting on a word.
fn pack16(values: impl Iterator<Item = u16>, px: usize) -> Vec<u32> {
    let all: Vec<u16> = values.collect();
    let mut words = Vec::with_capacity(all.len().div_ceil(2));
    for frame in all.chunks_exact(px) {
        for pair in frame.chunks(2) {
            words.push(u32::from(pair[0]) | (u32::from(pair.get(1).copied().unwrap_or(0)) << 16));
        }
    }
    words
}
