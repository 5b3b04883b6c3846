//! The fixtures' fit-task format (`refl-oracle-v1-fit`) turned into a model file.
//!
//! Only the inputs of a task are read: `stack_order`, `bounds`, `fixed` and the datasets' `energy_ev`,
//! `pol`, `q_inv_A`, `R`, `R_err`. The struct below has no field for `truth`, `chi2_at_truth` or
//! `R_true`, so serde skips them unread: they exist only to judge a fit.
//!
//! Naming rule of a task (shared/fixtures/refl/README.md): a layer called `film` has parameters
//! `film_thick`, `film_rough` and per-energy optics `film_delta_o_<tag>` … where `<tag>` is the energy
//! with `.` written `p` (`285p1`); a parameter absent from `bounds` is looked up in `fixed`.
//! Layers without free optics take fixed constants `<Material>_delta`/`_beta` from
//! `fixed["optical_constants_<E>eV"]`; the material is the word of the layer name that is a key
//! prefix there (`substrate Si` → `Si`), or else the one material left (`oxide` → `SiO2`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;

use crate::model::{DatasetSpec, EnergyValue, InstrumentSpec, LayerSpec, MaterialSpec, ModelFile, ParamSpec, Polarization, Value, MODEL_FORMAT, MODEL_VERSION};
use crate::ReflError;

/// The `format` string of a fit task.
pub const TASK_FORMAT: &str = "refl-oracle-v1-fit";

#[derive(Deserialize)]
struct TaskDataset {
    energy_ev: f64,
    pol: String,
    #[serde(rename = "q_inv_A")]
    q: Vec<f64>,
    #[serde(rename = "R")]
    r: Vec<f64>,
    #[serde(rename = "R_err")]
    r_err: Vec<f64>,
}

#[derive(Deserialize)]
struct Task {
    format: String,
    stack_order: Vec<String>,
    bounds: BTreeMap<String, [f64; 2]>,
    fixed: BTreeMap<String, Json>,
    datasets: Vec<TaskDataset>,
}

/// The energy tag of parameter names: 285.1 → `285p1`, 250 → `250`.
pub fn energy_tag(energy_ev: f64) -> String {
    let text = format!("{energy_ev}");
    text.strip_suffix(".0").unwrap_or(&text).replace('.', "p")
}

/// Whether `text` is a fit task (by its `format`).
pub fn is_fit_task(text: &str) -> bool {
    // Only `format` is read (the rest skipped unbuilt): no document tree of a large file in memory.
    #[derive(Deserialize)]
    struct Head {
        format: Option<String>,
    }
    serde_json::from_str::<Head>(text).is_ok_and(|h| h.format.as_deref() == Some(TASK_FORMAT))
}

