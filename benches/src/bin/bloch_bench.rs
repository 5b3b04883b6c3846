//! The Bloch-wave benchmark beside diffBloch (issue 7; docs/plans/bloch-gradients.md § 8), one
//! thread, on the same frames:
//! - quartz: one rotation of `quartz_aniso` (N ≈ 40, 42 tilts, union coupling's adaptive segments);
//! - borane: a borane_IAM_4 frame (N ≈ 315 per tilt, 125 tilts, per-tilt coupling).
//!
//! The peer (`python/diffbloch_bench.py`) runs through `SCATTERLAB_DIFFBLOCH_PYTHON` (default
//! `~/.cache/scatterlab/diffbloch-venv/bin/python`) with OMP/MKL/OPENBLAS_NUM_THREADS=1 and prints
//! its plans (u0, tilts, segments) and timings; we rebuild *the same* frames from them
//! ([`Optics::with_u0`](scatterlab_bloch::geometry::Optics::with_u0), [`Frame`](scatterlab_bloch::frame::Frame) segments), check that our intensities equal diffBloch's
//! (its complex64 matrix_exp solve), and time our forward: structure factors on the frame's
//! support, every matrix, every solve, summed per hkl (eigen: real-symmetric when A is real;
//! expm: Padé-13), median of 5 after a warm-up, wall and CPU. Without Python the frames are our own
//! selection and the peer's column is "-" (`SCATTERLAB_DIFFBLOCH_JSON=file` reuses a saved peer
//! output instead of running it). Forward+backward: ours is `GradientModel::loss_gradient`
//! (reverse mode, eigen path, the model built from the structure inside the timing), beside
//! both of diffBloch's gradients (bloch_eigen, and matrix_exp, its default), checkpointing on
//! (its default) and off. The `scatterlab` CLI's allocator setting is applied first.
//!
//! `cargo run --release -p scatterlab-benches --bin bloch_bench [quartz,borane]`
//! (`SCATTERLAB_BLOCH_PROFILE=seconds` only loops our fast forward, or with
//! `SCATTERLAB_BLOCH_PROFILE_GRADIENT=1` our forward+backward, for `perf record`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use std::collections::HashMap;
use std::process::Command;
use std::time::Instant;

use scatterlab_benches::bloch_frames::{beams_per_tilt, from_peer, native, BenchFrame};
use scatterlab_benches::timing::cpu_seconds;
use scatterlab_bloch::beams::{g_vector, norm, Hkl};
use scatterlab_bloch::crystal::parse_cif_asymmetric;
use scatterlab_bloch::frame::{fast_intensities, SupportTable};
use scatterlab_bloch::gradient::{FramePlan, GradientModel, Param};
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::{Method, Pattern};
use scatterlab_bloch::solve::Solver;
use serde_json::{json, Value};

const REPS: usize = 5;
/// Each repetition runs the forward often enough to last this long (the CPU clock ticks in 10 ms).
const MIN_REP_SECONDS: f64 = 0.2;
const GOAL: f64 = 5.0;

/// Median wall and CPU seconds per run of `f`, REPS repetitions after a warm-up, each repetition
/// looping `f` enough times to last ≥ MIN_REP_SECONDS.
fn per_run_seconds(mut f: impl FnMut()) -> (f64, f64) {
    let t0 = Instant::now();
    f();
    let loops = (MIN_REP_SECONDS / t0.elapsed().as_secs_f64().max(1e-6)).ceil().max(1.0) as usize;
    let (mut wall, mut cpu) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        let (w0, c0) = (Instant::now(), cpu_seconds());
        (0..loops).for_each(|_| f());
        wall.push(w0.elapsed().as_secs_f64() / loops as f64);
        cpu.push((cpu_seconds() - c0) / loops as f64);
    }
    wall.sort_by(f64::total_cmp);
    cpu.sort_by(f64::total_cmp);
    (wall[REPS / 2], cpu[REPS / 2])
}

/// Our whole forward: F on the frame's support (found once per plan, as diffBloch's engine holds
/// its active structure-factor rows), then the frame solved with `solver`.
fn forward(b: &BenchFrame, support: &[Hkl], solver: Solver) -> Pattern {
    let table = SupportTable::compute(&b.crystal, support).expect("structure factors");
    b.frame.run(&table, &b.optics, Method { solver, conventions: Conventions::DiffBloch }).expect("frame solves")
}

