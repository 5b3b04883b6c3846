//! Physics sanity checks that need no fixture, and the typed errors for bad input.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_refl::cpu::reflectivity;
use scatterlab_refl::{CurveRequest, Layer, ReflError, Stack};

fn fresnel_s(delta: f64, beta: f64, energy: f64, q: f64) -> f64 {
    use num_complex::Complex64 as C;
    let k0 = scatterlab_core::units::photon_k0(energy);
    let kv = C::new(q / 2.0, 0.0);
    let ks = (C::new(-2.0 * delta, 2.0 * beta) * k0 * k0 + kv * kv).sqrt();
    ((kv - ks) / (kv + ks)).norm_sqr()
}

#[test]
fn bare_substrate_is_fresnel() {
    let stack = Stack { layers: vec![Layer::VACUUM, Layer::isotropic(0.0, 0.0, 5e-3, 1e-3)] };
    let q: Vec<f64> = (1..50).map(|i| i as f64 * 0.005).collect();
    let r = reflectivity(&CurveRequest { stack: &stack, energy_ev: 300.0, q: &q }).unwrap();
    for (i, &qi) in q.iter().enumerate() {
        let want = fresnel_s(5e-3, 1e-3, 300.0, qi);
        assert!((r.r_s[i] - want).abs() <= 1e-12 * want, "q={qi}: {} vs {want}", r.r_s[i]);
    }
}

#[test]
fn zero_thickness_layer_is_invisible_without_roughness() {
    let sub = Layer::isotropic(0.0, 0.0, 5e-3, 1e-3);
    let ghost = Layer { thickness: 0.0, roughness: 0.0, delta_o: 2e-3, beta_o: 3e-4, delta_e: 4e-3, beta_e: 1e-4 };
    let q: Vec<f64> = (1..40).map(|i| i as f64 * 0.006).collect();
    let plain = reflectivity(&CurveRequest { stack: &Stack { layers: vec![Layer::VACUUM, sub] }, energy_ev: 300.0, q: &q }).unwrap();
    let with = reflectivity(&CurveRequest { stack: &Stack { layers: vec![Layer::VACUUM, ghost, sub] }, energy_ev: 300.0, q: &q }).unwrap();
    for i in 0..q.len() {
        assert!((plain.r_s[i] - with.r_s[i]).abs() <= 1e-12 * plain.r_s[i]);
        assert!((plain.r_p[i] - with.r_p[i]).abs() <= 1e-12 * plain.r_p[i]);
    }
}