/// Converts a fit task into a model file. Free parameters start at the middle of their bounds.
pub fn task_to_model(text: &str) -> Result<ModelFile, ReflError> {
    let task: Task = crate::input::parse_json(text, "fit task")?;
    if task.format != TASK_FORMAT {
        return Err(ReflError::input("fit task format", format!("is '{}', expected '{TASK_FORMAT}'", task.format)));
    }
    let mut parameters = BTreeMap::new();
    for (name, &[lo, hi]) in &task.bounds {
        parameters.insert(name.clone(), ParamSpec { value: 0.5 * (lo + hi), bounds: Some([lo, hi]), vary: true });
    }
    let number = |key: &str| task.fixed.get(key).and_then(Json::as_f64);
    let value_of = |name: &str| -> Option<Value> {
        if task.bounds.contains_key(name) {
            Some(Value::Param(name.to_owned()))
        } else {
            number(name).map(Value::Number)
        }
    };
    let mut energies: Vec<f64> = Vec::new();
    for d in &task.datasets {
        if !energies.iter().any(|e| (e - d.energy_ev).abs() < 1e-6) {
            energies.push(d.energy_ev);
        }
    }
    let fixed_optics = |energy: f64| -> Option<&serde_json::Map<String, Json>> {
        task.fixed.iter().find_map(|(k, v)| {
            let e: f64 = k.strip_prefix("optical_constants_")?.strip_suffix("eV")?.parse().ok()?;
            ((e - energy).abs() < 1e-6).then_some(v.as_object()).flatten()
        })
    };
    let fixed_materials: Vec<String> =
        energies.first().and_then(|&e| fixed_optics(e)).map(|m| m.keys().filter_map(|k| k.strip_suffix("_delta").map(str::to_owned)).collect()).unwrap_or_default();

    let mut materials = BTreeMap::new();
    let mut layers = Vec::new();
    let mut used: Vec<String> = Vec::new();
    let n_layers = task.stack_order.len();
    for (j, entry) in task.stack_order.iter().enumerate() {
        let key = entry.split_whitespace().next().unwrap_or(entry).to_lowercase();
        if j == 0 {
            layers.push(LayerSpec { name: entry.clone(), material: "vacuum".into(), thickness: None, roughness: None, density_scale: None, euler_deg: None });
            continue;
        }
        let is_substrate = j + 1 == n_layers;
        let thickness = if is_substrate { None } else { Some(value_of(&format!("{key}_thick")).ok_or_else(|| missing(entry, &format!("{key}_thick")))?) };
        let roughness = value_of(&format!("{key}_rough")).or_else(|| is_substrate.then(|| value_of("substrate_rough")).flatten());
        let roughness = Some(roughness.ok_or_else(|| missing(entry, &format!("{key}_rough")))?);
        let material = if task.bounds.keys().any(|k| k.starts_with(&format!("{key}_delta_o_"))) {
            let per = |what: &str| -> Result<EnergyValue, ReflError> {
                let mut map = BTreeMap::new();
                for &e in &energies {
                    let name = format!("{key}_{what}_{}", energy_tag(e));
                    map.insert(format!("{e}"), value_of(&name).ok_or_else(|| missing(entry, &name))?);
                }
                Ok(EnergyValue::PerEnergy(map))
            };
            let spec = MaterialSpec::Uniaxial { delta_o: per("delta_o")?, beta_o: per("beta_o")?, delta_e: per("delta_e")?, beta_e: per("beta_e")? };
            materials.insert(key.clone(), spec);
            key.clone()
        } else {
            let words: Vec<&str> = entry.split_whitespace().collect();
            let name = fixed_materials
                .iter()
                .find(|m| words.contains(&m.as_str()))
                .or_else(|| fixed_materials.iter().find(|m| !used.contains(m) && !task.stack_order.iter().any(|s| s.split_whitespace().any(|w| w == m.as_str()))))
                .cloned()
                .ok_or_else(|| ReflError::input(format!("fit task layer '{entry}'"), "has no free optics and no fixed optical constants"))?;
            used.push(name.clone());
            let per = |what: &str| -> Result<EnergyValue, ReflError> {
                let mut map = BTreeMap::new();
                for &e in &energies {
                    let v = fixed_optics(e)
                        .and_then(|m| m.get(&format!("{name}_{what}")))
                        .and_then(Json::as_f64)
                        .ok_or_else(|| missing(entry, &format!("optical_constants_{e}eV {name}_{what}")))?;
                    map.insert(format!("{e}"), Value::Number(v));
                }
                Ok(EnergyValue::PerEnergy(map))
            };
            materials.insert(name.clone(), MaterialSpec::Isotropic { delta: per("delta")?, beta: per("beta")? });
            name
        };
        layers.push(LayerSpec { name: entry.clone(), material, thickness, roughness, density_scale: None, euler_deg: None });
    }

    let instrument = InstrumentSpec {
        scale: Some(value_of("scale").unwrap_or(Value::Number(1.0))),
        background: Some(value_of("background").unwrap_or(Value::Number(0.0))),
        q_offset: None,
        energy_offset: None,
        resolution: None,
        smearing: None,
    };
    let mut datasets = Vec::with_capacity(task.datasets.len());
    for (i, d) in task.datasets.iter().enumerate() {
        let polarization = match d.pol.as_str() {
            "s" => Polarization::S,
            "p" => Polarization::P,
            other => return Err(ReflError::input(format!("fit task dataset {i} pol"), format!("'{other}' is not s or p"))),
        };
        datasets.push(DatasetSpec {
            name: format!("{} eV {}", d.energy_ev, d.pol),
            energy_ev: d.energy_ev,
            polarization,
            q: d.q.clone(),
            r: Some(d.r.clone()),
            dr: Some(d.r_err.clone()),
            dq: None,
            instrument: instrument.clone(),
        });
    }
    Ok(ModelFile { format: MODEL_FORMAT.into(), version: MODEL_VERSION, name: "fit task".into(), parameters, materials, layers, datasets })
}

fn missing(layer: &str, what: &str) -> ReflError {
    ReflError::input(format!("fit task layer '{layer}'"), format!("needs '{what}' in bounds or fixed"))
}
