//! [`GradientGpu`]: the intensities and forward-mode Jacobian of a [`GradientModel`] on the GPU
//! (f32 Taylor propagation by [`PropagateGpu`]), with the rows and columns of
//! [`GradientModel::intensities_and_jacobian`] so that the refinement runs either device.
//!
//! Per tilt, ψ(t) = exp(i·s·t·A) e₀ with s = π/K (as the CPU's `TaylorTilt`), and for each
//! direction E = ∂A/∂θ the derivative dψ = L(i·s·t·A, i·s·t·E) e₀ (the Fréchet derivative of exp
//! applied to e₀) from the block matrix B = [[A, 0], [c·E, A]] of size 2N: exp(i·s·t·B) [e₀; 0] =
//! [ψ; c·dψ]. The factor c = ‖A‖₁/‖E‖₁ balances the two blocks (dψ is linear in E, so it is
//! divided out exactly) so that the substep plan, set by ‖B‖₁ ≤ 2‖A‖₁, stays that of A's order
//! and f32 keeps dψ's digits whatever the parameter's units. The 000 beam is moved to index 0
//! (the kernel starts from e₀). Thickness derivatives are formed on the host from ψ:
//! ∂ψ/∂t = i·s·A·ψ (f64 A, f32 ψ). Intensities and Jacobian entries are accumulated in f64.

use std::collections::HashMap;

use num_complex::Complex64;
use scatterlab_core::InputError;
use scatterlab_gpu::GpuContext;

use super::{PropagateGpu, PropagationItem, MAX_GPU_BEAMS};
use crate::beams::Hkl;
use crate::gradient::directions::tilt_directions;
use crate::gradient::{GradientModel, Param};
use crate::propagate::{norm1, TaylorPlan};
use crate::BlochError;

/// Taylor plan of the f32 kernel, as [`super::simulate_gpu`] uses it: ‖h·B‖₁ ≤ 1 per substep,
/// 12 terms (truncation 1/13! ≈ 2e-10, below f32 rounding).
const THETA: f64 = 1.0;
const TERMS: u32 = 12;
/// Matrix bytes (f32 pairs) of one batch: frames with the same thicknesses are grouped up to
/// this so that one dispatch series keeps a GPU busy without holding every tilt in memory.
const BATCH_BYTES: usize = 64 << 20;

/// The refinement model's GPU device: the compiled propagation kernel and the adapter's name.
#[derive(Debug)]
pub struct GradientGpu {
    propagate: PropagateGpu,
    adapter: String,
}

/// One tilt prepared for the kernel.
struct TiltJob {
    frame: usize,
    n: usize,
    /// `order[p]`: the tilt's beam at kernel position p (000 first).
    order: Vec<usize>,
    /// Union position of each of the tilt's beams (its row within the frame).
    positions: Vec<usize>,
    /// A row-major in the tilt's beam order (host thickness derivatives).
    a: Vec<Complex64>,
    /// Items of this tilt: the first gives ψ (a block item's upper half, or the plain A).
    first_item: usize,
    /// Per block item: the parameter and 1/c.
    blocks: Vec<(usize, f64)>,
    /// This frame's thickness parameters.
    thickness: Vec<usize>,
}

impl GradientGpu {
    /// Compiles the propagation kernel on `ctx`'s device.
    pub async fn new(ctx: &GpuContext) -> Result<Self, BlochError> {
        Ok(Self { propagate: PropagateGpu::new(ctx).await?, adapter: ctx.describe() })
    }

    /// What `result.json` and the CLI call this device: `gpu (<adapter>), f32 Taylor`.
    pub fn device_label(&self) -> String {
        format!("gpu ({}), f32 Taylor", self.adapter)
    }

    /// Intensities, one per [`GradientModel::rows`] entry (|ψ|² summed over tilts, f64 sums of
    /// f32 amplitudes).
    pub async fn intensities(&self, model: &GradientModel) -> Result<Vec<f64>, BlochError> {
        Ok(self.evaluate(model, &[], false).await?.0)
    }

