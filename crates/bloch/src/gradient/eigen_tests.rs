//! Unit tests of the divided-difference eigen derivatives against the block-Fréchet oracle
//! (plan §6): random, exactly degenerate and nearly degenerate spectra, and the reverse mode by
//! the dot-product test.

use faer::{Mat, Side};
use num_complex::Complex64;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::divided_difference;
use crate::gradient::frechet::expm_frechet_block;
use crate::matrix::{Conventions, StructureMatrix};
use crate::solve::EigenPropagator;

fn random_matrix(rng: &mut StdRng, n: usize, hermitian: bool) -> Mat<Complex64> {
    let m = Mat::from_fn(n, n, |_, _| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)));
    if hermitian {
        Mat::from_fn(n, n, |i, j| 0.5 * (m[(i, j)] + m[(j, i)].conj()))
    } else {
        m
    }
}

fn random_unitary(rng: &mut StdRng, n: usize) -> Mat<Complex64> {
    let h = random_matrix(rng, n, true);
    h.self_adjoint_eigen(Side::Lower).unwrap().U().to_owned()
}

/// Q·diag(μ)·Qᴴ, made exactly Hermitian.
fn with_spectrum(q: &Mat<Complex64>, mu: &[f64]) -> Mat<Complex64> {
    let n = mu.len();
    let d = Mat::from_fn(n, n, |i, j| if i == j { Complex64::new(mu[i], 0.0) } else { Complex64::new(0.0, 0.0) });
    let a = q * (&d * q.adjoint());
    Mat::from_fn(n, n, |i, j| 0.5 * (a[(i, j)] + a[(j, i)].conj()))
}

/// A propagator with K = π, so that the phase τ equals the thickness.
fn propagator(a: &Mat<Complex64>) -> EigenPropagator {
    let n = a.nrows();
    let matrix = StructureMatrix {
        hkl: vec![[0, 0, 0]; n],
        a: a.clone(),
        mii: vec![1.0; n],
        sg: vec![0.0; n],
        k: std::f64::consts::PI,
        index_000: 0,
        hermitian: true,
        conventions: Conventions::DiffBloch,
    };
    let mut initial = vec![Complex64::new(0.0, 0.0); n];
    initial[0] = Complex64::new(1.0, 0.0);
    EigenPropagator::new(&matrix, &initial, "test").unwrap()
}

/// max |dψ − L(iτA, iτE)·e₀| / max |L·e₀| over the thicknesses τ.
fn error_vs_frechet(a: &Mat<Complex64>, e: &Mat<Complex64>, taus: &[f64]) -> f64 {
    let dpsi = propagator(a).jvp(taus, &[e.as_ref()]).unwrap();
    let mut worst: f64 = 0.0;
    for (t, &tau) in taus.iter().enumerate() {
        let i_tau = Complex64::new(0.0, tau);
        let (_, l) = expm_frechet_block(&(a * faer::Scale(i_tau)), &(e * faer::Scale(i_tau)), "oracle").unwrap();
        let scale = (0..a.nrows()).map(|i| l[(i, 0)].norm()).fold(0.0, f64::max);
        let error = (0..a.nrows()).map(|i| (dpsi[0][t][i] - l[(i, 0)]).norm()).fold(0.0, f64::max);
        worst = worst.max(error / scale);
    }
    worst
}

#[test]
fn divided_differences_match_block_frechet() {
    let mut rng = StdRng::seed_from_u64(7);
    let a = random_matrix(&mut rng, 12, true);
    for hermitian_direction in [true, false] {
        let e = random_matrix(&mut rng, 12, hermitian_direction);
        let error = error_vs_frechet(&a, &e, &[0.5, 20.0, 200.0]);
        println!("random 12×12 (E Hermitian: {hermitian_direction}): relative error {error:.2e}");
        assert!(error < 1e-11, "{error:e}");
    }
}

#[test]
fn exact_degeneracy_is_finite_and_exact() {
    let mut rng = StdRng::seed_from_u64(11);
    let q = random_unitary(&mut rng, 10);
    let a = with_spectrum(&q, &[1.0, 1.0, 1.0, 2.0, 2.0, -3.0, 0.5, 0.25, -1.0, 4.0]);
    // An 8×8 real symmetric circulant: eigenvalues c₀ + 2c₁cos(2πk/8) + …, pairs k, 8−k exactly equal.
    let c = [2.0, -0.7, 0.3, 0.1, 0.4];
    let circulant = Mat::from_fn(8, 8, |i, j| {
        let d = (i as i64 - j as i64).rem_euclid(8) as usize;
        Complex64::new(c[d.min(8 - d)], 0.0)
    });
    for (name, matrix) in [("Q·diag(1,1,1,2,2,−3,…)·Qᴴ", a), ("8×8 circulant", circulant)] {
        let n = matrix.nrows();
        let e = random_matrix(&mut rng, n, true);
        let error = error_vs_frechet(&matrix, &e, &[0.5, 20.0, 200.0]);
        // The naive (e_j − e_k)/(μ_j − μ_k) on the same eigenvalues: NaN where faer returns
        // bitwise-equal values, and O(1) relative garbage where they differ by rounding.
        let mu = propagator(&matrix).values.clone();
        let tau = 20.0;
        let naive_worst = (0..n)
            .flat_map(|j| (0..n).map(move |k| (j, k)))
            .filter(|&(j, k)| j != k && (mu[j] - mu[k]).abs() < 1e-9)
            .map(|(j, k)| {
                let naive = (Complex64::from_polar(1.0, tau * mu[j]) - Complex64::from_polar(1.0, tau * mu[k])) / (mu[j] - mu[k]);
                let exact = divided_difference(tau, mu[j], mu[k]);
                (naive - exact).norm() / exact.norm()
            })
            .fold(0.0, |w: f64, e| if e.is_nan() { f64::NAN } else { w.max(e) });
        println!("{name}: relative error {error:.2e}; the naive 1/(μ_j − μ_k) formula: {naive_worst:.2e} (NaN = 0/0)");
        assert!(error < 1e-11, "{name}: {error:e}");
    }
}

