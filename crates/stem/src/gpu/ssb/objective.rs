//! [`PhaseVarianceGpu`]: the aberration fit's loss for many trials per dispatch
//! (`shaders/stem/ssb_objective.wgsl` + the inverse transforms of `ssb_fft.wgsl`), the f32 twin
//! of [`PhaseVariance::losses`] over the same precomputed spectra, grid and pixel subset.
//!
//! Trials and pixels are cut into chunks of as many (trial, pixel) images as fit one work
//! buffer; each chunk is one submission (corrected spectra → inverse 2-D FFTs → per-position
//! sums of the phase and its square per trial), and each group of trials is read back once.

use bytemuck::{Pod, Zeroable};
use scatterlab_core::CancelToken;
use scatterlab_gpu::wgpu;

use super::encode::{Encoder, Work};
use super::plan::AxisPlan;
use super::SsbGpu;
use crate::reduce::ReduceError;
use crate::ssb::{PhaseVariance, Trial, GAMMA_FLOOR};

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct ObjParams {
    grid_rows: u32,
    grid_cols: u32,
    n_pix: u32,
    p0: u32,
    t0: u32,
    n_trials: u32,
    acc_t0: u32,
    pad0: u32,
    k_alpha: f32,
    inv_dk: f32,
    floor: f32,
    pad1: f32,
    dc: [f32; 2],
    pad2: [f32; 2],
}

/// One level's spectra on the GPU, ready to evaluate batches of trials.
#[derive(Debug)]
pub struct PhaseVarianceGpu<'a> {
    gpu: &'a SsbGpu,
    grid: [usize; 2],
    plans: [AxisPlan; 2],
    n_pix: usize,
    base: ObjParams,
    wavelength_a: f64,
    spectra: wgpu::Buffer,
    pixels: wgpu::Buffer,
    freqs: wgpu::Buffer,
    /// Work buffers of the last call, reused while the chunk shape stays (a polish evaluates one
    /// trial at a time: reallocating ~100 MB per evaluation would dominate).
    work: Option<WorkBuffers>,
}

/// The chunk images (pair), Bluestein's scratch (pair) and the moment sums for a chunk shape.
#[derive(Debug)]
struct WorkBuffers {
    shape: (usize, usize),
    data: [wgpu::Buffer; 2],
    scratch: [wgpu::Buffer; 2],
    acc: wgpu::Buffer,
}

impl<'a> PhaseVarianceGpu<'a> {
    /// Uploads `pv`'s spectra (cropped grid, selected pixels) to `gpu`'s device.
    pub fn new(gpu: &'a SsbGpu, pv: &PhaseVariance) -> Result<Self, ReduceError> {
        let (grid, fr, fc, k, a, spectra, dc, optics) = pv.parts();
        let ctx = &gpu.ctx;
        let n = grid[0] * grid[1];
        ctx.check_storage_size("SSB fit spectra", (spectra.len() * 8) as u64).map_err(super::ssb_err)?;
        let g: Vec<[f32; 2]> = spectra.iter().map(|z| [z.re as f32, z.im as f32]).collect();
        let px: Vec<[f32; 4]> = k.iter().zip(a).map(|(k, &a)| [k[0] as f32, k[1] as f32, a as f32, 0.0]).collect();
        let f: Vec<f32> = fr.iter().chain(fc).map(|&v| v as f32).collect();
        if px.is_empty() || n == 0 || g.len() != px.len() * n {
            return Err(ReduceError::new("SSB fit", format!("{} spectrum values for {} pixels on a {}×{} grid", g.len(), px.len(), grid[0], grid[1])));
        }
        let base = ObjParams {
            grid_rows: grid[0] as u32,
            grid_cols: grid[1] as u32,
            k_alpha: optics.k_alpha_inv_a as f32,
            inv_dk: (1.0 / optics.dk_inv_a_per_px) as f32,
            floor: GAMMA_FLOOR as f32,
            dc: [dc.re as f32, dc.im as f32],
            ..Default::default()
        };
        Ok(PhaseVarianceGpu {
            gpu,
            grid,
            plans: [AxisPlan::new(ctx, grid[0], "fit grid row")?, AxisPlan::new(ctx, grid[1], "fit grid column")?],
            n_pix: px.len(),
            base,
            wavelength_a: optics.wavelength_a,
            spectra: ctx.storage_from("ssb fit spectra", &g),
            pixels: ctx.storage_from("ssb fit pixels", &px),
            freqs: ctx.storage_from("ssb fit frequencies", &f),
            work: None,
        })
    }