/// Our forward with the forward-only tridiagonal Taylor path where A is real (borane), eigen elsewhere.
fn forward_fast(b: &BenchFrame, support: &[Hkl]) -> Pattern {
    let table = SupportTable::compute(&b.crystal, support).expect("structure factors");
    b.frame.run_with(&table, &b.optics, Conventions::DiffBloch, &fast_intensities).expect("frame solves")
}

/// Runs the peer (or reads its saved output from `SCATTERLAB_DIFFBLOCH_JSON`); its JSON, or None
/// with the reason printed.
fn peer(cases: &str) -> Option<Value> {
    if let Ok(path) = std::env::var("SCATTERLAB_DIFFBLOCH_JSON") {
        eprintln!("diffBloch results read from {path} (not run now)");
        return std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str(&t).ok());
    }
    let home = std::env::var("HOME").unwrap_or_default();
    let python = std::env::var("SCATTERLAB_DIFFBLOCH_PYTHON").unwrap_or_else(|_| format!("{home}/.cache/scatterlab/diffbloch-venv/bin/python"));
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/python/diffbloch_bench.py");
    let mut command = Command::new(&python);
    command.arg(script).args(["--reps", &REPS.to_string(), "--cases", cases]);
    for var in ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"] {
        command.env(var, "1");
    }
    eprintln!("running diffBloch ({python}); borane takes a few minutes");
    match command.output() {
        Ok(out) if out.status.success() => serde_json::from_slice(&out.stdout).map_err(|e| eprintln!("diffBloch JSON: {e}")).ok(),
        Ok(out) => {
            eprintln!("diffBloch not run: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
            None
        }
        Err(e) => {
            eprintln!("diffBloch not run: {python}: {e}");
            None
        }
    }
}

/// Largest |ΔI| over the union relative to the largest I, and Σ|ΔI| / Σ I, against the peer's
/// intensities for `method` (first thickness).
fn difference(ours: &Pattern, case: &Value, method: &str) -> Option<(f64, f64)> {
    let hkl: Vec<Hkl> = case["intensities"]["hkl"].as_array()?.iter().map(|h| std::array::from_fn(|i| h[i].as_i64().unwrap_or(0) as i32)).collect();
    let theirs: HashMap<Hkl, f64> = hkl.into_iter().zip(case["intensities"][method].as_array()?.iter().filter_map(Value::as_f64)).collect();
    if theirs.len() != ours.hkl.len() {
        eprintln!("{}: diffBloch has {} union beams, ours {}", case["name"], theirs.len(), ours.hkl.len());
    }
    let (mut worst, mut sum_diff, mut sum, mut top) = (0.0_f64, 0.0, 0.0, 0.0_f64);
    for (h, &i) in ours.hkl.iter().zip(&ours.intensities[0]) {
        let t = theirs.get(h).copied().unwrap_or(f64::NAN);
        worst = worst.max((i - t).abs());
        sum_diff += (i - t).abs();
        sum += t;
        top = top.max(t);
    }
    Some((worst / top, sum_diff / sum))
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")).unwrap_or_else(|_| "?".to_owned())
}

/// Our forward+backward: [`GradientModel::loss_gradient`] of L = Σ_rows I (cotangent 1 on every
/// union beam) over every free position and U of the asymmetric unit (diffBloch trains positions
/// and ADPs), eigen path (divided differences, exact in f64 for these Hermitian frames), timed once
/// and set beside each of diffBloch's gradients (bloch_eigen, and matrix_exp, its default).
/// Each timed call builds the model from the structure (frozen optics and the same per-tilt beams:
/// F on the frames' support) and runs the reverse pass: every tilt's solve, its vjp, F̄ → parameters,
/// as diffBloch's timed step evaluates F from its parameters and back-propagates.
fn ours_forward_backward(b: &BenchFrame) -> Option<(f64, f64)> {
    let asu = parse_cif_asymmetric(&b.name, &b.cif).map_err(|e| eprintln!("{}: asymmetric unit: {e}", b.name)).ok()?;
    let mut beams = vec![Vec::new(); b.frame.orientations.len()];
    for segment in &b.frame.segments {
        for &t in &segment.tilts {
            beams[t].clone_from(&segment.hkl);
        }
    }
    let plan = FramePlan { orientation: b.orientation, tilts: FramePlan::tilts_about_x(&b.tilts_deg), beams, thicknesses: b.frame.thicknesses_a.clone() };
    let g_max = b.frame.segments.iter().flat_map(|s| &s.hkl).map(|h| norm(g_vector(*h, &b.crystal.cell.reciprocal_matrix()))).fold(0.0, f64::max);
    let grid = 2.0 * g_max + 0.5;
    let model = GradientModel::new(asu.clone(), b.optics, vec![plan.clone()], grid, false).map_err(|e| eprintln!("{}: gradient model: {e}", b.name)).ok()?;
    let params: Vec<Param> = model.all_params().ok()?.into_iter().filter(|p| matches!(p, Param::Position { .. } | Param::Uiso { .. } | Param::Uaniso { .. })).collect();
    let cotangent = vec![1.0; model.rows().len()];
    if let Err(e) = model.loss_gradient(&cotangent, &params) {
        eprintln!("{}: loss gradient: {e}", b.name);
        return None;
    }
    println!("  ours fwd+bwd: GradientModel::loss_gradient over {} parameters (positions, U), eigen", params.len());
    Some(per_run_seconds(|| {
        let model = GradientModel::new(asu.clone(), b.optics, vec![plan.clone()], grid, false).expect("gradient model");
        std::hint::black_box(model.loss_gradient(&cotangent, &params).expect("loss gradient"));
    }))
}

