//! Taylor forward duals against the block-Fréchet oracle on absorptive matrices, and the
//! discrete adjoint by the dot-product test.

use faer::Mat;
use num_complex::Complex64;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::{taylor_jvp, taylor_vjp};
use crate::gradient::frechet::expm_frechet_block;
use crate::propagate::taylor::{norm1, TaylorPlan};

/// A + i·diag(0.01…0.1) with A random Hermitian (an absorptive structure matrix), row-major.
fn absorptive(rng: &mut StdRng, n: usize) -> Vec<Complex64> {
    let m: Vec<Complex64> = (0..n * n).map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let mut a: Vec<Complex64> = (0..n * n).map(|k| 0.5 * (m[k] + m[(k % n) * n + k / n].conj())).collect();
    for i in 0..n {
        a[i * n + i] += Complex64::new(0.0, rng.gen_range(0.01..0.1));
    }
    a
}

fn random(rng: &mut StdRng, n: usize) -> Vec<Complex64> {
    (0..n * n).map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect()
}

fn mat(n: usize, v: &[Complex64], scale: Complex64) -> Mat<Complex64> {
    Mat::from_fn(n, n, |i, j| v[i * n + j] * scale)
}

#[test]
fn jvp_matches_block_frechet_absorptive() {
    let mut rng = StdRng::seed_from_u64(23);
    let n = 12;
    let start = 3;
    let a = absorptive(&mut rng, n);
    let e = random(&mut rng, n);
    let thicknesses = [0.5, 4.0, 20.0];
    // Phase scale 1: τ = t.
    let plan = TaylorPlan::new(norm1(n, &a), 1.0, &thicknesses, 1.0, 18).unwrap();
    let (_, dpsi) = taylor_jvp(n, &a, start, &plan, &[&e]).unwrap();
    let mut worst: f64 = 0.0;
    for (t, &tau) in thicknesses.iter().enumerate() {
        let i_tau = Complex64::new(0.0, tau);
        let (_, l) = expm_frechet_block(&mat(n, &a, i_tau), &mat(n, &e, i_tau), "oracle").unwrap();
        let scale = (0..n).map(|i| l[(i, start)].norm()).fold(0.0, f64::max);
        let error = (0..n).map(|i| (dpsi[0][t][i] - l[(i, start)]).norm()).fold(0.0, f64::max) / scale;
        worst = worst.max(error);
    }
    println!("Taylor jvp vs block Fréchet (absorptive 12×12): relative error {worst:.2e}");
    assert!(worst < 1e-10, "{worst:e}");
}

#[test]
fn vjp_dot_product() {
    let mut rng = StdRng::seed_from_u64(29);
    let n = 9;
    let a = absorptive(&mut rng, n);
    let e = random(&mut rng, n);
    let thicknesses = [1.0, 2.5, 9.0];
    let plan = TaylorPlan::new(norm1(n, &a), 0.7, &thicknesses, 1.0, 18).unwrap();
    let (psi, dpsi) = taylor_jvp(n, &a, 0, &plan, &[&e]).unwrap();
    let cotangents: Vec<Vec<f64>> = thicknesses.iter().map(|_| (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect()).collect();
    let forward: f64 = (0..thicknesses.len()).map(|t| (0..n).map(|b| cotangents[t][b] * 2.0 * (psi[t][b].conj() * dpsi[0][t][b]).re).sum::<f64>()).sum();
    let lambdas: Vec<Vec<Complex64>> = psi.iter().zip(&cotangents).map(|(p, g)| p.iter().zip(g).map(|(x, y)| x * *y).collect()).collect();
    let a_bar = taylor_vjp(n, &a, 0, &plan, &lambdas).unwrap();
    let reverse: f64 = a_bar.iter().zip(&e).map(|(x, y)| 2.0 * (x.conj() * y).re).sum();
    println!("Taylor vjp dot product: {forward} vs {reverse}");
    assert!((forward - reverse).abs() < 1e-12 * forward.abs().max(1.0), "{forward} vs {reverse}");
}