    /// [`GradientModel::intensities_and_jacobian`] on the GPU: the same rows, one column per
    /// parameter (`J[param][row]` = ∂I_row/∂param).
    pub async fn intensities_and_jacobian(&self, model: &GradientModel, params: &[Param]) -> Result<(Vec<f64>, Vec<Vec<f64>>), BlochError> {
        self.evaluate(model, params, true).await
    }

    async fn evaluate(&self, model: &GradientModel, params: &[Param], jacobian: bool) -> Result<(Vec<f64>, Vec<Vec<f64>>), BlochError> {
        let df = if jacobian {
            model.check_params(params)?;
            model.structure_factor_directions(params)?
        } else {
            HashMap::new()
        };
        let frames = model.frames();
        let rows = model.rows().len();
        let mut intensities = vec![0.0; rows];
        let mut columns = vec![vec![0.0; rows]; if jacobian { params.len() } else { 0 }];
        let mut offsets = Vec::with_capacity(frames.len());
        let mut offset = 0;
        for frame in frames {
            offsets.push(offset);
            offset += frame.union().len() * frame.thicknesses.len();
        }
        let mut f = 0;
        while f < frames.len() {
            // Frames f..end share their thicknesses (one plan) and fit one batch.
            let (mut jobs, mut mats, mut bytes, mut end) = (Vec::new(), Vec::new(), 0usize, f);
            let mut scale = 0.0;
            while end < frames.len() && (end == f || (frames[end].thicknesses == frames[f].thicknesses && bytes < BATCH_BYTES)) {
                let union = frames[end].union();
                for i in 0..frames[end].tilts.len() {
                    let (job, items) = self.tilt_job(model, end, i, &union, params, &df, jacobian, mats.len(), &mut scale)?;
                    bytes += items.iter().map(|m| m.len() * 8).sum::<usize>();
                    mats.extend(items);
                    jobs.push(job);
                }
                end += 1;
            }
            let norm = mats.iter().map(|m| norm1(side(m), m)).fold(0.0, f64::max);
            let plan = TaylorPlan::new(norm, scale, &frames[f].thicknesses, THETA, TERMS)?;
            let items: Vec<PropagationItem<'_>> = mats.iter().map(|m| PropagationItem { n: side(m), matrix: m }).collect();
            let amplitudes = self.propagate.amplitudes(&items, &plan).await?;
            for job in &jobs {
                accumulate(job, &amplitudes, scale, &frames[job.frame].thicknesses, frames[job.frame].union().len(), offsets[job.frame], &mut intensities, &mut columns, model)?;
            }
            f = end;
        }
        Ok((intensities, columns))
    }

    /// The kernel items of tilt `index` of frame `frame` (their first item index is `first`):
    /// one 2N block per direction with the Jacobian, else the N×N A.
    #[allow(clippy::too_many_arguments)]
    fn tilt_job(
        &self,
        model: &GradientModel,
        frame: usize,
        index: usize,
        union: &[Hkl],
        params: &[Param],
        df: &HashMap<Hkl, Vec<Complex64>>,
        jacobian: bool,
        first: usize,
        scale: &mut f64,
    ) -> Result<(TiltJob, Vec<Vec<Complex64>>), BlochError> {
        let geometry = model.tilt_geometry(frame, index)?;
        let m = &geometry.matrix;
        let n = m.hkl.len();
        let object = format!("crystal {:?}, frame {frame}, tilt {index}", model.asymmetric_unit().name);
        *scale = std::f64::consts::PI / m.k;
        let positions = m
            .hkl
            .iter()
            .map(|h| union.binary_search(h).map_err(|_| InputError::new(object.as_str(), format!("beam {h:?} not in the frame's union"))))
            .collect::<Result<Vec<_>, _>>()?;
        let mut order: Vec<usize> = (0..n).collect();
        order.swap(0, m.index_000);
        let a: Vec<Complex64> = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| m.a[(i, j)]).collect();
        let a_norm = norm1(n, &a);
        let directions = jacobian.then(|| tilt_directions(frame, &geometry, params, df, model.im_f000()));
        let mut job = TiltJob { frame, n, order, positions, a, first_item: first, blocks: Vec::new(), thickness: Vec::new() };
        let mut items = Vec::new();
        if let Some(d) = directions {
            job.thickness = d.thickness;
            for (e, &p) in d.directions.iter().zip(&d.which) {
                let e_norm = (0..n).map(|j| (0..n).map(|i| e[(i, j)].norm()).sum::<f64>()).fold(0.0, f64::max);
                if e_norm == 0.0 {
                    continue;
                }
                if 2 * n > MAX_GPU_BEAMS {
                    return Err(
                        InputError::new(object, format!("{n} beams: the GPU Jacobian propagates 2N = {} beams, above its {MAX_GPU_BEAMS}; use the CPU device", 2 * n)).into()
                    );
                }
                let c = if a_norm > 0.0 { a_norm / e_norm } else { 1.0 };
                let mut block = vec![Complex64::new(0.0, 0.0); 4 * n * n];
                for (p_row, &i) in job.order.iter().enumerate() {
                    for (q, &j) in job.order.iter().enumerate() {
                        let v = job.a[i * n + j];
                        block[p_row * 2 * n + q] = v;
                        block[(n + p_row) * 2 * n + n + q] = v;
                        block[(n + p_row) * 2 * n + q] = e[(i, j)] * c;
                    }
                }
                items.push(block);
                job.blocks.push((p, 1.0 / c));
            }
        }
        if items.is_empty() {
            if n > MAX_GPU_BEAMS {
                return Err(InputError::new(object, format!("{n} beams, above the GPU kernel's {MAX_GPU_BEAMS}; use the CPU device")).into());
            }
            items.push(job.order.iter().flat_map(|&i| job.order.iter().map(move |&j| (i, j))).map(|(i, j)| job.a[i * n + j]).collect());
        }
        Ok((job, items))
    }
}

