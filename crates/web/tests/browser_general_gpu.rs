//! The 4×4 general method's df64 kernel (`shaders/refl/general_df64.wgsl`) on the page's WebGPU
//! (SwiftShader in CI's headless Chromium) against the CPU f64 4×4 in the same wasm: refloxide's
//! 12 tilted/biaxial cases and seeded random tilted stacks with roughness, every channel within
//! 1e-6·R + 1e-13 (issue 21's gate, as `crates/refl/tests/gpu_general.rs` on lavapipe).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_core::DeviceKind;
use scatterlab_refl::general::{self, GeneralReflectivity, GeneralRequest, GeneralStack, TensorLayer};
use scatterlab_refl::Engine;
use scatterlab_web::Session;
use wasm_bindgen_test::*;

mod common;
use common::Rng;

wasm_bindgen_test_configure!(run_in_browser);

const REL_TOL: f64 = 1e-6;
const ABS_FLOOR: f64 = 1e-13;
/// refloxide's general_reflectivity cases (saved by `crates/refl/tests/data/make_refloxide_general.py`).
const REFLOXIDE: &str = include_str!("../../refl/tests/data/refloxide_general.json");

/// Worst |gpu − cpu| / (1e-6·|cpu| + 1e-13) over the four channels of every curve, and where.
fn worst_excess(gpu: &[GeneralReflectivity], cpu: &[GeneralReflectivity], labels: &[String]) -> (f64, String) {
    let mut worst = (0.0f64, String::new());
    for ((g, c), label) in gpu.iter().zip(cpu).zip(labels) {
        for (name, a, b) in [("R_ss", &g.r_ss, &c.r_ss), ("R_pp", &g.r_pp, &c.r_pp), ("R_sp", &g.r_sp, &c.r_sp), ("R_ps", &g.r_ps, &c.r_ps)] {
            assert_eq!(a.len(), b.len(), "{label} {name}");
            for (k, (x, y)) in a.iter().zip(b).enumerate() {
                let e = (x - y).abs() / (REL_TOL * y.abs() + ABS_FLOOR);
                if e > worst.0 || e.is_nan() {
                    worst = (e, format!("{label} {name} point {k}: gpu {x:e} cpu {y:e}"));
                }
            }
        }
    }
    worst
}

async fn both(session: &Session, curves: &[(String, GeneralStack, f64, Vec<f64>)]) -> (f64, String) {
    let requests: Vec<GeneralRequest<'_>> = curves.iter().map(|(_, s, e, q)| GeneralRequest { stack: s, energy_ev: *e, q }).collect();
    let cpu = general::compute(Engine::Cpu, &requests).await.unwrap();
    let gpu = general::compute(session.engine(), &requests).await.unwrap_or_else(|e| panic!("df64 4×4 on WebGPU: {e}"));
    let labels: Vec<String> = curves.iter().map(|c| c.0.clone()).collect();
    worst_excess(&gpu, &cpu, &labels)
}

fn refloxide_cases() -> Vec<(String, GeneralStack, f64, Vec<f64>)> {
    let v: serde_json::Value = serde_json::from_str(REFLOXIDE).unwrap();
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

/// A random tilted layer: biaxial or uniaxial, some absorption-free, Euler angles anywhere.
fn random_layer(rng: &mut Rng, thickness: f64, roughness: f64) -> TensorLayer {
    let mut delta: [f64; 3] = std::array::from_fn(|_| rng.range(-1e-3, 5e-3));
    let mut beta: [f64; 3] = std::array::from_fn(|_| if rng.unit() < 0.1 { 0.0 } else { rng.range(1e-5, 3e-3) });
    if rng.unit() < 0.3 {
        (delta[1], beta[1]) = (delta[0], beta[0]);
    }
    let euler_deg = [rng.range(0.0, 360.0), rng.range(0.0, 180.0), rng.range(0.0, 360.0)];
    TensorLayer { thickness, roughness, delta, beta, euler_deg }
}

#[wasm_bindgen_test]
async fn df64_4x4_on_webgpu_equals_the_cpu_f64() {
    let session = Session::new(DeviceKind::Gpu).await.unwrap_or_else(|e| panic!("no WebGPU session: {e}"));
    let cases = refloxide_cases();
    assert_eq!(cases.len(), 12);
    let (worst, at) = both(&session, &cases).await;
    console_log!("refloxide tilted/biaxial cases, WebGPU df64 vs CPU f64: worst {worst:.2e} of the allowance ({at})");
    assert!(worst <= 1.0, "{at}");

    // Seeded (splitmix64) so a failure replays: the seed is printed.
    let seed = 0x5eed_4a4a_u64 ^ (js_sys::Date::now() as u64);
    console_log!("random tilted stacks: seed {seed}");
    let mut rng = Rng(seed);
    let curves: Vec<_> = (0..16)
        .map(|k| {
            let n = 1 + (rng.next_u64() % 4) as usize;
            let mut layers = vec![TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0)];
            for _ in 0..n {
                let rough = if rng.unit() < 0.4 { 0.0 } else { rng.range(0.0, 8.0) };
                let d = rng.range(5.0, 300.0);
                layers.push(random_layer(&mut rng, d, rough));
            }
            let s = rng.range(0.0, 6.0);
            layers.push(random_layer(&mut rng, 0.0, s));
            let hard = rng.unit() < 0.25;
            let energy = if hard { rng.range(5000.0, 12000.0) } else { rng.range(250.0, 700.0) };
            let k0 = scatterlab_core::units::photon_k0(energy);
            let q_max = 2.0 * k0 * if hard { rng.range(0.02, 0.1) } else { rng.range(0.3, 0.95) };
            let q = (1..=40).map(|i| q_max * i as f64 / 40.0).collect();
            (format!("stack {k} ({energy:.0} eV)"), GeneralStack { layers }, energy, q)
        })
        .collect();
    let (worst, at) = both(&session, &curves).await;
    console_log!("random tilted stacks (seed {seed}), WebGPU df64 vs CPU f64: worst {worst:.2e} of the allowance ({at})");
    assert!(worst <= 1.0, "seed {seed}: {at}");
}
