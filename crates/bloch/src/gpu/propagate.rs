//! [`PropagateGpu`]: `shaders/bloch/propagate.wgsl`, the batched f32 twin of
//! [`propagate_taylor`](crate::propagate::propagate_taylor): one workgroup per item, intensities
//! |ψ|² at every thickness of a [`TaylorPlan`] read back once.

use bytemuck::{Pod, Zeroable};
use num_complex::Complex64;
use scatterlab_core::InputError;
use scatterlab_gpu::{wgpu, GpuContext, Kernel};

use crate::propagate::TaylorPlan;
use crate::BlochError;

const SHADER: &str = "bloch/propagate.wgsl";
/// Beams one item may have: ψ and two Taylor terms of this size fill 12 KiB of workgroup memory.
pub const MAX_GPU_BEAMS: usize = 512;

/// One propagation problem: an `n`×`n` row-major complex matrix (the structure matrix A).
#[derive(Clone, Copy, Debug)]
pub struct PropagationItem<'a> {
    /// Beams.
    pub n: usize,
    /// Row-major matrix, n² values.
    pub matrix: &'a [Complex64],
}

/// Loop iterations one invocation may run per dispatch: llvmpipe/lavapipe ends an invocation
/// after 65,535 (its loop limiter); real GPUs have no such limit, and smaller dispatches cost
/// little there.
const LOOP_BUDGET: u64 = 50_000;

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct Params {
    n_items: u32,
    terms: u32,
    n_sub: u32,
    step: u32,
    h: f32,
    init: u32,
    write: u32,
    n_steps: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct GpuItem {
    n: u32,
    mat_off: u32,
    vec_off: u32,
    _pad: u32,
}

/// Loop iterations of one substep in the kernel for `n` beams and `terms` Taylor terms.
fn iterations_per_substep(n: u64, terms: u64) -> u64 {
    let rows = n.div_ceil(64);
    rows + terms * (rows * (n / 4 + n % 4 + 2) + rows + 1) + 1
}

fn gpu_err(e: scatterlab_gpu::GpuError) -> BlochError {
    BlochError::Numerical { object: "GPU propagation (bloch/propagate.wgsl)".into(), message: e.to_string() }
}

/// The compiled propagation kernel on one device.
#[derive(Debug)]
pub struct PropagateGpu {
    ctx: GpuContext,
    kernel: Kernel,
}

impl PropagateGpu {
    /// Compiles the kernel on `ctx`'s device.
    pub async fn new(ctx: &GpuContext) -> Result<Self, BlochError> {
        let kernel = Kernel::new(ctx, SHADER, "main").await.map_err(gpu_err)?;
        Ok(PropagateGpu { ctx: ctx.clone(), kernel })
    }

    /// |ψ|² per item, per thickness of `plan`, per beam (f32 on the GPU, returned as f64).
    /// Items are packed into as few dispatches as the adapter's buffer limits allow.
    pub async fn intensities(&self, items: &[PropagationItem<'_>], plan: &TaylorPlan) -> Result<Vec<Vec<Vec<f64>>>, BlochError> {
        let mut out = Vec::with_capacity(items.len());
        for (start, end) in self.batches(items, plan, 4)? {
            out.extend(self.dispatch(&items[start..end], plan).await?);
        }
        Ok(out)
    }

    /// The complex amplitudes ψ = exp(i·h·A)ⁿ e₀ per item, per thickness of `plan`, per beam
    /// (f32 on the GPU, returned as f64): the state the kernel keeps between dispatches, copied
    /// out after each thickness. The gradients need ψ itself, not |ψ|².
    pub async fn amplitudes(&self, items: &[PropagationItem<'_>], plan: &TaylorPlan) -> Result<Vec<Vec<Vec<Complex64>>>, BlochError> {
        let mut out = Vec::with_capacity(items.len());
        for (start, end) in self.batches(items, plan, 8)? {
            let values = self.run(&items[start..end], plan, true).await?;
            let vec_len: usize = items[start..end].iter().map(|it| it.n).sum();
            let mut at = 0;
            for it in &items[start..end] {
                let per_step = (0..plan.steps.len())
                    .map(|k| {
                        let base = 2 * (k * vec_len + at);
                        values[base..base + 2 * it.n].chunks_exact(2).map(|c| Complex64::new(f64::from(c[0]), f64::from(c[1]))).collect()
                    })
                    .collect();
                out.push(per_step);
                at += it.n;
            }
        }
        Ok(out)
    }

    /// Checks the items and cuts them into runs whose matrices and per-thickness outputs
    /// (`bytes_per_value` per beam and thickness) fit one binding each.
    fn batches(&self, items: &[PropagationItem<'_>], plan: &TaylorPlan, bytes_per_value: u64) -> Result<Vec<(usize, usize)>, BlochError> {
        for (b, it) in items.iter().enumerate() {
            if it.n == 0 || it.n > MAX_GPU_BEAMS || it.matrix.len() != it.n * it.n {
                return Err(
                    InputError::new(format!("propagation item {b}"), format!("{} values for {} beams (1..={MAX_GPU_BEAMS} beams, n² values)", it.matrix.len(), it.n)).into()
                );
            }
        }
        let limit = self.ctx.limits.max_storage_buffer_binding_size.min(self.ctx.limits.max_buffer_size);
        let mut runs = Vec::new();
        let mut start = 0;
        while start < items.len() {
            // The largest run of items whose matrices and outputs fit one binding each.
            let (mut mat_bytes, mut out_bytes, mut end) = (0u64, 0u64, start);
            while end < items.len() {
                let n = items[end].n as u64;
                let (m, o) = (n * n * 8, n * plan.steps.len() as u64 * bytes_per_value);
                if end > start && (mat_bytes + m > limit || out_bytes + o > limit) {
                    break;
                }
                mat_bytes += m;
                out_bytes += o;
                end += 1;
            }
            self.ctx.check_storage_size("Bloch matrices", mat_bytes).map_err(gpu_err)?;
            runs.push((start, end));
            start = end;
        }
        Ok(runs)
    }

    async fn dispatch(&self, items: &[PropagationItem<'_>], plan: &TaylorPlan) -> Result<Vec<Vec<Vec<f64>>>, BlochError> {
        let n_steps = plan.steps.len();
        let values = self.run(items, plan, false).await?;
        let mut result = Vec::with_capacity(items.len());
        let mut at = 0;
        for it in items {
            let per = &values[at..at + it.n * n_steps];
            result.push(per.chunks_exact(it.n).map(|row| row.iter().map(|&v| f64::from(v)).collect()).collect());
            at += it.n * n_steps;
        }
        Ok(result)
    }

    /// Runs `plan` on `items` and reads back either |ψ|² (item-major: item, thickness, beam) or,
    /// with `amplitudes`, ψ as (re, im) pairs thickness-major (thickness, item, beam).
    async fn run(&self, items: &[PropagationItem<'_>], plan: &TaylorPlan, amplitudes: bool) -> Result<Vec<f32>, BlochError> {
        let ctx = &self.ctx;
        let n_steps = plan.steps.len();
        let (mut table, mut mats) = (Vec::with_capacity(items.len()), Vec::new());
        let mut vec_len = 0usize;
        for it in items {
            table.push(GpuItem { n: it.n as u32, mat_off: (mats.len() / 2) as u32, vec_off: vec_len as u32, _pad: 0 });
            // Column-major f32 pairs.
            for j in 0..it.n {
                for i in 0..it.n {
                    let v = it.matrix[i * it.n + j];
                    mats.extend_from_slice(&[v.re as f32, v.im as f32]);
                }
            }
            vec_len += it.n;
        }
        // Amplitude mode writes no intensities (`write` stays 0): `out` is a placeholder binding.
        let out_len = if amplitudes { 0 } else { vec_len * n_steps };
        let read_len = if amplitudes { 2 * vec_len * n_steps } else { out_len };
        let (table, mats) = (ctx.storage_from("bloch items", &table), ctx.storage_from("bloch matrices", &mats));
        let storage = |label: &str, bytes: u64, extra: wgpu::BufferUsages| ctx.storage(label, bytes.max(4), extra);
        let state_bytes = (vec_len * 8) as u64;
        let state = storage("bloch state", state_bytes, wgpu::BufferUsages::COPY_SRC);
        let out = storage("bloch intensities", (out_len.max(1) * 4) as u64, wgpu::BufferUsages::COPY_SRC);
        // ψ after each thickness, gathered on the device so that one readback ends the run.
        let gathered = amplitudes.then(|| storage("bloch amplitudes", (read_len * 4) as u64, wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC));
        let n_max = items.iter().map(|it| it.n as u64).max().unwrap_or(1);
        let per_dispatch = (LOOP_BUDGET / iterations_per_substep(n_max, u64::from(plan.terms))).max(1);
        let mut encoder = ctx.encoder("bloch propagate");
        let mut first = true;
        for (k, &(h, substeps)) in plan.steps.iter().enumerate() {
            let mut left = u64::from(substeps);
            while left > 0 {
                let n_sub = left.min(per_dispatch);
                left -= n_sub;
                let params = Params {
                    n_items: items.len() as u32,
                    terms: plan.terms,
                    n_sub: n_sub as u32,
                    step: k as u32,
                    h: h as f32,
                    init: u32::from(first),
                    write: u32::from(left == 0 && !amplitudes),
                    n_steps: n_steps as u32,
                };
                first = false;
                let params = ctx.uniform_from("bloch params", &params);
                let bind = self.kernel.bind(ctx, &[&params, &table, &mats, &state, &out]);
                // One workgroup per item.
                self.kernel.dispatch(&mut encoder, &bind, items.len() as u32).map_err(gpu_err)?;
                if let (true, Some(gathered)) = (left == 0, &gathered) {
                    encoder.copy_buffer_to_buffer(&state, 0, gathered, k as u64 * state_bytes, state_bytes);
                }
            }
        }
        ctx.submit_and_read::<f32>(encoder, "bloch/propagate.wgsl dispatch", gathered.as_ref().unwrap_or(&out), read_len).await.map_err(gpu_err)
    }
}
