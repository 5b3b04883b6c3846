//! The reflectivity cases file format (`format.version = "refl-oracle-v1"`, as in
//! `shared/fixtures/refl/reference.json`): a top-level `cases` list, each case with `id`,
//! `energy_ev`, `q_inv_A` and the per-layer columns. Every other key is ignored, so the
//! expected values in a fixture are never read by the engine.

use serde::{Deserialize, Serialize};

use crate::{ReflError, Stack};

/// One case as stored in a cases file (only the inputs).
#[derive(Clone, Debug, Deserialize)]
pub struct CaseInput {
    /// Case identifier.
    pub id: String,
    /// Photon energy, eV.
    pub energy_ev: f64,
    /// Momentum transfer values, Å⁻¹.
    #[serde(rename = "q_inv_A")]
    pub q: Vec<f64>,
    /// Thickness per layer, Å.
    #[serde(rename = "thickness_A")]
    pub thickness: Vec<f64>,
    /// Roughness of the interface above each layer, Å.
    #[serde(rename = "roughness_A")]
    pub roughness: Vec<f64>,
    /// Ordinary δ per layer.
    pub delta_o: Vec<f64>,
    /// Ordinary β per layer.
    pub beta_o: Vec<f64>,
    /// Extraordinary δ per layer.
    pub delta_e: Vec<f64>,
    /// Extraordinary β per layer.
    pub beta_e: Vec<f64>,
}

impl CaseInput {
    /// The case's layer stack (column lengths checked).
    pub fn stack(&self) -> Result<Stack, ReflError> {
        Stack::from_columns(&self.thickness, &self.roughness, &self.delta_o, &self.beta_o, &self.delta_e, &self.beta_e)
    }
}

/// A case that may not even parse: its id (when readable) and either its inputs or the reason.
#[derive(Debug)]
pub struct ParsedCase {
    /// `id` of the case, or `"case N"` when it has none.
    pub id: String,
    /// The inputs, or why they could not be read.
    pub input: Result<CaseInput, ReflError>,
}

/// Reads a cases file. A malformed file is an error; a malformed case only fails that case.
pub fn parse_cases(text: &str) -> Result<Vec<ParsedCase>, ReflError> {
    #[derive(Deserialize)]
    struct File {
        cases: Vec<serde_json::Value>,
    }
    let file: File = serde_json::from_str(text).map_err(|e| ReflError::Format { what: "cases file".into(), message: e.to_string() })?;
    Ok(file
        .cases
        .into_iter()
        .enumerate()
        .map(|(i, value)| {
            let id = value.get("id").and_then(|v| v.as_str()).map_or_else(|| format!("case {i}"), str::to_owned);
            let input = serde_json::from_value::<CaseInput>(value).map_err(|e| ReflError::Format { what: format!("case {id}"), message: e.to_string() });
            ParsedCase { id, input }
        })
        .collect())
}

/// One case's result as written by `scatterlab refl compute`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct CaseResult {
    /// The case id.
    pub id: String,
    /// R_s per q (absent when the case failed).
    #[serde(rename = "R_s", skip_serializing_if = "Option::is_none", default)]
    pub r_s: Option<Vec<f64>>,
    /// R_p per q (absent when the case failed).
    #[serde(rename = "R_p", skip_serializing_if = "Option::is_none", default)]
    pub r_p: Option<Vec<f64>>,
    /// Why the case failed (absent when it succeeded).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
}

/// The results file: which device ran, and one entry per case in input order.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ResultsFile {
    /// `"cpu"` or `"gpu"`.
    pub device: String,
    /// Adapter/backend in words.
    #[serde(default)]
    pub backend: String,
    /// Per-case results.
    pub cases: Vec<CaseResult>,
    /// Where the results came from (input hash, device, precision, version).
    pub provenance: scatterlab_core::Provenance,
}
