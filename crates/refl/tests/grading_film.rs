//! Depth profiles of a thick film (`scatterlab_refl::grading::graded_film`): linear endpoints,
//! PCHIP against scipy's `PchipInterpolator` (`data/grading_oracle.json`, made by
//! `data/make_grading_oracle.py`), the order-parameter mapping, thickness, convergence of R with
//! the sublayer count, the plotting profile, and named errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use scatterlab_refl::grading::{depth_samples, graded_film, DepthProfile, GradedFilm, OrientedMaterial, Sampling};
use scatterlab_refl::{cpu, CurveRequest, Layer, ReflError, Stack};
use serde_json::Value;

const MATERIAL: OrientedMaterial = OrientedMaterial { delta: 2.0e-3, beta: 1.1e-4, delta_birefringence: 6.0e-4, beta_birefringence: -1.5e-4 };

fn film(n: usize, density: DepthProfile, order: DepthProfile, sampling: Sampling) -> GradedFilm {
    GradedFilm { thickness: 200.0, roughness: 2.0, sublayers: n, material: MATERIAL, density, order, sampling }
}

fn linear(top: f64, bottom: f64) -> DepthProfile {
    DepthProfile::Linear { top, bottom }
}

fn constants(l: &Layer) -> [f64; 4] {
    [l.delta_o, l.beta_o, l.delta_e, l.beta_e]
}

#[test]
fn linear_profile_endpoints_are_exact() {
    let f = film(9, linear(0.8, 1.1), linear(0.9, -0.3), Sampling::Ends);
    let layers = graded_film(&f).unwrap();
    assert_eq!(constants(&layers[0]), MATERIAL.constants(0.9, 0.8));
    assert_eq!(constants(&layers[8]), MATERIAL.constants(-0.3, 1.1));
    assert_eq!(linear(0.1, 0.7).sample(&[0.0, 1.0], "p").unwrap(), vec![0.1, 0.7]);
    // Centres: sublayer k holds the profile at (k + ½)/N, written out here from the mapping.
    let centred = graded_film(&film(9, linear(0.8, 1.1), linear(0.9, -0.3), Sampling::Centres)).unwrap();
    for (k, l) in centred.iter().enumerate() {
        let t = (k as f64 + 0.5) / 9.0;
        let (rho, s) = (0.8 + 0.3 * t, 0.9 - 1.2 * t);
        let expected = [rho * (2.0e-3 - s * 6.0e-4 / 3.0), rho * (1.1e-4 + s * 1.5e-4 / 3.0), rho * (2.0e-3 + 2.0 * s * 6.0e-4 / 3.0), rho * (1.1e-4 - 2.0 * s * 1.5e-4 / 3.0)];
        for (got, want) in constants(l).iter().zip(expected) {
            assert!((got - want).abs() <= 1e-14 * want.abs(), "sublayer {k}: {got} vs {want}");
        }
    }
}

#[test]
fn spline_matches_scipy_pchip_and_passes_through_knots() {
    let v: Value = serde_json::from_str(include_str!("data/grading_oracle.json")).unwrap();
    let fractions: Vec<f64> = v["pchip_fractions"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    let mut worst: f64 = 0.0;
    for set in v["pchip"].as_array().unwrap() {
        let knots: Vec<(f64, f64)> = set["knots"].as_array().unwrap().iter().map(|k| (k[0].as_f64().unwrap(), k[1].as_f64().unwrap())).collect();
        let profile = DepthProfile::Spline { knots: knots.clone() };
        let got = profile.sample(&fractions, "spline").unwrap();
        for (g, want) in got.iter().zip(set["values"].as_array().unwrap()) {
            worst = worst.max((g - want.as_f64().unwrap()).abs());
        }
        let at_knots = profile.sample(&knots.iter().map(|k| k.0).collect::<Vec<_>>(), "spline").unwrap();
        assert_eq!(at_knots, knots.iter().map(|k| k.1).collect::<Vec<_>>());
        // No overshoot: monotone between knots means inside the knots' range.
        let (lo, hi) = knots.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), k| (a.min(k.1), b.max(k.1)));
        assert!(got.iter().all(|&g| g >= lo - 1e-15 && g <= hi + 1e-15));
    }
    eprintln!("PCHIP vs scipy: worst |Δ| {worst:.1e}");
    assert!(worst < 1e-14, "{worst:e}");
}

#[test]
fn order_parameter_mapping() {
    // S = 0: isotropic at the scaled density; any S keeps the trace; S = 1 gives the full Δ.
    let iso = graded_film(&film(4, linear(1.0, 0.5), DepthProfile::Constant(0.0), Sampling::Centres)).unwrap();
    for l in &iso {
        assert_eq!((l.delta_o, l.beta_o), (l.delta_e, l.beta_e));
        assert!((l.delta_o / l.beta_o - 2.0e-3 / 1.1e-4).abs() < 1e-12);
    }
    for s in [-0.5, 0.3, 1.0] {
        let [d_o, b_o, d_e, b_e] = MATERIAL.constants(s, 1.0);
        assert!(((2.0 * d_o + d_e) / 3.0 - 2.0e-3).abs() < 1e-18 && ((2.0 * b_o + b_e) / 3.0 - 1.1e-4).abs() < 1e-18);
        assert!((d_e - d_o - s * 6.0e-4).abs() < 1e-18 && (b_e - b_o + s * 1.5e-4).abs() < 1e-18);
    }
}

