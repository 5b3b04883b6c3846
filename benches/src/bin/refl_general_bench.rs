//! The general 4×4 method on a tilted biaxial stack of 100 layers (250 eV, 256 q): scatterlab's
//! CPU f64 kernel on one thread vs refloxide 0.3.0's `general_reflectivity` (serial), in the same
//! run when Python ≥ 3.12 with `refloxide` is available (`SCATTERLAB_BENCH_PYTHON=/path/to/python`,
//! default `~/.cache/scatterlab/bench-venv/bin/python`). Two variants: "smooth" (no roughness)
//! and "rough" (3 Å on every interface). Prints median seconds, µs per q·layer step (also from the
//! fastest run, for a noisy shared machine), the ratio of medians,
//! and the largest relative difference of the four reflectances from refloxide's (R > 1e-10).
//! With roughness next to coupled layers the two codes use different Névot–Croce rules
//! (CONVENTIONS.md), so the "rough" difference is physics, not error.
//! Then the same stacks on the GPU in df64 (`shaders/refl/general_df64.wgsl`, the adapter at hand:
//! lavapipe here), one curve and a population of 8 in one dispatch, with the largest relative
//! difference from the CPU f64 (R > 1e-10); "GPU column skipped" says why when there is no adapter.
//! The last line is JSON, `{"native_general": {variant: {"seconds": median, "checksum": Σ R}}}`,
//! for `benches/web/refl_wasm.mjs` (the wasm/native ratio of the 4×4; the checksum is the sum of
//! the four reflectances over q, which the wasm export `reflGeneralBench` also returns).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use std::time::Instant;

use scatterlab_benches::timing::median_seconds;
use scatterlab_refl::general::{self, general_reflectivity, GeneralReflectivity, GeneralRequest, GeneralStack, TensorLayer};
use scatterlab_refl::Engine;

const N: usize = 100;
const ENERGY_EV: f64 = 250.0;
const VARIANTS: [&str; 2] = ["smooth", "rough"];

/// The shape of benches/python/refloxide_general.py (same formulas).
fn shape(rough: bool) -> GeneralStack {
    let sigma = if rough { 3.0 } else { 0.0 };
    let mut layers = vec![TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0)];
    for j in 0..N {
        let (f, jf) = (j as f64 / (N - 1) as f64, j as f64);
        layers.push(TensorLayer {
            thickness: 2.0,
            roughness: sigma,
            delta: [1.8e-3 * (1.0 + 0.15 * f), 2.0e-3 * (1.0 - 0.1 * f), 2.2e-3 * (1.0 + 0.05 * f)],
            beta: [1.0e-4 * (1.0 + 0.2 * f), 1.5e-4, 1.2e-4 * (1.0 + 0.1 * f)],
            euler_deg: [37.0 + 2.5 * jf, 50.0 + 0.3 * jf, 10.0 + 1.7 * jf],
        });
    }
    layers.push(TensorLayer::isotropic(0.0, sigma, 5.97e-3, 4.25e-3));
    GeneralStack { layers }
}

fn q_grid() -> Vec<f64> {
    (0..256).map(|i| 0.001 + (0.25 - 0.001) * i as f64 / 255.0).collect()
}

