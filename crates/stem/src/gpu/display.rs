//! [`DisplayGpu`]: `shaders/stem/display.wgsl`, the GPU twin of [`crate::reduce::colormap`]
//! (`colorize`, `color_wheel`), with the shared colormap table uploaded once.

use bytemuck::{Pod, Zeroable};
use scatterlab_gpu::{wgpu, GpuContext, Kernel};

use crate::reduce::colormap::{Colormap, TABLE};
use crate::reduce::display::Scale;
use crate::reduce::ReduceError;

const SHADER: &str = "stem/display.wgsl";

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct Params {
    n: u32,
    map: u32,
    scale: u32,
    _pad: u32,
    low: f32,
    high: f32,
    gamma: f32,
    max_magnitude: f32,
}

fn gpu_err(e: scatterlab_gpu::GpuError) -> ReduceError {
    ReduceError::new("GPU display", e.to_string())
}

/// The display kernels on one device.
#[derive(Debug)]
pub struct DisplayGpu {
    ctx: GpuContext,
    colorize: Kernel,
    wheel: Kernel,
    table: wgpu::Buffer,
}

impl DisplayGpu {
    /// Compiles both entry points and uploads the colormap table.
    pub async fn new(ctx: &GpuContext) -> Result<Self, ReduceError> {
        let colorize = Kernel::new(ctx, SHADER, "colorize").await.map_err(gpu_err)?;
        let wheel = Kernel::new(ctx, SHADER, "wheel").await.map_err(gpu_err)?;
        let table = ctx.storage_from("colormaps", TABLE);
        Ok(DisplayGpu { ctx: ctx.clone(), colorize, wheel, table })
    }

    /// One dispatch; `b` empty = the `colorize` entry point (bindings 0, 1, 3, 4), else `wheel`
    /// (0, 1, 2, 4): each entry point's layout holds only the bindings it uses.
    async fn run(&self, kernel: &Kernel, params: Params, a: &[f32], b: &[f32]) -> Result<Vec<[u8; 4]>, ReduceError> {
        let ctx = &self.ctx;
        let n = a.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        ctx.check_storage_size("display input", (n * 4) as u64).map_err(gpu_err)?;
        let params_buf = ctx.uniform_from("display params", &params);
        let a_buf = ctx.storage_from("display a", a);
        let b_buf = (!b.is_empty()).then(|| ctx.storage_from("display b", b));
        let out = ctx.storage("display out", (n * 4) as u64, wgpu::BufferUsages::COPY_SRC);
        let bind = match &b_buf {
            None => kernel.bind_at(ctx, &[(0, &params_buf), (1, &a_buf), (3, &self.table), (4, &out)]),
            Some(b_buf) => kernel.bind_at(ctx, &[(0, &params_buf), (1, &a_buf), (2, b_buf), (4, &out)]),
        };
        let mut encoder = ctx.encoder("display");
        kernel.dispatch(&mut encoder, &bind, scatterlab_gpu::workgroups(n, 64)).map_err(gpu_err)?;
        let words: Vec<u32> = ctx.submit_and_read(encoder, "stem/display.wgsl dispatch", &out, n).await.map_err(gpu_err)?;
        Ok(words.iter().map(|w| w.to_le_bytes()).collect())
    }

    /// GPU twin of [`crate::reduce::colormap::colorize`] (values in f32 on the device).
    pub async fn colorize(&self, values: &[f64], low: f64, high: f64, scale: Scale, map: Colormap) -> Result<Vec<[u8; 4]>, ReduceError> {
        let (lo, hi) = (scale.apply(low), scale.apply(high));
        if !(lo.is_finite() && hi.is_finite() && hi > lo) {
            return Err(ReduceError::new("display limits", format!("need finite low < high after the transform (got {lo}, {hi})")));
        }
        let (kind, gamma) = match scale {
            Scale::Linear => (0, 1.0),
            Scale::Log1pSigned => (1, 1.0),
            Scale::Sqrt => (2, 1.0),
            Scale::Gamma(g) => (3, g as f32),
        };
        let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
        let params = Params { n: v.len() as u32, map: map.index() as u32, scale: kind, _pad: 0, low: lo as f32, high: hi as f32, gamma, max_magnitude: 1.0 };
        self.run(&self.colorize, params, &v, &[]).await
    }

    /// GPU twin of [`crate::reduce::colormap::color_wheel`].
    pub async fn color_wheel(&self, r: &[f64], c: &[f64], max: f64) -> Result<Vec<[u8; 4]>, ReduceError> {
        if r.len() != c.len() || !(max.is_finite() && max > 0.0) {
            return Err(ReduceError::new("colour wheel", format!("needs equal component lengths and a positive finite maximum (got {} / {}, {max})", r.len(), c.len())));
        }
        let (a, b): (Vec<f32>, Vec<f32>) = (r.iter().map(|&x| x as f32).collect(), c.iter().map(|&x| x as f32).collect());
        let params = Params { n: a.len() as u32, map: 0, scale: 0, _pad: 0, low: 0.0, high: 1.0, gamma: 1.0, max_magnitude: max as f32 };
        self.run(&self.wheel, params, &a, &b).await
    }
}
