//! [`symmetric_eigen`] against the definition (‖A·V − V·diag(μ)‖, ‖VᵀV − I‖) and against faer's
//! own solver, on random matrices of every merge shape and on the spectra that exercise
//! deflation: repeated eigenvalues, decoupled blocks, Wilkinson's matrix, tiny couplings.

use faer::Mat;
use rand::{Rng, SeedableRng};

use num_complex::Complex64;

use super::{hermitian_eigen, symmetric_eigen};

/// (max residual ‖A·v − μv‖∞, max |VᵀV − I|, max |μ − μ_faer|), all relative to ‖A‖∞.
fn check(a: &Mat<f64>) -> (f64, f64, f64) {
    let n = a.nrows();
    let (v, mu) = symmetric_eigen(a.clone()).expect("decomposition");
    assert!(mu.windows(2).all(|w| w[0] <= w[1]), "eigenvalues not ascending");
    let scale = (0..n).map(|i| (0..n).map(|j| a[(i, j)].abs()).sum::<f64>()).fold(1e-300, f64::max);
    let av = a * &v;
    let residual = (0..n).flat_map(|j| (0..n).map(move |i| (j, i))).map(|(j, i)| (av[(i, j)] - mu[j] * v[(i, j)]).abs()).fold(0.0, f64::max) / scale;
    let vtv = v.transpose() * &v;
    let orth = (0..n).flat_map(|j| (0..n).map(move |i| (i, j))).map(|(i, j)| (vtv[(i, j)] - if i == j { 1.0 } else { 0.0 }).abs()).fold(0.0, f64::max);
    let reference = a.self_adjoint_eigen(faer::Side::Lower).expect("faer");
    let values = reference.S().column_vector();
    let spectrum = (0..n).map(|i| (mu[i] - values[i]).abs()).fold(0.0, f64::max) / scale;
    (residual, orth, spectrum)
}

fn assert_accurate(name: &str, a: &Mat<f64>) {
    let (residual, orth, spectrum) = check(a);
    let n = a.nrows() as f64;
    let bound = 50.0 * n.max(1.0) * f64::EPSILON;
    assert!(residual < bound && orth < bound && spectrum < bound, "{name} (n = {n}): residual {residual:e}, orthogonality {orth:e}, spectrum {spectrum:e} (bound {bound:e})");
}

fn random_symmetric(n: usize, rng: &mut impl Rng) -> Mat<f64> {
    let mut a = Mat::<f64>::zeros(n, n);
    for j in 0..n {
        for i in j..n {
            let x = rng.gen_range(-1.0..1.0);
            a[(i, j)] = x;
            a[(j, i)] = x;
        }
    }
    a
}

#[test]
fn random_matrices_of_every_merge_shape() {
    let mut rng = seeded_rng();
    for n in [1, 2, 3, 5, 31, 32, 33, 64, 65, 100, 127, 200, 315] {
        assert_accurate("random", &random_symmetric(n, &mut rng));
    }
}

#[test]
fn repeated_eigenvalues_deflate() {
    let mut rng = seeded_rng();
    // Identity, 40-fold eigenvalues in a random basis, and a 4-fold degenerate spectrum (diagonal
    // and rotated).
    assert_accurate("identity", &Mat::<f64>::identity(150, 150));
    let q = random_symmetric(160, &mut rng).self_adjoint_eigen(faer::Side::Lower).expect("faer").U().to_owned();
    let spectrum = Mat::<f64>::from_fn(160, 160, |i, j| if i == j { (i / 40) as f64 } else { 0.0 });
    let degenerate = &q * &spectrum * q.transpose();
    let symmetric = Mat::<f64>::from_fn(160, 160, |i, j| 0.5 * (degenerate[(i, j)] + degenerate[(j, i)]));
    assert_accurate("four 40-fold eigenvalues", &symmetric);
    let triples = Mat::<f64>::from_fn(160, 160, |i, j| if i == j { (i % 40) as f64 * 0.01 } else { 0.0 });
    assert_accurate("diagonal with triples", &triples);
    let rotated = &q * &triples * q.transpose();
    let symmetric = Mat::<f64>::from_fn(160, 160, |i, j| 0.5 * (rotated[(i, j)] + rotated[(j, i)]));
    assert_accurate("triples in a random basis", &symmetric);
}

#[test]
fn decoupled_blocks_and_tiny_couplings() {
    let mut rng = seeded_rng();
    let n = 200;
    let mut a = Mat::<f64>::zeros(n, n);
    for (start, len) in [(0, 70), (70, 60), (130, 70)] {
        let block = random_symmetric(len, &mut rng);
        a.as_mut().submatrix_mut(start, start, len, len).copy_from(&block);
    }
    assert_accurate("three blocks", &a);
    // Bloch-like: a graded diagonal with couplings from 1e-3 down to 1e-14.
    let graded = Mat::<f64>::from_fn(n, n, |i, j| if i == j { (i as f64 * 0.37).sin() } else { 10f64.powf(-3.0 - (i as f64 - j as f64).abs() / 20.0) });
    assert_accurate("graded couplings", &graded);
}

#[test]
fn wilkinson_and_glued_wilkinson() {
    // W⁺₂₁: pairs of nearly equal eigenvalues; glued copies with coupling 1e-10.
    let w = |m: usize| -> Vec<f64> { (0..m).map(|i| (i as f64 - (m as f64 - 1.0) / 2.0).abs()).collect() };
    let diag = w(21);
    let n = 21 * 10;
    let a = Mat::<f64>::from_fn(n, n, |i, j| {
        if i == j {
            diag[i % 21]
        } else if i.abs_diff(j) == 1 {
            if i.max(j) % 21 == 0 {
                1e-10
            } else {
                1.0
            }
        } else {
            0.0
        }
    });
    assert_accurate("glued Wilkinson", &a);
}

