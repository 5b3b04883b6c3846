//! Reflectivity models: a versioned JSON file of parameters, materials, layers and datasets, and
//! its evaluation (batched over a population, one engine call) and exact Jacobian.
//!
//! The format is documented in `docs/refl-model.md`. A [`Model`] keeps the file it came from
//! untouched; parameter values travel separately as a full vector in the order of
//! [`Model::parameter_names`] (the file's, sorted by name), so a fitter can evaluate many vectors at once.

mod compile;
mod evaluate;
pub mod file;
mod jacobian;

pub use evaluate::BuiltStack;
pub use file::*;
pub use jacobian::ModelJacobian;

use compile::Compiled;

use crate::ReflError;

/// A checked, resolved model.
#[derive(Clone, Debug)]
pub struct Model {
    file: ModelFile,
    compiled: Compiled,
    /// Some layer is tilted or biaxial: the 4×4 method is needed.
    general: bool,
    /// For each dataset, the first dataset with the same curve (energy, offsets, q, resolution):
    /// s and p datasets of one energy are computed once.
    shared_curve: Vec<usize>,
}

/// What a fitter needs to know about one dataset.
#[derive(Clone, Copy, Debug)]
pub struct DatasetView<'a> {
    /// Its name.
    pub name: &'a str,
    /// Nominal photon energy, eV.
    pub energy_ev: f64,
    /// Polarisation channel.
    pub polarization: Polarization,
    /// q grid, Å⁻¹.
    pub q: &'a [f64],
    /// Measured R, if any.
    pub r: Option<&'a [f64]>,
    /// Uncertainty of R, if any.
    pub dr: Option<&'a [f64]>,
}

impl Model {
    /// Reads a model from JSON text. Unknown keys are rejected by name; every reference is resolved.
    pub fn from_json(text: &str) -> Result<Model, ReflError> {
        let file: ModelFile = crate::input::parse_json(text, "model JSON")?;
        Model::new(file)
    }

    /// Checks and resolves a model file.
    pub fn new(file: ModelFile) -> Result<Model, ReflError> {
        let compiled = compile::compile(&file)?;
        let biaxial = |name: &str| matches!(file.materials.get(name), Some(MaterialSpec::Biaxial { .. }));
        let general = file.layers.iter().any(|l| l.euler_deg.is_some() || biaxial(&l.material));
        let shared_curve = (0..compiled.datasets.len())
            .map(|i| {
                let d = &compiled.datasets[i];
                (0..=i)
                    .find(|&j| {
                        let e = &compiled.datasets[j];
                        e.energy_ev == d.energy_ev
                            && e.energy_offset == d.energy_offset
                            && e.q_offset == d.q_offset
                            && e.q == d.q
                            && e.resolution == d.resolution
                            && e.smearing == d.smearing
                    })
                    .unwrap_or(i)
            })
            .collect();
        let model = Model { file, compiled, general, shared_curve };
        for i in 0..model.compiled.datasets.len() {
            model.stack(i, &model.compiled.values)?;
        }
        Ok(model)
    }

    /// The file this model was read from.
    pub fn file(&self) -> &ModelFile {
        &self.file
    }

    /// The model file with parameter values replaced by `values` (for saving a fit), as JSON.
    pub fn to_json(&self, values: &[f64]) -> Result<String, ReflError> {
        self.check_values(values)?;
        let mut file = self.file.clone();
        for (spec, v) in file.parameters.values_mut().zip(values) {
            spec.value = *v;
        }
        serde_json::to_string_pretty(&file).map_err(|e| ReflError::Format { what: "model JSON".into(), message: e.to_string() })
    }

    /// Parameter names, in the order of every parameter vector.
    pub fn parameter_names(&self) -> &[String] {
        &self.compiled.names
    }

    /// The parameter values stored in the file.
    pub fn values(&self) -> &[f64] {
        &self.compiled.values
    }

    /// Bounds of parameter `i`, if it has any.
    pub fn bounds(&self, i: usize) -> Option<[f64; 2]> {
        self.compiled.bounds.get(i).copied().flatten()
    }

    /// Indices of the parameters a fit varies.
    pub fn varying(&self) -> Vec<usize> {
        (0..self.compiled.vary.len()).filter(|&i| self.compiled.vary[i]).collect()
    }

    /// Whether the model needs the general 4×4 method (CPU only).
    pub fn needs_general(&self) -> bool {
        self.general
    }

    /// The datasets, in file order.
    pub fn datasets(&self) -> Vec<DatasetView<'_>> {
        self.file
            .datasets
            .iter()
            .map(|d| DatasetView { name: &d.name, energy_ev: d.energy_ev, polarization: d.polarization, q: &d.q, r: d.r.as_deref(), dr: d.dr.as_deref() })
            .collect()
    }
}
