//! Thickness series from one Hermitian eigendecomposition A = V Λ Vᴴ ([`super::symmetric`]: the
//! complex or, when A is real, the real solver):
//! ψ(t) = V · diag(exp(iπtλ_k/K)) · Vᴴ ψ(0), every thickness a phase multiply.
//! Only for non-absorptive (Hermitian) matrices; absorptive ones go through `expm`.

use faer::Mat;
use num_complex::Complex64;

use super::symmetric::{hermitian_eigen, symmetric_eigen};
use crate::matrix::StructureMatrix;
use crate::BlochError;

/// The eigendecomposition of a structure matrix, ready to propagate to any thickness.
#[derive(Debug, Clone)]
pub struct EigenPropagator {
    /// Eigenvectors (columns) V.
    pub(crate) vectors: Mat<Complex64>,
    /// Eigenvalues λ_k (Å⁻²).
    pub(crate) values: Vec<f64>,
    /// Excitations α = Vᴴ ψ(0).
    pub(crate) alpha: Vec<Complex64>,
    /// π / K (Å): the phase is exp(i · scale · t · λ).
    pub(crate) scale: f64,
}

impl EigenPropagator {
    /// Diagonalises `matrix` once; `object` names it in errors. `initial` is ψ(0) in the
    /// matrix's own (symmetrised) basis.
    pub fn new(matrix: &StructureMatrix, initial: &[Complex64], object: &str) -> Result<Self, BlochError> {
        if initial.len() != matrix.hkl.len() {
            return Err(BlochError::Numerical { object: object.to_owned(), message: format!("initial wave has {} entries for {} beams", initial.len(), matrix.hkl.len()) });
        }
        if !matrix.hermitian {
            return Err(BlochError::Numerical {
                object: object.to_owned(),
                message: "the eigen solver needs a Hermitian (non-absorptive) structure matrix; use the expm solver with absorption".to_owned(),
            });
        }
        let n = matrix.hkl.len();
        let real = (0..n).all(|j| (0..n).all(|i| matrix.a[(i, j)].im == 0.0));
        let (vectors, values) = if real {
            // A real symmetric A (a centrosymmetric crystal with its origin on −1): the real
            // solver, ~2.5× faster; V real, so the same ψ up to rounding.
            let (v, mu) = symmetric_eigen(Mat::from_fn(n, n, |i, j| matrix.a[(i, j)].re))
                .map_err(|e| BlochError::Numerical { object: object.to_owned(), message: format!("real symmetric eigendecomposition failed ({e:?})") })?;
            (Mat::from_fn(n, n, |i, k| Complex64::new(v[(i, k)], 0.0)), mu)
        } else {
            hermitian_eigen(matrix.a.clone()).map_err(|e| BlochError::Numerical { object: object.to_owned(), message: format!("Hermitian eigendecomposition failed ({e:?})") })?
        };
        let n = values.len();
        let alpha = (0..n).map(|k| vectors.col_as_slice(k).iter().zip(initial).map(|(v, x)| v.conj() * x).sum()).collect();
        if values.iter().any(|v| !v.is_finite()) {
            return Err(BlochError::Numerical { object: object.to_owned(), message: "non-finite eigenvalue".to_owned() });
        }
        Ok(Self { vectors, values, alpha, scale: std::f64::consts::PI / matrix.k })
    }

    /// ψ(t) in the matrix's own basis.
    pub fn amplitudes(&self, thickness: f64) -> Vec<Complex64> {
        let n = self.values.len();
        let weights: Vec<Complex64> = self.values.iter().zip(&self.alpha).map(|(&lambda, &alpha)| Complex64::from_polar(1.0, self.scale * thickness * lambda) * alpha).collect();
        // Column by column (contiguous).
        let mut psi = vec![Complex64::new(0.0, 0.0); n];
        for (k, w) in weights.iter().enumerate() {
            for (p, v) in psi.iter_mut().zip(self.vectors.col_as_slice(k)) {
                *p += v * w;
            }
        }
        psi
    }

    /// The eigenvalues λ_k (ascending, Å⁻²).
    pub fn eigenvalues(&self) -> &[f64] {
        &self.values
    }
}
