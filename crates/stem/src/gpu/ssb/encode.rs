//! Encoding the SSB kernels into one command encoder: the pipelines of `shaders/stem/ssb_fft.wgsl`,
//! `ssb_accumulate.wgsl` and `ssb_objective.wgsl`, one small uniform per dispatch, and the 2-D FFT of a
//! stack of images as row then column passes over the [`AxisPlan`]s.

use bytemuck::{Pod, Zeroable};
use scatterlab_gpu::{wgpu, GpuContext, GpuError, Kernel};

use super::plan::AxisPlan;
use super::ssb_err;
use crate::reduce::ReduceError;

pub(super) const FFT_SHADER: &str = "stem/ssb_fft.wgsl";
pub(super) const ACC_SHADER: &str = "stem/ssb_accumulate.wgsl";
pub(super) const OBJ_SHADER: &str = "stem/ssb_objective.wgsl";
/// Threads per workgroup of every SSB kernel (`WG` in the shaders).
const WG: u32 = 256;

/// `Params` of `ssb_fft.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(super) struct FftParams {
    pub n: u32,
    pub ns: u32,
    pub n_lines: u32,
    pub lines_per_image: u32,
    pub line_step: u32,
    pub image_stride: u32,
    pub elem_stride: u32,
    pub inverse: u32,
    pub m: u32,
    pub tw_len: u32,
    pub pad: [u32; 2],
}

/// `Params` of `ssb_accumulate.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub(super) struct AccParams {
    pub n_scan: u32,
    pub n_batch: u32,
    pub first: u32,
    pub pad0: u32,
    pub k_alpha: f32,
    pub inv_dk: f32,
    pub pi_lambda: f32,
    pub c10: f32,
    pub c12_cos: f32,
    pub c12_sin: f32,
    pub floor: f32,
    pub factor: f32,
}

/// The compiled kernels.
#[derive(Debug)]
pub(super) struct Kernels {
    pub stockham: Kernel,
    pub chirp_in: Kernel,
    pub multiply: Kernel,
    pub chirp_out: Kernel,
    pub accumulate: Kernel,
    pub scale: Kernel,
    pub corrected: Kernel,
    pub moments: Kernel,
}

impl Kernels {
    pub(super) async fn new(ctx: &GpuContext) -> Result<Self, ReduceError> {
        let p = |s, e| async move { Kernel::new(ctx, s, e).await.map_err(ssb_err) };
        Ok(Kernels {
            stockham: p(FFT_SHADER, "stockham").await?,
            chirp_in: p(FFT_SHADER, "chirp_in").await?,
            multiply: p(FFT_SHADER, "multiply").await?,
            chirp_out: p(FFT_SHADER, "chirp_out").await?,
            accumulate: p(ACC_SHADER, "accumulate").await?,
            scale: p(ACC_SHADER, "scale").await?,
            corrected: p(OBJ_SHADER, "corrected").await?,
            moments: p(OBJ_SHADER, "moments").await?,
        })
    }
}

/// The layout of the lines one axis transform runs over (see the shader's header).
#[derive(Clone, Copy, Debug)]
pub(super) struct Lines {
    pub n_lines: usize,
    pub lines_per_image: usize,
    pub line_step: usize,
    pub image_stride: usize,
    pub elem_stride: usize,
}

impl Lines {
    /// The rows (axis 1, length cols) or columns (axis 0, length rows) of `batch` row-major images.
    pub(super) fn of_axis(batch: usize, [rows, cols]: [usize; 2], axis: usize) -> Self {
        if axis == 1 {
            Lines { n_lines: batch * rows, lines_per_image: rows, line_step: cols, image_stride: rows * cols, elem_stride: 1 }
        } else {
            Lines { n_lines: batch * cols, lines_per_image: cols, line_step: 1, image_stride: rows * cols, elem_stride: cols }
        }
    }

    /// The kernel parameters every pass over these lines shares, for transforms of length `n`.
    fn params(&self, n: usize, inverse: bool) -> FftParams {
        FftParams {
            n: n as u32,
            n_lines: self.n_lines as u32,
            lines_per_image: self.lines_per_image as u32,
            line_step: self.line_step as u32,
            image_stride: self.image_stride as u32,
            elem_stride: self.elem_stride as u32,
            inverse: u32::from(inverse),
            ..Default::default()
        }
    }

    /// `n_lines` contiguous lines of length `m` (Bluestein's scratch).
    fn contiguous(n_lines: usize, m: usize) -> Self {
        Lines { n_lines, lines_per_image: n_lines.max(1), line_step: m, image_stride: 0, elem_stride: 1 }
    }
}

/// The buffers a 2-D transform works in: the data ping-pong pair with the index of the one holding
/// the current values, and Bluestein's scratch pair.
pub(super) struct Work<'b> {
    pub data: [&'b wgpu::Buffer; 2],
    pub cur: usize,
    pub scratch: [&'b wgpu::Buffer; 2],
}

impl<'b> Work<'b> {
    /// The buffer holding the current values.
    pub(super) fn current(&self) -> &'b wgpu::Buffer {
        self.data[self.cur]
    }
}