fn err(stack: &Stack, energy: f64, q: &[f64]) -> String {
    match reflectivity(&CurveRequest { stack, energy_ev: energy, q }) {
        Err(ReflError::Input(e)) => e.object,
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[test]
fn bad_inputs_name_the_object() {
    let good = Stack { layers: vec![Layer::VACUUM, Layer::isotropic(10.0, 1.0, 1e-3, 1e-4), Layer::isotropic(0.0, 1.0, 5e-3, 1e-3)] };
    assert_eq!(err(&good, 250.0, &[0.01, 0.0]), "q[1]");
    assert_eq!(err(&good, 250.0, &[-0.01]), "q[0]");
    assert_eq!(err(&good, 250.0, &[0.3]), "q[0]"); // 2 k0 = 0.2534 at 250 eV
    assert_eq!(err(&good, 250.0, &[f64::NAN]), "q[0]");
    assert_eq!(err(&good, 0.0, &[0.01]), "energy");
    assert_eq!(err(&good, f64::INFINITY, &[0.01]), "energy");
    let mut s = good.clone();
    s.layers[1].thickness = -1.0;
    assert_eq!(err(&s, 250.0, &[0.01]), "layer 1 thickness");
    let mut s = good.clone();
    s.layers[2].roughness = -0.5;
    assert_eq!(err(&s, 250.0, &[0.01]), "layer 2 roughness");
    let mut s = good.clone();
    s.layers[1].beta_e = f64::NAN;
    assert_eq!(err(&s, 250.0, &[0.01]), "layer 1 beta_e");
    assert_eq!(err(&Stack { layers: vec![Layer::VACUUM] }, 250.0, &[0.01]), "stack");
    match Stack::from_columns(&[0.0, 0.0], &[0.0], &[0.0; 2], &[0.0; 2], &[0.0; 2], &[0.0; 2]) {
        Err(ReflError::Input(e)) => assert_eq!(e.object, "roughness"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn batch_errors_name_the_curve() {
    let good = Stack { layers: vec![Layer::VACUUM, Layer::isotropic(0.0, 0.0, 5e-3, 1e-3)] };
    let q = [0.01];
    let bad_q = [1.0];
    let requests = [CurveRequest { stack: &good, energy_ev: 250.0, q: &q }, CurveRequest { stack: &good, energy_ev: 250.0, q: &bad_q }];
    match pollster::block_on(scatterlab_refl::compute(scatterlab_refl::Engine::Cpu, &requests)) {
        Err(ReflError::Input(e)) => assert_eq!(e.object, "curve 1: q[0]"),
        other => panic!("{other:?}"),
    }
}

/// A finely sliced graded profile (0.02–0.45 Å slabs, |2 k_z d| ≤ 1/8 over the curve: the
/// lanes' Taylor-series phase `exp_small`) with a few thick layers among them (the reduced exp):
/// the vectorised path equals the scalar reference (libm's exp and sin/cos) within 1e-12·R.
#[test]
fn thin_slab_phase_equals_scalar_reference() {
    let mut layers = vec![Layer::VACUUM];
    for j in 0..600 {
        let f = j as f64 / 600.0;
        let thickness = if j % 97 == 50 { 40.0 + 30.0 * f } else { 0.02 + 0.43 * (f * 13.7).fract() };
        let roughness = if j % 151 == 0 { 1.5 } else { 0.0 };
        layers.push(Layer { thickness, roughness, delta_o: 1.8e-3 * (1.0 + 0.4 * f), beta_o: 2e-4 * f, delta_e: 2.2e-3 * (1.0 - 0.2 * f), beta_e: 1.2e-4 });
    }
    layers.push(Layer::isotropic(0.0, 0.5, 5.97e-3, 4.25e-3));
    let stack = Stack { layers };
    for n_q in [9, 256] {
        let q: Vec<f64> = (0..n_q).map(|i| 1e-3 + 0.249 * i as f64 / (n_q - 1) as f64).collect();
        let request = CurveRequest { stack: &stack, energy_ev: 250.0, q: &q };
        let fast = reflectivity(&request).unwrap();
        let reference = scatterlab_refl::cpu::reflectivity_reference(&request).unwrap();
        let worst =
            (0..n_q).map(|i| ((fast.r_s[i] - reference.r_s[i]).abs() / reference.r_s[i]).max((fast.r_p[i] - reference.r_p[i]).abs() / reference.r_p[i])).fold(0.0f64, f64::max);
        println!("thin slabs, {n_q} q: worst relative difference from the scalar reference {worst:e}");
        assert!(worst <= 1e-12, "{n_q} q: {worst:e}");
    }
}

#[test]
fn vectorised_cpu_path_equals_scalar_reference() {
    // Deterministic but varied stacks: thick, absorbing, β = 0 substrates, odd q counts (tail blocks).
    let mut layers = vec![Layer::VACUUM];
    for j in 0..23 {
        let f = j as f64 / 23.0;
        layers.push(Layer {
            thickness: 5.0 + 900.0 * (f * 7.3).fract(),
            roughness: 6.0 * (f * 3.1).fract(),
            delta_o: 1e-3 * (1.0 + f),
            beta_o: if j % 5 == 0 { 0.0 } else { 2e-4 * f },
            delta_e: 2e-3 * (1.0 - 0.3 * f),
            beta_e: 1e-4,
        });
    }
    layers.push(Layer::isotropic(0.0, 2.0, 6e-3, 0.0));
    let stack = Stack { layers };
    for n_q in [1, 7, 8, 9, 301] {
        let q: Vec<f64> = (0..n_q).map(|i| 1e-3 + 0.24 * i as f64 / n_q as f64).collect();
        let request = CurveRequest { stack: &stack, energy_ev: 250.0, q: &q };
        let fast = reflectivity(&request).unwrap();
        let reference = scatterlab_refl::cpu::reflectivity_reference(&request).unwrap();
        for i in 0..n_q {
            assert!((fast.r_s[i] - reference.r_s[i]).abs() <= 1e-12 * reference.r_s[i], "R_s q[{i}]");
            assert!((fast.r_p[i] - reference.r_p[i]).abs() <= 1e-12 * reference.r_p[i], "R_p q[{i}]");
        }
    }
}

#[test]
fn anisotropy_ratio_is_signed_p_minus_s_over_sum() {
    let r = scatterlab_refl::Reflectivity { r_s: vec![0.5, 0.2], r_p: vec![0.5, 0.6] };
    let a = r.anisotropy();
    assert_eq!(a[0], 0.0);
    assert!((a[1] - 0.5).abs() < 1e-15);
}