fn refloxide() -> Option<serde_json::Value> {
    let default = std::env::var("HOME").map(|h| format!("{h}/.cache/scatterlab/bench-venv/bin/python")).unwrap_or_default();
    let python = std::env::var("SCATTERLAB_BENCH_PYTHON").unwrap_or(default);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/refloxide_general.py");
    let out = std::process::Command::new(&python).arg(script).args(VARIANTS).output().ok()?;
    if !out.status.success() {
        eprintln!("refloxide not run: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// Largest |ours − theirs| / theirs over the four channels where theirs > 1e-10.
fn max_rel_dev(ours: &GeneralReflectivity, theirs: &serde_json::Value) -> Option<f64> {
    let mut worst = 0.0f64;
    for (name, mine) in [("R_ss", &ours.r_ss), ("R_pp", &ours.r_pp), ("R_sp", &ours.r_sp), ("R_ps", &ours.r_ps)] {
        let col = theirs[name].as_array()?;
        for (a, b) in mine.iter().zip(col) {
            let b = b.as_f64()?;
            if b > 1e-10 {
                worst = worst.max((a - b).abs() / b);
            }
        }
    }
    Some(worst)
}

/// Largest |gpu − cpu| / cpu over the four channels where cpu > 1e-10.
fn max_rel_vs_cpu(gpu: &GeneralReflectivity, cpu: &GeneralReflectivity) -> f64 {
    let pairs = [(&gpu.r_ss, &cpu.r_ss), (&gpu.r_pp, &cpu.r_pp), (&gpu.r_sp, &cpu.r_sp), (&gpu.r_ps, &cpu.r_ps)];
    pairs.iter().flat_map(|(g, c)| g.iter().zip(c.iter())).filter(|(_, c)| **c > 1e-10).map(|(g, c)| (g - c).abs() / c).fold(0.0, f64::max)
}

/// The df64 4×4 kernel on the adapter at hand: one curve, and 8 in one dispatch (a DE population).
fn gpu_rows(q: &[f64], steps: f64) {
    let gpu = pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default()))
        .map_err(|e| println!("GPU column skipped: {e}"))
        .ok()
        .and_then(|ctx| pollster::block_on(scatterlab_refl::gpu::ParrattGpu::new(&ctx)).map_err(|e| println!("GPU column skipped: {e}")).ok());
    let Some(pipeline) = gpu else { return };
    // The first call compiles the df64 kernel (tens of seconds on lavapipe): not timed.
    if let Err(e) = pollster::block_on(pipeline.general()) {
        println!("GPU column skipped: {e}");
        return;
    }
    println!("GPU df64 4×4 on {}", pipeline.context().describe());
    println!("{:>8} | {:>12} {:>10} | {:>14} {:>10} | {:>9} | {:>14}", "variant", "1 curve s", "µs/step", "8 curves s", "µs/step", "vs cpu", "max rel ΔR");
    for variant in VARIANTS {
        let stack = shape(variant == "rough");
        let cpu = general_reflectivity(&stack, ENERGY_EV, q).expect("valid shape");
        let one = [GeneralRequest { stack: &stack, energy_ev: ENERGY_EV, q }];
        let eight: Vec<GeneralRequest<'_>> = (0..8).map(|_| GeneralRequest { stack: &stack, energy_ev: ENERGY_EV, q }).collect();
        let run = |requests: &[GeneralRequest<'_>]| pollster::block_on(general::compute(Engine::Gpu(&pipeline), requests)).expect("valid shape");
        let got = run(&one).remove(0);
        let (wall_one, _) = median_seconds(5, || {
            std::hint::black_box(run(&one));
        });
        let (wall_eight, _) = median_seconds(3, || {
            std::hint::black_box(run(&eight));
        });
        let (cpu_wall, _) = median_seconds(5, || {
            std::hint::black_box(general_reflectivity(&stack, ENERGY_EV, q).expect("valid shape"));
        });
        let us = |s: f64, curves: f64| s / (steps * curves) * 1e6;
        println!(
            "{variant:>8} | {wall_one:>12.3e} {:>10.4} | {wall_eight:>14.3e} {:>10.4} | {:>8.2}x | {:>14.2e}",
            us(wall_one, 1.0),
            us(wall_eight, 8.0),
            cpu_wall * 8.0 / wall_eight,
            max_rel_vs_cpu(&got, &cpu)
        );
    }
}

/// Minimum wall seconds of `reps` runs: the least disturbed one.
fn min_seconds(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let q = q_grid();
    let peer = refloxide();
    println!("general 4×4 shape: {ENERGY_EV} eV, {} q, vacuum | {N} tilted biaxial slabs | Si; one thread each", q.len());
    println!("{:>8} | {:>12} {:>10} {:>10} | {:>12} {:>10} | {:>9} | {:>14}", "variant", "ours s", "µs/step", "min µs", "refloxide s", "µs/step", "ratio", "max rel ΔR");
    let steps = (q.len() * (N + 1)) as f64;
    let mut native = serde_json::Map::new();
    for variant in VARIANTS {
        let stack = shape(variant == "rough");
        let ours = general_reflectivity(&stack, ENERGY_EV, &q).expect("valid shape");
        let (wall, _cpu) = median_seconds(20, || {
            std::hint::black_box(general_reflectivity(&stack, ENERGY_EV, &q).expect("valid shape"));
        });
        let best = min_seconds(20, || {
            std::hint::black_box(general_reflectivity(&stack, ENERGY_EV, &q).expect("valid shape"));
        });
        let theirs = peer.as_ref().map(|p| &p[variant]);
        let peer_s = theirs.and_then(|t| t["seconds"].as_f64());
        let dev = theirs.and_then(|t| max_rel_dev(&ours, t));
        let us = |s: f64| s / steps * 1e6;
        println!(
            "{variant:>8} | {wall:>12.3e} {:>10.4} {:>10.4} | {:>12} {:>10} | {:>9} | {:>14}",
            us(wall),
            us(best),
            peer_s.map_or("-".into(), |s| format!("{s:.3e}")),
            peer_s.map_or("-".into(), |s| format!("{:.4}", us(s))),
            peer_s.map_or("-".into(), |s| format!("{:.1}x", s / wall)),
            dev.map_or("-".into(), |d| format!("{d:.2e}")),
        );
        let checksum: f64 = [&ours.r_ss, &ours.r_pp, &ours.r_sp, &ours.r_ps].iter().flat_map(|c| c.iter()).sum();
        native.insert(variant.into(), serde_json::json!({ "seconds": wall, "checksum": checksum }));
    }
    gpu_rows(&q, steps);
    println!("{}", serde_json::json!({ "native_general": native }));
}
