//! Properties that hold exactly in the physics: the coupled-mode machinery on uncoupled tensors
//! (degenerate modes) equals the recursion, mirror and reciprocity symmetries, decoupling for
//! axis-aligned orientations, energy conservation in total reflection, and typed errors.

use num_complex::Complex64 as C64;
use rand::{Rng, SeedableRng};
use scatterlab_refl::general::{general_gradient, general_reflectivity, GeneralKernel, GeneralParam, GeneralReflectivity, GeneralStack, TensorLayer};
use scatterlab_refl::{cpu, CurveRequest, ReflError};

use super::{max_dev, random_tensor_layer, random_uniaxial_stack, seed};

fn k0(energy: f64) -> f64 {
    scatterlab_core::units::photon_k0(energy)
}

/// Forcing the coupled path (quartic, pair factors, graph bases) onto isotropic and uniaxial-z
/// layers — double roots in every isotropic layer and the vacuum — still gives the recursion.
#[test]
fn coupled_path_on_uncoupled_and_degenerate_layers_equals_the_recursion() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed() ^ 0x77);
    let mut worst = 0.0f64;
    for k in 0..30 {
        let stack = random_uniaxial_stack(&mut rng, k % 2 == 0);
        let energy = rng.gen_range(250.0..320.0);
        let q: Vec<f64> = (1..80).map(|i| i as f64 / 80.0 * 1.95 * k0(energy)).collect();
        let want = cpu::reflectivity(&CurveRequest { stack: &stack, energy_ev: energy, q: &q }).unwrap();
        let mut layers = GeneralStack::from_stack(&stack).chi_layers();
        for l in &mut layers {
            l.decoupled = false;
        }
        let kernel = GeneralKernel::new(&layers, C64::new(k0(energy), 0.0));
        for (i, &qi) in q.iter().enumerate() {
            let r = kernel.point(qi);
            let (ss, pp) = (r[0][0].norm_sqr(), r[1][1].norm_sqr());
            worst = worst.max((ss - want.r_s[i]).abs() / want.r_s[i]).max((pp - want.r_p[i]).abs() / want.r_p[i]);
            assert!(r[0][1].norm_sqr() <= 1e-20 && r[1][0].norm_sqr() <= 1e-20, "stack {k} q[{i}]: {r:?} {stack:?}");
        }
    }
    eprintln!("forced coupled path vs recursion: worst relative {worst:.3e}");
    assert!(worst <= 1e-10, "{worst:e}");
}

/// A barely anisotropic tilted layer (near-double roots in both directions, roughness on both
/// interfaces) goes smoothly to its isotropic limit: the change in R_ss, R_pp is linear in the
/// anisotropy and R_sp, R_ps quadratic, with the same slope from 1e-6 down to 1e-15 (no noise
/// floor or blow-up at near-degeneracy).
#[test]
fn near_degenerate_tilted_layer_approaches_the_isotropic_one() {
    let energy = 290.0;
    let q: Vec<f64> = (1..100).map(|i| i as f64 / 100.0 * 1.95 * k0(energy)).collect();
    let vacuum = TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0);
    let sub = TensorLayer::isotropic(0.0, 4.0, 1.7e-3, 2.4e-4);
    let iso = TensorLayer::isotropic(140.0, 4.0, 2.0e-3, 3.0e-4);
    let b = general_reflectivity(&GeneralStack { layers: vec![vacuum, iso, sub] }, energy, &q).unwrap();
    let mut slopes = Vec::new();
    for split in [1e-6, 1e-9, 1e-12, 1e-15] {
        let weak = TensorLayer { delta: [2.0e-3, 2.0e-3 + split, 2.0e-3 - split], beta: [3.0e-4, 3.0e-4 - split, 3.0e-4 + split], euler_deg: [33.0, 61.0, 17.0], ..iso };
        let a = general_reflectivity(&GeneralStack { layers: vec![vacuum, weak, sub] }, energy, &q).unwrap();
        let linear = (0..q.len()).map(|i| ((a.r_ss[i] - b.r_ss[i]) / b.r_ss[i]).abs().max(((a.r_pp[i] - b.r_pp[i]) / b.r_pp[i]).abs())).fold(0.0, f64::max) / split;
        let quadratic = a.r_sp.iter().chain(&a.r_ps).fold(0.0f64, |m, x| m.max(*x)) / (split * split);
        eprintln!("anisotropy {split:e}: max ΔR/R / split = {linear:.4e}, max R_sp,ps / split² = {quadratic:.4e}");
        slopes.push((linear, quadratic));
    }
    let (l0, q0) = slopes[1];
    for (l, qd) in slopes {
        assert!((l / l0 - 1.0).abs() < 0.02 && (qd / q0 - 1.0).abs() < 0.02, "{l:e} vs {l0:e}, {qd:e} vs {q0:e}");
    }
}

