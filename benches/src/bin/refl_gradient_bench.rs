//! Cost of exact gradients (`scatterlab_refl::gradient`) against the plain CPU f64 curve on a
//! 20-layer uniaxial stack (vacuum | 18 rough graded films | Si) at 250 eV, 500 q, one thread.
//! Prints median seconds and the ratio to `cpu::reflectivity` (the vectorised production path)
//! and to `cpu::reflectivity_reference` (the scalar recursion the jets mirror), for 0 … all
//! parameters, and the cost per parameter.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use scatterlab_refl::gradient::{reflectivity_gradient, smeared_gradient, LayerParam, Param};
use scatterlab_refl::{cpu, CurveRequest, Layer, Resolution, SmearedRequest, Stack};
use std::time::Instant;

const ENERGY_EV: f64 = 250.0;
const FILMS: usize = 18;
const N_Q: usize = 500;

fn stack() -> Stack {
    let mut layers = vec![Layer::VACUUM];
    for j in 0..FILMS {
        let f = j as f64 / (FILMS - 1) as f64;
        layers.push(Layer {
            thickness: 15.0 + 10.0 * f,
            roughness: 2.0 + f,
            delta_o: 1.8e-3 * (1.0 + 0.15 * f),
            beta_o: 1.0e-4 * (1.0 + 0.2 * f),
            delta_e: 2.2e-3 * (1.0 - 0.1 * f),
            beta_e: 1.2e-4 * (1.0 + 0.1 * f),
        });
    }
    layers.push(Layer::isotropic(0.0, 3.0, 5.97e-3, 4.25e-3));
    Stack { layers }
}

/// The first `n` of: energy, q offset, then thickness, roughness, δ_o, β_o, δ_e, β_e of layers 1, 2, ….
fn params(n: usize) -> Vec<Param> {
    let fields = [LayerParam::Thickness, LayerParam::Roughness, LayerParam::DeltaO, LayerParam::BetaO, LayerParam::DeltaE, LayerParam::BetaE];
    let mut all = vec![Param::Energy, Param::QOffset];
    for layer in 1..FILMS + 2 {
        all.extend(fields.iter().map(|&param| Param::Layer { layer, param }));
    }
    all.truncate(n);
    all
}

/// The fastest of `reps` runs after a warm-up, in seconds: the machine is shared, and the
/// minimum is the least disturbed by other work.
fn min_seconds(reps: usize, mut f: impl FnMut()) -> f64 {
    f();
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let s = stack();
    let q: Vec<f64> = (0..N_Q).map(|i| 0.002 + (0.23 - 0.002) * i as f64 / (N_Q - 1) as f64).collect();
    let request = CurveRequest { stack: &s, energy_ev: ENERGY_EV, q: &q };
    let reps = 30;
    let plain = min_seconds(reps, || {
        std::hint::black_box(cpu::reflectivity(&request).expect("valid"));
    });
    let scalar = min_seconds(reps, || {
        std::hint::black_box(cpu::reflectivity_reference(&request).expect("valid"));
    });
    println!("{} layers, {N_Q} q, {ENERGY_EV} eV, one thread", s.layers.len());
    println!("cpu::reflectivity (vectorised)   {plain:.3e} s");
    println!("cpu::reflectivity_reference      {scalar:.3e} s");
    println!("{:>7} | {:>11} | {:>10} | {:>10} | {:>14}", "params", "gradient s", "/ cpu", "/ scalar", "per param / cpu");
    let all = 6 * (FILMS + 1) + 2;
    for n in [0, 1, 2, 4, 8, 16, 32, all] {
        let p = params(n);
        let t = min_seconds(reps, || {
            std::hint::black_box(reflectivity_gradient(&request, &p).expect("valid"));
        });
        let per = if n == 0 { "-".to_owned() } else { format!("{:.2}", t / plain / n as f64) };
        println!("{n:>7} | {t:>11.3e} | {:>10.2} | {:>10.2} | {per:>14}", t / plain, t / scalar);
    }
    // Smeared (17 nodes per q) with 8 parameters incl. the dQ/Q width, against smearing the plain curve.
    let resolution = Resolution::ConstantDqOverQ(0.05);
    let smeared = SmearedRequest { curve: request, resolution: &resolution, smearing: Default::default() };
    let mut p = params(7);
    p.push(Param::Resolution);
    let t_grad = min_seconds(10, || {
        std::hint::black_box(smeared_gradient(&smeared, &p).expect("valid"));
    });
    let t_plain = min_seconds(10, || {
        std::hint::black_box(pollster::block_on(scatterlab_refl::compute_smeared(scatterlab_refl::Engine::Cpu, &[smeared])).expect("valid"));
    });
    println!("smeared 5 % dQ/Q, 8 params: gradient {t_grad:.3e} s, plain smeared {t_plain:.3e} s, ratio {:.2}", t_grad / t_plain);
}