/// Asserts that `hermitian_eigen` of the Hermitian `a` matches faer's eigenvalues, and that its
/// vectors satisfy A·V = V·diag(μ) and VᴴV = I.
fn assert_hermitian_accurate(name: &str, a: &Mat<Complex64>) {
    let n = a.nrows();
    let (v, mu) = hermitian_eigen(a.clone()).expect("decomposition");
    let reference = a.self_adjoint_eigen(faer::Side::Lower).expect("faer");
    let av = a * &v;
    let vhv = v.adjoint() * &v;
    let bound = 50.0 * n as f64 * f64::EPSILON * n as f64;
    for j in 0..n {
        assert!((mu[j] - reference.S().column_vector()[j].re).abs() < bound, "{name}: eigenvalue {j}");
        for i in 0..n {
            assert!((av[(i, j)] - v[(i, j)] * mu[j]).norm() < bound, "{name}: residual ({i}, {j})");
            let delta = if i == j { 1.0 } else { 0.0 };
            assert!((vhv[(i, j)] - delta).norm() < bound, "{name}: orthogonality ({i}, {j})");
        }
    }
}

#[test]
fn hermitian_structures_that_skip_or_shorten_reflectors() {
    // Columns already reduced (τ = 0), already reduced but for a complex phase (τ ≠ 0 with a
    // zero tail), decoupled blocks, and a real matrix, on the small (unblocked) path.
    let mut rng = seeded_rng();
    let n = 24;
    let diagonal = Mat::<Complex64>::from_fn(n, n, |i, j| if i == j { Complex64::new(i as f64 * 0.1 - 1.0, 0.0) } else { Complex64::new(0.0, 0.0) });
    assert_hermitian_accurate("diagonal", &diagonal);
    let phases: Vec<Complex64> = (0..n).map(|_| Complex64::from_polar(rng.gen_range(0.01..1.0), rng.gen_range(-3.0..3.0))).collect();
    let tridiagonal = Mat::<Complex64>::from_fn(n, n, |i, j| match i as i64 - j as i64 {
        0 => Complex64::new(rng.gen_range(-1.0..1.0), 0.0),
        1 => phases[j],
        -1 => phases[i].conj(),
        _ => Complex64::new(0.0, 0.0),
    });
    assert_hermitian_accurate("complex tridiagonal", &tridiagonal);
    let mut blocks = random_hermitian(n, &mut rng);
    for j in 0..n / 2 {
        for i in n / 2..n {
            blocks[(i, j)] = Complex64::new(0.0, 0.0);
            blocks[(j, i)] = Complex64::new(0.0, 0.0);
        }
    }
    assert_hermitian_accurate("decoupled blocks", &blocks);
    let real = Mat::<Complex64>::from_fn(n, n, |i, j| Complex64::new(blocks[(i.max(j), i.min(j))].re, 0.0));
    assert_hermitian_accurate("real", &real);
}

fn random_hermitian(n: usize, rng: &mut impl Rng) -> Mat<Complex64> {
    let mut a = Mat::<Complex64>::zeros(n, n);
    for j in 0..n {
        a[(j, j)] = Complex64::new(rng.gen_range(-1.0..1.0), 0.0);
        for i in j + 1..n {
            let x = Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0));
            a[(i, j)] = x;
            a[(j, i)] = x.conj();
        }
    }
    a
}

#[test]
fn hermitian_matrices_match_the_definition() {
    // Both sides of the switch between the unblocked and faer's blocked Householder stages.
    let mut rng = seeded_rng();
    let switch = super::SMALL_HERMITIAN_MAX;
    for n in [1, 2, 7, 33, 40, 64, switch, switch + 1, 129] {
        let a = random_hermitian(n, &mut rng);
        assert_hermitian_accurate(&format!("n {n}"), &a);
    }
}

#[test]
fn non_finite_input_is_an_error_or_non_finite_output_never_a_panic() {
    // The callers reject non-finite eigenvalues with a typed error; here only: no panic, no hang.
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for n in [3, 40, 100] {
        for bad in [f64::NAN, f64::INFINITY] {
            let mut a = random_symmetric(n, &mut rng);
            a[(n / 2, n / 3)] = bad;
            a[(n / 3, n / 2)] = bad;
            if let Ok((_, mu)) = symmetric_eigen(a) {
                assert!(mu.iter().any(|m| !m.is_finite()), "n {n}: {bad} in A gave a finite spectrum");
            }
            let mut h = random_hermitian(n, &mut rng);
            // Off the diagonal (a diagonal's imaginary part is not read).
            h[(n - 1, 0)] = Complex64::new(0.5, bad);
            h[(0, n - 1)] = Complex64::new(0.5, -bad);
            if let Ok((_, mu)) = hermitian_eigen(h) {
                assert!(mu.iter().any(|m| !m.is_finite()), "n {n}: {bad} in a Hermitian A gave a finite spectrum");
            }
        }
    }
}

/// A fresh random seed per run (printed; `SCATTERLAB_SEED=N` replays a failure), as the other
/// randomised tests do.
fn seeded_rng() -> rand::rngs::StdRng {
    scatterlab_testkit::rng("symmetric solver")
}
