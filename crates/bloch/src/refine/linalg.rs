//! Small dense symmetric solves for the normal equations (n = the parameter count, tens to a few
//! hundred): Cholesky is enough and keeps the refinement free of a linear-algebra dependency on
//! its hot path (the model evaluations dominate by orders of magnitude).

/// The lower Cholesky factor of symmetric `a`, or `None` when it is not positive definite.
pub fn cholesky(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let sum: f64 = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if !(sum > 0.0) || !sum.is_finite() {
                    return None;
                }
                l[i][i] = sum.sqrt();
            } else {
                l[i][j] = sum / l[j][j];
            }
        }
    }
    Some(l)
}

/// x with L Lᵀ x = b for a Cholesky factor `l`.
fn solve_factored(l: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
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

/// x with A x = b for symmetric positive definite `a`; `None` otherwise.
pub fn cholesky_solve(a: &[Vec<f64>], b: &[f64]) -> Option<Vec<f64>> {
    cholesky(a).map(|l| solve_factored(&l, b))
}

/// A⁻¹ of symmetric positive definite `a`, computed on the diagonally scaled matrix (so
/// parameters of very different units do not spoil the factorisation); `None` when singular.
pub fn covariance(a: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let n = a.len();
    let d: Vec<f64> = (0..n).map(|i| if a[i][i] > 0.0 { 1.0 / a[i][i].sqrt() } else { 0.0 }).collect();
    let scaled: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| a[i][j] * d[i] * d[j]).collect()).collect();
    let l = cholesky(&scaled)?;
    let columns: Vec<Vec<f64>> = (0..n).map(|j| solve_factored(&l, &(0..n).map(|i| f64::from(u8::from(i == j))).collect::<Vec<_>>())).collect();
    Some((0..n).map(|i| (0..n).map(|j| columns[j][i] * d[i] * d[j]).collect()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_and_inverts_a_badly_scaled_spd_matrix() {
        let a = vec![vec![4e6, 2e3, 0.0], vec![2e3, 3.0, 1e-3], vec![0.0, 1e-3, 2e-6]];
        let x = cholesky_solve(&a, &[1.0, 2.0, 3.0]).unwrap();
        for i in 0..3 {
            let ax: f64 = (0..3).map(|j| a[i][j] * x[j]).sum();
            assert!((ax - [1.0, 2.0, 3.0][i]).abs() < 1e-9, "{ax}");
        }
        let inv = covariance(&a).unwrap();
        for i in 0..3 {
            for j in 0..3 {
                let p: f64 = (0..3).map(|k| a[i][k] * inv[k][j]).sum();
                assert!((p - f64::from(u8::from(i == j))).abs() < 1e-9, "{i}{j} {p}");
            }
        }
        assert!(cholesky(&[vec![1.0, 2.0], vec![2.0, 1.0]]).is_none());
    }
}
