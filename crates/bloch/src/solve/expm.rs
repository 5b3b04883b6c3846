//! Matrix exponential of a complex matrix by scaling and squaring with Padé approximants
//! (Higham, SIAM J. Matrix Anal. Appl. 26 (2005) 1179, Algorithm 2.3): the lowest of the
//! degrees 3, 5, 7, 9 whose θ_m bounds ‖A‖₁, else degree 13 on A/2^s with ‖A/2^s‖₁ ≤ θ₁₃, then
//! s squarings. f64 throughout; backward error ≤ unit roundoff by Higham's θ_m.

use faer::linalg::solvers::Solve;
use faer::Mat;
use num_complex::Complex64;

use crate::BlochError;

/// Higham 2005 Table 2.3: θ_m for m = 3, 5, 7, 9, 13 (double precision), digits as published.
#[allow(clippy::excessive_precision)]
const THETA: [(usize, f64); 5] = [(3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1), (9, 2.097847961257068), (13, 5.371920351148152)];

/// Padé coefficients b_0..b_m of the [m/m] approximant of exp.
fn pade_coefficients(m: usize) -> &'static [f64] {
    match m {
        3 => &[120.0, 60.0, 12.0, 1.0],
        5 => &[30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0],
        7 => &[17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0],
        9 => &[17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0, 110880.0, 3960.0, 90.0, 1.0],
        _ => &[
            64764752532480000.0,
            32382376266240000.0,
            7771770303897600.0,
            1187353796428800.0,
            129060195264000.0,
            10559470521600.0,
            670442572800.0,
            33522128640.0,
            1323241920.0,
            40840800.0,
            960960.0,
            16380.0,
            182.0,
            1.0,
        ],
    }
}

/// Operator 1-norm: the largest column sum of moduli.
pub fn norm1(a: &Mat<Complex64>) -> f64 {
    (0..a.ncols()).map(|j| (0..a.nrows()).map(|i| a[(i, j)].norm()).sum::<f64>()).fold(0.0, f64::max)
}

/// Σ c_k · X_k over matrices of equal shape, plus c_I · I.
fn combine(terms: &[(f64, &Mat<Complex64>)], identity: f64, n: usize) -> Mat<Complex64> {
    Mat::from_fn(n, n, |i, j| {
        let mut v = Complex64::new(if i == j { identity } else { 0.0 }, 0.0);
        for (c, x) in terms {
            v += x[(i, j)] * *c;
        }
        v
    })
}

/// U and V of the [m/m] Padé approximant r_m(A) = (V − U)⁻¹(V + U), U odd and V even in A.
fn pade_uv(a: &Mat<Complex64>, m: usize) -> (Mat<Complex64>, Mat<Complex64>) {
    let n = a.nrows();
    let b = pade_coefficients(m);
    let a2 = a * a;
    if m == 13 {
        let a4 = &a2 * &a2;
        let a6 = &a4 * &a2;
        let inner_u = &a6 * combine(&[(b[13], &a6), (b[11], &a4), (b[9], &a2)], 0.0, n);
        let u = a * combine(&[(1.0, &inner_u), (b[7], &a6), (b[5], &a4), (b[3], &a2)], b[1], n);
        let inner_v = &a6 * combine(&[(b[12], &a6), (b[10], &a4), (b[8], &a2)], 0.0, n);
        let v = combine(&[(1.0, &inner_v), (b[6], &a6), (b[4], &a4), (b[2], &a2)], b[0], n);
        return (u, v);
    }
    // Powers A², A⁴, … up to A^(m−1); U = A Σ b_{2k+1} A^{2k}, V = Σ b_{2k} A^{2k}.
    let mut powers = vec![a2];
    while 2 * (powers.len() + 1) < m {
        let next = powers[powers.len() - 1].as_ref() * powers[0].as_ref();
        powers.push(next);
    }
    let odd: Vec<(f64, &Mat<Complex64>)> = powers.iter().enumerate().map(|(k, p)| (b[2 * k + 3], p)).collect();
    let even: Vec<(f64, &Mat<Complex64>)> = powers.iter().enumerate().map(|(k, p)| (b[2 * k + 2], p)).collect();
    (a * combine(&odd, b[1], n), combine(&even, b[0], n))
}

