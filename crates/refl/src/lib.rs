//! X-ray reflectivity of stratified media with uniaxial layers (optic axis along the surface normal).
//!
//! One contract, two backends: [`compute`] takes a batch of [`CurveRequest`]s and returns one
//! [`Reflectivity`] per request, on the CPU (f64 recursion, [`cpu`]) or the GPU (f32 WGSL twin
//! `shaders/refl/parratt.wgsl`, [`gpu`]). The physics conventions are in `CONVENTIONS.md`
//! and in [`stack`]; they match `shared/fixtures/refl/README.md` exactly.

pub mod cases;
pub mod cpu;
pub mod data;
pub mod dual;
mod error;
pub mod fit;
pub mod general;
pub mod gpu;
pub mod gradient;
pub mod grading;
pub mod input;
pub mod limits;
pub mod materials;
pub mod model;
pub mod orso;
pub mod profile;
pub mod resolution;
pub mod stack;

pub use error::ReflError;
pub use resolution::{compute_smeared, compute_smeared_each, Resolution, SmearedRequest};
pub use stack::{Layer, Stack};

use scatterlab_core::DeviceKind;

/// One reflectivity curve to compute: a stack at one photon energy over a set of q values.
#[derive(Clone, Copy, Debug)]
pub struct CurveRequest<'a> {
    /// The layer stack, fronting medium first.
    pub stack: &'a Stack,
    /// Photon energy in eV.
    pub energy_ev: f64,
    /// Momentum transfer values (vacuum-referenced), Å⁻¹; each must satisfy 0 < q < 2 k0.
    pub q: &'a [f64],
}

/// Power reflectances for s (TE) and p (TM) incidence, one entry per q.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reflectivity {
    /// R_s = |r_s|².
    pub r_s: Vec<f64>,
    /// R_p = |r_p|².
    pub r_p: Vec<f64>,
}

impl Reflectivity {
    /// Checks that every R is finite; the error names the first bad point as `q[i]` with its q
    /// value (from `q`, the curve's grid, when it has one entry per point).
    pub fn check_finite(&self, q: &[f64]) -> Result<(), ReflError> {
        let bad = |values: &[f64]| values.iter().position(|r| !r.is_finite());
        let first = [("R_s", bad(&self.r_s)), ("R_p", bad(&self.r_p))].into_iter().filter_map(|(name, i)| Some((name, i?))).min_by_key(|&(_, i)| i);
        match first {
            None => Ok(()),
            Some((name, i)) => {
                let value = if name == "R_s" { self.r_s[i] } else { self.r_p[i] };
                let at = q.get(i).map_or_else(String::new, |q| format!(" at q = {q} Å⁻¹"));
                Err(ReflError::NonFinite(scatterlab_core::InputError::new(
                    format!("q[{i}]"),
                    format!("{name} = {value}{at} is not finite (the stack overflows the engine's arithmetic there)"),
                )))
            }
        }
    }

    /// The anisotropy ratio (R_p − R_s)/(R_p + R_s) per q.
    pub fn anisotropy(&self) -> Vec<f64> {
        self.r_s.iter().zip(&self.r_p).map(|(s, p)| (p - s) / (p + s)).collect()
    }
}

/// The backend that evaluates a batch. The caller chooses; there is no silent fallback.
#[derive(Clone, Copy, Debug)]
pub enum Engine<'a> {
    /// f64 recursion on the calling thread.
    Cpu,
    /// f32 WGSL kernel on the given GPU pipeline.
    Gpu(&'a gpu::ParrattGpu),
    /// The same GPU in double-float (df64) arithmetic: every stack through the 4×4 kernel
    /// (`general_df64.wgsl`), a uniaxial one as tensor layers with the optic axis along z. Slower
    /// than [`Engine::Gpu`], but within 1e-6·R of the CPU's f64 where the f32 recursion reaches
    /// 2e-3 — the precision a caller names (`--precision df64`), never one chosen for them.
    GpuDf64(&'a gpu::ParrattGpu),
}

impl Engine<'_> {
    /// The device kind this engine runs on.
    pub fn device(&self) -> DeviceKind {
        match self {
            Engine::Cpu => DeviceKind::Cpu,
            Engine::Gpu(_) | Engine::GpuDf64(_) => DeviceKind::Gpu,
        }
    }

    /// The arithmetic this engine computes R in: `f64`, `f32` or `df64` (for provenance).
    pub fn precision(&self) -> &'static str {
        match self {
            Engine::Cpu => "f64",
            Engine::Gpu(_) => "f32",
            Engine::GpuDf64(_) => "df64",
        }
    }
}