fn random_tilted_stack(rng: &mut impl Rng, rough: bool) -> GeneralStack {
    let mut layers = vec![TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0)];
    for _ in 0..rng.gen_range(1..4) {
        let (d, s) = (rng.gen_range(10.0..200.0), if rough { rng.gen_range(0.0..5.0) } else { 0.0 });
        layers.push(random_tensor_layer(rng, d, s));
    }
    layers.push(random_tensor_layer(rng, 0.0, if rough { 3.0 } else { 0.0 }));
    GeneralStack { layers }
}

fn with_euler(stack: &GeneralStack, f: impl Fn([f64; 3]) -> [f64; 3]) -> GeneralStack {
    GeneralStack { layers: stack.layers.iter().map(|l| TensorLayer { euler_deg: f(l.euler_deg), ..*l }).collect() }
}

/// Mirror y → −y (Euler angles negated) leaves all four R unchanged, roughness included.
/// Rotating every layer by 180° about z equals reversing k_x; with a symmetric ε, reciprocity
/// then gives R_ss, R_pp unchanged and R_sp ↔ R_ps exchanged (checked without roughness).
#[test]
fn mirror_and_reciprocity_symmetries() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed() ^ 0x5151);
    let (mut worst_mirror, mut worst_recip) = (0.0f64, 0.0f64);
    for k in 0..12 {
        let energy = rng.gen_range(250.0..320.0);
        let q: Vec<f64> = (1..70).map(|i| i as f64 / 70.0 * 1.9 * k0(energy)).collect();
        let stack = random_tilted_stack(&mut rng, k % 2 == 0);
        let base = general_reflectivity(&stack, energy, &q).unwrap();
        let mirrored = general_reflectivity(&with_euler(&stack, |e| e.map(|x| -x)), energy, &q).unwrap();
        worst_mirror = worst_mirror.max(max_dev(&mirrored, &base, 1e-12).0);
        if k % 2 == 1 {
            let turned = general_reflectivity(&with_euler(&stack, |e| [e[0] + 180.0, e[1], e[2]]), energy, &q).unwrap();
            let swapped = GeneralReflectivity { r_sp: turned.r_ps.clone(), r_ps: turned.r_sp.clone(), ..turned };
            worst_recip = worst_recip.max(max_dev(&swapped, &base, 1e-12).0);
        }
    }
    eprintln!("mirror y: worst {worst_mirror:.2e}; 180° about z + reciprocity: worst {worst_recip:.2e}");
    assert!(worst_mirror <= 1e-10 && worst_recip <= 1e-10);
}

