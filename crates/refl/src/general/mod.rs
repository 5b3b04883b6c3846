//! The general 4×4 method: layers with a full 3×3 dielectric tensor (biaxial, tilted), including
//! the cross-polarised reflectances R_sp and R_ps. f64 on the CPU; exact derivatives through the
//! same generic code ([`crate::dual::Cx`]).
//!
//! Method (Berreman 1972; Yeh 1979; mode sorting as Xu et al. 2000 / Passler & Paarmann 2017):
//! * [`tensor`]: principal δ, β and Euler angles → lab χ = ε − 1 with ε = 1 − 2δ + 2iβ per axis.
//! * `terms`: Berreman's Δ in 2×2 blocks and the cancellation-free differences between layers.
//! * `modes`: per layer and q, the down- and up-going invariant subspaces as graphs
//!   (E_x, H_x) = Z (H_y, E_y) — closed form when s and p decouple, otherwise from the
//!   characteristic quartic's pair factors; stable at degenerate (isotropic) modes.
//! * `recursion`: the 2×2 reflection matrix from the substrate up (Riccati/Sylvester
//!   differences at interfaces, decaying exponentials in layers, Névot–Croce in `roughness`).
//!
//! For uniaxial layers with the optic axis along z the result equals the Parratt recursion of
//! [`crate::cpu`] to rounding, roughness included. Conventions: `CONVENTIONS.md`, section
//! "General (4×4) layers". Transmission is not computed.

pub mod gpu;
mod gradient;
mod mat2;
mod modes;
mod propagate;
mod quartic;
mod recursion;
mod roughness;
pub mod tensor;
mod terms;

pub use gpu::{GeneralGpu, GeneralRequest};
pub use gradient::{general_gradient, GeneralGradient, GeneralParam};
pub use recursion::{reflection_matrix, GeneralKernel};
pub use tensor::{is_decoupled, sincos_deg, TensorLayer};
pub use terms::ChiLayer;

use num_complex::Complex64 as C64;
use serde::{Deserialize, Serialize};

use crate::{limits, ReflError, Stack};

/// A stack of tensor layers: index 0 is the fronting medium, the last index the substrate
/// (both semi-infinite), like [`Stack`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GeneralStack {
    /// The layers, top (fronting) first.
    pub layers: Vec<TensorLayer>,
}

/// Power reflectances per q (the names follow the amplitudes r_ij, i = outgoing, j = incident).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GeneralReflectivity {
    /// R_ss = |r_ss|²: s reflected from s incident.
    pub r_ss: Vec<f64>,
    /// R_pp = |r_pp|²: p reflected from p incident.
    pub r_pp: Vec<f64>,
    /// R_sp = |r_sp|²: **s reflected from p incident** (refloxide's `R_sp`).
    pub r_sp: Vec<f64>,
    /// R_ps = |r_ps|²: p reflected from s incident.
    pub r_ps: Vec<f64>,
}

impl GeneralStack {
    /// The uniaxial-z stack of the recursion as tensor layers.
    pub fn from_stack(stack: &Stack) -> Self {
        Self { layers: stack.layers.iter().map(TensorLayer::from_uniaxial).collect() }
    }

    /// Checks: 2 to [`limits::MAX_LAYERS`] layers, all numbers finite and in the physical ranges of
    /// [`crate::limits`] (thickness, roughness, δ, β, ε ≠ 0 per principal axis), and a
    /// fronting medium that does not couple s and p (its s and p modes define the amplitudes).
    pub fn validate(&self) -> Result<(), ReflError> {
        limits::check_stack(&self.layers, TensorLayer::fields, |object, layer| {
            limits::check_layer(object, layer.thickness, layer.roughness, &layer.delta, &layer.beta, &["[a]", "[b]", "[c]"])
        })?;
        if !is_decoupled(&self.layers[0].chi()) {
            return Err(ReflError::input(
                "layer 0 (fronting medium)",
                "couples s and p (χ_xy, χ_yz ≠ 0): it must be isotropic or have its axes along y and in the plane of incidence",
            ));
        }
        Ok(())
    }

