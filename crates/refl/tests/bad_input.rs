//! Issue 25 (reflectivity): bad input never crashes and never yields a silent NaN. Every absurd
//! number of the adversarial campaign ends in an error naming the object, the value and the limit;
//! a stack that passes validation but still overflows is caught by the output check, on the CPU
//! and the GPU alike; budgets are checked before allocation.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use scatterlab_refl::fit::{Objective, ObjectiveOptions};
use scatterlab_refl::input::{parse_json, read_text_limited};
use scatterlab_refl::limits::{MAX_LAYERS, MAX_Q_POINTS};
use scatterlab_refl::model::Model;
use scatterlab_refl::{compute, compute_each, compute_smeared, CurveRequest, Engine, Layer, ReflError, Resolution, SmearedRequest, Stack};

const EXAMPLE: &str = include_str!("data/models/film_two_energies.json");

fn film(edit: impl FnOnce(&mut Layer)) -> Stack {
    let mut film = Layer { thickness: 100.0, roughness: 3.0, delta_o: 1e-3, beta_o: 1e-4, delta_e: 2e-3, beta_e: 1e-4 };
    edit(&mut film);
    Stack { layers: vec![Layer::VACUUM, film, Layer::isotropic(0.0, 2.0, 5e-3, 4e-3)] }
}

fn message(e: ReflError) -> String {
    e.to_string()
}

fn rejected(stack: &Stack, energy_ev: f64) -> String {
    let q = [0.01, 0.1];
    let request = CurveRequest { stack, energy_ev, q: &q };
    message(pollster::block_on(compute(Engine::Cpu, &[request])).expect_err("must be rejected"))
}

/// One campaign mutation: its name, the edit of the film, and the text its error must contain.
type Mutation = (&'static str, fn(&mut Layer), &'static str);

#[test]
fn absurd_layer_numbers_are_named_with_value_and_limit() {
    let cases: [Mutation; 9] = [
        ("thickness 1e200", |l| l.thickness = 1e200, "layer 1 thickness: 1e200 Å is above the limit 1e7 Å"),
        ("roughness 1e154", |l| l.roughness = 1e154, "layer 1 roughness: 1e154 Å is above the limit 10000 Å"),
        ("delta +1e308", |l| l.delta_o = 1e308, "layer 1 delta_o: 1e308 is above the limit 1"),
        ("delta -1e308", |l| l.delta_e = -1e308, "layer 1 delta_e: -1e308 is below the limit -1"),
        ("beta +1e308", |l| l.beta_o = 1e308, "layer 1 beta_o: 1e308 is above the limit 1"),
        ("beta -1e308", |l| l.beta_e = -1e308, "layer 1 beta_e: -1e308 is below the limit -1"),
        ("negative thickness", |l| l.thickness = -5.0, "layer 1 thickness: -5 Å is below the limit 0 Å"),
        ("NaN roughness", |l| l.roughness = f64::NAN, "layer 1 roughness: not a finite number"),
        ("epsilon zero", |l| (l.delta_o, l.beta_o) = (0.5, 0.0), "layer 1 delta_o, beta_o: δ = 0.5, β = 0 give |ε|"),
    ];
    for (what, edit, expected) in cases {
        let e = rejected(&film(edit), 250.0);
        assert!(e.contains(expected), "{what}: {e}");
        assert!(e.contains("curve 0"), "{what}: {e}");
    }
}

#[test]
fn energies_outside_the_physical_range_are_rejected() {
    for (energy, expected) in [(1e12, "energy: 1e12 eV is above the limit 1e6 eV"), (1e-300, "below the limit 1 eV"), (f64::INFINITY, "not a finite number")] {
        let e = rejected(&film(|_| ()), energy);
        assert!(e.contains(expected), "{energy}: {e}");
    }
}

