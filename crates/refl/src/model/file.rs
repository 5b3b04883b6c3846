//! The JSON model file, version 1: what a user writes, exactly as serde reads it.
//!
//! Every struct denies unknown keys, so a typo (`"thicknes"`) is an error naming the key rather
//! than a silently ignored setting. The format is documented with an example in
//! `docs/refl-model.md`; [`MODEL_FORMAT`] and [`MODEL_VERSION`] identify it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The `format` string of a model file.
pub const MODEL_FORMAT: &str = "scatterlab-refl-model";
/// The model-file version this code reads and writes.
pub const MODEL_VERSION: u32 = 1;

/// A number, or the name of a parameter in [`ModelFile::parameters`] (a link: every place naming the
/// same parameter shares its value).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Value {
    /// A fixed number.
    Number(f64),
    /// The name of a parameter.
    Param(String),
}

/// A [`Value`], or one value per photon energy (keys are energies in eV, e.g. `"285.1"`, matched to
/// the datasets' nominal energies within 1 meV).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EnergyValue {
    /// The same value at every energy.
    Same(Value),
    /// A value per energy.
    PerEnergy(BTreeMap<String, Value>),
}

/// One parameter: its value, search bounds, and whether a fit varies it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    /// Current (start) value.
    pub value: f64,
    /// [lower, upper] search bounds; required when `vary` is true.
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "bounds_pair")]
    pub bounds: Option<[f64; 2]>,
    /// Whether a fit varies this parameter.
    #[serde(default)]
    pub vary: bool,
}

/// `bounds` as exactly two numbers: any other length is an error saying so (serde's own message
/// for a fixed array with extra elements is "trailing characters", which names nothing).
fn bounds_pair<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<[f64; 2]>, D::Error> {
    let values: Option<Vec<f64>> = Option::deserialize(deserializer)?;
    match values.as_deref() {
        None => Ok(None),
        Some(&[lo, hi]) => Ok(Some([lo, hi])),
        Some(other) => Err(serde::de::Error::custom(format!("bounds must be [lower, upper] (2 numbers), got {} numbers", other.len()))),
    }
}

/// Optical constants of a material.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum MaterialSpec {
    /// Isotropic, from a chemical formula and mass density (g/cm³) via Henke f1, f2.
    Compound {
        /// Chemical formula, e.g. `"SiO2"`.
        formula: String,
        /// Mass density, g/cm³.
        density: Value,
    },
    /// Tabulated uniaxial constants vs energy (the PRSoXR workflow), interpolated.
    Table {
        /// Photon energies, eV, ascending.
        energy_ev: Vec<f64>,
        /// Ordinary δ per energy.
        delta_o: Vec<f64>,
        /// Ordinary β per energy.
        beta_o: Vec<f64>,
        /// Extraordinary δ per energy.
        delta_e: Vec<f64>,
        /// Extraordinary β per energy.
        beta_e: Vec<f64>,
        /// `"linear"` (default) or `"pchip"`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interpolation: Option<String>,
    },
    /// Isotropic constants, fixed or fitted, optionally per energy.
    Isotropic {
        /// δ.
        delta: EnergyValue,
        /// β.
        beta: EnergyValue,
    },
    /// Uniaxial constants (optic axis along the layer's c axis), fixed or fitted, optionally per energy.
    Uniaxial {
        /// Ordinary δ.
        delta_o: EnergyValue,
        /// Ordinary β.
        beta_o: EnergyValue,
        /// Extraordinary δ.
        delta_e: EnergyValue,
        /// Extraordinary β.
        beta_e: EnergyValue,
    },
    /// Biaxial principal constants along the material axes a, b, c (needs the 4×4 method).
    Biaxial {
        /// δ along a, b, c.
        delta: [EnergyValue; 3],
        /// β along a, b, c.
        beta: [EnergyValue; 3],
    },
}