fn main() {
    // As the `scatterlab` CLI does: freed memory stays mapped between tilts.
    scatterlab_core::process::keep_freed_memory();
    let cases = std::env::args().nth(1).unwrap_or_else(|| "quartz,borane".to_owned());
    println!("load average before: {} (2 shared cores)", load());
    let peer_json = peer(&cases);
    let frames: Vec<(BenchFrame, Option<Value>)> = match &peer_json {
        Some(p) => p["cases"].as_array().expect("cases").iter().filter(|c| cases.split(',').any(|n| c["name"] == n)).map(|c| (from_peer(c), Some(c.clone()))).collect(),
        None => cases.split(',').map(|name| (native(name), None)).collect(),
    };
    if let Some(p) = &peer_json {
        println!("diffBloch {} (torch {}, {} thread), complex64", p["diffbloch"], p["torch"], p["threads"]);
    }
    println!("load average after the peer: {}", load());
    let secs = |c: &Option<Value>, key: &str| c.as_ref().and_then(|c| Some((c["seconds"][key]["wall"].as_f64()?, c["seconds"][key]["cpu"].as_f64()?)));
    let cell = |t: Option<(f64, f64)>| t.map_or("-".to_owned(), |(w, c)| format!("{w:.4} / {c:.4}"));
    let mut rows = Vec::new();
    let mut report = serde_json::Map::new();
    for (b, case) in &frames {
        let n = beams_per_tilt(&b.frame);
        let support = b.frame.support();
        let (mean, max) = (n.iter().sum::<usize>() as f64 / n.len() as f64, n.iter().max().copied().unwrap_or(0));
        println!(
            "{}: {} tilts, {} segments, N mean {mean:.1} max {max}, {} P1 atoms, support {} F, U0 {:.6} Å⁻² ({})",
            b.name,
            n.len(),
            b.frame.segments.len(),
            b.crystal.atoms.len(),
            support.len(),
            b.optics.u0_a2,
            b.source
        );
        if b.name == "borane" && !(290.0..=340.0).contains(&mean) {
            eprintln!("borane: mean N {mean:.1} outside 290–340 (plan § 8)");
        }
        if let Ok(seconds) = std::env::var("SCATTERLAB_BLOCH_PROFILE").map(|s| s.parse::<f64>().unwrap_or(5.0)) {
            // For `perf record`: only our fast forward (or, with SCATTERLAB_BLOCH_PROFILE_GRADIENT
            // set, our forward+backward), looped for the given seconds.
            let gradient = std::env::var_os("SCATTERLAB_BLOCH_PROFILE_GRADIENT").is_some();
            let t0 = Instant::now();
            while t0.elapsed().as_secs_f64() < seconds {
                if gradient {
                    if let Some((wall, cpu)) = ours_forward_backward(b) {
                        eprintln!("  fwd+bwd median {wall:.4} s wall / {cpu:.4} s CPU");
                    }
                } else {
                    std::hint::black_box(forward_fast(b, &support));
                }
            }
            continue;
        }
        let solvers: &[(Solver, &str)] = if b.name == "borane" { &[(Solver::Eigen, "bloch_eigen")] } else { &[(Solver::Eigen, "bloch_eigen"), (Solver::Expm, "matrix_exp")] };
        {
            // The forward-only path: tridiagonal + Taylor where A is real, else eigen.
            let pattern = forward_fast(b, &support);
            if let Some((worst, total)) = case.as_ref().and_then(|c| difference(&pattern, c, "matrix_exp").or_else(|| difference(&pattern, c, "bloch_eigen"))) {
                println!("  ours fast forward vs diffBloch (complex64): max |ΔI| / max I = {worst:.2e}, Σ|ΔI| / Σ I = {total:.2e}");
            }
            let ours = per_run_seconds(|| {
                std::hint::black_box(forward_fast(b, &support));
            });
            println!("  ours fast forward: {:.4} s wall / {:.4} s CPU; load {}", ours.0, ours.1, load());
            rows.push((b.name.clone(), format!("{mean:.0}/{max}"), n.len(), "fast forward (tridiag)".to_owned(), secs(case, "bloch_eigen/forward"), Some(ours)));
            report.insert(format!("{}/fast/forward", b.name), json!({ "ours": ours.0, "diffbloch": secs(case, "bloch_eigen/forward").map(|t| t.0) }));
        }
        // Our one gradient (eigen, divided differences, f64: both frames are Hermitian) against
        // each of diffBloch's gradients of the same loss (its bloch_eigen and its default matrix_exp).
        let ours_fb = ours_forward_backward(b);
        for &(solver, method) in solvers {
            let pattern = forward(b, &support, solver);
            if let Some((worst, total)) = case.as_ref().and_then(|c| difference(&pattern, c, "matrix_exp").or_else(|| difference(&pattern, c, "bloch_eigen"))) {
                println!("  ours {method} vs diffBloch (complex64): max |ΔI| / max I = {worst:.2e}, Σ|ΔI| / Σ I = {total:.2e}");
            }
            let ours = per_run_seconds(|| {
                std::hint::black_box(forward(b, &support, solver));
            });
            let support = if solver == Solver::Eigen {
                let table = per_run_seconds(|| {
                    std::hint::black_box(SupportTable::compute(&b.crystal, &support).expect("F"));
                });
                format!(" (F on the support: {:.4} s)", table.0)
            } else {
                String::new()
            };
            println!("  ours {method} forward: {:.4} s wall / {:.4} s CPU{support}; load {}", ours.0, ours.1, load());
            let theirs = secs(case, &format!("{method}/forward"));
            rows.push((b.name.clone(), format!("{mean:.0}/{max}"), n.len(), format!("{method} forward"), theirs, Some(ours)));
            let key = format!("{method}/forward_backward/checkpoint_on");
            rows.push((b.name.clone(), format!("{mean:.0}/{max}"), n.len(), format!("{method} fwd+bwd (ckpt on)"), secs(case, &key), ours_fb));
            let key_off = format!("{method}/forward_backward/checkpoint_off");
            rows.push((b.name.clone(), format!("{mean:.0}/{max}"), n.len(), format!("{method} fwd+bwd (ckpt off)"), secs(case, &key_off), ours_fb));
            report.insert(format!("{}/{method}/forward", b.name), json!({ "ours": ours.0, "diffbloch": theirs.map(|t| t.0) }));
            report.insert(
                format!("{}/{method}/forward_backward", b.name),
                json!({ "ours": ours_fb.map(|t| t.0), "diffbloch_checkpoint_on": secs(case, &key).map(|t| t.0), "diffbloch_checkpoint_off": secs(case, &key_off).map(|t| t.0) }),
            );
        }
    }
    println!("\n{:<7} | {:>9} | {:>5} | {:<24} | {:>17} | {:>17} | {:>6} | goal ≥ {GOAL}×", "frame", "N mean/max", "tilts", "path", "diffBloch s w/cpu", "ours s w/cpu", "ratio");
    for (name, n, tilts, path, theirs, ours) in &rows {
        // CPU-time ratio: on a shared machine the process's own CPU time is the steadier clock.
        let ratio = theirs.zip(*ours).map(|(t, o)| t.1 / o.1.max(1e-9));
        let verdict = ratio.map_or("-", |r| if r >= GOAL { "met" } else { "NOT met" });
        println!(
            "{name:<7} | {n:>10} | {tilts:>5} | {path:<24} | {:>17} | {:>17} | {:>6} | {verdict}",
            cell(*theirs),
            cell(*ours),
            ratio.map_or("-".to_owned(), |r| format!("{r:.1}×"))
        );
    }
    println!("load average at the end: {}", load());
    println!("{}", json!({ "bloch_bench": report }));
}