/// An optic axis in the plane of incidence or along y (and a biaxial layer with one axis along y)
/// keeps the mirror symmetry y → −y of every layer: no cross-polarised reflectance at all.
#[test]
fn axis_in_or_normal_to_the_plane_of_incidence_gives_no_cross_polarisation() {
    let uni = |e: [f64; 3]| TensorLayer { thickness: 90.0, roughness: 2.0, delta: [1e-3, 1e-3, 3e-3], beta: [2e-4, 2e-4, 6e-4], euler_deg: e };
    let bi = TensorLayer { delta: [1e-3, 2e-3, 3e-3], beta: [2e-4, 4e-4, 6e-4], euler_deg: [90.0, 37.0, 0.0], ..uni([0.0; 3]) };
    let stack = GeneralStack {
        layers: vec![
            TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0),
            uni([90.0, 40.0, 0.0]),
            uni([0.0, 90.0, 0.0]),
            bi,
            uni([270.0, 125.0, 180.0]),
            TensorLayer::isotropic(0.0, 3.0, 1.7e-3, 2.4e-4),
        ],
    };
    let q: Vec<f64> = (1..60).map(|i| i as f64 * 0.004).collect();
    let r = general_reflectivity(&stack, 280.0, &q).unwrap();
    assert!(r.r_sp.iter().chain(&r.r_ps).all(|&x| x == 0.0));
    assert!(r.r_ss.iter().chain(&r.r_pp).all(|&x| x > 0.0 && x < 1.0));
}

/// Lossless films (β = 0 exactly, propagating modes sorted by Poynting flux) on a lossless
/// substrate below its critical angle: all power is reflected, R_ss + R_ps = R_pp + R_sp = 1.
#[test]
fn total_reflection_conserves_energy() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed() ^ 0xe0e0);
    let mut worst = 0.0f64;
    for _ in 0..10 {
        let energy = rng.gen_range(250.0..320.0);
        let mut stack = random_tilted_stack(&mut rng, false);
        for l in &mut stack.layers {
            l.beta = [0.0; 3];
        }
        let sub = stack.layers.len() - 1;
        stack.layers[sub] = TensorLayer::isotropic(0.0, 0.0, 6e-3, 0.0);
        let qc = 2.0 * k0(energy) * (2.0f64 * 6e-3).sqrt();
        let q: Vec<f64> = (1..50).map(|i| i as f64 / 50.0 * 0.98 * qc).collect();
        let r = general_reflectivity(&stack, energy, &q).unwrap();
        for i in 0..q.len() {
            worst = worst.max((r.r_ss[i] + r.r_ps[i] - 1.0).abs()).max((r.r_pp[i] + r.r_sp[i] - 1.0).abs());
        }
    }
    eprintln!("total reflection: worst |R_ss + R_ps − 1|, |R_pp + R_sp − 1| = {worst:.2e}");
    assert!(worst <= 1e-12, "{worst:e}");
}

/// general_reflectivity walks a curve, starting each layer's quartic from the previous q's
/// factors; on a shuffled grid with jumps (and lossless layers that need the Poynting sorting)
/// it must equal the stateless per-point kernel.
#[test]
fn curve_continuation_equals_independent_points() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed() ^ 0xc0c0);
    for k in 0..6 {
        let energy = rng.gen_range(250.0..320.0);
        let mut stack = random_tilted_stack(&mut rng, true);
        if k % 2 == 1 {
            stack.layers[1].beta = [0.0; 3];
        }
        let mut q: Vec<f64> = (1..150).map(|i| i as f64 / 150.0 * 1.98 * k0(energy)).collect();
        for i in (1..q.len()).rev() {
            q.swap(i, rng.gen_range(0..=i));
        }
        let got = general_reflectivity(&stack, energy, &q).unwrap();
        let kernel = GeneralKernel::new(&stack.chi_layers(), C64::new(k0(energy), 0.0));
        for (i, &qi) in q.iter().enumerate() {
            let r = kernel.point(qi);
            let want = [r[0][0].norm_sqr(), r[1][1].norm_sqr(), r[0][1].norm_sqr(), r[1][0].norm_sqr()];
            let have = [got.r_ss[i], got.r_pp[i], got.r_sp[i], got.r_ps[i]];
            for (a, b) in have.iter().zip(want) {
                assert!((a - b).abs() <= 1e-11 * b.max(1e-10), "stack {k} q={qi}: {a:e} vs {b:e}");
            }
        }
    }
}