/// One layer, top first: the first is the fronting medium, the last the substrate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerSpec {
    /// A name for messages and plots.
    pub name: String,
    /// A key of [`ModelFile::materials`], or `"vacuum"`.
    pub material: String,
    /// Thickness, Å (omit for the fronting medium and the substrate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thickness: Option<Value>,
    /// RMS roughness of the interface above this layer, Å.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roughness: Option<Value>,
    /// Multiplies δ and β of the material (relative density), default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub density_scale: Option<Value>,
    /// Orientation of the material axes (a, b, c), Euler angles in degrees (CONVENTIONS.md); absent = c along z.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub euler_deg: Option<[Value; 3]>,
}

/// Polarisation channel a dataset measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Polarization {
    /// s in, s out plus s in, p out (what a detector without analyser sees for s incidence).
    S,
    /// p incidence, likewise summed over the outgoing polarisation.
    P,
    /// |r_ss|² only.
    Ss,
    /// |r_pp|² only.
    Pp,
    /// |r_sp|² only (see CONVENTIONS.md for the index order).
    Sp,
    /// |r_ps|² only.
    Ps,
}

/// The resolution of a dataset.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ResolutionSpec {
    /// No smearing.
    None,
    /// Gaussian, FWHM dQ = fwhm · q (fwhm is a fraction: 0.01 = 1 %).
    ConstantDqOverQ {
        /// FWHM as a fraction of q.
        fwhm: Value,
    },
    /// Gaussian with the per-point FWHM dQ column of the data.
    Pointwise,
}

/// Per-dataset instrument terms: R_model = scale · R(q + q_offset, E + energy_offset) ⊛ resolution + background.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstrumentSpec {
    /// Multiplies R (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<Value>,
    /// Added to R (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<Value>,
    /// Added to every q, Å⁻¹ (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q_offset: Option<Value>,
    /// Added to the nominal photon energy, eV (default 0); materials are evaluated at the shifted energy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_offset: Option<Value>,
    /// Resolution (default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<ResolutionSpec>,
    /// How the resolution convolution is evaluated (default converged; `"refnx17"` for refnx's scheme).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smearing: Option<crate::resolution::Smearing>,
}

/// One measured (or to-be-simulated) curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DatasetSpec {
    /// A name for messages and plots.
    pub name: String,
    /// Nominal photon energy, eV.
    pub energy_ev: f64,
    /// Polarisation channel.
    pub polarization: Polarization,
    /// q grid, Å⁻¹.
    pub q: Vec<f64>,
    /// Measured R (absent: simulation only).
    #[serde(default, rename = "R", skip_serializing_if = "Option::is_none")]
    pub r: Option<Vec<f64>>,
    /// Uncertainty of R (1 σ).
    #[serde(default, rename = "dR", skip_serializing_if = "Option::is_none")]
    pub dr: Option<Vec<f64>>,
    /// Resolution FWHM per point, Å⁻¹.
    #[serde(default, rename = "dQ", skip_serializing_if = "Option::is_none")]
    pub dq: Option<Vec<f64>>,
    /// Instrument terms.
    #[serde(default = "default_instrument", skip_serializing_if = "is_default_instrument")]
    pub instrument: InstrumentSpec,
}

fn default_instrument() -> InstrumentSpec {
    InstrumentSpec { scale: None, background: None, q_offset: None, energy_offset: None, resolution: None, smearing: None }
}

fn is_default_instrument(i: &InstrumentSpec) -> bool {
    *i == default_instrument()
}

/// A complete model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFile {
    /// Always [`MODEL_FORMAT`].
    pub format: String,
    /// Always [`MODEL_VERSION`].
    pub version: u32,
    /// A name for the model.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// Named parameters.
    #[serde(default)]
    pub parameters: BTreeMap<String, ParamSpec>,
    /// Named materials.
    #[serde(default)]
    pub materials: BTreeMap<String, MaterialSpec>,
    /// Layers, fronting medium first, substrate last (at least two).
    pub layers: Vec<LayerSpec>,
    /// Datasets (curves) the model is evaluated for.
    pub datasets: Vec<DatasetSpec>,
}
