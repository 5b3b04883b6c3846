//! Exact derivatives (jets through the generic kernel) against central differences of the f64 path.

use scatterlab_refl::general::{general_gradient, general_reflectivity, GeneralParam, GeneralStack, TensorLayer};

/// |jet − central difference| ≤ TOL · max_q |central difference| per parameter and channel.
const TOL: f64 = 1e-6;

fn stack() -> GeneralStack {
    GeneralStack {
        layers: vec![
            TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0),
            TensorLayer { thickness: 120.0, roughness: 3.0, delta: [1.2e-3, 2.6e-3, 3.1e-3], beta: [2e-4, 5e-4, 9e-4], euler_deg: [35.0, 62.0, 118.0] },
            // Axis-aligned (exactly s/p-decoupled at the value) but coupled stack: its Euler
            // derivatives move χ_xy, χ_yz and change R at first order through the other layers.
            TensorLayer { thickness: 45.0, roughness: 2.0, delta: [2.0e-3, 1.1e-3, 2.9e-3], beta: [3e-4, 1e-4, 6e-4], euler_deg: [90.0, 40.0, 0.0] },
            TensorLayer { thickness: 0.0, roughness: 4.0, delta: [1.6e-3, 1.9e-3, 1.75e-3], beta: [2.2e-4, 2.6e-4, 3e-4], euler_deg: [200.0, 25.0, 70.0] },
        ],
    }
}

/// The stack with one parameter moved by `h` (the energy is returned separately).
fn nudged(base: &GeneralStack, energy: f64, p: GeneralParam, h: f64) -> (GeneralStack, f64) {
    let mut s = base.clone();
    match p {
        GeneralParam::Thickness(j) => s.layers[j].thickness += h,
        GeneralParam::Roughness(j) => s.layers[j].roughness += h,
        GeneralParam::Delta(j, i) => s.layers[j].delta[i] += h,
        GeneralParam::Beta(j, i) => s.layers[j].beta[i] += h,
        GeneralParam::Euler(j, i) => s.layers[j].euler_deg[i] += h,
        GeneralParam::Energy => return (s, energy + h),
    }
    (s, energy)
}

fn step(p: GeneralParam) -> f64 {
    match p {
        GeneralParam::Thickness(_) | GeneralParam::Roughness(_) => 1e-3,
        GeneralParam::Delta(..) | GeneralParam::Beta(..) => 1e-8,
        GeneralParam::Euler(..) => 1e-4,
        GeneralParam::Energy => 1e-3,
    }
}

/// Worst |jet − central difference| / max_q |central difference| over parameters and channels.
fn worst_deviation(base: &GeneralStack, energy: f64, params: &[GeneralParam]) -> (f64, String) {
    let q: Vec<f64> = (1..=24).map(|i| i as f64 * 0.0115).collect();
    let grad = general_gradient(base, energy, &q, params).unwrap();
    assert_eq!(grad.reflectivity, general_reflectivity(base, energy, &q).unwrap());
    let mut worst = (0.0f64, String::new());
    for (k, &p) in params.iter().enumerate() {
        let h = step(p);
        let (sp, ep) = nudged(base, energy, p, h);
        let (sm, em) = nudged(base, energy, p, -h);
        let (rp, rm) = (general_reflectivity(&sp, ep, &q).unwrap(), general_reflectivity(&sm, em, &q).unwrap());
        let channels = [
            ("ss", &grad.d_ss[k], &rp.r_ss, &rm.r_ss),
            ("pp", &grad.d_pp[k], &rp.r_pp, &rm.r_pp),
            ("sp", &grad.d_sp[k], &rp.r_sp, &rm.r_sp),
            ("ps", &grad.d_ps[k], &rp.r_ps, &rm.r_ps),
        ];
        for (name, jet, plus, minus) in channels {
            let fd: Vec<f64> = plus.iter().zip(minus.iter()).map(|(a, b)| (a - b) / (2.0 * h)).collect();
            let scale = fd.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            if scale == 0.0 {
                // No first-order sensitivity (e.g. cross terms of an uncoupled stack): exact zero.
                assert!(jet.iter().all(|j| j.abs() <= 1e-14), "{p:?} R_{name}: {jet:?}");
                continue;
            }
            for (i, (j, f)) in jet.iter().zip(&fd).enumerate() {
                let rel = (j - f).abs() / scale;
                if rel > worst.0 || rel.is_nan() {
                    worst = (rel, format!("{p:?} R_{name} q[{i}]: jet {j:e} vs fd {f:e}"));
                }
            }
        }
    }
    worst
}

#[test]
fn jet_derivatives_match_central_differences() {
    use GeneralParam::*;
    let params = [
        Thickness(1),
        Thickness(2),
        Roughness(1),
        Roughness(3),
        Delta(1, 0),
        Delta(2, 2),
        Delta(3, 1),
        Beta(1, 1),
        Beta(3, 2),
        Euler(1, 0),
        Euler(1, 1),
        Euler(1, 2),
        Euler(2, 0),
        Euler(2, 1),
        Euler(3, 1),
        Energy,
    ];
    let worst = worst_deviation(&stack(), 285.0, &params);
    eprintln!("derivatives: worst |jet − central difference| / max|fd| = {:.2e} ({})", worst.0, worst.1);
    assert!(worst.0 <= TOL, "{}", worst.1);
}

/// At an isotropic (doubly degenerate) but rotated rough film, a principal δ or β moves the
/// pair apart: the pair-factor Newton step and the expanded roughness factor keep the
/// derivative exact.
#[test]
fn jet_derivatives_at_a_degenerate_layer() {
    use GeneralParam::*;
    let mut s = stack();
    s.layers[1] = TensorLayer { thickness: 120.0, roughness: 3.0, delta: [2.1e-3; 3], beta: [4e-4; 3], euler_deg: [35.0, 62.0, 118.0] };
    let worst = worst_deviation(&s, 285.0, &[Delta(1, 0), Delta(1, 1), Beta(1, 2), Thickness(1), Roughness(1), Roughness(2), Energy]);
    eprintln!("derivatives at a degenerate layer: worst {:.2e} ({})", worst.0, worst.1);
    assert!(worst.0 <= TOL, "{}", worst.1);
}