    /// The layers as χ tensors for the generic kernel (values).
    pub fn chi_layers(&self) -> Vec<ChiLayer<C64>> {
        self.layers.iter().map(|l| ChiLayer::new(l.chi(), C64::new(l.thickness, 0.0), C64::new(l.roughness, 0.0))).collect()
    }
}

/// Checks the energy (finite, within the limits of [`crate::limits`]), the number of q points
/// and every q (finite, 0 < q < 2k0); returns k0.
pub(crate) fn validate_beam(energy_ev: f64, q: &[f64]) -> Result<f64, ReflError> {
    limits::check_energy(|| "energy".to_owned(), energy_ev)?;
    limits::check_count(|| "q".to_owned(), q.len(), limits::MAX_Q_POINTS, "points")?;
    let k0 = scatterlab_core::units::photon_k0(energy_ev);
    for (i, &qi) in q.iter().enumerate() {
        if !(qi.is_finite() && qi > 0.0 && qi < 2.0 * k0) {
            return Err(ReflError::input(format!("q[{i}]"), format!("{qi} Å⁻¹ is outside 0 < q < 2k0 = {:.6} Å⁻¹ at {energy_ev} eV", 2.0 * k0)));
        }
    }
    Ok(k0)
}

/// R_ss, R_pp, R_sp, R_ps of a tensor stack at one photon energy (eV) over q (Å⁻¹), f64 on the
/// calling thread. Inputs are validated first and never modified.
pub fn general_reflectivity(stack: &GeneralStack, energy_ev: f64, q: &[f64]) -> Result<GeneralReflectivity, ReflError> {
    stack.validate()?;
    let k0 = validate_beam(energy_ev, q)?;
    let kernel = GeneralKernel::new(&stack.chi_layers(), C64::new(k0, 0.0));
    let n = q.len();
    let mut out = GeneralReflectivity { r_ss: vec![0.0; n], r_pp: vec![0.0; n], r_sp: vec![0.0; n], r_ps: vec![0.0; n] };
    kernel.curve(q, |i, m| {
        let r = recursion::reflectances(&m);
        out.r_ss[i] = r[0][0];
        out.r_sp[i] = r[0][1];
        out.r_ps[i] = r[1][0];
        out.r_pp[i] = r[1][1];
    });
    out.check_finite(q)?;
    Ok(out)
}

/// Every curve of a batch on the chosen engine — one contract for both devices: the CPU runs
/// [`general_reflectivity`] per curve (f64); the GPU runs the df64 kernel (`shaders/refl/general_df64.wgsl`,
/// compiled on first use and kept with the engine's pipeline) over the whole batch in one
/// dispatch. Errors name `curve k`; a non-finite R is an error on either device.
pub async fn compute(engine: crate::Engine<'_>, requests: &[GeneralRequest<'_>]) -> Result<Vec<GeneralReflectivity>, ReflError> {
    match engine {
        crate::Engine::Cpu => requests.iter().enumerate().map(|(i, r)| general_reflectivity(r.stack, r.energy_ev, r.q).map_err(|e| e.in_curve(i))).collect(),
        // The 4×4 kernel is df64 on the GPU whichever precision the engine names.
        crate::Engine::Gpu(pipeline) | crate::Engine::GpuDf64(pipeline) => pipeline.general().await?.compute(requests).await,
    }
}

impl GeneralReflectivity {
    /// Checks that every R is finite; the error names the first bad point as `q[i]` and its q.
    pub fn check_finite(&self, q: &[f64]) -> Result<(), ReflError> {
        let channels = [("R_ss", &self.r_ss), ("R_pp", &self.r_pp), ("R_sp", &self.r_sp), ("R_ps", &self.r_ps)];
        let first = channels.iter().filter_map(|(name, v)| v.iter().position(|r| !r.is_finite()).map(|i| (i, *name, v[i]))).min_by_key(|&(i, _, _)| i);
        match first {
            None => Ok(()),
            Some((i, name, value)) => {
                let at = q.get(i).map_or_else(String::new, |q| format!(" at q = {q} Å⁻¹"));
                Err(ReflError::NonFinite(scatterlab_core::InputError::new(
                    format!("q[{i}]"),
                    format!("{name} = {value}{at} is not finite (the stack overflows the engine's arithmetic there)"),
                )))
            }
        }
    }
}
