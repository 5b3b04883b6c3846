//! Resolving a [`ModelFile`]: parameter names to indices, materials to optics, every value checked once.

use super::file::*;
use crate::materials::{Compound, Interpolation, OpticalTable};
use crate::profile::OpticalConstants;
use crate::resolution::Resolution;
use crate::ReflError;

/// A value slot: fixed, or the index of a parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Slot {
    Fixed(f64),
    Param(usize),
}

impl Slot {
    pub(crate) fn get(self, values: &[f64]) -> f64 {
        match self {
            Slot::Fixed(v) => v,
            Slot::Param(i) => values.get(i).copied().unwrap_or(f64::NAN),
        }
    }
}

/// A slot per energy (or the same for all).
#[derive(Clone, Debug)]
pub(crate) enum EnergySlot {
    Same(Slot),
    PerEnergy(Vec<(f64, Slot)>),
}

impl EnergySlot {
    /// The slot that applies at a dataset's nominal energy.
    pub(crate) fn at(&self, energy_ev: f64, object: &dyn Fn() -> String) -> Result<Slot, ReflError> {
        match self {
            EnergySlot::Same(s) => Ok(*s),
            EnergySlot::PerEnergy(list) => {
                list.iter().find(|(e, _)| (e - energy_ev).abs() <= 1e-3).map(|(_, s)| *s).ok_or_else(|| ReflError::input(object(), format!("has no value for {energy_ev} eV")))
            }
        }
    }
}

/// Resolved optics of a material.
#[derive(Clone, Debug)]
pub(crate) enum Optics {
    Vacuum,
    Compound {
        compound: Compound,
        density: Slot,
    },
    Table(OpticalTable),
    /// δ, β along a, b, c (uniaxial and isotropic are special cases).
    Principal {
        delta: [EnergySlot; 3],
        beta: [EnergySlot; 3],
    },
}

/// A resolved layer.
#[derive(Clone, Debug)]
pub(crate) struct CompiledLayer {
    pub name: String,
    pub optics: usize,
    pub thickness: Slot,
    pub roughness: Slot,
    pub density_scale: Slot,
    pub euler_deg: Option<[Slot; 3]>,
}

/// Resolved resolution.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum CompiledResolution {
    None,
    Constant(Slot),
    Pointwise(Vec<f64>),
}

impl CompiledResolution {
    pub(crate) fn resolution(&self, values: &[f64]) -> Resolution {
        match self {
            CompiledResolution::None => Resolution::None,
            CompiledResolution::Constant(s) => Resolution::ConstantDqOverQ(s.get(values)),
            CompiledResolution::Pointwise(dq) => Resolution::Pointwise(dq.clone()),
        }
    }
}

/// A resolved dataset.
#[derive(Clone, Debug)]
pub(crate) struct CompiledDataset {
    pub name: String,
    pub energy_ev: f64,
    pub polarization: Polarization,
    pub q: Vec<f64>,
    pub scale: Slot,
    pub background: Slot,
    pub q_offset: Slot,
    pub energy_offset: Slot,
    pub resolution: CompiledResolution,
    pub smearing: crate::resolution::Smearing,
}

/// Everything compiled from a model file.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub names: Vec<String>,
    pub values: Vec<f64>,
    pub bounds: Vec<Option<[f64; 2]>>,
    pub vary: Vec<bool>,
    pub optics: Vec<Optics>,
    pub layers: Vec<CompiledLayer>,
    pub datasets: Vec<CompiledDataset>,
}