/// Cutting a tilted biaxial film into 40 identical slabs (no roughness) changes nothing: the
/// interface differences are exactly zero and the propagators compose.
#[test]
fn slicing_a_tilted_film_changes_nothing() {
    let film = TensorLayer { thickness: 200.0, roughness: 0.0, delta: [1.2e-3, 2.6e-3, 3.1e-3], beta: [2e-4, 5e-4, 9e-4], euler_deg: [35.0, 62.0, 118.0] };
    let (top, sub) = (TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0), TensorLayer::isotropic(0.0, 2.0, 1.7e-3, 2.4e-4));
    let q: Vec<f64> = (1..120).map(|i| i as f64 / 120.0 * 1.95 * k0(280.0)).collect();
    let whole = general_reflectivity(&GeneralStack { layers: vec![top, film, sub] }, 280.0, &q).unwrap();
    let mut layers = vec![top];
    layers.extend(std::iter::repeat_n(TensorLayer { thickness: 5.0, ..film }, 40));
    layers.push(sub);
    let sliced = general_reflectivity(&GeneralStack { layers }, 280.0, &q).unwrap();
    let dev = max_dev(&sliced, &whole, 1e-12).0;
    eprintln!("40 slices vs one film: {dev:.2e}");
    assert!(dev <= 1e-10, "{dev:e}");
}

fn object(result: Result<impl std::fmt::Debug, ReflError>) -> String {
    match result {
        Err(ReflError::Input(e)) => e.object,
        other => panic!("expected an input error, got {other:?}"),
    }
}

#[test]
fn bad_inputs_name_the_layer_and_field() {
    let film = TensorLayer { thickness: 50.0, roughness: 1.0, delta: [1e-3, 2e-3, 3e-3], beta: [1e-4; 3], euler_deg: [10.0, 20.0, 30.0] };
    let good = GeneralStack { layers: vec![TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0), film, TensorLayer::isotropic(0.0, 1.0, 5e-3, 1e-3)] };
    let q = [0.01, 0.05];
    assert!(general_reflectivity(&good, 250.0, &q).is_ok());
    let edit = |f: &dyn Fn(&mut GeneralStack)| {
        let mut s = good.clone();
        f(&mut s);
        s
    };
    assert_eq!(object(general_reflectivity(&edit(&|s| s.layers[1].euler_deg[1] = f64::NAN), 250.0, &q)), "layer 1 euler_deg[1]");
    assert_eq!(object(general_reflectivity(&edit(&|s| s.layers[1].thickness = -2.0), 250.0, &q)), "layer 1 thickness");
    assert_eq!(object(general_reflectivity(&edit(&|s| s.layers[2].roughness = -0.1), 250.0, &q)), "layer 2 roughness");
    assert_eq!(object(general_reflectivity(&edit(&|s| s.layers[2].beta[2] = f64::INFINITY), 250.0, &q)), "layer 2 beta[c]");
    assert_eq!(object(general_reflectivity(&edit(&|s| s.layers[0] = film), 250.0, &q)), "layer 0 (fronting medium)");
    assert_eq!(object(general_reflectivity(&edit(&|s| s.layers.truncate(1)), 250.0, &q)), "stack");
    assert_eq!(object(general_reflectivity(&good, 250.0, &[0.01, 0.26])), "q[1]"); // 2k0 = 0.2534
    assert_eq!(object(general_reflectivity(&good, 250.0, &[0.0])), "q[0]");
    assert_eq!(object(general_reflectivity(&good, 250.0, &[f64::NAN])), "q[0]");
    assert_eq!(object(general_reflectivity(&good, -1.0, &q)), "energy");
    assert_eq!(object(general_gradient(&good, 250.0, &q, &[GeneralParam::Energy, GeneralParam::Delta(3, 0)])), "params[1]");
    assert_eq!(object(general_gradient(&good, 250.0, &q, &[GeneralParam::Euler(1, 3)])), "params[0]");
}