/// The side of a square row-major matrix.
fn side(m: &[Complex64]) -> usize {
    (m.len() as f64).sqrt().round() as usize
}

/// Adds one tilt's |ψ|² and 2·Re(ψ̄·dψ) to the frame's rows (offset, union `width`).
#[allow(clippy::too_many_arguments)]
fn accumulate(
    job: &TiltJob,
    amplitudes: &[Vec<Vec<Complex64>>],
    scale: f64,
    thicknesses: &[f64],
    width: usize,
    offset: usize,
    intensities: &mut [f64],
    columns: &mut [Vec<f64>],
    model: &GradientModel,
) -> Result<(), BlochError> {
    let n = job.n;
    let unpermute = |v: &[Complex64], from: usize, factor: f64| {
        let mut out = vec![Complex64::new(0.0, 0.0); n];
        for (p, &b) in job.order.iter().enumerate() {
            out[b] = v[from + p] * factor;
        }
        out
    };
    let psi_items = amplitudes.get(job.first_item).ok_or_else(|| InputError::new("GPU amplitudes", "fewer items than asked"))?;
    for (t, &thickness) in thicknesses.iter().enumerate() {
        let psi = unpermute(&psi_items[t], 0, 1.0);
        if psi.iter().any(|v| !(v.re.is_finite() && v.im.is_finite())) {
            return Err(BlochError::Numerical {
                object: format!("crystal {:?}, frame {}: GPU propagation (bloch/propagate.wgsl)", model.asymmetric_unit().name, job.frame),
                message: format!("non-finite amplitude at thickness {thickness} Å"),
            });
        }
        let row = offset + t * width;
        for (b, v) in psi.iter().enumerate() {
            intensities[row + job.positions[b]] += v.norm_sqr();
        }
        let mut add = |p: usize, dpsi: &[Complex64]| {
            for (b, (v, d)) in psi.iter().zip(dpsi).enumerate() {
                columns[p][row + job.positions[b]] += 2.0 * (v.conj() * d).re;
            }
        };
        for (k, &(p, inverse_c)) in job.blocks.iter().enumerate() {
            let dpsi = unpermute(&amplitudes[job.first_item + k][t], n, inverse_c);
            add(p, &dpsi);
        }
        if !job.thickness.is_empty() {
            // ∂ψ/∂t = i·s·A·ψ.
            let dpsi: Vec<Complex64> = job.a.chunks_exact(n).map(|r| r.iter().zip(&psi).map(|(x, y)| x * y).sum::<Complex64>() * Complex64::new(0.0, scale)).collect();
            for &p in &job.thickness {
                add(p, &dpsi);
            }
        }
    }
    Ok(())
}