#[test]
fn near_degenerate_splitting_is_stable() {
    let mut rng = StdRng::seed_from_u64(13);
    let q = random_unitary(&mut rng, 8);
    let e = random_matrix(&mut rng, 8, true);
    for exponent in 6..=15 {
        let split = 10f64.powi(-exponent);
        let a = with_spectrum(&q, &[1.0, 1.0 + split, -0.5, -0.5 + split, 2.0, 0.3, -1.7, 0.9]);
        let error = error_vs_frechet(&a, &e, &[0.5, 20.0, 200.0]);
        assert!(error < 1e-11, "splitting 1e-{exponent}: {error:e}");
    }
}

#[test]
fn vjp_matches_jvp() {
    let mut rng = StdRng::seed_from_u64(17);
    let a = random_matrix(&mut rng, 10, true);
    let e = random_matrix(&mut rng, 10, true);
    let thicknesses = [0.7, 5.0, 30.0];
    let cotangents: Vec<Vec<f64>> = thicknesses.iter().map(|_| (0..10).map(|_| rng.gen_range(-1.0..1.0)).collect()).collect();
    let p = propagator(&a);
    let dpsi = p.jvp(&thicknesses, &[e.as_ref()]).unwrap();
    let mut forward = 0.0;
    for (t, &thickness) in thicknesses.iter().enumerate() {
        let psi = p.amplitudes(thickness);
        for b in 0..10 {
            forward += cotangents[t][b] * 2.0 * (psi[b].conj() * dpsi[0][t][b]).re;
        }
    }
    let (a_bar, _) = p.vjp(&thicknesses, &cotangents).unwrap();
    let a_bar = a_bar.to_complex();
    assert!(p.vjp(&thicknesses, &cotangents[..1]).is_err() && p.jvp(&thicknesses, &[a.as_ref().submatrix(0, 0, 3, 3)]).is_err());
    let reverse: f64 = (0..10).flat_map(|i| (0..10).map(move |j| (i, j))).map(|(i, j)| 2.0 * (a_bar[(i, j)].conj() * e[(i, j)]).re).sum();
    assert!((forward - reverse).abs() < 1e-12 * forward.abs().max(1.0), "{forward} vs {reverse}");
}

#[test]
fn thickness_jvp_matches_phase() {
    let mut rng = StdRng::seed_from_u64(19);
    let a = random_matrix(&mut rng, 9, true);
    let p = propagator(&a);
    let thicknesses = [3.0, 40.0];
    for &t in &thicknesses {
        let psi = p.amplitudes(t);
        let dpsi = p.thickness_derivative(t);
        // (iπ/K)·A·ψ with K = π.
        for i in 0..9 {
            let expected: Complex64 = (0..9).map(|j| a[(i, j)] * psi[j]).sum::<Complex64>() * Complex64::new(0.0, 1.0);
            assert!((dpsi[i] - expected).norm() < 1e-12, "{} vs {expected}", dpsi[i]);
        }
    }
    // The reverse thickness derivative is Σ ḡ·dI/dt.
    let cotangents: Vec<Vec<f64>> = thicknesses.iter().map(|_| (0..9).map(|_| rng.gen_range(-1.0..1.0)).collect()).collect();
    let (_, d_thickness) = p.vjp(&thicknesses, &cotangents).unwrap();
    for (t, &thickness) in thicknesses.iter().enumerate() {
        let (psi, dpsi) = (p.amplitudes(thickness), p.thickness_derivative(thickness));
        let expected: f64 = (0..9).map(|b| cotangents[t][b] * 2.0 * (psi[b].conj() * dpsi[b]).re).sum();
        assert!((d_thickness[t] - expected).abs() < 1e-12, "{} vs {expected}", d_thickness[t]);
    }
}

#[test]
fn quotient_rows_equal_the_sinc_form_across_the_switch() {
    // The row routine takes (e_j − e_k)/(μ_j − μ_k) above a phase gap of 1 rad and a Taylor
    // series of (e^{ix} − 1)/x below; phase gaps from 1e-8 to 1e3 rad agree with the sinc form to the phases' own
    // rounding: ≈ ε·τ|μ| of |G|'s bound τ (τ|μ| reaches 6e3 here, so ~1e-12).
    let mut rng = StdRng::seed_from_u64(29);
    let mut worst: f64 = 0.0;
    for _ in 0..200 {
        let tau = 10f64.powf(rng.gen_range(-1.0..3.0));
        let base = rng.gen_range(-3.0..3.0);
        let values: Vec<f64> = (0..16).map(|_| base + 10f64.powf(rng.gen_range(-8.0..3.0)) / tau * rng.gen_range(-1.0..1.0)).collect();
        let e = super::phases(tau, &values);
        let mut row = vec![Complex64::new(0.0, 0.0); values.len()];
        for j in 0..values.len() {
            super::divided_difference_row(tau, &values, &e, j, &mut row);
            for (k, g) in row.iter().enumerate() {
                let exact = divided_difference(tau, values[j], values[k]);
                worst = worst.max((g - exact).norm() / tau);
            }
        }
    }
    println!("divided-difference rows vs the sinc form: worst difference {worst:.2e} of τ");
    assert!(worst < 1e-11, "{worst:e}");
}
