//! The eigen solver with a real-symmetric fast path (plan bloch-gradients.md § 4.1 "Real lever").
//!
//! Without absorption A is Hermitian; when every F(g_j − g_i) it uses is real (a centrosymmetric
//! crystal with its origin on an inversion centre, e.g. borane in Pccn: the atom sum's imaginary
//! parts cancel to rounding and are snapped to 0), A is real symmetric. Then A = V·diag(μ)·Vᵀ
//! with V real ([`crate::solve::symmetric`], ~4× fewer flops than the complex one), α = Vᵀψ(0)
//! is real, and ψ(t) = V·(exp(iπtμ/K) ⊙ α): one real N×N by N×2T product gives every thickness.
//! Other matrices take [`EigenPropagator`] unchanged.

use faer::Mat;
use num_complex::Complex64;

use super::tridiagonal::tridiagonal_intensities;
use crate::matrix::{Conventions, StructureMatrix};
use crate::solve::symmetric::symmetric_eigen;
use crate::solve::{check_propagated, intensities, Solver, FLUX_TOLERANCE};
use crate::BlochError;

/// A as a real matrix when it is Hermitian with every imaginary part exactly 0, else `None`.
pub fn real_part_if_real(matrix: &StructureMatrix) -> Option<Mat<f64>> {
    let a = &matrix.a;
    let n = a.nrows();
    if !matrix.hermitian || (0..n).any(|j| (0..n).any(|i| a[(i, j)].im != 0.0)) {
        return None;
    }
    Some(Mat::from_fn(n, n, |i, j| a[(i, j)].re))
}

/// Intensities `I[thickness][beam]` of `matrix` at `thicknesses` (Å) by eigendecomposition: the
/// real-symmetric path when A is real, [`crate::solve::intensities`] with [`Solver::Eigen`]
/// otherwise. Both conventions are read out as that function does. `object` names the matrix in errors.
pub fn eigen_intensities(matrix: &StructureMatrix, thicknesses: &[f64], object: &str) -> Result<Vec<Vec<f64>>, BlochError> {
    let Some(a) = real_part_if_real(matrix) else {
        return intensities(matrix, thicknesses, Solver::Eigen, object);
    };
    crate::solve::check_thicknesses(thicknesses)?;
    let n = a.nrows();
    let z = matrix.index_000;
    // ψ(0) = c·e_z: c = 1 (diffBloch) or 1/M_z (abTEM's symmetrised amplitudes); readout scale m_b.
    let (c, readout): (f64, Vec<f64>) = match matrix.conventions {
        Conventions::DiffBloch => (1.0, vec![1.0; n]),
        Conventions::Abtem => (1.0 / matrix.mii[z], matrix.mii.clone()),
    };
    let (vectors, values) =
        symmetric_eigen(a).map_err(|e| BlochError::Numerical { object: object.to_owned(), message: format!("real symmetric eigendecomposition failed ({e:?})") })?;
    if values.iter().any(|v| !v.is_finite()) {
        return Err(BlochError::Numerical { object: object.to_owned(), message: "non-finite eigenvalue".to_owned() });
    }
    let scale = std::f64::consts::PI / matrix.k;
    // Columns 2t and 2t+1: Re and Im of exp(iπtμ_k/K)·α_k, α_k = V_zk·c.
    let weights = Mat::<f64>::from_fn(n, 2 * thicknesses.len(), |k, col| {
        let phase = Complex64::from_polar(vectors[(z, k)] * c, scale * thicknesses[col / 2] * values[k]);
        if col % 2 == 0 {
            phase.re
        } else {
            phase.im
        }
    });
    let psi = &vectors * &weights;
    (0..thicknesses.len())
        .map(|t| {
            let modulus: Vec<f64> = (0..n).map(|b| psi[(b, 2 * t)] * psi[(b, 2 * t)] + psi[(b, 2 * t + 1)] * psi[(b, 2 * t + 1)]).collect();
            let row: Vec<f64> = modulus.iter().zip(&readout).map(|(m, r)| m * (r * r)).collect();
            // A real symmetric A propagates unitarily: Σ|ψ|² stays c².
            check_propagated(&row, Some(modulus.iter().sum()), c * c, FLUX_TOLERANCE, object, thicknesses[t])?;
            Ok(row)
        })
        .collect()
}

/// The fastest forward for `matrix`: the tridiagonal Taylor path ([`tridiagonal_intensities`])
/// when A is real symmetric and the thicknesses ascend, else [`eigen_intensities`].
pub fn fast_intensities(matrix: &StructureMatrix, thicknesses: &[f64], object: &str) -> Result<Vec<Vec<f64>>, BlochError> {
    crate::solve::check_thicknesses(thicknesses)?;
    match real_part_if_real(matrix) {
        Some(a) if thicknesses.windows(2).all(|w| w[0] <= w[1]) => tridiagonal_intensities(matrix, &a, thicknesses, object),
        _ => eigen_intensities(matrix, thicknesses, object),
    }
}
