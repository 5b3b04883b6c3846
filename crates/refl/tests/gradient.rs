//! Forward-mode gradients (`scatterlab_refl::gradient`) against independent references:
//! * R equals `cpu::reflectivity` on the 40 fixture cases, and so (within 1e-12, jets 3e-12) does
//!   the generic recursion whose derivatives are taken;
//! * every derivative equals a Ridders–Richardson extrapolated finite difference of
//!   `cpu::reflectivity` (central; one-sided forward where the parameter sits on a bound: d, σ or
//!   β = 0) on random soft-X-ray uniaxial stacks (seed printed, `SCATTERLAB_SEED=N` replays) and
//!   on fixture cases. Criterion per point: |a − b| ≤ 1e-6 · max(|b|, 1e-3 · max_q |b|, 1e-6) with
//!   a the jet derivative, b the extrapolated difference and the max over the curve of that
//!   parameter and polarisation (a derivative 1000× below its row's peak is compared absolutely;
//!   1e-12 is the floor for exact zeros);
//! * smeared gradients against differences of `compute_smeared` (incl. dQ/Q width and q offset);
//! * bad parameters are named errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;
#[path = "gradient/fd.rs"]
mod gradient_fd;
#[path = "gradient/steps.rs"]
mod gradient_steps;

use gradient_fd::{all_params, check_rows, Curve, Summary};
use num_complex::Complex64 as C64;
use rand::{Rng, SeedableRng};
use scatterlab_refl::cases::parse_cases;
use scatterlab_refl::dual::{Cx, Jet};
use scatterlab_refl::gradient::recursion::{self, LayerInput};
use scatterlab_refl::gradient::soa::SoaJet;
use scatterlab_refl::gradient::{apply_instrument, reflectivity_gradient, smeared_gradient, Gradient, LayerParam, Param};
use scatterlab_refl::{cpu, CurveRequest, Layer, ReflError, Resolution, SmearedRequest, Stack};

fn seed() -> u64 {
    scatterlab_testkit::seed("refl gradients")
}

fn fixture_curves() -> Vec<Curve> {
    let text = common::read_fixture("refl/reference.json");
    let cases = parse_cases(&text).unwrap();
    assert_eq!(cases.len(), 40);
    cases
        .into_iter()
        .map(|c| {
            let input = c.input.unwrap();
            Curve { id: c.id, stack: input.stack().unwrap(), energy_ev: input.energy_ev, q: input.q.clone() }
        })
        .collect()
}

/// 3–8 layers: vacuum, 1–6 uniaxial films, a substrate; about one β in five is exactly 0, one σ in
/// three and one film thickness in ten too, and the q grid starts below the largest critical edge
/// so some β = 0 layers are seen evanescent.
fn random_curve(rng: &mut impl Rng, id: usize, n: usize) -> Curve {
    let optical = |rng: &mut dyn rand::RngCore| -> (f64, f64) {
        let delta = 10f64.powf(rng.gen_range(-3.7..-2.0));
        let beta = if rng.gen_bool(0.2) { 0.0 } else { delta * 10f64.powf(rng.gen_range(-2.0..0.0)) };
        (delta, beta)
    };
    let mut layers = vec![Layer::VACUUM];
    for _ in 0..rng.gen_range(1..=6) {
        let (d_o, b_o) = optical(rng);
        let (d_e, b_e) = if rng.gen_bool(0.3) { (d_o, b_o) } else { optical(rng) };
        let roughness = if rng.gen_bool(0.3) { 0.0 } else { rng.gen_range(0.5..8.0) };
        // A film of zero thickness (a bound of d: one-sided differences, one-sided jets) now and then.
        let thickness = if rng.gen_bool(0.1) { 0.0 } else { rng.gen_range(10.0..300.0) };
        layers.push(Layer { thickness, roughness, delta_o: d_o, beta_o: b_o, delta_e: d_e, beta_e: b_e });
    }
    let (d, b) = optical(rng);
    layers.push(Layer::isotropic(0.0, rng.gen_range(0.0..6.0), d, b));
    let energy = rng.gen_range(200.0..1500.0);
    let k0 = scatterlab_core::units::photon_k0(energy);
    let delta_max = layers.iter().map(|l| l.delta_o.max(l.delta_e)).fold(0.0, f64::max);
    let q_c = 2.0 * k0 * (2.0 * delta_max).sqrt();
    let q_hi = (6.0 * q_c).min(1.8 * k0);
    let q = (0..n).map(|i| 0.2 * q_c + (q_hi - 0.2 * q_c) * (i as f64 + rng.gen_range(0.0..0.9)) / n as f64).collect();
    Curve { id: format!("random {id}"), stack: Stack { layers }, energy_ev: energy, q }
}