/// Evaluates every request of a batch on the chosen engine. All inputs are validated first;
/// the first bad one is reported by name and nothing is computed. Every result is checked: a
/// non-finite R is an error naming the curve and its first bad q point, never a silent NaN.
pub async fn compute(engine: Engine<'_>, requests: &[CurveRequest<'_>]) -> Result<Vec<Reflectivity>, ReflError> {
    compute_each(engine, requests).await?.into_iter().enumerate().map(|(i, r)| r.map_err(|e| e.in_curve(i))).collect()
}

/// Like [`compute`], but a curve whose R is not finite fails alone (its entry is the error of
/// [`Reflectivity::check_finite`]) while the others keep their results. Invalid inputs and
/// engine failures still fail the whole batch.
pub async fn compute_each(engine: Engine<'_>, requests: &[CurveRequest<'_>]) -> Result<Vec<Result<Reflectivity, ReflError>>, ReflError> {
    let results = compute_unchecked_output(engine, requests).await?;
    // The same check behind both engines: the GPU's f32 can overflow where the CPU's f64 does not.
    Ok(results.into_iter().zip(requests).map(|(r, request)| r.check_finite(request.q).map(|()| r)).collect())
}

/// Validates every request and evaluates the batch, leaving the output check to the caller
/// (resolution smearing checks its folded curves at the nominal q instead of at quadrature nodes).
pub(crate) async fn compute_unchecked_output(engine: Engine<'_>, requests: &[CurveRequest<'_>]) -> Result<Vec<Reflectivity>, ReflError> {
    for (i, request) in requests.iter().enumerate() {
        request.validate().map_err(|e| e.in_curve(i))?;
    }
    match engine {
        Engine::Cpu => Ok(requests.iter().map(cpu::reflectivity_unchecked).collect()),
        Engine::Gpu(pipeline) => pipeline.compute_validated(requests).await,
        Engine::GpuDf64(pipeline) => {
            // Uniaxial-z tensor layers: the 4×4 method equals the recursion there (CONVENTIONS.md).
            let stacks: Vec<general::GeneralStack> = requests.iter().map(|r| general::GeneralStack::from_stack(r.stack)).collect();
            let batch: Vec<general::GeneralRequest<'_>> =
                requests.iter().zip(&stacks).map(|(r, stack)| general::GeneralRequest { stack, energy_ev: r.energy_ev, q: r.q }).collect();
            let curves = pipeline.general().await?.compute(&batch).await?;
            Ok(curves.into_iter().map(|g| Reflectivity { r_s: g.r_ss, r_p: g.r_pp }).collect())
        }
    }
}

impl CurveRequest<'_> {
    /// Checks the stack, the energy (within [`limits::MIN_ENERGY_EV`]..[`limits::MAX_ENERGY_EV`]),
    /// the number of q points (at most [`limits::MAX_Q_POINTS`]) and every q (0 < q < 2 k0, finite).
    pub fn validate(&self) -> Result<(), ReflError> {
        self.stack.validate()?;
        limits::check_energy(|| "energy".to_owned(), self.energy_ev)?;
        limits::check_count(|| "q".to_owned(), self.q.len(), limits::MAX_Q_POINTS, "points")?;
        let q_max = 2.0 * scatterlab_core::units::photon_k0(self.energy_ev);
        for (i, &q) in self.q.iter().enumerate() {
            if !(q.is_finite() && q > 0.0 && q < q_max) {
                return Err(ReflError::input(format!("q[{i}]"), format!("{q} Å⁻¹ is outside 0 < q < 2k0 = {q_max:.6} Å⁻¹ at {} eV", self.energy_ev)));
            }
        }
        Ok(())
    }
}
