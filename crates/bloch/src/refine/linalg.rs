//! Small dense symmetric solves for the normal equations (n = the parameter count, tens to a few
//! hundred): Cholesky is enough and keeps the refinement free of a linear-algebra dependency on
//! its hot path (the model evaluations dominate by orders of magnitude). The factorisation is the
//! workspace's one (`scatterlab_core::linalg`, shared with the reflectivity fits).

use scatterlab_core::linalg::{cholesky, solve_factored};

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