/// Prints the summary and holds the differences to be informative: at most 1 % of the
/// comparisons may lean on the differences' own error estimate.
fn report(label: &str, s: &Summary) {
    eprintln!("{label}: {} comparisons, worst at {:.3} of its allowance ({}); {} limited by the differences' own error", s.total, s.worst, s.place, s.limited);
    assert!(s.limited * 100 <= s.total, "{label}: {} of {} comparisons limited by the finite differences", s.limited, s.total);
}

/// R_s and R_p from the generic recursion instantiated on `T`, every layer input made by `input`.
fn generic_values<T: Cx>(curve: &Curve, input: impl Fn(f64, usize) -> T) -> (Vec<f64>, Vec<f64>) {
    let inputs: Vec<LayerInput<T>> = curve
        .stack
        .layers
        .iter()
        .enumerate()
        .map(|(j, l)| LayerInput {
            thickness: input(l.thickness, 6 * j),
            roughness: input(l.roughness, 6 * j + 1),
            delta_o: input(l.delta_o, 6 * j + 2),
            beta_o: input(l.beta_o, 6 * j + 3),
            delta_e: input(l.delta_e, 6 * j + 4),
            beta_e: input(l.beta_e, 6 * j + 5),
        })
        .collect();
    let (mut layers, mut interfaces) = (Vec::new(), Vec::new());
    recursion::prepare(&inputs, T::real(curve.energy_ev), &mut layers, &mut interfaces);
    curve.q.iter().map(|&q| recursion::point(&layers, &interfaces, T::real(q))).map(|(s, p)| (s.value().re, p.value().re)).unzip()
}

/// The gradient's R is the engine's own; the recursion it differentiates, on plain numbers, is
/// within 1e-12 of it; the value parts of the jets (8 slots seeded on the first layers) within
/// 3e-12. Jets divide as a·(1/b), which rounds differently from a/b; at the deepest minimum of
/// hard_multilayer_031 (118 layers) that shows as 2.2e-12, where cpu::reflectivity itself is
/// 1.05e-12 from the high-precision value.
#[test]
fn values_equal_cpu_reflectivity_on_all_fixture_cases() {
    let mut worst = [(0.0f64, String::new()), (0.0, String::new()), (0.0, String::new())];
    for curve in fixture_curves() {
        let request = curve.request();
        let want = cpu::reflectivity(&request).unwrap();
        let got = reflectivity_gradient(&request, &all_params(2)).unwrap();
        assert_eq!((&got.r_s, &got.r_p), (&want.r_s, &want.r_p), "{}", curve.id);
        let plain = generic_values(&curve, |x, _| C64::new(x, 0.0));
        let jet = generic_values(&curve, Jet::<8>::real_variable);
        let soa = generic_values(&curve, |x, k| {
            let mut j = SoaJet::<8>::real(x);
            if let Some(slot) = j.re.get_mut(k) {
                *slot = 1.0;
            }
            j
        });
        for (w, (label, (s, p), tol)) in worst.iter_mut().zip([("plain", plain, 1e-12), ("Jet<8>", jet, 3e-12), ("SoaJet<8>", soa, 3e-12)]) {
            for (pol, g, r) in [("R_s", &s, &want.r_s), ("R_p", &p, &want.r_p)] {
                let (rel, i) = common::max_rel(g, r);
                if rel > w.0 || rel.is_nan() {
                    *w = (rel, format!("{label} {} {pol} q[{i}]", curve.id));
                }
                assert!(rel <= tol, "{label} {} {pol}: rel {rel:.3e} at q[{i}]", curve.id);
            }
        }
    }
    for (rel, place) in worst {
        eprintln!("generic recursion vs cpu::reflectivity: worst relative deviation {rel:.3e} ({place})");
    }
}

#[test]
fn derivatives_match_differences_on_random_stacks() {
    let seed = seed();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut summary = Summary::default();
    for id in 0..8 {
        let curve = random_curve(&mut rng, id, 60);
        let params = all_params(curve.stack.layers.len());
        let got = reflectivity_gradient(&curve.request(), &params).unwrap();
        summary.merge(check_rows(&curve, &params, &got, None).unwrap_or_else(|e| panic!("seed {seed}: {e}\nstack {:?}", curve.stack)));
    }
    report(&format!("seed {seed}: random stacks"), &summary);
}

#[test]
fn derivatives_match_differences_on_fixture_cases() {
    let chosen = ["soft_uniaxial_002", "soft_uniaxial_multi_011", "hard_uniaxial_033", "neutron_like_zero_absorption_038"];
    let mut summary = Summary::default();
    for mut curve in fixture_curves().into_iter().filter(|c| chosen.contains(&c.id.as_str())) {
        // Every 2nd point keeps the debug-build run short; the values test covers every point.
        curve.q = curve.q.iter().step_by(2).copied().collect();
        let params = all_params(curve.stack.layers.len());
        let got = reflectivity_gradient(&curve.request(), &params).unwrap();
        summary.merge(check_rows(&curve, &params, &got, None).unwrap_or_else(|e| panic!("{e}")));
    }
    report("fixture cases", &summary);
}

