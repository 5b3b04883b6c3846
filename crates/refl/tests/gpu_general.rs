//! The general 4×4 method on the GPU in df64 (`shaders/refl/general_df64.wgsl`) against its CPU
//! f64 twin (`scatterlab_refl::general`): |R_gpu − R_cpu| ≤ 1e-6 · R_cpu + 1e-13 on every channel
//! (R_ss, R_pp, R_sp, R_ps) of the saved refloxide tilted/biaxial cases, the uniaxial fixture
//! cases, and seeded random tilted biaxial stacks with roughness (seed printed, `SCATTERLAB_SEED`
//! replays); batched in one call like a fitter's population. A tilted model evaluates and fits on
//! the GPU: see `gpu_general_fit.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use rand::{Rng, SeedableRng};
use scatterlab_refl::cases::parse_cases;
use scatterlab_refl::general::{self, GeneralReflectivity, GeneralRequest, GeneralStack, TensorLayer};
use scatterlab_refl::Engine;

const REL_TOL: f64 = 1e-6;
const ABS_FLOOR: f64 = 1e-13;

/// Worst |gpu − cpu| / (REL_TOL · cpu + ABS_FLOOR) over all channels, with where it was, and
/// the worst plain relative error among points above the floor's scale.
fn excess(gpu: &GeneralReflectivity, cpu: &GeneralReflectivity, q: &[f64], label: &str) -> (f64, f64, String) {
    let mut worst = (0.0f64, 0.0f64, String::new());
    for (name, g, c) in [("R_ss", &gpu.r_ss, &cpu.r_ss), ("R_pp", &gpu.r_pp, &cpu.r_pp), ("R_sp", &gpu.r_sp, &cpu.r_sp), ("R_ps", &gpu.r_ps, &cpu.r_ps)] {
        assert_eq!(g.len(), c.len(), "{label} {name}");
        for (k, (x, y)) in g.iter().zip(c).enumerate() {
            let e = (x - y).abs() / (REL_TOL * y.abs() + ABS_FLOOR);
            let rel = if y.abs() > 1e-10 { (x - y).abs() / y.abs() } else { 0.0 };
            worst.1 = worst.1.max(rel);
            if e > worst.0 || e.is_nan() {
                worst.0 = e;
                worst.2 = format!("{label} {name} q[{k}] = {}: gpu {x:e} cpu {y:e}", q[k]);
            }
        }
    }
    worst
}

/// Runs the batch on both engines and returns (worst excess, worst relative, where).
fn compare(pipeline: &scatterlab_refl::gpu::ParrattGpu, curves: &[(String, GeneralStack, f64, Vec<f64>)]) -> (f64, f64, String) {
    let requests: Vec<GeneralRequest<'_>> = curves.iter().map(|(_, s, e, q)| GeneralRequest { stack: s, energy_ev: *e, q }).collect();
    let cpu = pollster::block_on(general::compute(Engine::Cpu, &requests)).unwrap();
    let gpu = pollster::block_on(general::compute(Engine::Gpu(pipeline), &requests)).unwrap();
    let mut worst = (0.0f64, 0.0f64, String::new());
    for ((label, _, _, q), (g, c)) in curves.iter().zip(gpu.iter().zip(&cpu)) {
        let w = excess(g, c, q, label);
        worst.1 = worst.1.max(w.1);
        if w.0 > worst.0 || w.0.is_nan() {
            (worst.0, worst.2) = (w.0, w.2);
        }
    }
    worst
}

fn refloxide_cases() -> Vec<(String, GeneralStack, f64, Vec<f64>)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/refloxide_general.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let floats = |x: &serde_json::Value| x.as_array().unwrap().iter().map(|y| y.as_f64().unwrap()).collect::<Vec<f64>>();
    let three = |x: &serde_json::Value| <[f64; 3]>::try_from(floats(x)).unwrap();
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let layers = c["layers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| TensorLayer {
                    thickness: l["thickness"].as_f64().unwrap(),
                    roughness: l["roughness"].as_f64().unwrap(),
                    delta: three(&l["delta"]),
                    beta: three(&l["beta"]),
                    euler_deg: three(&l["euler_deg"]),
                })
                .collect();
            (c["id"].as_str().unwrap().to_owned(), GeneralStack { layers }, c["energy_ev"].as_f64().unwrap(), floats(&c["q_inv_A"]))
        })
        .collect()
}

