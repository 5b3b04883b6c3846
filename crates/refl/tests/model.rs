//! The JSON model format: parsing, errors that name the key, serde round trip, links, batched
//! evaluation (CPU and one GPU call) and the exact Jacobian against central differences.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use scatterlab_refl::model::{BuiltStack, Model, ModelFile};
use scatterlab_refl::{compute_smeared, CurveRequest, Engine, Resolution, SmearedRequest};

const EXAMPLE: &str = include_str!("data/models/film_two_energies.json");

fn example() -> Model {
    Model::from_json(EXAMPLE).expect("example model")
}

fn edited(f: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(EXAMPLE).unwrap();
    f(&mut v);
    v.to_string()
}

#[test]
fn serde_round_trip_keeps_the_model() {
    let model = example();
    let text = model.to_json(model.values()).unwrap();
    let again = Model::from_json(&text).unwrap();
    assert_eq!(again.file(), model.file());
    let file: ModelFile = serde_json::from_str(&text).unwrap();
    assert_eq!(&file, model.file());
}

#[test]
fn unknown_keys_are_rejected_by_name() {
    for (path, key) in [("", "colour"), ("layers/1", "thicknes"), ("datasets/0/instrument", "offset"), ("parameters/film_d", "min")] {
        let text = edited(|v| {
            let target = if path.is_empty() { v } else { v.pointer_mut(&format!("/{path}")).unwrap() };
            target.as_object_mut().unwrap().insert(key.into(), 1.0.into());
        });
        let err = Model::from_json(&text).unwrap_err().to_string();
        assert!(err.contains(key), "{path}: {err}");
    }
    let err = Model::from_json(&edited(|v| v["materials"]["Si"]["densty"] = 2.0.into())).unwrap_err().to_string();
    assert!(err.contains("densty"), "{err}");
}

#[test]
fn bad_references_and_values_name_the_object() {
    let cases: [(&dyn Fn(&mut serde_json::Value), &str); 6] = [
        (&|v| v["layers"][1]["thickness"] = "film_thick".into(), "film_thick"),
        (&|v| v["layers"][2]["material"] = "SiO3".into(), "SiO3"),
        (&|v| v["parameters"]["film_d"]["bounds"] = serde_json::json!([400, 500]), "film_d"),
        (&|v| v["parameters"]["film_d"].as_object_mut().unwrap().remove("bounds").map(|_| ()).unwrap(), "film_d"),
        (&|v| v["materials"]["Si"]["formula"] = "Xx2".into(), "Xx"),
        (&|v| v["version"] = 7.into(), "version"),
    ];
    for (edit, needle) in cases {
        let err = Model::from_json(&edited(|v| edit(v))).unwrap_err().to_string();
        assert!(err.contains(needle), "{needle}: {err}");
    }
    let model = example();
    let mut values = model.values().to_vec();
    values[0] = f64::NAN;
    let err = model.stack(0, &values).unwrap_err().to_string();
    assert!(err.contains(&model.parameter_names()[0]), "{err}");
}

#[test]
fn evaluation_equals_the_engine_on_the_built_stack() {
    let model = example();
    let values = model.values().to_vec();
    let curves = pollster::block_on(model.evaluate(Engine::Cpu, &[&values])).unwrap();
    let names = model.parameter_names();
    let get = |n: &str| values[names.iter().position(|x| x == n).unwrap()];
    let BuiltStack::Uniaxial(stack) = model.stack(0, &values).unwrap() else { panic!("uniaxial expected") };
    // Film constants are the linked per-energy parameters, scaled oxide density applied.
    assert_eq!(stack.layers[1].delta_o, get("film_delta_o_250"));
    assert_eq!(stack.layers[1].thickness, get("film_d"));
    let q: Vec<f64> = model.datasets()[0].q.iter().map(|q| q + get("q_shift")).collect();
    let res = Resolution::ConstantDqOverQ(get("res"));
    let request = SmearedRequest { curve: CurveRequest { stack: &stack, energy_ev: 250.0 + get("e_shift"), q: &q }, resolution: &res, smearing: Default::default() };
    let direct = pollster::block_on(compute_smeared(Engine::Cpu, &[request])).unwrap();
    for (m, r) in curves[0][0].iter().zip(&direct[0].r_s) {
        let expect = get("scale") * r + get("bkg");
        assert!((m - expect).abs() <= 1e-15 * expect, "{m} vs {expect}");
    }
}

/// Largest relative difference between the exact Jacobian and central differences, and where.
fn worst_jacobian_error(model: &Model, values: &[f64], wrt: &[usize], jac: &scatterlab_refl::model::ModelJacobian) -> (f64, String) {
    let mut worst = (0.0, String::new());
    for (k, &p) in wrt.iter().enumerate() {
        // A step of 1e-4 of the bound range: small against every curvature scale here, large
        // against rounding (the background's range is 1e-6 next to R ≈ 1).
        let h = 1e-4 * model.bounds(p).map_or(1.0, |b| b[1] - b[0]);
        let at = |x: f64| {
            let mut v = values.to_vec();
            v[p] = x;
            pollster::block_on(model.evaluate(Engine::Cpu, &[&v])).unwrap().remove(0)
        };
        let (plus, minus) = (at(values[p] + h), at(values[p] - h));
        for d in 0..plus.len() {
            let row_scale = jac.d[d][k].iter().fold(0.0f64, |m, x| m.max(x.abs()));
            for i in 0..plus[d].len() {
                let numeric = (plus[d][i] - minus[d][i]) / (2.0 * h);
                let err = (jac.d[d][k][i] - numeric).abs() / numeric.abs().max(1e-3 * row_scale).max(1e-300);
                if err > worst.0 {
                    worst = (err, format!("{} dataset {d} q[{i}]: exact {} numeric {numeric}", model.parameter_names()[p], jac.d[d][k][i]));
                }
            }
        }
    }
    worst
}

