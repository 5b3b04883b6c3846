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
pub mod fit;
mod error;
pub mod general;
pub mod gpu;
pub mod gradient;
pub mod grading;
pub mod materials;
pub mod model;
pub mod orso;
pub mod profile;
pub mod resolution;
pub mod stack;

pub use error::ReflError;
pub use resolution::{compute_smeared, Resolution, SmearedRequest};
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
}

impl Engine<'_> {
    /// The device kind this engine runs on.
    pub fn device(&self) -> DeviceKind {
        match self {
            Engine::Cpu => DeviceKind::Cpu,
            Engine::Gpu(_) => DeviceKind::Gpu,
        }
    }
}

/// Evaluates every request of a batch on the chosen engine. All inputs are validated first;
/// the first bad one is reported by name and nothing is computed.
pub async fn compute(engine: Engine<'_>, requests: &[CurveRequest<'_>]) -> Result<Vec<Reflectivity>, ReflError> {
    for (i, request) in requests.iter().enumerate() {
        request.validate().map_err(|e| e.in_curve(i))?;
    }
    match engine {
        Engine::Cpu => Ok(requests.iter().map(cpu::reflectivity_unchecked).collect()),
        Engine::Gpu(pipeline) => pipeline.compute_validated(requests).await,
    }
}

impl CurveRequest<'_> {
    /// Checks the stack, the energy and every q (0 < q < 2 k0, finite).
    pub fn validate(&self) -> Result<(), ReflError> {
        self.stack.validate()?;
        if !(self.energy_ev.is_finite() && self.energy_ev > 0.0) {
            return Err(ReflError::input("energy", format!("must be a finite positive number of eV, got {}", self.energy_ev)));
        }
        let q_max = 2.0 * scatterlab_core::units::photon_k0(self.energy_ev);
        for (i, &q) in self.q.iter().enumerate() {
            if !(q.is_finite() && q > 0.0 && q < q_max) {
                return Err(ReflError::input(
                    format!("q[{i}]"),
                    format!("{q} Å⁻¹ is outside 0 < q < 2k0 = {q_max:.6} Å⁻¹ at {} eV", self.energy_ev),
                ));
            }
        }
        Ok(())
    }
}