/// The principal (a, b, c) optical constants of one layer's material at an energy, before density scaling.
pub(crate) fn principal_constants(optics: &Optics, nominal_ev: f64, energy_ev: f64, values: &[f64], object: &dyn Fn() -> String) -> Result<([f64; 3], [f64; 3]), ReflError> {
    let from = |c: OpticalConstants| ([c.delta_o, c.delta_o, c.delta_e], [c.beta_o, c.beta_o, c.beta_e]);
    match optics {
        Optics::Vacuum => Ok(([0.0; 3], [0.0; 3])),
        Optics::Compound { compound, density } => {
            let c = compound.optical_constants(energy_ev)?;
            let density = crate::limits::check_range(|| format!("{} density", object()), density.get(values), 0.0, crate::limits::MAX_MASS_DENSITY_G_CM3, " g/cm³")?;
            let ratio = density / compound.density_g_cm3;
            Ok(from(OpticalConstants { delta_o: c.delta_o * ratio, beta_o: c.beta_o * ratio, delta_e: c.delta_e * ratio, beta_e: c.beta_e * ratio }))
        }
        Optics::Table(table) => Ok(from(table.at(energy_ev)?)),
        Optics::Principal { delta, beta } => {
            let mut d = [0.0; 3];
            let mut b = [0.0; 3];
            for k in 0..3 {
                d[k] = delta[k].at(nominal_ev, &|| format!("{} δ", object()))?.get(values);
                b[k] = beta[k].at(nominal_ev, &|| format!("{} β", object()))?.get(values);
            }
            Ok((d, b))
        }
    }
}

struct Resolver<'a> {
    file: &'a ModelFile,
    names: Vec<String>,
}

impl Resolver<'_> {
    fn slot(&self, value: &Value, object: &str) -> Result<Slot, ReflError> {
        match value {
            Value::Number(v) if v.is_finite() => Ok(Slot::Fixed(*v)),
            Value::Number(v) => Err(ReflError::input(object, format!("must be finite, got {v}"))),
            Value::Param(name) => match self.names.iter().position(|n| n == name) {
                Some(i) => Ok(Slot::Param(i)),
                None => Err(ReflError::input(object, format!("names parameter '{name}', which is not in \"parameters\""))),
            },
        }
    }

    fn opt_slot(&self, value: &Option<Value>, default: f64, object: &str) -> Result<Slot, ReflError> {
        value.as_ref().map_or(Ok(Slot::Fixed(default)), |v| self.slot(v, object))
    }

    fn energy_slot(&self, value: &EnergyValue, object: &str) -> Result<EnergySlot, ReflError> {
        match value {
            EnergyValue::Same(v) => Ok(EnergySlot::Same(self.slot(v, object)?)),
            EnergyValue::PerEnergy(map) => {
                let mut list = Vec::with_capacity(map.len());
                for (key, v) in map {
                    let e: f64 = key.trim().parse().map_err(|_| ReflError::input(format!("{object} energy key '{key}'"), "must be a photon energy in eV"))?;
                    list.push((e, self.slot(v, &format!("{object} at {key} eV"))?));
                }
                Ok(EnergySlot::PerEnergy(list))
            }
        }
    }

    fn optics(&self, name: &str, spec: &MaterialSpec) -> Result<Optics, ReflError> {
        let object = format!("material '{name}'");
        Ok(match spec {
            MaterialSpec::Compound { formula, density } => {
                let density = self.slot(density, &format!("{object} density"))?;
                let start = density.get(&self.start_values());
                Optics::Compound { compound: Compound::new(formula, start)?, density }
            }
            MaterialSpec::Table { energy_ev, delta_o, beta_o, delta_e, beta_e, interpolation } => {
                let n = energy_ev.len();
                if [delta_o.len(), beta_o.len(), delta_e.len(), beta_e.len()].iter().any(|&l| l != n) {
                    return Err(ReflError::input(&object, "table columns must all have the length of energy_ev"));
                }
                let rows = (0..n).map(|i| OpticalConstants { delta_o: delta_o[i], beta_o: beta_o[i], delta_e: delta_e[i], beta_e: beta_e[i] }).collect();
                let table = OpticalTable::new(name, energy_ev.clone(), rows)?;
                let interpolation = match interpolation.as_deref() {
                    None | Some("linear") => Interpolation::Linear,
                    Some("pchip") => Interpolation::Pchip,
                    Some(other) => return Err(ReflError::input(format!("{object} interpolation"), format!("'{other}' is not linear or pchip"))),
                };
                Optics::Table(table.with_interpolation(interpolation))
            }
            MaterialSpec::Isotropic { delta, beta } => {
                let d = self.energy_slot(delta, &format!("{object} delta"))?;
                let b = self.energy_slot(beta, &format!("{object} beta"))?;
                Optics::Principal { delta: [d.clone(), d.clone(), d], beta: [b.clone(), b.clone(), b] }
            }
            MaterialSpec::Uniaxial { delta_o, beta_o, delta_e, beta_e } => {
                let d_o = self.energy_slot(delta_o, &format!("{object} delta_o"))?;
                let b_o = self.energy_slot(beta_o, &format!("{object} beta_o"))?;
                Optics::Principal {
                    delta: [d_o.clone(), d_o, self.energy_slot(delta_e, &format!("{object} delta_e"))?],
                    beta: [b_o.clone(), b_o, self.energy_slot(beta_e, &format!("{object} beta_e"))?],
                }
            }
            MaterialSpec::Biaxial { delta, beta } => {
                let axes = ["a", "b", "c"];
                let mut d = Vec::with_capacity(3);
                let mut b = Vec::with_capacity(3);
                for k in 0..3 {
                    d.push(self.energy_slot(&delta[k], &format!("{object} delta[{}]", axes[k]))?);
                    b.push(self.energy_slot(&beta[k], &format!("{object} beta[{}]", axes[k]))?);
                }
                let arr = |v: Vec<EnergySlot>| -> [EnergySlot; 3] { [v[0].clone(), v[1].clone(), v[2].clone()] };
                Optics::Principal { delta: arr(d), beta: arr(b) }
            }
        })
    }

    fn start_values(&self) -> Vec<f64> {
        self.file.parameters.values().map(|p| p.value).collect()
    }
}

