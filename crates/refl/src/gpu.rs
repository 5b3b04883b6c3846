//! The f32 GPU twin of [`crate::cpu`]: `shaders/refl/parratt.wgsl`, one dispatch per batch.
//!
//! A batch is any set of curves (stacks may differ in layer count): the kernel reads a stack
//! table (first layer, layer count), a layer table (d, σ², χ_o, χ_e) and a point table
//! (stack, k0², Q²), and writes (R_s, R_p) per point — so a fitter's whole population is
//! one dispatch.

use bytemuck::{Pod, Zeroable};
use scatterlab_gpu::{wgpu, GpuContext, Kernel};

use crate::{CurveRequest, ReflError, Reflectivity};

const SHADER: &str = "refl/parratt.wgsl";
const WORKGROUP_SIZE: u32 = 64;

/// Layer record as the kernel reads it (two vec4<f32>).
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct GpuLayer {
    thickness: f32,
    sigma2: f32,
    _pad: [f32; 2],
    chi_o: [f32; 2],
    chi_e: [f32; 2],
}

/// Point record: stack index, k0², Q² = (q/2)².
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct GpuPoint {
    stack: u32,
    k02: f32,
    q2: f32,
    _pad: f32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct Params {
    n_points: u32,
    _pad: [u32; 3],
}

/// A compiled reflectivity pipeline on one device.
#[derive(Debug)]
pub struct ParrattGpu {
    ctx: GpuContext,
    kernel: Kernel,
    /// The 4×4 df64 pipeline on the same device, compiled on first use (it is large, and most
    /// models never need it).
    general: std::sync::Mutex<Option<std::sync::Arc<crate::general::GeneralGpu>>>,
}

impl ParrattGpu {
    /// Compiles the kernel on `ctx`'s device.
    pub async fn new(ctx: &GpuContext) -> Result<Self, ReflError> {
        let kernel = Kernel::new(ctx, SHADER, "main").await?;
        Ok(Self { ctx: ctx.clone(), kernel, general: std::sync::Mutex::new(None) })
    }

    /// The general (4×4, df64) pipeline on this device, compiled on the first call.
    pub async fn general(&self) -> Result<std::sync::Arc<crate::general::GeneralGpu>, ReflError> {
        if let Some(g) = self.general.lock().ok().and_then(|g| g.clone()) {
            return Ok(g);
        }
        // Send + Sync natively; on wasm32 wgpu's handles are neither, and nothing crosses threads there.
        #[allow(clippy::arc_with_non_send_sync)]
        let compiled = std::sync::Arc::new(crate::general::GeneralGpu::new(&self.ctx).await?);
        if let Ok(mut slot) = self.general.lock() {
            *slot = Some(compiled.clone());
        }
        Ok(compiled)
    }

    /// The GPU context this pipeline runs on.
    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Runs validated requests in one dispatch (see [`crate::compute`], which validates).
    pub(crate) async fn compute_validated(&self, requests: &[CurveRequest<'_>]) -> Result<Vec<Reflectivity>, ReflError> {
        let (stacks, layers, points) = pack(requests);
        if points.is_empty() {
            return Ok(requests.iter().map(|_| Reflectivity::default()).collect());
        }
        let ctx = &self.ctx;
        let out_bytes = (points.len() * 8) as u64;
        for (what, bytes) in [("stack table", stacks.len() * 8), ("layer table", layers.len() * 32), ("point table", points.len() * 16)] {
            ctx.check_storage_size(what, bytes as u64)?;
        }
        ctx.check_storage_size("reflectivity output", out_bytes)?;
        let params = ctx.uniform_from("refl params", &Params { n_points: points.len() as u32, _pad: [0; 3] });
        let (stacks_buf, layers_buf, points_buf) = (ctx.storage_from("refl stacks", &stacks), ctx.storage_from("refl layers", &layers), ctx.storage_from("refl points", &points));
        let out_buf = ctx.storage("refl out", out_bytes, wgpu::BufferUsages::COPY_SRC);
        let bind_group = self.kernel.bind(ctx, &[&params, &stacks_buf, &layers_buf, &points_buf, &out_buf]);
        let mut encoder = ctx.encoder("refl");
        self.kernel.dispatch(&mut encoder, &bind_group, scatterlab_gpu::workgroups(points.len(), WORKGROUP_SIZE))?;
        let flat: Vec<[f32; 2]> = ctx.submit_and_read(encoder, "refl/parratt.wgsl dispatch", &out_buf, points.len()).await?;
        let mut results = Vec::with_capacity(requests.len());
        let mut offset = 0;
        for request in requests {
            let slice = &flat[offset..offset + request.q.len()];
            offset += request.q.len();
            results.push(Reflectivity { r_s: slice.iter().map(|p| f64::from(p[0])).collect(), r_p: slice.iter().map(|p| f64::from(p[1])).collect() });
        }
        Ok(results)
    }
}

/// Flattens requests into the kernel's three tables.
fn pack(requests: &[CurveRequest<'_>]) -> (Vec<[u32; 2]>, Vec<GpuLayer>, Vec<GpuPoint>) {
    let mut stacks = Vec::with_capacity(requests.len());
    let mut layers = Vec::new();
    let mut points = Vec::new();
    for (i, request) in requests.iter().enumerate() {
        stacks.push([layers.len() as u32, request.stack.layers.len() as u32]);
        layers.extend(request.stack.layers.iter().map(|l| GpuLayer {
            thickness: l.thickness as f32,
            sigma2: (l.roughness * l.roughness) as f32,
            _pad: [0.0; 2],
            chi_o: [(-2.0 * l.delta_o) as f32, (2.0 * l.beta_o) as f32],
            chi_e: [(-2.0 * l.delta_e) as f32, (2.0 * l.beta_e) as f32],
        }));
        let k0 = scatterlab_core::units::photon_k0(request.energy_ev);
        points.extend(request.q.iter().map(|&q| GpuPoint { stack: i as u32, k02: (k0 * k0) as f32, q2: (0.25 * q * q) as f32, _pad: 0.0 }));
    }
    (stacks, layers, points)
}
