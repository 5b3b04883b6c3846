//! The result of `blochRefine`: `result.json` of `scatterlab bloch refine` (field names as the
//! file spells them) and the other files it writes.

use std::collections::HashMap;

use serde::Serialize;
use ts_rs::TS;

/// The agreement of the start model.
#[derive(Serialize, TS)]
pub struct BlochRefineStart {
    /// Mean per-frame wR2.
    #[serde(rename = "wR2")]
    pub w_r2: f64,
    /// R on the observed reflections.
    #[serde(rename = "R_obs")]
    pub r_obs: f64,
}

/// One frame's agreement.
#[derive(Serialize, TS)]
pub struct BlochRefineFrame {
    /// The frame id.
    pub id: f64,
    /// Reflections fitted.
    pub n: f64,
    /// Its wR2.
    #[serde(rename = "wR2")]
    pub w_r2: f64,
    /// Its R on the observed reflections.
    #[serde(rename = "R_obs")]
    pub r_obs: f64,
    /// Its scale.
    pub scale: f64,
}

/// A refined parameter.
#[derive(Serialize, TS)]
pub struct BlochRefineParameter {
    /// Refined value.
    pub value: f64,
    /// Standard error (null when JᵀJ is singular).
    pub stderr: Option<f64>,
}

/// A refined atom.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub struct BlochRefineAtom {
    /// Site label.
    pub label: String,
    /// Element symbol.
    pub element: String,
    /// Fractional coordinates.
    pub frac: [f64; 3],
    /// Isotropic displacement, Å².
    pub u_iso: f64,
    /// Anisotropic displacements U11, U22, U33, U12, U13, U23, Å², where refined.
    pub u_aniso: Option<Vec<f64>>,
    /// Site occupancy.
    pub occupancy: f64,
}

/// One iteration of the refinement's history.
#[derive(Serialize, TS)]
pub struct BlochRefineStep {
    /// Iteration number.
    pub iteration: f64,
    /// Model evaluations so far.
    pub evaluations: f64,
    /// The optimiser's cost.
    pub cost: f64,
    /// Mean per-frame wR2.
    #[serde(rename = "wR2")]
    pub w_r2: f64,
    /// Largest parameter shift in standard errors (null without them).
    pub max_shift_su: Option<f64>,
}

/// `result.json` of `scatterlab bloch refine`.
#[derive(Serialize, TS)]
pub struct BlochRefineResultJson {
    /// Mean per-frame wR2 of the refined model (diffBloch's metric).
    #[serde(rename = "wR2")]
    pub w_r2: f64,
    /// R on the observed reflections.
    #[serde(rename = "R_obs")]
    pub r_obs: f64,
    /// The start model's agreement.
    #[ts(inline)]
    pub start: BlochRefineStart,
    /// Each frame's agreement.
    #[ts(inline)]
    pub per_frame: Vec<BlochRefineFrame>,
    /// Every refined parameter by name, with its standard error (null when JᵀJ is singular).
    #[ts(inline)]
    pub parameters: HashMap<String, BlochRefineParameter>,
    /// Correlation matrix in `parameter_order` (null without standard errors).
    pub correlations: Option<Vec<Vec<f64>>>,
    /// The parameters' order.
    pub parameter_order: Vec<String>,
    /// The refined structure's atoms.
    #[ts(inline)]
    pub atoms: Vec<BlochRefineAtom>,
    /// Iterations taken.
    pub iterations: f64,
    /// Model evaluations.
    pub evaluations: f64,
    /// `"converged"`, `"stationary"`, `"max_iterations"`, or `"cancelled"`.
    pub stop: String,
    /// Wall time, s.
    pub seconds: f64,
    /// The device in words.
    pub device: String,
    /// The optimiser.
    pub optimizer: String,
    /// What it minimised ("chi2" or "wr2"), where the engine reports it.
    #[ts(optional)]
    pub objective: Option<String>,
    /// scatterlab's version.
    pub version: String,
    /// Every iteration in order.
    #[ts(inline)]
    pub history: Vec<BlochRefineStep>,
}

/// Result of `Scatterlab.blochRefine`: the three files `scatterlab bloch refine` writes.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct BlochRefineResult {
    /// `result.json`.
    pub result: BlochRefineResultJson,
    /// `refined.cif`.
    pub refined_cif: String,
    /// `observed_vs_calculated.csv`.
    pub csv: String,
    /// Whether the run was cancelled (the structure is then the last one reached).
    pub cancelled: bool,
    /// Non-fatal findings while loading (e.g. a CIF cell 1–5 % off the PETS cell).
    pub warnings: Vec<String>,
}
