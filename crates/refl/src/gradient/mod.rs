//! Exact forward-mode gradients of R_s and R_p with respect to the continuous parameters of a
//! curve: each layer's thickness, roughness, δ and β (ordinary and extraordinary), the photon
//! energy, an additive q offset, and (through [`smeared_gradient`]) the constant dQ/Q width.
//!
//! The recursion ([`recursion`]) is the f64 CPU reference written over [`crate::dual::Cx`]; the
//! blocks run it on [`soa::SoaJet`] (the numbers of [`crate::dual::Jet`], stored for vector
//! units). Parameters are split into blocks of at most [`BLOCK`] slots, deepest layers first; each
//! block forms its q-independent terms once and runs jets only from just below its deepest layer
//! up, starting from the plain recursion's state there (one plain pass serves all blocks). R itself
//! is the production engine's (`cpu::reflectivity`). Scale and background of a model
//! R_model = scale·R + background are added by [`apply_instrument`], so a fitter gets every column
//! of its Jacobian from here.

mod block;
pub mod recursion;
mod smear;
pub mod soa;

pub use smear::smeared_gradient;

use crate::{CurveRequest, ReflError};

/// The parameters of one layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayerParam {
    /// Thickness d in Å (no effect for the fronting medium and the substrate).
    Thickness,
    /// Roughness σ in Å of the interface above the layer (no effect for the fronting medium).
    Roughness,
    /// Ordinary (in-plane) δ.
    DeltaO,
    /// Ordinary β.
    BetaO,
    /// Extraordinary (along z) δ.
    DeltaE,
    /// Extraordinary β.
    BetaE,
}

impl LayerParam {
    /// The field name, as in [`crate::Layer`] and in error messages.
    pub fn name(self) -> &'static str {
        match self {
            LayerParam::Thickness => "thickness",
            LayerParam::Roughness => "roughness",
            LayerParam::DeltaO => "delta_o",
            LayerParam::BetaO => "beta_o",
            LayerParam::DeltaE => "delta_e",
            LayerParam::BetaE => "beta_e",
        }
    }
}

/// A continuous parameter R can be differentiated with respect to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    /// One field of one layer (index 0 is the fronting medium).
    Layer {
        /// The layer index.
        layer: usize,
        /// The field.
        param: LayerParam,
    },
    /// Photon energy in eV (through k0) at fixed δ, β: ∂R/∂E in eV⁻¹.
    Energy,
    /// Additive shift of every q: ∂R(q + Δq)/∂Δq at Δq = 0, in Å.
    QOffset,
    /// The width f of a constant dQ/Q resolution (dQ = f·q, FWHM): ∂R/∂f. Only for
    /// [`smeared_gradient`] with [`crate::Resolution::ConstantDqOverQ`].
    Resolution,
}

impl Param {
    /// A readable name for messages, e.g. "layer 3 roughness".
    pub fn describe(&self) -> String {
        match self {
            Param::Layer { layer, param } => format!("layer {layer} {}", param.name()),
            Param::Energy => "energy".to_owned(),
            Param::QOffset => "q offset".to_owned(),
            Param::Resolution => "resolution dQ/Q".to_owned(),
        }
    }
}

/// Reflectances and their derivatives over one q grid.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Gradient {
    /// R_s per q.
    pub r_s: Vec<f64>,
    /// R_p per q.
    pub r_p: Vec<f64>,
    /// ∂R_s/∂param, indexed `[param][q]` in the order the parameters were given.
    pub d_r_s: Vec<Vec<f64>>,
    /// ∂R_p/∂param, indexed `[param][q]`.
    pub d_r_p: Vec<Vec<f64>>,
}

/// Parameter slots per pass: 8 measured fastest per parameter (16 spills registers; a 4-slot
/// pass costs about as much as an 8-slot one) — `benches/src/bin/refl_gradient_bench.rs`.
pub const BLOCK: usize = 8;

/// What the recursion itself is differentiated with respect to: a layer field, the energy, or q
/// (every q-like parameter — offset, resolution width — is q's derivative times a chain factor).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Direction {
    Layer(usize, LayerParam),
    Energy,
    Q,
}

/// Checks that `param` (number `index` in the caller's list) exists for a stack of `n_layers`.
pub(crate) fn check_param(param: &Param, index: usize, n_layers: usize) -> Result<(), ReflError> {
    match param {
        Param::Layer { layer, .. } if *layer >= n_layers => Err(ReflError::input(
            format!("parameter {index} ({})", param.describe()),
            format!("layer index {layer} is out of range: the stack has {n_layers} layers (0..{n_layers})"),
        )),
        _ => Ok(()),
    }
}

/// R and ∂R/∂param for each of `params`, on the CPU in f64. The request is validated as by
/// [`CurveRequest::validate`], and each parameter against the stack; [`Param::Resolution`] is an
/// error here (there is no resolution: use [`smeared_gradient`]).
pub fn reflectivity_gradient(request: &CurveRequest<'_>, params: &[Param]) -> Result<Gradient, ReflError> {
    request.validate()?;
    let mut directions = Vec::with_capacity(params.len());
    for (i, param) in params.iter().enumerate() {
        check_param(param, i, request.stack.layers.len())?;
        directions.push(match *param {
            Param::Layer { layer, param } => Direction::Layer(layer, param),
            Param::Energy => Direction::Energy,
            Param::QOffset => Direction::Q,
            Param::Resolution => {
                return Err(ReflError::input(format!("parameter {i} (resolution dQ/Q)"), "an unsmeared curve has no resolution width; use smeared_gradient with a constant dQ/Q"))
            }
        });
    }
    Ok(block::evaluate(request, &directions))
}

/// R_model = scale·R + background: the derivatives scaled by `scale`, then two more rows,
/// ∂/∂scale (= R) and ∂/∂background (= 1), appended after the given parameters' rows.
pub fn apply_instrument(gradient: &Gradient, scale: f64, background: f64) -> Gradient {
    let model = |r: &[f64]| r.iter().map(|x| scale * x + background).collect::<Vec<f64>>();
    let rows = |d: &[Vec<f64>], r: &[f64]| {
        let mut out: Vec<Vec<f64>> = d.iter().map(|row| row.iter().map(|x| scale * x).collect()).collect();
        out.push(r.to_vec());
        out.push(vec![1.0; r.len()]);
        out
    };
    Gradient { r_s: model(&gradient.r_s), r_p: model(&gradient.r_p), d_r_s: rows(&gradient.d_r_s, &gradient.r_s), d_r_p: rows(&gradient.d_r_p, &gradient.r_p) }
}
