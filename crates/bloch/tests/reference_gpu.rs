//! The GPU path (`gpu::run_gpu`: f64 structure matrices, f32 Taylor propagation in
//! `shaders/bloch/propagate.wgsl`) on every case of `shared/fixtures/bloch/reference.json`: the
//! beam set equals the fixture's, intensities within the GPU gate of 1e-4 of `I_ref`
//! (absorptive and rocking cases included), and with the abTEM switch within 1e-4 of `I_abtem`.
//! Runs on lavapipe here; SCATTERLAB_SKIP_GPU=1 skips it on a machine without any adapter.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_bloch::gpu::{run_gpu, PropagateGpu};
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::simulate::parse_cases;
use scatterlab_bloch::{parse_cif, StructureFactors};
use serde_json::Value;

const GPU_TOL: f64 = 1e-4;

fn fixture_text() -> String {
    scatterlab_testkit::read_fixture_text("bloch/reference.json")
}

fn hkl_list(v: &Value) -> Vec<[i32; 3]> {
    v.as_array().unwrap().iter().map(|h| [0, 1, 2].map(|i| h[i].as_i64().unwrap() as i32)).collect()
}

#[test]
fn every_case_within_1e_4_on_the_gpu() {
    let Some(ctx) = scatterlab_testkit::gpu_or_skip("bloch reference on the GPU", || pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default()))) else { return };
    let gpu = pollster::block_on(PropagateGpu::new(&ctx)).unwrap();
    let text = fixture_text();
    let inputs = parse_cases(&text).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    for (case, r) in inputs.cases.iter().zip(reference["cases"].as_array().unwrap()) {
        assert_eq!(r["id"], case.id.as_str());
        let crystal = parse_cif(&case.crystal, &inputs.crystals[&case.crystal].cif).unwrap();
        let table = StructureFactors::compute(&crystal, case.grid_radius(), case.energy_ev, case.absorption).unwrap();
        let simulation = case.simulation(&crystal).unwrap();
        let want_hkl = hkl_list(&r["beams"]["hkl"]);
        let mut checks = vec![(Conventions::DiffBloch, "I_ref")];
        if r["intensities"]["I_abtem"].is_array() {
            checks.push((Conventions::Abtem, "I_abtem"));
        }
        for (conventions, key) in checks {
            let start = std::time::Instant::now();
            let pattern = pollster::block_on(run_gpu(&simulation, &table, conventions, &gpu)).unwrap();
            let mut sorted = want_hkl.clone();
            sorted.sort_unstable();
            assert_eq!(pattern.hkl, sorted, "{}: beam set", case.id);
            let mut worst: f64 = 0.0;
            for (t, row) in r["intensities"][key].as_array().unwrap().iter().enumerate() {
                for (hkl, want) in want_hkl.iter().zip(row.as_array().unwrap()) {
                    let i = pattern.hkl.iter().position(|h| h == hkl).unwrap();
                    worst = worst.max((pattern.intensities[t][i] - want.as_f64().unwrap()).abs());
                }
            }
            println!("gpu {} {key}: {} beams, max |I − {key}| = {worst:.2e} ({:.2} s)", case.id, pattern.hkl.len(), start.elapsed().as_secs_f64());
            assert!(worst <= GPU_TOL, "{} vs {key}: {worst:.3e}", case.id);
        }
    }
}
