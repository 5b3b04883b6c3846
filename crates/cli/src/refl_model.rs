//! `scatterlab refl compute --model`: evaluate a model file on its datasets' q grids (or one given grid).

use std::path::Path;

use scatterlab_core::{DeviceKind, Provenance};
use scatterlab_refl::input::{parse_json, read_file_text};
use scatterlab_refl::limits::MAX_Q_POINTS;
use scatterlab_refl::model::{Model, ModelFile, Polarization};
use serde::Serialize;

/// One evaluated curve.
#[derive(Serialize)]
struct CurveOut {
    name: String,
    energy_ev: f64,
    polarization: Polarization,
    #[serde(rename = "q_inv_A")]
    q: Vec<f64>,
    #[serde(rename = "R")]
    r: Vec<f64>,
}

/// The results file of a model evaluation.
#[derive(Serialize)]
struct ModelResults {
    model: String,
    device: String,
    backend: String,
    parameters: std::collections::BTreeMap<String, f64>,
    datasets: Vec<CurveOut>,
    provenance: Provenance,
}

/// Parses `start:stop:n` into n evenly spaced q values (inclusive ends). n is checked against
/// [`MAX_Q_POINTS`] before anything is allocated.
pub fn parse_grid(text: &str) -> Result<Vec<f64>, String> {
    let parts: Vec<&str> = text.split(':').collect();
    let bad = || format!("--q-grid '{text}': expected start:stop:n, e.g. 0.01:0.25:200");
    let [a, b, n] = parts.as_slice() else { return Err(bad()) };
    let (a, b): (f64, f64) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
    // Parsed as u128 so that 2^64 − 1 and beyond still get the budget message, not "expected …".
    let n: u128 = n.trim().parse().map_err(|_| bad())?;
    if n > MAX_Q_POINTS as u128 {
        return Err(format!("--q-grid '{text}': {n} points is more than the limit of {MAX_Q_POINTS} points per curve"));
    }
    let n = n as usize;
    if !(a.is_finite() && b.is_finite() && a < b && n >= 2) {
        return Err(bad());
    }
    Ok((0..n).map(|i| a + (b - a) * i as f64 / (n - 1) as f64).collect())
}

/// Reads the model, evaluates it on `device`, writes JSON to `out` (or stdout).
pub fn run(model_path: &Path, grid: Option<&str>, device: DeviceKind, precision: crate::gpu_device::GpuPrecision, out: Option<&Path>) -> Result<(), String> {
    let text = read_file_text(model_path).map_err(|e| e.to_string())?;
    let at = |e: scatterlab_refl::ReflError| format!("{}: {e}", model_path.display());
    let mut file: ModelFile = parse_json(&text, "model file").map_err(at)?;
    if let Some(grid) = grid {
        let q = parse_grid(grid)?;
        for d in &mut file.datasets {
            (d.q, d.r, d.dr, d.dq) = (q.clone(), None, None, None);
        }
    }
    let model = Model::new(file).map_err(at)?;
    let gpu = crate::gpu_device::reflectivity_pipeline(device)?;
    let engine = crate::gpu_device::reflectivity_engine(gpu.as_ref(), precision)?;
    // Tilted/biaxial models run the df64 4×4 kernel on the GPU; uniaxial ones the f32 recursion,
    // or the same df64 4×4 kernel with --precision df64.
    let accumulation = if gpu.is_some() && model.needs_general() { "df64" } else { engine.precision() };
    let backend = match &gpu {
        None => if model.needs_general() { "cpu f64 4x4" } else { "cpu f64 recursion" }.to_owned(),
        Some(p) => format!("{} {}", p.context().describe(), if accumulation == "df64" { "df64 4x4" } else { "f32" }),
    };
    let values = model.values().to_vec();
    let curves = pollster::block_on(model.evaluate(engine, &[&values])).map_err(at)?.remove(0);
    let datasets = model
        .datasets()
        .iter()
        .zip(curves)
        .map(|(d, r)| CurveOut { name: d.name.to_owned(), energy_ev: d.energy_ev, polarization: d.polarization, q: d.q.to_vec(), r })
        .collect::<Vec<_>>();
    let n_points = datasets.iter().map(|d| d.r.len()).sum();
    let provenance = Provenance::new(text.as_bytes(), vec![n_points], "f64", device, &backend, accumulation);
    let results = ModelResults {
        model: model.file().name.clone(),
        device: device.name().to_owned(),
        backend,
        parameters: model.parameter_names().iter().cloned().zip(values).collect(),
        datasets,
        provenance,
    };
    let json = serde_json::to_string(&results).map_err(|e| e.to_string())?;
    match out {
        Some(path) => std::fs::write(path, json).map_err(|e| format!("cannot write {}: {e}", path.display())),
        None => {
            println!("{json}");
            Ok(())
        }
    }
}
