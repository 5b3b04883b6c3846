//! Small dense symmetric positive-definite algebra for the fitters (n ≲ 50 parameters).
//!
//! Why not faer: these are ≤ 50×50 normal-equation matrices solved a few hundred times per fit; a
//! 40-line Cholesky is exact enough (f64, pivot check) and keeps a large dependency out of the
//! refl crate's wasm bundle. The Bloch crate, with real eigenproblems, uses faer.

/// Cholesky factor L (row-major, lower) of a symmetric positive-definite `a`; None if not SPD.
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

/// Solves L Lᵀ x = b.
pub fn cholesky_solve(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
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

/// The inverse of an SPD matrix, via its Cholesky factor; None if not SPD.
pub fn spd_inverse(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let l = cholesky(a)?;
    let n = a.len();
    let mut inv = vec![vec![0.0; n]; n];
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        let col = cholesky_solve(&l, &e);
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
        for i in 0..n {
            for j in 0..n {
                let p: f64 = (0..n).map(|k| a[i][k] * inv[k][j]).sum();
                assert!((p - if i == j { 1.0 } else { 0.0 }).abs() < 1e-13, "{i} {j} {p}");
            }
        }
        assert!(cholesky(&[vec![1.0, 2.0], vec![2.0, 1.0]]).is_none());
    }
}