/// Checks and resolves a model file.
pub(crate) fn compile(file: &ModelFile) -> Result<Compiled, ReflError> {
    if file.format != MODEL_FORMAT {
        return Err(ReflError::input("model format", format!("is '{}', expected '{MODEL_FORMAT}'", file.format)));
    }
    if file.version != MODEL_VERSION {
        return Err(ReflError::input("model version", format!("is {}, this build reads version {MODEL_VERSION}", file.version)));
    }
    let resolver = Resolver { file, names: file.parameters.keys().cloned().collect() };
    let (mut values, mut bounds, mut vary) = (Vec::new(), Vec::new(), Vec::new());
    for (name, p) in &file.parameters {
        let object = format!("parameter '{name}'");
        if !p.value.is_finite() {
            return Err(ReflError::input(object, format!("value must be finite, got {}", p.value)));
        }
        if let Some([lo, hi]) = p.bounds {
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(ReflError::input(object, format!("bounds [{lo}, {hi}] must be finite with lower < upper")));
            }
            if !(lo..=hi).contains(&p.value) {
                return Err(ReflError::input(object, format!("value {} is outside its bounds [{lo}, {hi}]", p.value)));
            }
        } else if p.vary {
            return Err(ReflError::input(object, "varies but has no bounds"));
        }
        values.push(p.value);
        bounds.push(p.bounds);
        vary.push(p.vary);
    }

    let mut material_names: Vec<&str> = vec!["vacuum"];
    let mut optics = vec![Optics::Vacuum];
    for (name, spec) in &file.materials {
        if name == "vacuum" {
            return Err(ReflError::input("material 'vacuum'", "is built in and cannot be redefined"));
        }
        material_names.push(name);
        optics.push(resolver.optics(name, spec)?);
    }

    if file.layers.len() < 2 {
        return Err(ReflError::input("model layers", "need at least a fronting medium and a substrate"));
    }
    crate::limits::check_count(|| "model layers".to_owned(), file.layers.len(), crate::limits::MAX_LAYERS, "layers")?;
    let mut layers = Vec::with_capacity(file.layers.len());
    for (j, l) in file.layers.iter().enumerate() {
        let object = format!("layer {j} '{}'", l.name);
        let optics = material_names
            .iter()
            .position(|m| *m == l.material)
            .ok_or_else(|| ReflError::input(&object, format!("uses material '{}', which is not in \"materials\"", l.material)))?;
        let euler_deg = match &l.euler_deg {
            None => None,
            Some(e) => Some([
                resolver.slot(&e[0], &format!("{object} euler_deg[0]"))?,
                resolver.slot(&e[1], &format!("{object} euler_deg[1]"))?,
                resolver.slot(&e[2], &format!("{object} euler_deg[2]"))?,
            ]),
        };
        layers.push(CompiledLayer {
            name: l.name.clone(),
            optics,
            thickness: resolver.opt_slot(&l.thickness, 0.0, &format!("{object} thickness"))?,
            roughness: resolver.opt_slot(&l.roughness, 0.0, &format!("{object} roughness"))?,
            density_scale: resolver.opt_slot(&l.density_scale, 1.0, &format!("{object} density_scale"))?,
            euler_deg,
        });
    }

    let mut datasets = Vec::with_capacity(file.datasets.len());
    for (i, d) in file.datasets.iter().enumerate() {
        datasets.push(compile_dataset(&resolver, i, d)?);
    }
    Ok(Compiled { names: resolver.names, values, bounds, vary, optics, layers, datasets })
}

