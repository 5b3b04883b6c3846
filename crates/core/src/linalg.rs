//! Small dense symmetric positive-definite algebra for the least-squares fitters' normal
//! equations (the reflectivity fits' LM and the Bloch refinement's: n = the parameter count, a few
//! to a few hundred), in one place for both.
//!
//! Why not faer: these matrices are solved a few hundred times per fit, where the model
//! evaluations dominate by orders of magnitude; a 40-line Cholesky is exact enough (f64, pivot
//! check) and keeps a large dependency out of the reflectivity crate's wasm bundle.

/// The lower Cholesky factor L (row-major) of symmetric `a`, or `None` when it is not positive
/// definite (a pivot ≤ 0 or not finite).
pub fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if !(s > 0.0 && s.is_finite()) {
                    return None;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    Some(l)
}

/// x with L Lᵀ x = b for a Cholesky factor `l` of [`cholesky`].
pub fn solve_factored(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let n = l.len();
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| l[i][k] * y[k]).sum::<f64>()) / l[i][i];
    }
    let mut x = vec![0.0; n];
    for i in (0..n).rev() {
        x[i] = (y[i] - (i + 1..n).map(|k| l[k][i] * x[k]).sum::<f64>()) / l[i][i];
    }
    x
}

/// The inverse of a symmetric positive-definite matrix via its Cholesky factor; `None` if not SPD.
pub fn spd_inverse(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let l = cholesky(a)?;
    let n = a.len();
    let mut inv = vec![vec![0.0; n]; n];
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        let col = solve_factored(&l, &e);
        for i in 0..n {
            inv[i][j] = col[i];
        }
    }
    Some(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_of_a_hilbert_like_matrix() {
        let n = 6;
        let a: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| 1.0 / (i + j + 1) as f64 + if i == j { 1.0 } else { 0.0 }).collect()).collect();
        let inv = spd_inverse(&a).unwrap();
        for (i, row) in a.iter().enumerate() {
            for j in 0..n {
                let p: f64 = row.iter().zip(&inv).map(|(aik, inv_k)| aik * inv_k[j]).sum();
                assert!((p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-13, "{i} {j} {p}");
            }
        }
    }

    #[test]
    fn solves_a_badly_scaled_system_and_refuses_an_indefinite_one() {
        let a = vec![vec![4e6, 2e3, 0.0], vec![2e3, 3.0, 1e-3], vec![0.0, 1e-3, 2e-6]];
        let x = solve_factored(&cholesky(&a).unwrap(), &[1.0, 2.0, 3.0]);
        for i in 0..3 {
            let ax: f64 = (0..3).map(|j| a[i][j] * x[j]).sum();
            assert!((ax - [1.0, 2.0, 3.0][i]).abs() < 1e-9, "{ax}");
        }
        assert!(cholesky(&[vec![1.0, 2.0], vec![2.0, 1.0]]).is_none());
        assert!(cholesky(&[vec![f64::NAN]]).is_none());
    }
}
