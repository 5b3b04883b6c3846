//! The WGSL kernel against its CPU f64 twin on fresh random stacks (seed printed on failure).
//! Tolerance: |R_gpu − R_cpu| ≤ 2e-3 · R_cpu + 1e-10 (the f32 gate of the fixtures, plus an
//! absolute floor for reflectances below 1e-7 where f32 interference cancellation dominates).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use rand::{Rng, SeedableRng};
use scatterlab_refl::{compute, CurveRequest, Engine, Layer, Stack};

const REL_TOL: f64 = 2e-3;
const ABS_FLOOR: f64 = 1e-10;

fn random_stack(rng: &mut impl Rng) -> Stack {
    let films = rng.gen_range(1..=12);
    let mut layers = vec![Layer::VACUUM];
    let optical = |rng: &mut dyn rand::RngCore| -> (f64, f64) {
        let delta = 10f64.powf(rng.gen_range(-4.0..-2.0));
        let beta = if rng.gen_bool(0.15) { 0.0 } else { delta * 10f64.powf(rng.gen_range(-2.5..0.0)) };
        (delta, beta)
    };
    for _ in 0..films {
        let (d_o, b_o) = optical(rng);
        let (d_e, b_e) = if rng.gen_bool(0.3) { (d_o, b_o) } else { optical(rng) };
        layers.push(Layer {
            thickness: rng.gen_range(0.0..400.0),
            roughness: if rng.gen_bool(0.3) { 0.0 } else { rng.gen_range(0.0..8.0) },
            delta_o: d_o,
            beta_o: b_o,
            delta_e: d_e,
            beta_e: b_e,
        });
    }
    let (d, b) = optical(rng);
    layers.push(Layer::isotropic(0.0, rng.gen_range(0.0..6.0), d, b));
    Stack { layers }
}

#[test]
fn gpu_kernel_matches_cpu_twin_on_random_stacks() {
    let Some(ctx) = common::gpu() else { return };
    let pipeline = pollster::block_on(scatterlab_refl::gpu::ParrattGpu::new(&ctx)).unwrap();
    let seed = scatterlab_testkit::seed("refl GPU twin");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let curves: Vec<(Stack, f64, Vec<f64>)> = (0..64)
        .map(|_| {
            let stack = random_stack(&mut rng);
            let energy = rng.gen_range(200.0..1500.0);
            let q_max = 2.0 * scatterlab_core::units::photon_k0(energy) * rng.gen_range(0.1..0.6);
            let q = (1..=100).map(|i| q_max * i as f64 / 100.0).collect();
            (stack, energy, q)
        })
        .collect();
    let requests: Vec<_> = curves.iter().map(|(s, e, q)| CurveRequest { stack: s, energy_ev: *e, q }).collect();
    let cpu = pollster::block_on(compute(Engine::Cpu, &requests)).unwrap();
    let gpu = pollster::block_on(compute(Engine::Gpu(&pipeline), &requests)).unwrap();
    let mut worst = 0.0f64;
    for (i, (c, g)) in cpu.iter().zip(&gpu).enumerate() {
        for (pol, cv, gv) in [("R_s", &c.r_s, &g.r_s), ("R_p", &c.r_p, &g.r_p)] {
            for (j, (x, y)) in gv.iter().zip(cv).enumerate() {
                let excess = (x - y).abs() / (REL_TOL * y + ABS_FLOOR);
                worst = worst.max(excess);
                assert!(excess <= 1.0, "seed {seed}: curve {i} {pol} q[{j}]: gpu {x} vs cpu {y}\nstack {:?}", curves[i].0);
            }
        }
    }
    eprintln!("seed {seed}: worst deviation {worst:.3} of the tolerance");
}
