//! [`SsbGpu`]: single-sideband ptychography's reconstruction on the GPU in f32, the twin of
//! [`crate::ssb::reconstruct`] (one contract: a filled [`BfStack`], optics, aberrations, scan step
//! and rotation in; the object over the scan out, here as complex64 values).
//!
//! BF pixels go to the device in batches (as many scan images as fit the adapter's buffer
//! limits): each batch's images are transformed over the scan (`shaders/stem/ssb_fft.wgsl`) and
//! accumulated with the phase-only correction into one running spectrum
//! (`shaders/stem/ssb_accumulate.wgsl`); after the last batch one inverse 2-D transform and one
//! scaling by `1/(BF pixels · rows · cols)` give the object. Scan axes of any length 1..=65536
//! (radix-2 Stockham for powers of two, Bluestein otherwise; see `plan.rs`).
//!
//! [`PhaseVarianceGpu`] evaluates the aberration fit's loss for many trials per dispatch on the
//! same kernels (the twin of [`crate::ssb::PhaseVariance::losses`]); natively `GpuLosses` hands it
//! to the fit ([`crate::ssb::fit_aberrations_on`]).

mod encode;
#[cfg(not(target_arch = "wasm32"))]
mod losses;
mod objective;
mod plan;
mod products;

#[cfg(not(target_arch = "wasm32"))]
pub use losses::GpuLosses;
pub use objective::PhaseVarianceGpu;
pub use plan::MAX_AXIS;
pub use products::{ssb_gpu, SsbGpuProducts};

use num_complex::Complex32;
use scatterlab_core::CancelToken;
use scatterlab_gpu::{wgpu, GpuContext};

use encode::{AccParams, Encoder, Kernels, Work};
use plan::AxisPlan;

use crate::reduce::ReduceError;
use crate::ssb::{scan_frequencies, Aberrations, BfStack, Optics, GAMMA_FLOOR};

pub(crate) fn ssb_err(e: scatterlab_gpu::GpuError) -> ReduceError {
    ReduceError::new("GPU SSB", e.to_string())
}

/// The default cap of one work buffer (bigger chunks only add memory: every chunk already fills
/// the device with thousands of workgroups).
pub const DEFAULT_WORK_BYTES: u64 = 256 << 20;

/// The SSB kernels compiled on one device.
#[derive(Debug)]
pub struct SsbGpu {
    ctx: GpuContext,
    kernels: Kernels,
    max_buffer_bytes: Option<u64>,
}

/// Values of a complex buffer, `[re, im]` f32.
type C32 = [f32; 2];

impl SsbGpu {
    /// Compiles the kernels on `ctx`'s device.
    pub async fn new(ctx: &GpuContext) -> Result<Self, ReduceError> {
        Ok(SsbGpu { ctx: ctx.clone(), kernels: Kernels::new(ctx).await?, max_buffer_bytes: None })
    }

    /// The device the kernels were compiled on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Caps every work buffer at `bytes` instead of [`DEFAULT_WORK_BYTES`] (always within the
    /// adapter's limits): fewer BF pixels go in one batch (tests use it to cross batches; the
    /// result does not depend on it).
    pub fn with_max_buffer_bytes(mut self, bytes: u64) -> Self {
        self.max_buffer_bytes = Some(bytes);
        self
    }

    /// The largest work buffer this allocates: the cap given, else [`DEFAULT_WORK_BYTES`], and
    /// never above the adapter's limits (four work buffers live at once).
    fn buffer_limit(&self) -> u64 {
        let l = &self.ctx.limits;
        let limit = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
        self.max_buffer_bytes.unwrap_or(DEFAULT_WORK_BYTES).min(limit)
    }

    fn buffer(&self, label: &str, values: usize, extra: wgpu::BufferUsages) -> wgpu::Buffer {
        self.ctx.storage(label, (values.max(1) * 8) as u64, extra)
    }