#[test]
fn thickness_roughness_and_convergence_in_sublayers() {
    let spline = DepthProfile::Spline { knots: vec![(0.0, 0.2), (0.3, 0.8), (0.7, 0.6), (1.0, -0.2)] };
    let make = |n: usize| graded_film(&film(n, linear(1.0, 0.7), spline.clone(), Sampling::Centres)).unwrap();
    let layers = make(7);
    assert!((layers.iter().map(|l| l.thickness).sum::<f64>() - 200.0).abs() < 1e-12);
    assert!(layers[0].roughness == 2.0 && layers[1..].iter().all(|l| l.roughness == 0.0));
    // R_s of vacuum | film | Si converges as 1/N² (midpoint sampling) towards the continuous film
    // once q·(200 Å/N) < 1. The film's top is smooth here: with a Névot–Croce σ on it, the factor
    // takes kz of the first sublayer, whose value moves by O(1/N), and convergence drops to 1/N.
    // (R_p is not compared: its Brewster minimum near q = 0.18 makes relative errors meaningless.)
    let q: Vec<f64> = (1..=120).map(|i| 0.002 * i as f64).collect();
    let r = |n: usize| {
        let mut stack = Stack { layers: vec![Layer::VACUUM] };
        stack.layers.extend(make(n).into_iter().map(|l| Layer { roughness: 0.0, ..l }));
        stack.layers.push(Layer::isotropic(0.0, 0.5, 5.97e-3, 4.25e-3));
        cpu::reflectivity(&CurveRequest { stack: &stack, energy_ev: 250.0, q: &q }).unwrap().r_s
    };
    let reference = r(5120);
    let errors: Vec<f64> = [40, 80, 160, 320].iter().map(|&n| common::max_rel(&r(n), &reference).0).collect();
    eprintln!("graded film, worst |ΔR_s|/R_s vs N = 5120 at N = 40, 80, 160, 320: {:?}", errors.iter().map(|e| format!("{e:.2e}")).collect::<Vec<_>>());
    assert!(errors.windows(2).all(|w| w[1] < w[0] / 3.5) && errors[3] < 3e-5, "{errors:?}");
}

#[test]
fn plotting_profile_shows_the_sublayers() {
    let layers = graded_film(&film(5, linear(1.0, 0.6), linear(0.0, 0.8), Sampling::Centres)).unwrap();
    let mut stack = Stack { layers: vec![Layer::VACUUM] };
    stack.layers.extend(layers.iter().map(|l| Layer { roughness: 0.0, ..*l }));
    stack.layers.push(Layer::isotropic(0.0, 0.0, 5.97e-3, 4.25e-3));
    let samples = depth_samples(&stack, 2001).unwrap();
    for (k, l) in layers.iter().enumerate() {
        let centre = 40.0 * k as f64 + 20.0;
        let i = samples.z.iter().position(|&z| z >= centre).unwrap();
        let c = samples.constants[i];
        assert_eq!([c.delta_o, c.beta_o, c.delta_e, c.beta_e], constants(l), "sublayer {k} at z = {}", samples.z[i]);
    }
}

#[test]
fn bad_inputs_are_named() {
    let object = |f: GradedFilm| match graded_film(&f) {
        Err(ReflError::Input(e)) => e.object,
        other => panic!("expected an input error, got {other:?}"),
    };
    let base = || film(4, DepthProfile::Constant(1.0), DepthProfile::Constant(0.5), Sampling::Centres);
    assert_eq!(object(GradedFilm { sublayers: 0, ..base() }), "graded film sublayers");
    assert_eq!(object(GradedFilm { thickness: -1.0, ..base() }), "graded film thickness");
    assert_eq!(object(GradedFilm { roughness: f64::NAN, ..base() }), "graded film roughness");
    let nan_material = OrientedMaterial { delta: f64::NAN, ..MATERIAL };
    assert_eq!(object(GradedFilm { material: nan_material, ..base() }), "graded film material delta");
    let nan_knot = DepthProfile::Spline { knots: vec![(0.0, 1.0), (1.0, f64::NAN)] };
    assert_eq!(object(GradedFilm { density: nan_knot, ..base() }), "graded film density knot 1 value");
    let unsorted = DepthProfile::Spline { knots: vec![(0.0, 0.1), (0.6, 0.2), (0.5, 0.3)] };
    assert_eq!(object(GradedFilm { order: unsorted, ..base() }), "graded film order parameter knot 2 depth fraction");
    let one = DepthProfile::Spline { knots: vec![(0.0, 0.1)] };
    assert_eq!(object(GradedFilm { order: one, ..base() }), "graded film order parameter knots");
    assert_eq!(object(GradedFilm { order: linear(0.5, 1.5), ..base() }), "graded film order parameter at sublayer 2");
    assert_eq!(object(GradedFilm { density: linear(1.0, -0.5), ..base() }), "graded film density at sublayer 3");
    // β̄ = 1.1e-4, Δβ = −4e-4, S = 1: β_e = β̄ + (2/3)SΔβ = −1.6e-4 would be gain, refused.
    let strong = OrientedMaterial { beta_birefringence: -4.0e-4, ..MATERIAL };
    assert_eq!(object(GradedFilm { material: strong, order: DepthProfile::Constant(1.0), ..base() }), "graded film absorption at sublayer 0");
    match depth_samples(&Stack { layers: vec![Layer::VACUUM, Layer::VACUUM] }, 1) {
        Err(ReflError::Input(e)) => assert_eq!(e.object, "depth profile points"),
        other => panic!("{other:?}"),
    }
}