#[test]
fn smeared_derivatives_match_differences() {
    let seed = seed();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ 0x5eed);
    let mut summary = Summary::default();
    for id in 0..2 {
        let curve = random_curve(&mut rng, id, 16);
        let n_q = curve.q.len();
        let pointwise = Resolution::Pointwise((0..n_q).map(|i| curve.q[i] * rng.gen_range(0.01..0.08)).collect());
        for resolution in [Resolution::ConstantDqOverQ(rng.gen_range(0.02..0.1)), pointwise, Resolution::None] {
            let mut params = all_params(curve.stack.layers.len());
            if matches!(resolution, Resolution::ConstantDqOverQ(_)) {
                params.insert(3, Param::Resolution);
            }
            let request = SmearedRequest { curve: curve.request(), resolution: &resolution, smearing: Default::default() };
            let got = smeared_gradient(&request, &params).unwrap();
            let want = pollster::block_on(scatterlab_refl::compute_smeared(scatterlab_refl::Engine::Cpu, &[request])).unwrap().remove(0);
            let (rel_s, _) = common::max_rel(&got.r_s, &want.r_s);
            let (rel_p, _) = common::max_rel(&got.r_p, &want.r_p);
            assert!(rel_s.max(rel_p) <= 1e-12, "seed {seed}: smeared values differ from compute_smeared by {:.3e}", rel_s.max(rel_p));
            summary.merge(check_rows(&curve, &params, &got, Some(&resolution)).unwrap_or_else(|e| panic!("seed {seed} {resolution:?}: {e}")));
        }
    }
    report(&format!("seed {seed}: smeared"), &summary);
}

fn input_object(e: ReflError) -> String {
    match e {
        ReflError::Input(e) => format!("{}: {}", e.object, e.problem),
        other => panic!("expected an input error, got {other}"),
    }
}

#[test]
fn bad_parameters_are_named() {
    let stack = Stack { layers: vec![Layer::VACUUM, Layer::isotropic(50.0, 2.0, 1e-3, 1e-4), Layer::isotropic(0.0, 3.0, 2e-3, 2e-4)] };
    let q = [0.05, 0.1];
    let request = CurveRequest { stack: &stack, energy_ev: 500.0, q: &q };
    let params = [Param::Energy, Param::Layer { layer: 3, param: LayerParam::DeltaE }];
    let e = input_object(reflectivity_gradient(&request, &params).unwrap_err());
    assert!(e.starts_with("parameter 1 (layer 3 delta_e)") && e.contains("3 layers"), "{e}");
    let e = input_object(reflectivity_gradient(&request, &[Param::Resolution]).unwrap_err());
    assert!(e.starts_with("parameter 0 (resolution dQ/Q)"), "{e}");
    for resolution in [Resolution::Pointwise(vec![0.001, 0.002]), Resolution::None] {
        let smeared = SmearedRequest { curve: request, resolution: &resolution, smearing: Default::default() };
        let e = input_object(smeared_gradient(&smeared, &[Param::QOffset, Param::Resolution]).unwrap_err());
        assert!(e.starts_with("parameter 1 (resolution dQ/Q)") && e.contains("constant dQ/Q"), "{e}");
        let e = input_object(smeared_gradient(&smeared, &[Param::Layer { layer: 7, param: LayerParam::Thickness }]).unwrap_err());
        assert!(e.starts_with("parameter 0 (layer 7 thickness)"), "{e}");
    }
    // The request itself is validated first, as CurveRequest::validate does.
    let bad_q = [0.05, -1.0];
    let e = input_object(reflectivity_gradient(&CurveRequest { q: &bad_q, ..request }, &[]).unwrap_err());
    assert!(e.starts_with("q[1]"), "{e}");
}

#[test]
fn instrument_rows_are_appended() {
    let g = Gradient { r_s: vec![0.5, 0.25], r_p: vec![0.4, 0.2], d_r_s: vec![vec![1.0, -2.0]], d_r_p: vec![vec![3.0, 4.0]] };
    let m = apply_instrument(&g, 2.0, 1e-3);
    assert_eq!(m.r_s, vec![1.001, 0.501]);
    assert_eq!(m.r_p, vec![0.801, 0.401]);
    assert_eq!(m.d_r_s, vec![vec![2.0, -4.0], vec![0.5, 0.25], vec![1.0, 1.0]]);
    assert_eq!(m.d_r_p, vec![vec![6.0, 8.0], vec![0.4, 0.2], vec![1.0, 1.0]]);
}
