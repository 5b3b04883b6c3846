//! Browser: a Simulate case runs in the npm package's Worker as `blochSimulateCases` (the case
//! sent in the CLI's cases-file format, so zone-axis and Euler cases alike), on the worker of the
//! picked device (`"cpu"` f64 or `"gpu"` WebGPU f32). The UI thread only builds the case (no
//! structure matrix) and draws the answer.

use js_sys::{Array, Float64Array, Int32Array, Object};
use scatterlab_bloch::Crystal;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::simulate::{SimInputs, SimResult};
use super::simulate_run::{build_case, from_worker};
use crate::worker_client::{get, js_error, ready, set};
use crate::Device;

/// Runs `inputs`' case of `crystal` (CIF `cif`, named `name`) in the worker.
pub async fn run(name: &str, cif: &str, crystal: &Crystal, inputs: &SimInputs) -> Result<SimResult, String> {
    let start = web_time::Instant::now();
    let file = build_case(name, cif, crystal, inputs)?;
    let cases = serde_json::to_string(&file).map_err(|e| format!("the case as JSON: {e}"))?;
    let worker = ready(inputs.device).await?;
    let options = Object::new();
    let device = if inputs.device == Device::Gpu { "gpu" } else { "cpu" };
    set(&options, "device", &device.into());
    // The GPU has one propagator (Taylor, its default); the CPU runs the picked solver.
    if inputs.device == Device::Cpu {
        set(&options, "solver", &(if inputs.solver == scatterlab_bloch::solve::Solver::Eigen { "eigen" } else { "expm" }).into());
    }
    let message = Object::new();
    set(&message, "op", &"blochSimulateCases".into());
    set(&message, "cases", &cases.into());
    set(&message, "options", &options);
    let answer = JsFuture::from(worker.request(message, None)?).await.map_err(|e| js_error(&e))?;
    let first = answer.dyn_ref::<Array>().map(|a| a.get(0)).filter(|v| !v.is_undefined()).ok_or("the worker answered no case")?;
    if let Some(e) = get(&first, "error").as_string() {
        return Err(e);
    }
    let flat_hkl = get(&first, "hkl").dyn_into::<Int32Array>().map_err(|_| "the worker's hkl is not an Int32Array")?.to_vec();
    let hkl = flat_hkl.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect();
    let intensities = get(&first, "intensities").dyn_into::<Float64Array>().map_err(|_| "the worker's intensities are not a Float64Array")?.to_vec();
    from_worker(&file, crystal, inputs, hkl, &intensities, inputs.device, start.elapsed().as_secs_f64())
}
