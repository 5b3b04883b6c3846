//! Reading what the user drops or picks — a model JSON, a fixture fit task, an ORSO `.ort` file or
//! text columns — and attaching measured data to a model's datasets.

use std::collections::BTreeMap;

use scatterlab_core::units::HC_EV_ANGSTROM;
use scatterlab_refl::data::{parse_columns, Dataset};
use scatterlab_refl::fit::task::{is_fit_task, task_to_model};
use scatterlab_refl::model::{
    DatasetSpec, EnergyValue, InstrumentSpec, LayerSpec, MaterialSpec, Model, ModelFile, ParamSpec, Polarization, ResolutionSpec, Value, MODEL_FORMAT, MODEL_VERSION,
};
use scatterlab_refl::orso::{parse_orso, OrsoDataset};

use crate::ReflInputs;

/// What a file turned out to be.
#[derive(Debug)]
pub enum Loaded {
    /// A model (from a model JSON or a converted fit task), checked by `Model::new`.
    Model(Box<Model>),
    /// Measured curves to attach to the current model.
    Data(Vec<LoadedData>),
}

/// One measured curve and, when the file says, its photon energy.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedData {
    /// The columns.
    pub data: Dataset,
    /// Photon energy from the file's header, eV.
    pub energy_ev: Option<f64>,
}

/// Every polarisation a dataset can have, in selector order.
pub const POLARIZATIONS: [Polarization; 6] = [Polarization::S, Polarization::P, Polarization::Ss, Polarization::Pp, Polarization::Sp, Polarization::Ps];

/// The lower-case name of a polarisation, as in the model file.
pub fn polarization_name(p: Polarization) -> &'static str {
    match p {
        Polarization::S => "s",
        Polarization::P => "p",
        Polarization::Ss => "ss",
        Polarization::Pp => "pp",
        Polarization::Sp => "sp",
        Polarization::Ps => "ps",
    }
}

/// Reads a file by its content: JSON (`{`) is a fit task or a model; `.ort` or an ORSO header is
/// ORSO; anything else is text columns `q R [dR [dQ]]`. Errors name the file.
pub fn classify(name: &str, bytes: &[u8]) -> Result<Loaded, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| format!("{name}: not UTF-8 text"))?;
    let at = |e: scatterlab_refl::ReflError| format!("{name}: {e}");
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') {
        let model = if is_fit_task(text) { Model::new(task_to_model(text).map_err(at)?).map_err(at)? } else { Model::from_json(text).map_err(at)? };
        return Ok(Loaded::Model(Box::new(model)));
    }
    if name.to_lowercase().ends_with(".ort") || trimmed.starts_with("# # ORSO") {
        let sets = parse_orso(text, name).map_err(at)?;
        let n = sets.len();
        let data = sets
            .into_iter()
            .enumerate()
            .map(|(i, set)| {
                let mut data = set.data.clone();
                data.name = match (set.name(), n) {
                    ("", 1) => name.to_owned(),
                    ("", _) => format!("{name} #{}", i + 1),
                    (own, _) => format!("{name}: {own}"),
                };
                LoadedData { energy_ev: orso_energy(&set), data }
            })
            .collect();
        return Ok(Loaded::Data(data));
    }
    let data = parse_columns(text, name).map_err(at)?;
    Ok(Loaded::Data(vec![LoadedData { data, energy_ev: None }]))
}

/// The photon energy an ORSO header gives through its wavelength (Å or nm), if any
/// (`data_source.measurement.instrument_settings.wavelength`).
fn orso_energy(set: &OrsoDataset) -> Option<f64> {
    let w = set.header.get("data_source")?.get("measurement")?.get("instrument_settings")?.get("wavelength")?;
    let magnitude = w.get("magnitude")?.as_f64()?;
    let angstrom = match w.get("unit").and_then(|u| u.as_str()).unwrap_or("angstrom") {
        "angstrom" | "A" | "Angstrom" => magnitude,
        "nm" => 10.0 * magnitude,
        _ => return None,
    };
    (angstrom > 0.0).then(|| HC_EV_ANGSTROM / angstrom)
}

/// Where attached data goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A new dataset appended to the model.
    New,
    /// Replaces the q, R, dR, dQ of this dataset (keeping its energy, polarisation, instrument).
    Replace(usize),
}

