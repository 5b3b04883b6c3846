//! Reflectivity benchmark on refloxide's shape (shared/BENCHMARKS.md), N = 1 and 10,000 slabs:
//! scatterlab CPU f64 (one thread), scatterlab GPU f32 (the adapter at hand), and refloxide's CPU
//! serial kernel in the same run when Python ≥ 3.12 with `refloxide` is available
//! (`SCATTERLAB_BENCH_PYTHON=/path/to/python`, default `~/.cache/scatterlab/bench-venv/bin/python`),
//! and refnx's compiled Abeles kernel (`refnx.reflect.abeles`, threads=1) on the isotropic analogue
//! of the same stack (`python/refnx_shape.py`: each slab's ordinary δ_o, β_o as SLD = 2πδ/λ², so
//! refnx's R is our R_s: same N + 2 layers, one polarisation instead of two).
//! Prints a table: median seconds, µs per q·layer step, the ratio refloxide/ours ("cpu ratio",
//! "gpu ratio") and refnx/ours-CPU ("vs refnx"; > 1: ours is faster), then a line checking refnx's R
//! against our R_s, then one JSON line `{"native_cpu": {"N": seconds}}` for scripts/bench.sh's
//! wasm-vs-native ratio.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use scatterlab_benches::refl_shape::{q_grid, stack, ENERGY_EV};
use scatterlab_benches::timing::median_seconds;
use scatterlab_refl::{compute, CurveRequest, Engine};

const SIZES: [usize; 2] = [1, 10_000];

/// Runs `python/<script>` for every size; its JSON `{N: {"seconds": …}}`, or None (said on stderr).
fn peer_seconds(peer: &str, script: &str) -> Option<serde_json::Value> {
    let default = std::env::var("HOME").map(|h| format!("{h}/.cache/scatterlab/bench-venv/bin/python")).unwrap_or_default();
    let python = std::env::var("SCATTERLAB_BENCH_PYTHON").unwrap_or(default);
    let script = format!("{}/python/{script}", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(&python).arg(script).args(SIZES.map(|n| n.to_string())).output().ok()?;
    if !out.status.success() {
        eprintln!("{peer} not run: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn main() {
    let q = q_grid();
    let gpu = pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default()))
        .map_err(|e| eprintln!("GPU column skipped: {e}"))
        .ok()
        .and_then(|ctx| pollster::block_on(scatterlab_refl::gpu::ParrattGpu::new(&ctx)).ok());
    let peer = peer_seconds("refloxide", "refloxide_shape.py");
    let refnx = peer_seconds("refnx", "refnx_shape.py");
    let mut refnx_checks = Vec::new();
    println!("refloxide shape: {ENERGY_EV} eV, {} q, vacuum | N uniaxial slabs | Si", q.len());
    if let Some(g) = &gpu {
        println!("GPU adapter: {}", g.context().describe());
    }
    println!(
        "{:>7} | {:>12} {:>10} | {:>12} {:>10} | {:>12} {:>10} | {:>9} {:>9} | {:>12} {:>10} | {:>9}",
        "N", "cpu f64 s", "µs/step", "gpu f32 s", "µs/step", "refloxide s", "µs/step", "cpu ratio", "gpu ratio", "refnx s", "µs/step", "vs refnx"
    );
    let mut native_cpu = serde_json::Map::new();
    for n in SIZES {
        let s = stack(n);
        let steps = (q.len() * (n + 1)) as f64;
        let requests = [CurveRequest { stack: &s, energy_ev: ENERGY_EV, q: &q }];
        let reps = if n > 1000 { 5 } else { 200 };
        let (cpu_wall, _cpu_cpu) = median_seconds(reps, || {
            std::hint::black_box(pollster::block_on(compute(Engine::Cpu, &requests)).expect("valid shape"));
        });
        let refnx_n = refnx.as_ref().map(|p| &p[n.to_string()]);
        let refnx_s = refnx_n.and_then(|p| p["seconds"].as_f64());
        if let Some(r) = refnx_n.and_then(|p| p["R"].as_array()) {
            let ours = pollster::block_on(compute(Engine::Cpu, &requests)).expect("valid shape").remove(0).r_s;
            let worst = r.iter().zip(&ours).map(|(x, y)| (x.as_f64().unwrap_or(f64::NAN) / y - 1.0).abs()).fold(0.0, f64::max);
            refnx_checks.push(format!("N = {n}: {worst:.1e}"));
        }
        native_cpu.insert(n.to_string(), cpu_wall.into());
        let gpu_wall = gpu.as_ref().map(|g| {
            median_seconds(reps.min(20), || {
                std::hint::black_box(pollster::block_on(compute(Engine::Gpu(g), &requests)).expect("valid shape"));
            })
            .0
        });
        let peer_s = peer.as_ref().and_then(|p| p[n.to_string()]["seconds"].as_f64());
        let us = |s: f64| s / steps * 1e6;
        let fmt = |v: Option<f64>| v.map_or("-".to_owned(), |s| format!("{s:.3e}"));
        let fmt_us = |v: Option<f64>| v.map_or("-".to_owned(), |s| format!("{:.4}", us(s)));
        let ratio = |v: Option<f64>| match (peer_s, v) {
            (Some(p), Some(s)) => format!("{:.1}x", p / s),
            _ => "-".to_owned(),
        };
        let vs_refnx = refnx_s.map_or("-".to_owned(), |r| format!("{:.2}x", r / cpu_wall));
        println!(
            "{n:>7} | {:>12} {:>10} | {:>12} {:>10} | {:>12} {:>10} | {:>9} {:>9} | {:>12} {:>10} | {:>9}",
            fmt(Some(cpu_wall)),
            fmt_us(Some(cpu_wall)),
            fmt(gpu_wall),
            fmt_us(gpu_wall),
            fmt(peer_s),
            fmt_us(peer_s),
            ratio(Some(cpu_wall)),
            ratio(gpu_wall),
            fmt(refnx_s),
            fmt_us(refnx_s),
            vs_refnx
        );
    }
    if !refnx_checks.is_empty() {
        println!("refnx (isotropic analogue) R vs our R_s, worst |R_refnx/R_s − 1|: {}", refnx_checks.join(", "));
    }
    println!("{}", serde_json::json!({ "native_cpu": native_cpu }));
}
