//! Layer stacks: fronting medium first, substrate last, both semi-infinite.
//!
//! Optical constants follow the fixtures' convention: n = 1 − δ + iβ per axis, and the
//! dielectric function is taken **linear** in δ and β, ε = 1 − 2δ + 2iβ (as refloxide builds it).
//! "o" is the ordinary (in-plane) axis, "e" the extraordinary axis along the surface normal z.

use serde::{Deserialize, Serialize};

use crate::{limits, ReflError};

/// One layer of a stack.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Layer {
    /// Thickness in Å (ignored for the fronting medium and the substrate).
    pub thickness: f64,
    /// RMS roughness in Å of the interface **above** this layer (ignored for the fronting medium).
    pub roughness: f64,
    /// Ordinary (in-plane) δ.
    pub delta_o: f64,
    /// Ordinary (in-plane) β.
    pub beta_o: f64,
    /// Extraordinary (along z) δ.
    pub delta_e: f64,
    /// Extraordinary (along z) β.
    pub beta_e: f64,
}

impl Layer {
    /// An isotropic layer (n_o = n_e).
    pub fn isotropic(thickness: f64, roughness: f64, delta: f64, beta: f64) -> Self {
        Self { thickness, roughness, delta_o: delta, beta_o: beta, delta_e: delta, beta_e: beta }
    }

    /// Vacuum (δ = β = 0, no thickness or roughness).
    pub const VACUUM: Layer = Layer { thickness: 0.0, roughness: 0.0, delta_o: 0.0, beta_o: 0.0, delta_e: 0.0, beta_e: 0.0 };

    fn fields(&self) -> [(&'static str, f64); 6] {
        [("thickness", self.thickness), ("roughness", self.roughness), ("delta_o", self.delta_o), ("beta_o", self.beta_o), ("delta_e", self.delta_e), ("beta_e", self.beta_e)]
    }
}

/// A stack of layers: index 0 is the fronting medium, the last index the substrate.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stack {
    /// The layers, top (fronting) first.
    pub layers: Vec<Layer>,
}

impl Stack {
    /// Builds a stack from per-layer columns as the fixture files store them.
    pub fn from_columns(thickness: &[f64], roughness: &[f64], delta_o: &[f64], beta_o: &[f64], delta_e: &[f64], beta_e: &[f64]) -> Result<Self, ReflError> {
        let n = thickness.len();
        limits::check_count(|| "thickness_A".to_owned(), n, limits::MAX_LAYERS, "layers")?;
        let columns = [("roughness", roughness), ("delta_o", delta_o), ("beta_o", beta_o), ("delta_e", delta_e), ("beta_e", beta_e)];
        for (name, column) in columns {
            if column.len() != n {
                return Err(ReflError::input(name, format!("has {} entries but thickness has {n}", column.len())));
            }
        }
        let layers =
            (0..n).map(|j| Layer { thickness: thickness[j], roughness: roughness[j], delta_o: delta_o[j], beta_o: beta_o[j], delta_e: delta_e[j], beta_e: beta_e[j] }).collect();
        Ok(Self { layers })
    }

    /// Checks: 2 to [`MAX_LAYERS`](crate::limits::MAX_LAYERS) layers, and every layer's numbers
    /// finite and in the physical ranges of [`crate::limits`] (thickness, roughness, δ, β, ε ≠ 0).
    /// The error names the layer, the field, the value and the limit.
    pub fn validate(&self) -> Result<(), ReflError> {
        limits::check_stack(&self.layers, Layer::fields, |object, layer| {
            let (delta, beta) = ([layer.delta_o, layer.delta_e], [layer.beta_o, layer.beta_e]);
            limits::check_layer(object, layer.thickness, layer.roughness, &delta, &beta, &["_o", "_e"])
        })
    }
}