    /// Plans for both scan axes, and how many images of the scan one batch of buffers holds.
    fn plans(&self, scan: [usize; 2], wanted: usize) -> Result<([AxisPlan; 2], usize, usize), ReduceError> {
        let plans = [AxisPlan::new(&self.ctx, scan[0], "scan row")?, AxisPlan::new(&self.ctx, scan[1], "scan column")?];
        let (batch, scratch) = self.batch_for(&plans, scan, wanted)?;
        Ok((plans, batch, scratch))
    }

    /// How many images of `scan` (at most `wanted`) one work buffer holds with `plans`, and
    /// Bluestein's scratch values per image.
    fn batch_for(&self, plans: &[AxisPlan; 2], scan: [usize; 2], wanted: usize) -> Result<(usize, usize), ReduceError> {
        let n = scan[0] * scan[1];
        // Per image: the image itself, and Bluestein's scratch for either axis.
        let scratch = (scan[0] * plans[1].scratch_per_line()).max(scan[1] * plans[0].scratch_per_line());
        let per_image = (n.max(scratch) * 8) as u64;
        let limit = self.buffer_limit();
        let batch = usize::try_from(limit / per_image.max(1)).unwrap_or(usize::MAX).min(wanted.max(1));
        if batch == 0 {
            return Err(ReduceError::new("GPU SSB", format!("one {}×{} scan image needs {per_image} bytes of work buffer; the adapter allows {limit}", scan[0], scan[1])));
        }
        Ok((batch, scratch))
    }

    /// Copies `values` complex values of `buffer` back.
    async fn read(&self, buffer: &wgpu::Buffer, values: usize) -> Result<Vec<Complex32>, ReduceError> {
        let v: Vec<C32> = self.ctx.read_back("ssb readback", buffer, values).await.map_err(ssb_err)?;
        Ok(v.into_iter().map(|[re, im]| Complex32::new(re, im)).collect())
    }

    /// The forward (or unnormalised inverse) 2-D transform of `batch` row-major images of `scan`
    /// in `data` — the twin of [`crate::ssb::Fft2`] on each image, exposed for its test.
    pub async fn fft2(&self, data: &[Complex32], batch: usize, scan: [usize; 2], inverse: bool) -> Result<Vec<Complex32>, ReduceError> {
        let n = scan[0] * scan[1];
        if data.len() != batch * n || n == 0 {
            return Err(ReduceError::new("GPU FFT input", format!("{} values are not {batch} images of {}×{}", data.len(), scan[0], scan[1])));
        }
        let (plans, fits, scratch) = self.plans(scan, batch)?;
        if fits < batch {
            return Err(ReduceError::new("GPU FFT input", format!("{batch} images exceed one buffer ({fits} fit)")));
        }
        let data_buf = [0, 1].map(|_| self.buffer("ssb fft data", batch * n, wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC));
        let scratch_buf = [0, 1].map(|_| self.buffer("ssb fft scratch", batch * scratch, wgpu::BufferUsages::empty()));
        let values: Vec<C32> = data.iter().map(|z| [z.re, z.im]).collect();
        self.ctx.queue.write_buffer(&data_buf[0], 0, bytemuck::cast_slice(&values));
        let mut w = Work { data: [&data_buf[0], &data_buf[1]], cur: 0, scratch: [&scratch_buf[0], &scratch_buf[1]] };
        let mut enc = Encoder::new(&self.ctx, &self.kernels, "ssb fft2");
        enc.fft2(&plans, batch, scan, &mut w, inverse);
        enc.submit("stem/ssb_fft.wgsl dispatch").await?;
        self.read(w.current(), batch * n).await
    }