/// exp(A) for a square complex matrix; `object` names it in errors (non-finite input or result).
pub fn expm(a: &Mat<Complex64>, object: &str) -> Result<Mat<Complex64>, BlochError> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(BlochError::Numerical { object: object.to_owned(), message: format!("matrix exponential needs a square matrix ({}×{})", n, a.ncols()) });
    }
    let norm = norm1(a);
    if !norm.is_finite() {
        return Err(BlochError::Numerical { object: object.to_owned(), message: "matrix has non-finite entries".to_owned() });
    }
    let (m, squarings) = match THETA.iter().find(|(_, theta)| norm <= *theta) {
        Some(&(m, _)) if m < 13 => (m, 0),
        _ => (13, (norm / THETA[4].1).log2().ceil().max(0.0) as i32),
    };
    let scaled = if squarings > 0 { a * faer::Scale(Complex64::new(0.5_f64.powi(squarings), 0.0)) } else { a.clone() };
    let (u, v) = pade_uv(&scaled, m);
    let numerator = &v + &u;
    let denominator = &v - &u;
    let mut r = denominator.partial_piv_lu().solve(&numerator);
    for _ in 0..squarings {
        r = &r * &r;
    }
    if !(0..n).all(|j| (0..n).all(|i| r[(i, j)].re.is_finite() && r[(i, j)].im.is_finite())) {
        return Err(BlochError::Numerical { object: object.to_owned(), message: "matrix exponential overflowed".to_owned() });
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(re: f64, im: f64) -> Complex64 {
        Complex64::new(re, im)
    }

    #[test]
    fn scalar_and_diagonal_cases_hit_every_degree() {
        for x in [c(1e-3, 0.0), c(0.1, 0.05), c(0.0, 0.9), c(-1.5, 0.3), c(3.0, -4.0), c(0.0, 60.0), c(-20.0, 7.0)] {
            let a = Mat::from_fn(2, 2, |i, j| if i == j { x * (i as f64 + 1.0) } else { c(0.0, 0.0) });
            let e = expm(&a, "test").unwrap();
            for i in 0..2 {
                let exact = (x * (i as f64 + 1.0)).exp();
                assert!((e[(i, i)] - exact).norm() <= 1e-13 * exact.norm().max(1.0), "{x}: {} vs {exact}", e[(i, i)]);
            }
            assert!(e[(0, 1)].norm() == 0.0 && e[(1, 0)].norm() == 0.0);
        }
    }

    #[test]
    fn nilpotent_and_rotation_generators() {
        // exp([[0, t], [0, 0]]) = [[1, t], [0, 1]]
        let a = Mat::from_fn(2, 2, |i, j| if (i, j) == (0, 1) { c(7.5, 0.0) } else { c(0.0, 0.0) });
        let e = expm(&a, "test").unwrap();
        assert!((e[(0, 1)] - c(7.5, 0.0)).norm() < 1e-13 && (e[(0, 0)] - c(1.0, 0.0)).norm() < 1e-14);
        // exp(θ [[0, −1], [1, 0]]) is a rotation by θ, including large θ (many squarings).
        for theta in [0.3, 2.0, 40.0, 300.0] {
            let a = Mat::from_fn(2, 2, |i, j| match (i, j) {
                (0, 1) => c(-theta, 0.0),
                (1, 0) => c(theta, 0.0),
                _ => c(0.0, 0.0),
            });
            let e = expm(&a, "test").unwrap();
            assert!((e[(0, 0)] - c(theta.cos(), 0.0)).norm() < 1e-12 * theta.max(1.0), "θ = {theta}");
            assert!((e[(1, 0)] - c(theta.sin(), 0.0)).norm() < 1e-12 * theta.max(1.0), "θ = {theta}");
        }
    }

    #[test]
    fn non_finite_input_is_an_error() {
        let a = Mat::from_fn(2, 2, |_, _| c(f64::NAN, 0.0));
        assert!(matches!(expm(&a, "A"), Err(BlochError::Numerical { .. })));
    }
}