/// A copy of `file` with `data` attached. Data without dR get dR = `relative_dr` × |R|. A new
/// dataset copies the instrument of a dataset at the same energy (else the first); with a dQ
/// column its resolution becomes pointwise.
pub fn attach(file: &ModelFile, data: &Dataset, energy_ev: f64, polarization: Polarization, target: Target, relative_dr: f64) -> ModelFile {
    let mut out = file.clone();
    let dr = data.dr.clone().unwrap_or_else(|| data.r.iter().map(|r| relative_dr * r.abs()).collect());
    let index = match target {
        Target::Replace(i) if i < out.datasets.len() => i,
        _ => {
            let template = file.datasets.iter().find(|d| (d.energy_ev - energy_ev).abs() < 1e-3).or(file.datasets.first());
            let mut instrument = template.map_or_else(no_instrument, |d| d.instrument.clone());
            if instrument.resolution == Some(ResolutionSpec::Pointwise) {
                instrument.resolution = None;
            }
            out.datasets.push(DatasetSpec { name: data.name.clone(), energy_ev, polarization, q: Vec::new(), r: None, dr: None, dq: None, instrument });
            out.datasets.len() - 1
        }
    };
    let d = &mut out.datasets[index];
    d.q.clone_from(&data.q);
    d.r = Some(data.r.clone());
    d.dr = Some(dr);
    d.dq.clone_from(&data.dq);
    if data.dq.is_some() {
        d.instrument.resolution = Some(ResolutionSpec::Pointwise);
    } else if d.instrument.resolution == Some(ResolutionSpec::Pointwise) {
        d.instrument.resolution = None;
    }
    out
}

fn no_instrument() -> InstrumentSpec {
    InstrumentSpec { scale: None, background: None, q_offset: None, energy_offset: None, resolution: None, smearing: None }
}

/// A starting model from the simulation inputs: one uniaxial material per layer with the table's
/// fixed optical constants; film thicknesses, roughnesses and the substrate roughness vary within
/// generous bounds; scale and background exist but are fixed. Two datasets (s and p) at the
/// panel's energy and q grid, without data yet.
pub fn model_from_inputs(inputs: &ReflInputs) -> ModelFile {
    let n = inputs.stack.layers.len();
    let mut parameters = BTreeMap::new();
    let mut param = |name: String, value: f64, bounds: [f64; 2], vary: bool| {
        parameters.insert(name.clone(), ParamSpec { value, bounds: Some(bounds), vary });
        Value::Param(name)
    };
    let mut materials = BTreeMap::new();
    let mut layers = Vec::with_capacity(n);
    for (j, l) in inputs.stack.layers.iter().enumerate() {
        let (name, key) = match j {
            0 => ("fronting".to_owned(), "fronting".to_owned()),
            _ if j + 1 == n => ("substrate".to_owned(), "substrate".to_owned()),
            _ => (format!("film {j}"), format!("film{j}")),
        };
        let fixed = |v: f64| EnergyValue::Same(Value::Number(v));
        materials.insert(key.clone(), MaterialSpec::Uniaxial { delta_o: fixed(l.delta_o), beta_o: fixed(l.beta_o), delta_e: fixed(l.delta_e), beta_e: fixed(l.beta_e) });
        let is_film = j > 0 && j + 1 < n;
        let d = l.thickness;
        let thickness = is_film.then(|| param(format!("{key}_thick"), d, [0.5 * d, 1.5 * d + 10.0], true));
        let s = l.roughness;
        let roughness = (j > 0).then(|| param(format!("{key}_rough"), s, [0.0, (3.0 * s).max(10.0)], true));
        layers.push(LayerSpec { name, material: key, thickness, roughness, density_scale: None, euler_deg: None });
    }
    let scale = param("scale".into(), 1.0, [0.5, 2.0], false);
    let background = param("background".into(), 0.0, [0.0, 1e-5], false);
    let resolution = (inputs.resolution_pct > 0.0).then(|| ResolutionSpec::ConstantDqOverQ { fwhm: Value::Number(inputs.resolution_pct / 100.0) });
    let instrument = InstrumentSpec { scale: Some(scale), background: Some(background), resolution, ..no_instrument() };
    let datasets = [Polarization::S, Polarization::P]
        .into_iter()
        .map(|p| DatasetSpec {
            name: format!("{} eV {}", inputs.energy_ev, polarization_name(p)),
            energy_ev: inputs.energy_ev,
            polarization: p,
            q: inputs.valid_q_grid(),
            r: None,
            dr: None,
            dq: None,
            instrument: instrument.clone(),
        })
        .collect();
    ModelFile { format: MODEL_FORMAT.into(), version: MODEL_VERSION, name: "from the layer table".into(), parameters, materials, layers, datasets }
}
