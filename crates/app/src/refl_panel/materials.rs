//! Layers given by chemical formula and mass density instead of δ and β: the constants come from
//! the Henke tables (`scatterlab_refl::materials::Compound`) at the beam energy, and follow it
//! when the energy changes. Such a layer is isotropic (δ_o = δ_e, β_o = β_e).

use scatterlab_refl::materials::Compound;
use scatterlab_refl::Stack;

/// A layer's material: a formula and density, or (empty formula) δ and β typed in the table.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerMaterial {
    /// Chemical formula, e.g. "SiO2"; empty for δ/β typed by hand.
    pub formula: String,
    /// Mass density, g/cm³.
    pub density_g_cm3: f64,
}

impl Default for LayerMaterial {
    fn default() -> Self {
        Self::MANUAL
    }
}

impl LayerMaterial {
    /// δ and β typed in the table.
    pub const MANUAL: LayerMaterial = LayerMaterial { formula: String::new(), density_g_cm3: 1.0 };

    /// A formula and density.
    pub fn compound(formula: &str, density_g_cm3: f64) -> Self {
        Self { formula: formula.to_owned(), density_g_cm3 }
    }

    /// Whether δ and β come from the formula (else from the table).
    pub fn is_compound(&self) -> bool {
        !self.formula.trim().is_empty()
    }
}

/// Common materials of soft X-ray reflectivity, with bulk densities (g/cm³), offered as presets.
pub const PRESETS: [(&str, f64); 8] = [("Si", 2.33), ("SiO2", 2.2), ("Si3N4", 3.17), ("Au", 19.3), ("Cr", 7.19), ("C8H8", 1.05), ("C5H8O2", 1.18), ("H2O", 1.0)];

/// Sets δ and β of every layer whose material is a compound, at `energy_ev`. `materials` is
/// first padded or cut to one entry per layer. Returns a message per layer that could not be
/// set (a bad formula, a density ≤ 0, an energy outside the tables); those layers keep their δ, β.
pub fn apply(stack: &mut Stack, materials: &mut Vec<LayerMaterial>, energy_ev: f64) -> Vec<String> {
    materials.resize(stack.layers.len(), LayerMaterial::MANUAL);
    let mut errors = Vec::new();
    for (j, (layer, m)) in stack.layers.iter_mut().zip(materials.iter()).enumerate() {
        if !m.is_compound() {
            continue;
        }
        let constants = Compound::new(m.formula.trim(), m.density_g_cm3).and_then(|c| c.optical_constants(energy_ev));
        match constants {
            Ok(c) => {
                (layer.delta_o, layer.beta_o) = (c.delta_o, c.beta_o);
                (layer.delta_e, layer.beta_e) = (c.delta_e, c.beta_e);
            }
            Err(e) => errors.push(format!("layer {j}: {e}")),
        }
    }
    errors
}
