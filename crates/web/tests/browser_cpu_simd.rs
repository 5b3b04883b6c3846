//! Browser test of the CPU recursion's wasm simd128 path (`scatterlab_refl::cpu`, f64x2
//! intrinsics chosen at compile time with `+simd128`, scripts/env.sh): on fresh pseudo-random
//! stacks, in Chromium, it must equal the plain-code lanes bit for bit and the scalar f64
//! reference within the native CPU tolerance (1e-12·R, crates/refl/tests/invariants.rs).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_refl::{cpu, CurveRequest, Layer, Stack};
use wasm_bindgen_test::*;

mod common;
use common::Rng;

wasm_bindgen_test_configure!(run_in_browser);

/// The vectorised CPU path against the scalar reference (the native test's gate).
const REFERENCE_REL_TOL: f64 = 1e-12;

/// A random curve: soft X-ray uniaxial films near the carbon edge or hard X-ray stacks, vacuum on
/// top, `n_films` films (some of zero thickness, some without roughness or absorption), q counts
/// that leave short tail blocks, q across (0, 2k0) including total reflection. `thin`: the films
/// are 0.005–0.3 Å slabs of a finely sliced profile, most of whose phases take the lanes' short
/// Taylor series (`exp_small`, |2 k_z d| ≤ 1/8 over the curve).
fn random_curve(rng: &mut Rng, n_films: usize, thin: bool) -> (f64, Vec<f64>, Stack) {
    let soft = rng.unit() < 0.5;
    let (energy, delta_range, q_frac_max) = if soft { (rng.range(250.0, 320.0), (1e-3, 7e-3), 0.9) } else { (rng.range(5_000.0, 18_000.0), (5e-6, 5e-5), 0.06) };
    let k0 = scatterlab_core::units::photon_k0(energy);
    let mut layers = vec![Layer::VACUUM];
    for j in 0..=n_films {
        let substrate = j == n_films;
        let delta_o = rng.log_range(delta_range.0, delta_range.1);
        let beta_o = if rng.unit() < 0.15 { 0.0 } else { delta_o * rng.log_range(0.01, 0.5) };
        let (delta_e, beta_e) = if rng.unit() < 0.5 { (delta_o, beta_o) } else { (delta_o * rng.range(0.7, 1.3), beta_o * rng.range(0.7, 1.3)) };
        let thickness = if substrate || rng.unit() < 0.05 {
            0.0
        } else if thin {
            rng.log_range(0.005, 0.3)
        } else {
            rng.log_range(1.0, 2_000.0)
        };
        let roughness = if rng.unit() < 0.3 { 0.0 } else { rng.range(0.0, 8.0) };
        layers.push(Layer { thickness, roughness, delta_o, beta_o, delta_e, beta_e });
    }
    let n_q = 1 + (rng.next_u64() % 300) as usize;
    let q_max = q_frac_max * 2.0 * k0;
    let q_min = 1e-4;
    let q = (0..n_q).map(|i| if n_q == 1 { q_max * rng.unit().max(1e-3) } else { q_min + (q_max - q_min) * i as f64 / (n_q - 1) as f64 }).collect();
    (energy, q, Stack { layers })
}

#[wasm_bindgen_test]
fn simd128_recursion_equals_plain_lanes_and_scalar_reference() {
    if !cfg!(target_feature = "simd128") {
        panic!("this wasm was built without +simd128 (source scripts/env.sh): the simd128 path is not under test");
    }
    // Fresh stacks every run; the seed is printed so that a failure can be replayed.
    let seed = js_sys::Date::now() as u64;
    console_log!("simd128 recursion: seed {seed}");
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    let (mut worst_rel, mut points) = (0.0f64, 0usize);
    let n_curves = 40;
    for c in 0..n_curves {
        // Mostly stacks of a few films, and a few deep ones of thin slabs (the benchmark's regime).
        let n_films = if c % 10 == 9 { 300 + (rng.next_u64() % 700) as usize } else { 1 + (rng.next_u64() % 30) as usize };
        let (energy, q, stack) = random_curve(&mut rng, n_films, c % 5 == 4);
        let label = format!("seed {seed} curve {c} ({energy:.1} eV, {} layers, {} q)", stack.layers.len(), q.len());
        let request = CurveRequest { stack: &stack, energy_ev: energy, q: &q };
        let simd = cpu::reflectivity(&request).unwrap_or_else(|e| panic!("{label}: {e}"));
        let plain = cpu::reflectivity_plain_lanes(&request).unwrap_or_else(|e| panic!("{label}: {e}"));
        let reference = cpu::reflectivity_reference(&request).unwrap_or_else(|e| panic!("{label}: {e}"));
        for (pol, got, lanes, want) in [("R_s", &simd.r_s, &plain.r_s, &reference.r_s), ("R_p", &simd.r_p, &plain.r_p, &reference.r_p)] {
            for i in 0..q.len() {
                if got[i].to_bits() != lanes[i].to_bits() {
                    failures.push(format!("{label} {pol} q[{i}] = {}: simd128 {:e} != plain lanes {:e}", q[i], got[i], lanes[i]));
                }
                let rel = (got[i] - want[i]).abs() / want[i].abs();
                if rel.is_nan() || rel > REFERENCE_REL_TOL {
                    failures.push(format!("{label} {pol} q[{i}] = {}: simd128 {:e} vs reference {:e}, rel {rel:.3e}", q[i], got[i], want[i]));
                }
                worst_rel = if rel.is_nan() { rel } else { worst_rel.max(rel) };
            }
            points += q.len();
        }
    }
    console_log!(
        "simd128 recursion: {n_curves} curves, {points} values, bit-identical to the plain lanes: {}, worst relative deviation from the scalar reference {worst_rel:.3e}",
        failures.is_empty()
    );
    assert!(failures.is_empty(), "{} mismatches (first 20):\n{}", failures.len(), failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
}