#[test]
fn layer_and_point_budgets_are_checked_before_the_work() {
    let mut layers = vec![Layer::isotropic(10.0, 0.0, 1e-3, 1e-4); MAX_LAYERS + 1];
    layers[0] = Layer::VACUUM;
    let e = message(Stack { layers }.validate().unwrap_err());
    assert!(e.contains(&format!("stack: has {} layers, more than the limit of {MAX_LAYERS}", MAX_LAYERS + 1)), "{e}");

    let stack = film(|_| ());
    let q = vec![0.05; MAX_Q_POINTS + 1];
    let e = message(CurveRequest { stack: &stack, energy_ev: 250.0, q: &q }.validate().unwrap_err());
    assert!(e.contains(&format!("q: has {} points, more than the limit of {MAX_Q_POINTS}", MAX_Q_POINTS + 1)), "{e}");
}

/// Inside every limit, yet the recursion overflows: at 1 MeV both films are evanescent
/// (δ ≈ 1, ε ≈ −1), so the Névot–Croce factor exp(−2 k_a k_b σ²) = exp(+2 κ_a κ_b σ²) is infinite
/// for σ = 10⁴ Å.
fn overflowing() -> Stack {
    Stack { layers: vec![Layer::VACUUM, Layer::isotropic(10.0, 0.0, 1.0, 0.0), Layer::isotropic(0.0, 1e4, 0.9, 0.0)] }
}

#[test]
fn a_non_finite_result_is_an_error_naming_curve_and_point() {
    let (bad, good) = (overflowing(), film(|_| ()));
    assert!(bad.validate().is_ok(), "the overflow must get past validation for this test to mean anything");
    let q = [1.0, 2.0];
    let q_good = [0.01, 0.1];
    let requests = [CurveRequest { stack: &good, energy_ev: 250.0, q: &q_good }, CurveRequest { stack: &bad, energy_ev: 1e6, q: &q }];
    let e = message(pollster::block_on(compute(Engine::Cpu, &requests)).unwrap_err());
    assert!(e.starts_with("non-finite result: curve 1: q[0]:") && e.contains("at q = 1 Å⁻¹"), "{e}");

    // compute_each: the good curve keeps its result, the bad one fails alone.
    let each = pollster::block_on(compute_each(Engine::Cpu, &requests)).unwrap();
    assert!(each[0].as_ref().is_ok_and(|r| r.r_s.iter().chain(&r.r_p).all(|v| v.is_finite())));
    assert!(matches!(each[1], Err(ReflError::NonFinite(_))), "{:?}", each[1]);

    // Smeared curves are checked at their nominal q (what the user knows), not at quadrature nodes.
    let resolution = Resolution::ConstantDqOverQ(0.01);
    let smeared = SmearedRequest { curve: requests[1], resolution: &resolution, smearing: Default::default() };
    let e = message(pollster::block_on(compute_smeared(Engine::Cpu, &[smeared])).unwrap_err());
    assert!(e.starts_with("non-finite result: curve 0: q[0]:") && e.contains("at q = 1 Å⁻¹"), "{e}");
}

#[test]
fn the_gpu_result_is_checked_too() {
    let Some(ctx) = common::gpu() else { return };
    let pipeline = pollster::block_on(scatterlab_refl::gpu::ParrattGpu::new(&ctx)).unwrap();
    let bad = overflowing();
    let q = [1.0, 2.0];
    let request = CurveRequest { stack: &bad, energy_ev: 1e6, q: &q };
    let each = pollster::block_on(compute_each(Engine::Gpu(&pipeline), &[request])).unwrap();
    match &each[0] {
        Err(ReflError::NonFinite(e)) => assert!(e.object.starts_with("q["), "{e}"),
        // f32 may saturate differently; a finite GPU answer must then be a reflectance.
        Ok(r) => assert!(r.r_s.iter().chain(&r.r_p).all(|v| v.is_finite() && *v <= 1.0 + 1e-3), "{r:?}"),
        Err(other) => panic!("unexpected error {other}"),
    }
}

fn edited(f: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(EXAMPLE).unwrap();
    f(&mut v);
    v.to_string()
}