#[test]
fn jacobian_matches_central_differences() {
    let model = example();
    let values = model.values().to_vec();
    let wrt = model.varying();
    assert_eq!(wrt.len(), model.parameter_names().len());
    let jac = model.jacobian(&values, &wrt).unwrap();
    let base = pollster::block_on(model.evaluate(Engine::Cpu, &[&values])).unwrap();
    for (d, curve) in base[0].iter().enumerate() {
        let worst = curve.iter().zip(&jac.curves[d]).map(|(a, b)| ((a - b) / a).abs()).fold(0.0, f64::max);
        assert!(worst < 1e-12, "dataset {d}: Jacobian curve differs from evaluate by {worst:e}");
    }
    let worst = worst_jacobian_error(&model, &values, &wrt, &jac);
    println!("worst relative Jacobian error {:.2e} at {}", worst.0, worst.1);
    assert!(worst.0 < 2e-5, "worst relative Jacobian error {:.2e} at {}", worst.0, worst.1);
}

#[test]
fn a_population_is_one_gpu_call_matching_the_cpu() {
    let Some(ctx) = common::gpu() else { return };
    let pipeline = pollster::block_on(scatterlab_refl::gpu::ParrattGpu::new(&ctx)).unwrap();
    let model = example();
    let population: Vec<Vec<f64>> = (0..8)
        .map(|m| {
            let mut v = model.values().to_vec();
            v[0] *= 1.0 + 0.01 * m as f64; // vary the first parameter across the population
            v
        })
        .collect();
    let refs: Vec<&[f64]> = population.iter().map(|v| v.as_slice()).collect();
    let cpu = pollster::block_on(model.evaluate(Engine::Cpu, &refs)).unwrap();
    let gpu = pollster::block_on(model.evaluate(Engine::Gpu(&pipeline), &refs)).unwrap();
    let mut worst: f64 = 0.0;
    for (c, g) in cpu.iter().flatten().flatten().zip(gpu.iter().flatten().flatten()) {
        worst = worst.max((c - g).abs() / c);
    }
    println!("population of 8 × 2 datasets: GPU vs CPU worst relative {worst:.2e}");
    assert!(worst <= 2e-3, "{worst}");
}

#[test]
fn tilted_models_run_on_the_cpu_and_the_gpu() {
    let text = edited(|v| v["layers"][1]["euler_deg"] = serde_json::json!([0.0, 30.0, 0.0]));
    let model = Model::from_json(&text).unwrap();
    assert!(model.needs_general());
    let values = model.values().to_vec();
    let curves = pollster::block_on(model.evaluate(Engine::Cpu, &[&values])).unwrap();
    assert!(curves[0].iter().flatten().all(|r| r.is_finite() && *r > 0.0));
    if let Some(ctx) = common::gpu() {
        // The df64 4×4 kernel (issue 21): the CPU's numbers within 1e-6 · R + 1e-13.
        let pipeline = pollster::block_on(scatterlab_refl::gpu::ParrattGpu::new(&ctx)).unwrap();
        let gpu = pollster::block_on(model.evaluate(Engine::Gpu(&pipeline), &[&values])).unwrap();
        for (c, g) in curves[0].iter().flatten().zip(gpu[0].iter().flatten()) {
            assert!((c - g).abs() <= 1e-6 * c + 1e-13, "GPU {g} vs CPU {c}");
        }
    }
}

#[test]
fn tilted_model_jacobian_matches_central_differences() {
    let text = edited(|v| {
        v["parameters"]["tilt"] = serde_json::json!({"value": 35.0, "bounds": [0.0, 90.0], "vary": true});
        v["layers"][1]["euler_deg"] = serde_json::json!([20.0, "tilt", 0.0]);
    });
    let model = Model::from_json(&text).unwrap();
    let values = model.values().to_vec();
    let names = model.parameter_names();
    // q offset and resolution width have no 4×4 derivative yet: the Jacobian says so by name.
    let q_shift = names.iter().position(|n| n == "q_shift").unwrap();
    let err = model.jacobian(&values, &[q_shift]).unwrap_err().to_string();
    assert!(err.contains("q-offset"), "{err}");
    let wrt: Vec<usize> = (0..names.len()).filter(|&p| names[p] != "q_shift" && names[p] != "res").collect();
    let jac = model.jacobian(&values, &wrt).unwrap();
    let worst = worst_jacobian_error(&model, &values, &wrt, &jac);
    println!("tilted model: worst relative Jacobian error {:.2e} at {}", worst.0, worst.1);
    assert!(worst.0 < 2e-5, "worst relative Jacobian error {:.2e} at {}", worst.0, worst.1);
}