    /// The object of a filled [`BfStack`] for `optics`, `aberrations`, scan step (Å) and rotation
    /// θ (degrees): the twin of [`crate::ssb::reconstruct`], in f32 (cancel checked per batch).
    pub async fn reconstruct(
        &self,
        stack: &BfStack,
        optics: &Optics,
        aberrations: &Aberrations,
        step_a: f64,
        rotation_deg: f64,
        cancel: &CancelToken,
    ) -> Result<Vec<Complex32>, ReduceError> {
        let scan = stack.scan;
        let n = scan[0] * scan[1];
        let nb = stack.pixels.len();
        if nb == 0 || stack.images.len() != nb * n {
            return Err(ReduceError::new("BF stack", format!("{} values for {nb} BF pixels over a {}×{} scan", stack.images.len(), scan[0], scan[1])));
        }
        for (name, v) in [("wavelength", optics.wavelength_a), ("detector sampling", optics.dk_inv_a_per_px), ("aperture k_alpha", optics.k_alpha_inv_a), ("scan step", step_a)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(ReduceError::new(name, format!("must be a positive finite number (got {v})")));
            }
        }
        for (name, v) in [("C10", aberrations.c10_nm), ("C12", aberrations.c12_nm), ("phi12", aberrations.phi12_rad), ("scan rotation", rotation_deg)] {
            if !v.is_finite() {
                return Err(ReduceError::new(name, format!("must be a finite number (got {v})")));
            }
        }
        let (plans, batch, scratch) = self.plans(scan, nb)?;
        let ctx = &self.ctx;
        let kvec: Vec<C32> = stack.pixels.k.iter().map(|&[r, c]| [r as f32, c as f32]).collect();
        let nu: Vec<C32> = scan_frequencies(scan, step_a, rotation_deg).iter().map(|&[r, c]| [r as f32, c as f32]).collect();
        let (kvec, nu) = (ctx.storage_from("ssb k", &kvec), ctx.storage_from("ssb nu", &nu));
        let data = [0, 1].map(|_| self.buffer("ssb scan spectra", batch * n, wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC));
        let scratch = [0, 1].map(|_| self.buffer("ssb fft scratch", batch * scratch, wgpu::BufferUsages::empty()));
        let sum = self.buffer("ssb spectrum", n, wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST);
        let (data, scratch) = ([&data[0], &data[1]], [&scratch[0], &scratch[1]]);
        let probe = crate::ssb::Probe::new(optics, aberrations);
        let mut params = AccParams { n_scan: n as u32, floor: GAMMA_FLOOR as f32, ..probe_params(&probe) };
        let mut first = 0;
        while first < nb {
            if cancel.is_cancelled() {
                return Err(ReduceError::new("SSB", "cancelled"));
            }
            let b = batch.min(nb - first);
            let images: Vec<C32> = stack.images[first * n..(first + b) * n].iter().map(|&v| [v as f32, 0.0]).collect();
            ctx.queue.write_buffer(data[0], 0, bytemuck::cast_slice(&images));
            let mut w = Work { data, cur: 0, scratch };
            let mut enc = Encoder::new(ctx, &self.kernels, "ssb batch");
            enc.fft2(&plans, b, scan, &mut w, false);
            params.n_batch = b as u32;
            params.first = first as u32;
            enc.dispatch(&self.kernels.accumulate, &params, &[(1, w.current()), (2, &kvec), (3, &nu), (4, &sum)], n);
            enc.submit("stem/ssb_accumulate.wgsl dispatch").await?;
            first += b;
        }
        let mut enc = Encoder::new(ctx, &self.kernels, "ssb object");
        enc.encoder.copy_buffer_to_buffer(&sum, 0, data[0], 0, (n * 8) as u64);
        let mut w = Work { data, cur: 0, scratch };
        enc.fft2(&plans, 1, scan, &mut w, true);
        params.factor = (1.0 / (nb as f64 * n as f64)) as f32;
        enc.dispatch(&self.kernels.scale, &params, &[(4, w.current())], n);
        enc.submit("stem/ssb_accumulate.wgsl scale").await?;
        self.read(w.current(), n).await
    }
}

/// The probe's constants in the kernel's units (Å, Å⁻¹), from the CPU's [`Probe`](crate::ssb::Probe).
fn probe_params(p: &crate::ssb::Probe) -> AccParams {
    let c = p.constants();
    AccParams { k_alpha: c[0] as f32, inv_dk: c[1] as f32, pi_lambda: c[2] as f32, c10: c[3] as f32, c12_cos: c[4] as f32, c12_sin: c[5] as f32, ..Default::default() }
}