#[test]
fn model_density_scale_and_instrument_terms_are_bounded() {
    let cases: [(&str, serde_json::Value, &str); 4] = [
        ("/layers/2/density_scale", 1e154.into(), "layer 2 'oxide' density_scale: 1e154 is above the limit 100"),
        ("/layers/2/density_scale", (-0.5).into(), "layer 2 'oxide' density_scale: -0.5 is below the limit 0"),
        ("/datasets/1/instrument/scale", (-1.0).into(), "dataset 1 '285.1 eV p' scale: -1 is below the limit 0"),
        ("/datasets/1/instrument/background", 1e300.into(), "dataset 1 '285.1 eV p' background: 1e300 is above the limit"),
    ];
    for (pointer, value, expected) in cases {
        let text = edited(|v| *v.pointer_mut(pointer).unwrap() = value);
        let e = message(Model::from_json(&text).unwrap_err());
        assert!(e.contains(expected), "{pointer}: {e}");
    }
    // The same limits hold for parameter values (a fitter's trial vectors), not only fixed numbers.
    let model = Model::from_json(EXAMPLE).unwrap();
    let mut values = model.values().to_vec();
    let i = model.parameter_names().iter().position(|n| n == "oxide_fill").unwrap();
    values[i] = 1e154;
    let e = message(pollster::block_on(model.evaluate(Engine::Cpu, &[&values])).unwrap_err());
    assert!(e.contains("density_scale: 1e154 is above the limit 100"), "{e}");
}

#[test]
fn fit_data_must_be_finite_and_sane() {
    for (r, dr, expected) in [
        (1e154, 0.01, "R = 1e154 is beyond the limit |R| ≤ 1e12"),
        (f64::NAN, 0.01, "R = NaN is not a finite number"),
        (0.5, 0.0, "dR = 0 is below the limit 1e-100"),
        (0.5, -1.0, "dR = -1 is below the limit"),
        (0.5, 1e-300, "dR = 1e-300 is below the limit 1e-100"),
    ] {
        let text = edited(|v| {
            let d = &mut v["datasets"][1];
            let n = d["q"].as_array().unwrap().len();
            let rs = vec![serde_json::Value::from(0.01); n];
            let mut drs = vec![serde_json::Value::from(0.001); n];
            drs[7] = serde_json::Value::from(dr);
            d["R"] = rs.into();
            d["dR"] = drs.into();
            v["datasets"].as_array_mut().unwrap().remove(0);
        });
        // NaN has no JSON form: check the objective on a model whose data were set in memory.
        let mut file: scatterlab_refl::model::ModelFile = serde_json::from_str(&text).unwrap();
        if let Some(col) = file.datasets[0].r.as_mut() {
            col[7] = r;
        }
        let model = Model::new(file).unwrap();
        let e = message(Objective::new(&model, ObjectiveOptions::default()).unwrap_err());
        assert!(e.contains("dataset 0 '285.1 eV p' point 7") && e.contains(expected), "{r} {dr}: {e}");
    }
}

#[test]
fn inputs_are_read_under_a_size_limit() {
    // An endless input (like /dev/zero) stops at the limit with an error that states it.
    let e = message(read_text_limited(std::io::repeat(0), 1 << 20, "stdin").unwrap_err());
    assert!(e.contains("stdin") && e.contains("larger than the input limit of 1048576 bytes"), "{e}");
    assert_eq!(read_text_limited(&b"{}"[..], 2, "tiny").unwrap(), "{}");
}

#[test]
fn a_json_syntax_error_is_reported_where_it_is() {
    // An unknown key comes first, the syntax error (a missing comma) on line 3: the syntax error wins.
    let text = "{\n  \"description\": \"x\",\n  \"format\": \"scatterlab-refl-model\" \"version\": 1\n}";
    let e = message(parse_json::<scatterlab_refl::model::ModelFile>(text, "model file").unwrap_err());
    assert!(e.contains("JSON syntax error") && e.contains("line 3 column 37"), "{e}");
    assert!(!e.contains("unknown field"), "{e}");
    // A well-formed file still gets its typed error with its own location.
    let text = "{\n  \"description\": \"x\"\n}";
    let e = message(parse_json::<scatterlab_refl::model::ModelFile>(text, "model file").unwrap_err());
    assert!(e.contains("unknown field `description`") && e.contains("line 2"), "{e}");
}
