//! [`DisplayGpu`]: `shaders/stem/display.wgsl`, the GPU twin of [`crate::reduce::colormap`]
//! (`colorize`, `color_wheel`), with the shared colormap table uploaded once.

use bytemuck::{Pod, Zeroable};
use scatterlab_gpu::{wgpu, GpuContext};
use wgpu::util::DeviceExt;

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
    colorize: wgpu::ComputePipeline,
    wheel: wgpu::ComputePipeline,
    table: wgpu::Buffer,
}

impl DisplayGpu {
    /// Compiles both entry points and uploads the colormap table.
    pub async fn new(ctx: &GpuContext) -> Result<Self, ReduceError> {
        let colorize = ctx.compute_pipeline(SHADER, "colorize").await.map_err(gpu_err)?;
        let wheel = ctx.compute_pipeline(SHADER, "wheel").await.map_err(gpu_err)?;
        let table = ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some("colormaps"), contents: TABLE, usage: wgpu::BufferUsages::STORAGE });
        Ok(DisplayGpu { ctx: ctx.clone(), colorize, wheel, table })
    }

    /// One dispatch; `b` empty = the `colorize` entry point (bindings 0, 1, 3, 4), else `wheel`
    /// (0, 1, 2, 4): each entry point's layout holds only the bindings it uses.
    async fn run(&self, pipeline: &wgpu::ComputePipeline, params: Params, a: &[f32], b: &[f32]) -> Result<Vec<[u8; 4]>, ReduceError> {
        let ctx = &self.ctx;
        let n = a.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        ctx.check_storage_size("display input", (n * 4) as u64).map_err(gpu_err)?;
        let init = |label: &str, contents: &[u8], usage| ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents, usage });
        let params_buf = init("display params", bytemuck::bytes_of(&params), wgpu::BufferUsages::UNIFORM);
        let a_buf = init("display a", bytemuck::cast_slice(a), wgpu::BufferUsages::STORAGE);
        let b_buf = (!b.is_empty()).then(|| init("display b", bytemuck::cast_slice(b), wgpu::BufferUsages::STORAGE));
        let bytes = (n * 4) as u64;
        let out = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("display out"),
            size: bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("display readback"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("display"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &match &b_buf {
                None => [
                    wgpu::BindGroupEntry { binding: 0, resource: params_buf.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: a_buf.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 3, resource: self.table.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 4, resource: out.as_entire_binding() },
                ],
                Some(b_buf) => [
                    wgpu::BindGroupEntry { binding: 0, resource: params_buf.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 1, resource: a_buf.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 2, resource: b_buf.as_entire_binding() },
                    wgpu::BindGroupEntry { binding: 4, resource: out.as_entire_binding() },
                ],
            },
        });
        let mut encoder = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("display") });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("display"), timestamp_writes: None });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind, &[]);
            let (x, y) = scatterlab_gpu::dispatch_grid((n as u32).div_ceil(64));
            pass.dispatch_workgroups(x, y, 1);
        }
        encoder.copy_buffer_to_buffer(&out, 0, &staging, 0, bytes);
        ctx.submit_checked("stem/display.wgsl dispatch", encoder.finish()).await.map_err(gpu_err)?;
        let words: Vec<u32> = scatterlab_gpu::read_buffer(ctx, &staging, n).await.map_err(gpu_err)?;
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