fn compile_dataset(resolver: &Resolver<'_>, i: usize, d: &DatasetSpec) -> Result<CompiledDataset, ReflError> {
    let object = format!("dataset {i} '{}'", d.name);
    if !(d.energy_ev.is_finite() && d.energy_ev > 0.0) {
        return Err(ReflError::input(format!("{object} energy_ev"), format!("must be a positive number of eV, got {}", d.energy_ev)));
    }
    if d.q.is_empty() {
        return Err(ReflError::input(format!("{object} q"), "is empty"));
    }
    crate::limits::check_count(|| format!("{object} q"), d.q.len(), crate::limits::MAX_Q_POINTS, "points")?;
    for (name, column) in [("R", &d.r), ("dR", &d.dr), ("dQ", &d.dq)] {
        if let Some(c) = column {
            if c.len() != d.q.len() {
                return Err(ReflError::input(format!("{object} {name}"), format!("has {} values for {} q points", c.len(), d.q.len())));
            }
        }
    }
    let inst = &d.instrument;
    let resolution = match &inst.resolution {
        None | Some(ResolutionSpec::None) => CompiledResolution::None,
        Some(ResolutionSpec::ConstantDqOverQ { fwhm }) => CompiledResolution::Constant(resolver.slot(fwhm, &format!("{object} resolution fwhm"))?),
        Some(ResolutionSpec::Pointwise) => match &d.dq {
            Some(dq) => CompiledResolution::Pointwise(dq.clone()),
            None => return Err(ReflError::input(format!("{object} resolution"), "is pointwise but the dataset has no dQ column")),
        },
    };
    Ok(CompiledDataset {
        name: d.name.clone(),
        energy_ev: d.energy_ev,
        polarization: d.polarization,
        q: d.q.clone(),
        scale: resolver.opt_slot(&inst.scale, 1.0, &format!("{object} scale"))?,
        background: resolver.opt_slot(&inst.background, 0.0, &format!("{object} background"))?,
        q_offset: resolver.opt_slot(&inst.q_offset, 0.0, &format!("{object} q_offset"))?,
        energy_offset: resolver.opt_slot(&inst.energy_offset, 0.0, &format!("{object} energy_offset"))?,
        resolution,
        smearing: inst.smearing.unwrap_or_default(),
    })
}