/// One command encoder being filled, keeping its uniforms and bind groups alive until submitted.
pub(super) struct Encoder<'a> {
    pub ctx: &'a GpuContext,
    pub kernels: &'a Kernels,
    pub encoder: wgpu::CommandEncoder,
    keep: Vec<(wgpu::Buffer, wgpu::BindGroup)>,
    /// The first dispatch the device refused (a grid beyond its limits): reported by `submit`,
    /// so that the FFT's many dispatches encode without a `Result` each.
    refused: Option<GpuError>,
}

impl<'a> Encoder<'a> {
    pub(super) fn new(ctx: &'a GpuContext, kernels: &'a Kernels, label: &str) -> Self {
        Encoder { ctx, kernels, encoder: ctx.encoder(label), keep: Vec::new(), refused: None }
    }

    /// One dispatch of `kernel` over `threads` threads with `params` at binding 0 and `buffers`
    /// at their bindings.
    pub(super) fn dispatch<P: bytemuck::Pod>(&mut self, kernel: &Kernel, params: &P, buffers: &[(u32, &wgpu::Buffer)], threads: usize) {
        let uniform = self.ctx.uniform_from("ssb params", params);
        let mut entries = vec![(0, &uniform)];
        entries.extend_from_slice(buffers);
        let bind = kernel.bind_at(self.ctx, &entries);
        if let Err(e) = kernel.dispatch(&mut self.encoder, &bind, scatterlab_gpu::workgroups(threads, WG)) {
            self.refused.get_or_insert(e);
        }
        self.keep.push((uniform, bind));
    }

    /// Radix-2 Stockham passes of length `n` over `lines`, ping-ponging `data[*cur]` ↔ the other.
    fn stockham(&mut self, n: usize, twiddles: &wgpu::Buffer, lines: Lines, data: [&wgpu::Buffer; 2], cur: &mut usize, inverse: bool) {
        let mut ns = 1;
        while ns < n {
            let p = FftParams { ns: ns as u32, tw_len: (n / 2) as u32, ..lines.params(n, inverse) };
            let kernel = &self.kernels.stockham;
            self.dispatch(kernel, &p, &[(1, data[*cur]), (2, data[1 - *cur]), (3, twiddles)], lines.n_lines * n / 2);
            *cur = 1 - *cur;
            ns *= 2;
        }
    }

    /// The transform of `plan` along `lines` of the current data of `w` (the result is current
    /// again, in either buffer); the scratch holds `lines.n_lines · m` values each.
    pub(super) fn axis(&mut self, plan: &AxisPlan, lines: Lines, w: &mut Work<'_>, inverse: bool) {
        let (data, scratch) = (w.data, w.scratch);
        match plan {
            AxisPlan::Radix2 { n, twiddles } => self.stockham(*n, twiddles, lines, data, &mut w.cur, inverse),
            AxisPlan::Bluestein { n, m, twiddles, chirp, filter } => {
                let p = FftParams { m: *m as u32, ..lines.params(*n, inverse) };
                let (ci, mu, co) = (&self.kernels.chirp_in, &self.kernels.multiply, &self.kernels.chirp_out);
                self.dispatch(ci, &p, &[(1, data[w.cur]), (2, scratch[0]), (3, chirp)], lines.n_lines * m);
                let mut s = 0;
                let inner = Lines::contiguous(lines.n_lines, *m);
                self.stockham(*m, twiddles, inner, scratch, &mut s, false);
                self.dispatch(mu, &p, &[(1, scratch[s]), (2, scratch[1 - s]), (3, &filter[usize::from(inverse)])], lines.n_lines * m);
                s = 1 - s;
                self.stockham(*m, twiddles, inner, scratch, &mut s, true);
                self.dispatch(co, &p, &[(1, scratch[s]), (2, data[w.cur]), (3, chirp)], lines.n_lines * n);
            }
        }
    }

    /// The 2-D transform of `batch` images of `scan`, the current data of `w` (rows, then columns).
    pub(super) fn fft2(&mut self, plans: &[AxisPlan; 2], batch: usize, scan: [usize; 2], w: &mut Work<'_>, inverse: bool) {
        self.axis(&plans[1], Lines::of_axis(batch, scan, 1), w, inverse);
        self.axis(&plans[0], Lines::of_axis(batch, scan, 0), w, inverse);
    }

    /// Submits everything encoded (validation errors become the SSB's typed error).
    pub(super) async fn submit(self, operation: &str) -> Result<(), ReduceError> {
        let Encoder { ctx, encoder, keep, refused, .. } = self;
        if let Some(e) = refused {
            return Err(ssb_err(e));
        }
        ctx.submit_checked(operation, encoder.finish()).await.map_err(ssb_err)?;
        drop(keep);
        Ok(())
    }
}