#[test]
fn refloxide_tilted_biaxial_cases_equal_the_cpu() {
    let Some(pipeline) = common::general_pipeline() else { return };
    let cases = refloxide_cases();
    assert_eq!(cases.len(), 12);
    let (worst, rel, at) = compare(pipeline, &cases);
    eprintln!("refloxide tilted/biaxial cases, GPU df64 vs CPU f64: worst {worst:.2e} of the allowance, worst relative {rel:.2e} ({at})");
    assert!(worst <= 1.0, "{at}");
}

#[test]
fn uniaxial_fixture_cases_equal_the_cpu() {
    let Some(pipeline) = common::general_pipeline() else { return };
    let cases = parse_cases(&common::read_fixture("refl/reference.json")).unwrap();
    let curves: Vec<_> = cases
        .iter()
        .map(|c| {
            let input = c.input.as_ref().unwrap();
            (c.id.clone(), GeneralStack::from_stack(&input.stack().unwrap()), input.energy_ev, input.q.clone())
        })
        .collect();
    let (worst, rel, at) = compare(pipeline, &curves);
    eprintln!("{} uniaxial fixture cases through the 4×4, GPU df64 vs CPU f64: worst {worst:.2e} of the allowance, worst relative {rel:.2e} ({at})", curves.len());
    assert!(worst <= 1.0, "{at}");
}

fn random_layer(rng: &mut impl Rng, thickness: f64, roughness: f64) -> TensorLayer {
    // Some layers uniaxial (a = b) or with axes in the plane of incidence (decoupled s/p).
    let mut delta: [f64; 3] = std::array::from_fn(|_| rng.gen_range(-1e-3..5e-3));
    let mut beta: [f64; 3] = std::array::from_fn(|_| if rng.gen_bool(0.1) { 0.0 } else { rng.gen_range(1e-5..3e-3) });
    if rng.gen_bool(0.3) {
        (delta[1], beta[1]) = (delta[0], beta[0]);
    }
    let euler_deg = match rng.gen_range(0..6) {
        0 => [90.0, rng.gen_range(0.0..180.0), 0.0],
        1 => [0.0; 3],
        _ => [rng.gen_range(0.0..360.0), rng.gen_range(0.0..180.0), rng.gen_range(0.0..360.0)],
    };
    TensorLayer { thickness, roughness, delta, beta, euler_deg }
}

#[test]
fn random_tilted_stacks_equal_the_cpu() {
    let Some(pipeline) = common::general_pipeline() else { return };
    let seed = scatterlab_testkit::seed("4x4 GPU df64 random stacks");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let curves: Vec<_> = (0..40)
        .map(|k| {
            let n = rng.gen_range(1..5);
            let mut layers = vec![TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0)];
            for _ in 0..n {
                let (d, s) = (rng.gen_range(5.0..300.0), if rng.gen_bool(0.4) { 0.0 } else { rng.gen_range(0.0..8.0) });
                layers.push(random_layer(&mut rng, d, s));
            }
            let s = rng.gen_range(0.0..6.0);
            layers.push(random_layer(&mut rng, 0.0, s));
            let hard = rng.gen_bool(0.25);
            let energy = if hard { rng.gen_range(5000.0..12000.0) } else { rng.gen_range(250.0..700.0) };
            let k0 = scatterlab_core::units::photon_k0(energy);
            let q_max = 2.0 * k0 * if hard { rng.gen_range(0.02..0.1) } else { rng.gen_range(0.3..0.95) };
            let q = (1..=60).map(|i| q_max * i as f64 / 60.0).collect();
            (format!("stack {k} ({energy:.0} eV)"), GeneralStack { layers }, energy, q)
        })
        .collect();
    let (worst, rel, at) = compare(pipeline, &curves);
    eprintln!("random tilted stacks (seed {seed}), GPU df64 vs CPU f64: worst {worst:.2e} of the allowance, worst relative {rel:.2e} ({at})");
    assert!(worst <= 1.0, "seed {seed}: {at}");
}

#[test]
fn bad_input_is_a_typed_error_naming_the_curve() {
    let Some(pipeline) = common::general_pipeline() else { return };
    let good = GeneralStack { layers: vec![TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0), TensorLayer::isotropic(0.0, 2.0, 1e-3, 1e-4)] };
    let q = [0.01, 0.02];
    let bad_q = [0.01, -1.0];
    let requests = [GeneralRequest { stack: &good, energy_ev: 300.0, q: &q }, GeneralRequest { stack: &good, energy_ev: 300.0, q: &bad_q }];
    let err = pollster::block_on(general::compute(Engine::Gpu(pipeline), &requests)).unwrap_err().to_string();
    assert!(err.contains("curve 1") && err.contains("q[1]"), "{err}");
}
