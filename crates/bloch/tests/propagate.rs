//! Thickness-series propagation ψ(t) = exp(i·s·t·A) e₀ by scaled Taylor steps: the f64 CPU
//! kernel against closed forms (2-beam pendellösung, diagonal phases), against itself with an
//! independent plan, unitarity for Hermitian matrices; and the WGSL twin (f32, lavapipe here)
//! against the CPU on fresh random structure-matrix-like batches (Hermitian and absorptive, mixed
//! beam counts, diffBloch-sized phases) within the GPU tolerance of 1e-4 in intensity.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use num_complex::Complex64;
use rand::Rng;
use scatterlab_bloch::gpu::{PropagateGpu, PropagationItem};
use scatterlab_bloch::propagate::{norm1, propagate_taylor, TaylorPlan};

/// The f32/GPU gate on intensities.
const GPU_TOL: f64 = 1e-4;

fn c(re: f64, im: f64) -> Complex64 {
    Complex64::new(re, im)
}

#[test]
fn two_beams_and_diagonal_phases_match_closed_forms() {
    let (a, scale) = (0.37, 0.08);
    let m = [c(0.0, 0.0), c(a, 0.0), c(a, 0.0), c(0.0, 0.0)];
    let ts = [0.0, 10.0, 55.5, 400.0, 800.0];
    let plan = TaylorPlan::new(norm1(2, &m), scale, &ts, 1.0, 18).unwrap();
    let psi = propagate_taylor(2, &m, &plan).unwrap();
    for (t, p) in ts.iter().zip(&psi) {
        let phase = scale * t * a;
        // exp(i φ σx) e₀ = (cos φ, i sin φ).
        assert!((p[0] - c(phase.cos(), 0.0)).norm() < 1e-12 && (p[1] - c(0.0, phase.sin())).norm() < 1e-12, "t = {t}: {p:?}");
    }
    let d = [c(1.5, 0.0), c(0.0, 0.0), c(0.0, 0.0), c(-2.0, 0.0)];
    let plan = TaylorPlan::new(norm1(2, &d), scale, &ts, 1.0, 18).unwrap();
    for (t, p) in ts.iter().zip(propagate_taylor(2, &d, &plan).unwrap()) {
        assert!((p[0] - Complex64::from_polar(1.0, scale * t * 1.5)).norm() < 1e-12 && p[1].norm() < 1e-15);
    }
}

/// A structure-matrix-like batch item: diagonal 2K·Sg (±4 Å⁻²), off-diagonal couplings that fall
/// off with distance, Hermitian, optionally with an absorptive diagonal.
fn random_matrix(rng: &mut impl Rng, n: usize, absorptive: bool) -> Vec<Complex64> {
    let mut a = vec![c(0.0, 0.0); n * n];
    for i in 0..n {
        a[i * n + i] = c(if i == 0 { 0.0 } else { rng.gen_range(-4.0..4.0) }, if absorptive { rng.gen_range(0.0..0.02) } else { 0.0 });
        for j in i + 1..n {
            let mag = 0.08 / (1.0 + (j - i) as f64 * 0.3);
            let v = Complex64::from_polar(rng.gen_range(0.0..mag), rng.gen_range(0.0..std::f64::consts::TAU));
            a[i * n + j] = v;
            a[j * n + i] = v.conj();
        }
    }
    a
}

#[test]
fn independent_plans_agree_and_hermitian_steps_are_unitary() {
    let mut rng = scatterlab_testkit::rng("propagate plans");
    let n = 60;
    let a = random_matrix(&mut rng, n, false);
    let ts = [50.0, 200.0, 800.0];
    let scale = std::f64::consts::PI / 39.9;
    let coarse = propagate_taylor(n, &a, &TaylorPlan::new(norm1(n, &a), scale, &ts, 1.0, 18).unwrap()).unwrap();
    let fine = propagate_taylor(n, &a, &TaylorPlan::new(norm1(n, &a), scale, &ts, 0.3, 30).unwrap()).unwrap();
    for (p, q) in coarse.iter().zip(&fine) {
        let norm: f64 = p.iter().map(|v| v.norm_sqr()).sum();
        let worst = p.iter().zip(q).map(|(x, y)| (x - y).norm()).fold(0.0, f64::max);
        println!("|ψ|² = {norm:.15}, plans differ by {worst:.2e}");
        assert!((norm - 1.0).abs() < 1e-11 && worst < 1e-11);
    }
}

#[test]
fn gpu_twin_matches_the_cpu_on_random_batches() {
    let Some(ctx) = scatterlab_testkit::gpu_or_skip("propagate GPU twin", || pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default()))) else { return };
    let gpu = pollster::block_on(PropagateGpu::new(&ctx)).unwrap();
    let mut rng = scatterlab_testkit::rng("propagate GPU twin");
    let shapes = [(1, false), (37, false), (64, true), (90, false), (130, true)];
    let matrices: Vec<(usize, Vec<Complex64>)> = shapes.iter().map(|&(n, abs)| (n, random_matrix(&mut rng, n, abs))).collect();
    let ts = [50.0, 125.0, 400.0, 800.0];
    let scale = std::f64::consts::PI / 39.9;
    let norm = matrices.iter().map(|(n, a)| norm1(*n, a)).fold(0.0, f64::max);
    let plan = TaylorPlan::new(norm, scale, &ts, 1.0, 12).unwrap();
    println!("plan: {} matvecs per item", plan.matvecs());
    let items: Vec<PropagationItem> = matrices.iter().map(|(n, a)| PropagationItem { n: *n, matrix: a }).collect();
    let got = pollster::block_on(gpu.intensities(&items, &plan)).unwrap();
    let reference = TaylorPlan::new(norm, scale, &ts, 1.0, 18).unwrap();
    for ((n, a), g) in matrices.iter().zip(&got) {
        let want = propagate_taylor(*n, a, &reference).unwrap();
        let worst = want.iter().zip(g).flat_map(|(w, g)| w.iter().zip(g).map(|(w, g)| (w.norm_sqr() - g).abs())).fold(0.0, f64::max);
        println!("{n} beams: max |I_gpu − I_cpu| = {worst:.2e}");
        assert!(worst < GPU_TOL, "{n} beams: {worst}");
    }
}

#[test]
fn bad_inputs_are_named_errors() {
    let e = TaylorPlan::new(1.0, 0.1, &[10.0, 5.0], 1.0, 12).unwrap_err().to_string();
    assert!(e.contains("thickness[1]") && e.contains("non-decreasing"), "{e}");
    let e = TaylorPlan::new(f64::NAN, 0.1, &[1.0], 1.0, 12).unwrap_err().to_string();
    assert!(e.contains("matrix 1-norm"), "{e}");
    let e = propagate_taylor(3, &[c(0.0, 0.0); 8], &TaylorPlan::new(1.0, 0.1, &[1.0], 1.0, 12).unwrap()).unwrap_err().to_string();
    assert!(e.contains("not an 3×3 matrix"), "{e}");
}
