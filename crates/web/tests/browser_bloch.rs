//! The Bloch-wave propagation kernel (`shaders/bloch/propagate.wgsl`) on the browser's software
//! WebGPU adapter (headless Chromium, SwiftShader), run by `scripts/test-browser.sh`: the
//! fixture's Si-200kV-00 case (169 beams, five thicknesses) through `run_gpu` within the issue's
//! GPU gate of 1e-4 of `I_ref`, and within 1e-4 of the f64 CPU solver in the same wasm.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_bloch::gpu::{run_gpu, PropagateGpu};
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::simulate::parse_cases;
use scatterlab_bloch::{parse_cif, StructureFactors};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const FIXTURE: &str = include_str!("../../../../shared/fixtures/bloch/reference.json");
const GPU_TOL: f64 = 1e-4;

#[wasm_bindgen_test]
async fn si_case_on_webgpu_matches_i_ref() {
    let ctx = scatterlab_gpu::GpuContext::new(&Default::default()).await.unwrap_or_else(|e| panic!("no WebGPU adapter: {e}"));
    let gpu = PropagateGpu::new(&ctx).await.expect("propagation pipeline");
    let inputs = parse_cases(FIXTURE).expect("cases");
    let reference: serde_json::Value = serde_json::from_str(FIXTURE).expect("fixture JSON");
    let case = inputs.cases.iter().find(|c| c.id == "Si-200kV-00").expect("Si case");
    let r = reference["cases"].as_array().and_then(|cs| cs.iter().find(|c| c["id"] == "Si-200kV-00")).expect("Si reference");
    let crystal = parse_cif(&case.crystal, &inputs.crystals[&case.crystal].cif).expect("CIF");
    let table = StructureFactors::compute(&crystal, case.grid_radius(), case.energy_ev, case.absorption).expect("F");
    let simulation = case.simulation(&crystal).expect("simulation");
    let pattern = run_gpu(&simulation, &table, Conventions::DiffBloch, &gpu).await.expect("WebGPU run");
    let cpu = simulation.run(&table, Method::default()).expect("CPU run");
    assert_eq!(pattern.hkl, cpu.hkl);
    let (mut to_ref, mut to_cpu) = (0.0f64, 0.0f64);
    let want_hkl = r["beams"]["hkl"].as_array().expect("hkl");
    for (t, row) in r["intensities"]["I_ref"].as_array().expect("I_ref").iter().enumerate() {
        for (h, want) in want_hkl.iter().zip(row.as_array().expect("row")) {
            let hkl = [0, 1, 2].map(|i| h[i].as_i64().unwrap_or(0) as i32);
            let i = pattern.hkl.iter().position(|x| *x == hkl).expect("beam present");
            to_ref = to_ref.max((pattern.intensities[t][i] - want.as_f64().unwrap_or(f64::NAN)).abs());
            to_cpu = to_cpu.max((pattern.intensities[t][i] - cpu.intensities[t][i]).abs());
        }
    }
    console_log!("bloch: Si-200kV-00 on WebGPU {}: {} beams, max |I − I_ref| = {to_ref:.2e}, max |I − CPU| = {to_cpu:.2e}", ctx.describe(), pattern.hkl.len());
    assert!(to_ref <= GPU_TOL && to_cpu <= GPU_TOL, "{to_ref} / {to_cpu}");
}