    /// Per trial: the χ matrix `πλ[[C10 + a, b], [b, C10 − a]]` (Å), sin θ, cos θ, padding.
    fn trial_data(&self, t: &Trial) -> [f32; 8] {
        let pl = std::f64::consts::PI * self.wavelength_a;
        let (c10, a, b) = (10.0 * t.c10_nm, 10.0 * t.c12a_nm, 10.0 * t.c12b_nm);
        let (s, c) = t.rotation_deg.to_radians().sin_cos();
        [pl * (c10 + a), pl * b, pl * (c10 - a), s, c, 0.0, 0.0, 0.0].map(|v| v as f32)
    }

    /// The losses of `trials` (mean over positions of the variance over pixels of `angle(O_b)`),
    /// as [`PhaseVariance::losses`]; cancel checked per chunk.
    pub async fn losses(&mut self, trials: &[Trial], cancel: &CancelToken) -> Result<Vec<f64>, ReduceError> {
        for t in trials {
            for (name, v) in [("C10", t.c10_nm), ("C12", t.c12a_nm), ("C12", t.c12b_nm), ("scan rotation", t.rotation_deg)] {
                if !v.is_finite() {
                    return Err(ReduceError::new(name, format!("a fit trial must be finite (got {v})")));
                }
            }
        }
        if trials.is_empty() {
            return Ok(Vec::new());
        }
        let (gpu, ctx, n, np) = (self.gpu, &self.gpu.ctx, self.grid[0] * self.grid[1], self.n_pix);
        let (fits, scratch) = gpu.batch_for(&self.plans, self.grid, np * trials.len())?;
        // Pixels per chunk, then as many trials as still fit beside them.
        let bc = np.min(fits);
        let tc = (fits / bc).clamp(1, trials.len());
        let td: Vec<[f32; 8]> = trials.iter().map(|t| self.trial_data(t)).collect();
        let td = ctx.storage_from("ssb fit trials", &td);
        if self.work.as_ref().is_none_or(|w| w.shape != (tc, bc)) {
            // Drop the old set first: both together might not fit the device.
            self.work = None;
            self.work = Some(WorkBuffers {
                shape: (tc, bc),
                data: [0, 1].map(|_| gpu.buffer("ssb fit images", tc * bc * n, wgpu::BufferUsages::empty())),
                scratch: [0, 1].map(|_| gpu.buffer("ssb fit scratch", tc * bc * scratch, wgpu::BufferUsages::empty())),
                acc: gpu.buffer("ssb fit moments", tc * n, wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST),
            });
        }
        let Some(WorkBuffers { data, scratch, acc, .. }) = self.work.as_ref() else {
            return Err(ReduceError::new("SSB fit", "work buffers missing"));
        };
        let k = &gpu.kernels;
        let mut out = Vec::with_capacity(trials.len());
        for t0 in (0..trials.len()).step_by(tc) {
            let nt = tc.min(trials.len() - t0);
            let mut enc = Encoder::new(ctx, k, "ssb fit clear");
            enc.encoder.clear_buffer(acc, 0, None);
            enc.submit("ssb fit clear").await?;
            for p0 in (0..np).step_by(bc) {
                if cancel.is_cancelled() {
                    return Err(ReduceError::new("SSB fit", "cancelled"));
                }
                let npc = bc.min(np - p0);
                let p = ObjParams { n_pix: npc as u32, p0: p0 as u32, t0: t0 as u32, n_trials: nt as u32, acc_t0: t0 as u32, ..self.base };
                let mut w = Work { data: [&data[0], &data[1]], cur: 0, scratch: [&scratch[0], &scratch[1]] };
                let mut enc = Encoder::new(ctx, k, "ssb fit chunk");
                let bufs = [(1, &self.spectra), (2, &self.pixels), (3, &self.freqs), (4, &td), (5, w.current())];
                enc.dispatch(&k.corrected, &p, &bufs, nt * npc * n);
                enc.fft2(&self.plans, nt * npc, self.grid, &mut w, true);
                enc.dispatch(&k.moments, &p, &[(1, w.current()), (5, acc)], nt * n);
                enc.submit("stem/ssb_objective.wgsl dispatch").await?;
            }
            let sums = gpu.read(acc, nt * n).await?;
            let inv = 1.0 / np as f64;
            for row in sums.chunks_exact(n) {
                let var: f64 = row.iter().map(|z| (z.im as f64 * inv - (z.re as f64 * inv).powi(2)).max(0.0)).sum();
                out.push(var / n as f64);
            }
        }
        Ok(out)
    }
}
