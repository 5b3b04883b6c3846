//! What each parameter of a model is — a thickness, a roughness, a density, a δ, an instrument
//! scale — found by walking the model file the way the compiler resolves it (layers top first,
//! each layer's material, then each dataset's instrument terms). The parameter table lists the
//! parameters in that order and shows each one's unit, so a user reads the table as the stack.

use std::collections::BTreeMap;

use scatterlab_refl::model::{EnergyValue, InstrumentSpec, MaterialSpec, ModelFile, ResolutionSpec, Value};

/// The physical role of a parameter (the first place the model uses it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Layer thickness, Å.
    Thickness,
    /// Interface roughness, Å.
    Roughness,
    /// Relative density multiplying δ and β.
    DensityScale,
    /// Euler angle of the material axes, degrees.
    Angle,
    /// Mass density of a compound, g/cm³.
    Density,
    /// δ of n = 1 − δ + iβ.
    Delta,
    /// β of n = 1 − δ + iβ.
    Beta,
    /// Instrument scale factor.
    Scale,
    /// Instrument background (in units of R).
    Background,
    /// q offset, Å⁻¹.
    QOffset,
    /// Photon energy offset, eV.
    EnergyOffset,
    /// Resolution dQ/Q (FWHM fraction).
    Resolution,
    /// Named in "parameters" but used nowhere.
    Unused,
}

impl Role {
    /// The unit as the table shows it; "–" for a dimensionless number.
    pub fn unit(self) -> &'static str {
        match self {
            Role::Thickness | Role::Roughness => "Å",
            Role::Density => "g/cm³",
            Role::EnergyOffset => "eV",
            Role::QOffset => "Å⁻¹",
            Role::Angle => "°",
            Role::DensityScale | Role::Delta | Role::Beta | Role::Scale | Role::Background | Role::Resolution | Role::Unused => "–",
        }
    }

    /// What the parameter is, for the unit cell's hover text.
    pub fn describe(self) -> &'static str {
        match self {
            Role::Thickness => "layer thickness",
            Role::Roughness => "interface roughness (rms)",
            Role::DensityScale => "relative density (dimensionless)",
            Role::Angle => "orientation angle",
            Role::Density => "mass density",
            Role::Delta => "δ of n = 1 − δ + iβ (dimensionless)",
            Role::Beta => "β of n = 1 − δ + iβ (dimensionless)",
            Role::Scale => "instrument scale (dimensionless)",
            Role::Background => "background, in units of R (dimensionless)",
            Role::QOffset => "q offset",
            Role::EnergyOffset => "photon energy offset",
            Role::Resolution => "resolution dQ/Q, FWHM (dimensionless)",
            Role::Unused => "not used by any layer or dataset",
        }
    }
}

/// Collects parameter names in first-use order with their roles.
struct Walk<'a> {
    known: &'a BTreeMap<String, scatterlab_refl::model::ParamSpec>,
    order: Vec<(String, Role)>,
}

impl Walk<'_> {
    fn value(&mut self, v: Option<&Value>, role: Role) {
        if let Some(Value::Param(name)) = v {
            if self.known.contains_key(name) && !self.order.iter().any(|(n, _)| n == name) {
                self.order.push((name.clone(), role));
            }
        }
    }

    fn energy(&mut self, v: &EnergyValue, role: Role) {
        match v {
            EnergyValue::Same(v) => self.value(Some(v), role),
            // Keys are energies: sorted as numbers, not as text.
            EnergyValue::PerEnergy(map) => {
                let mut entries: Vec<(f64, &Value)> = map.iter().map(|(k, v)| (k.trim().parse().unwrap_or(f64::INFINITY), v)).collect();
                entries.sort_by(|a, b| a.0.total_cmp(&b.0));
                for (_, v) in entries {
                    self.value(Some(v), role);
                }
            }
        }
    }

    fn material(&mut self, spec: &MaterialSpec) {
        match spec {
            MaterialSpec::Compound { density, .. } => self.value(Some(density), Role::Density),
            MaterialSpec::Table { .. } => {}
            MaterialSpec::Isotropic { delta, beta } => {
                self.energy(delta, Role::Delta);
                self.energy(beta, Role::Beta);
            }
            MaterialSpec::Uniaxial { delta_o, beta_o, delta_e, beta_e } => {
                self.energy(delta_o, Role::Delta);
                self.energy(beta_o, Role::Beta);
                self.energy(delta_e, Role::Delta);
                self.energy(beta_e, Role::Beta);
            }
            MaterialSpec::Biaxial { delta, beta } => {
                for (d, b) in delta.iter().zip(beta) {
                    self.energy(d, Role::Delta);
                    self.energy(b, Role::Beta);
                }
            }
        }
    }

    fn instrument(&mut self, i: &InstrumentSpec) {
        self.value(i.scale.as_ref(), Role::Scale);
        self.value(i.background.as_ref(), Role::Background);
        self.value(i.q_offset.as_ref(), Role::QOffset);
        self.value(i.energy_offset.as_ref(), Role::EnergyOffset);
        if let Some(ResolutionSpec::ConstantDqOverQ { fwhm }) = &i.resolution {
            self.value(Some(fwhm), Role::Resolution);
        }
    }
}

/// Every parameter of `file` with its role, in stack order: layer by layer from the fronting
/// medium down (thickness, roughness, density scale, angles, then the layer's material), then
/// the datasets' instrument terms, then parameters nothing uses (by name).
pub fn stack_order(file: &ModelFile) -> Vec<(String, Role)> {
    let mut walk = Walk { known: &file.parameters, order: Vec::with_capacity(file.parameters.len()) };
    for layer in &file.layers {
        walk.value(layer.thickness.as_ref(), Role::Thickness);
        walk.value(layer.roughness.as_ref(), Role::Roughness);
        walk.value(layer.density_scale.as_ref(), Role::DensityScale);
        for angle in layer.euler_deg.iter().flatten() {
            walk.value(Some(angle), Role::Angle);
        }
        if let Some(m) = file.materials.get(&layer.material) {
            walk.material(m);
        }
    }
    for d in &file.datasets {
        walk.instrument(&d.instrument);
    }
    for name in file.parameters.keys() {
        walk.value(Some(&Value::Param(name.clone())), Role::Unused);
    }
    walk.order
}

/// The role of `name` in `order` (Unused when absent).
pub fn role_of(order: &[(String, Role)], name: &str) -> Role {
    order.iter().find(|(n, _)| n == name).map_or(Role::Unused, |(_, r)| *r)
}
