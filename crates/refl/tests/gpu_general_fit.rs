//! Tilted models on the GPU (issue 21 item 2): `Model::evaluate` with a GPU engine runs the df64
//! 4×4 kernel for the whole population × datasets × quadrature nodes in one dispatch and equals
//! the CPU within 1e-6 · R + 1e-13 on every polarisation channel (s, p, ss, pp, sp, ps) with
//! resolution smearing; a seeded DE fit of a tilted film on the GPU reaches the CPU fit's χ²
//! within 0.1 %.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{self, DeOptions, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use scatterlab_refl::Engine;

const FILM: &str = include_str!("data/models/film_de_trajectory.json");

/// The DE-trajectory film made tilted and uniaxial: c axis at (φ, θ) = (30°, 40°), δ_e fixed.
fn tilted(f: impl FnOnce(&mut serde_json::Value)) -> Model {
    let mut v: serde_json::Value = serde_json::from_str(FILM).unwrap();
    v["materials"]["film"] = serde_json::json!({"kind": "uniaxial", "delta_o": "film_delta", "beta_o": 2e-4, "delta_e": 2.6e-3, "beta_e": 5e-4});
    v["layers"][1]["euler_deg"] = serde_json::json!([30.0, 40.0, 0.0]);
    f(&mut v);
    Model::from_json(&v.to_string()).expect("tilted model")
}

#[test]
fn tilted_model_population_on_the_gpu_equals_the_cpu() {
    let Some(pipeline) = common::general_pipeline() else { return };
    // Six datasets, one per channel, smeared at 1 % dQ/Q (17 nodes per point, to stay small on lavapipe); a population of 5 members.
    let model = tilted(|v| {
        let base = v["datasets"][0].clone();
        let mut sets = Vec::new();
        for pol in ["s", "p", "ss", "pp", "sp", "ps"] {
            let mut d = base.clone();
            d["name"] = format!("250 eV {pol}").into();
            d["polarization"] = pol.into();
            d["instrument"] = serde_json::json!({"resolution": {"kind": "constant_dq_over_q", "fwhm": 0.01}, "smearing": "refnx17"});
            sets.push(d);
        }
        v["datasets"] = sets.into();
    });
    assert!(model.needs_general());
    let base = model.values().to_vec();
    let population: Vec<Vec<f64>> = (0..5).map(|m| base.iter().map(|x| x * (1.0 + 0.02 * m as f64)).collect()).collect();
    let refs: Vec<&[f64]> = population.iter().map(|p| p.as_slice()).collect();
    let cpu = pollster::block_on(model.evaluate(Engine::Cpu, &refs)).unwrap();
    let gpu = pollster::block_on(model.evaluate(Engine::Gpu(pipeline), &refs)).unwrap();
    let mut worst = (0.0f64, String::new());
    for (m, (cm, gm)) in cpu.iter().zip(&gpu).enumerate() {
        for (d, (c, g)) in cm.iter().zip(gm).enumerate() {
            for (k, (x, y)) in g.iter().zip(c).enumerate() {
                let e = (x - y).abs() / (1e-6 * y.abs() + 1e-13);
                if e > worst.0 || e.is_nan() {
                    worst = (e, format!("member {m} dataset {d} q[{k}]: gpu {x:e} cpu {y:e}"));
                }
            }
        }
    }
    eprintln!("tilted model, 5 members × 6 channels smeared: GPU vs CPU worst {:.2e} of the allowance ({})", worst.0, worst.1);
    assert!(worst.0 <= 1.0, "{}", worst.1);
    // The cross-polarised channels are not zero here (the tilted axis couples s and p).
    assert!(cpu[0][4].iter().all(|r| *r > 0.0) && cpu[0][5].iter().all(|r| *r > 0.0));
}

#[test]
fn seeded_de_fit_of_a_tilted_film_on_the_gpu_reaches_the_cpu_chi2() {
    let Some(pipeline) = common::general_pipeline() else { return };
    // Data: the tilted model at its values with the trajectory file's ±3 % ripple and 3 % errors.
    let truth = tilted(|_| {});
    let values = truth.values().to_vec();
    let r0 = pollster::block_on(truth.evaluate(Engine::Cpu, &[&values])).unwrap().remove(0).remove(0);
    let r: Vec<f64> = r0.iter().enumerate().map(|(i, r)| r * (1.0 + 0.03 * (1.7 * i as f64).sin())).collect();
    let dr: Vec<f64> = r.iter().map(|r| 0.03 * r).collect();
    let model = tilted(|v| {
        v["datasets"][0]["R"] = r.clone().into();
        v["datasets"][0]["dR"] = dr.clone().into();
    });
    let objective = Objective::new(&model, ObjectiveOptions::default()).unwrap();
    let seed = scatterlab_testkit::seed_or("tilted DE fit", 11);
    let options = DeOptions { seed, max_generations: 40, popsize: 10, ..Default::default() };
    let run = |engine: Engine<'_>| pollster::block_on(fit::differential_evolution(&objective, engine, &options, None, &mut |_| {}, &CancelToken::new())).unwrap();
    let cpu = run(Engine::Cpu);
    let gpu = run(Engine::Gpu(pipeline));
    let (c, g) = (cpu.chi2, gpu.chi2);
    eprintln!("tilted DE fit (seed {seed}): χ² CPU {c:.6} ({} generations), GPU {g:.6} ({} generations), relative {:.2e}", cpu.generations, gpu.generations, (g - c).abs() / c);
    assert!((g - c).abs() <= 1e-3 * c, "χ² GPU {g} vs CPU {c}");
}
