//! The eigen path for a real symmetric A (every Im A_ab == 0: a centrosymmetric crystal with its
//! origin on −1, e.g. borane Pccn or SrTiO3): [`crate::solve::symmetric`] (faer's complex solver is ~2.5× slower at
//! N = 315) and real GEMMs in the reverse pass (a complex GEMM costs 4 real ones).
//!
//! V and α = Vᵀe₀₀₀ are real; ψ(t) = V·(e(t) ⊙ α). The reverse pass is [`super::eigen`]'s
//! Ā = V·X·Vᵀ with X = Σ_t conj(G(t)) ∘ (λ̃(t)·αᵀ) split as Re Ā = V·Re X·Vᵀ and
//! Im Ā = V·Im X·Vᵀ. Im Ā only meets an imaginary ∂A, which a real A's structural and
//! orientation directions never have when the crystal is centrosymmetric at the origin (F and
//! every symmetry-keeping ∂F real): the caller says whether it is needed.

use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatRef, Par};
use num_complex::Complex64;
use scatterlab_core::InputError;

use super::eigen::{divided_difference_row, phases};
use super::matrix::MatrixCotangent;
use crate::matrix::StructureMatrix;
use crate::solve::symmetric::{symmetric_eigen, SymmetricEigenError};
use crate::solve::EigenPropagator;
use crate::BlochError;

/// A = V·diag(μ)·Vᵀ with V real orthogonal.
#[derive(Debug, Clone)]
pub struct RealEigenPropagator {
    vectors: Mat<f64>,
    values: Vec<f64>,
    alpha: Vec<f64>,
    /// π/K (Å).
    scale: f64,
}

impl RealEigenPropagator {
    /// The decomposition of `matrix` if A is real symmetric (`None` when any Im A_ab ≠ 0);
    /// `object` names it in errors.
    pub fn new(matrix: &StructureMatrix, object: &str) -> Result<Option<Self>, BlochError> {
        let n = matrix.hkl.len();
        if !matrix.hermitian {
            return Ok(None);
        }
        // The real part, or None at the first non-zero imaginary part (one pass).
        let mut real = Mat::<f64>::zeros(n, n);
        for j in 0..n {
            for i in 0..n {
                let a = matrix.a[(i, j)];
                if a.im != 0.0 {
                    return Ok(None);
                }
                real[(i, j)] = a.re;
            }
        }
        let (vectors, values) = symmetric_eigen(real).map_err(|e| BlochError::Numerical {
            object: object.to_owned(),
            message: match e {
                SymmetricEigenError::Workspace => format!("eigensolver workspace for {n} beams overflows"),
                SymmetricEigenError::NoConvergence => "real symmetric eigendecomposition did not converge".to_owned(),
                SymmetricEigenError::NotSquare => format!("structure matrix is not square ({n} beams)"),
            },
        })?;
        if values.iter().any(|v| !v.is_finite()) {
            return Err(BlochError::Numerical { object: object.to_owned(), message: "non-finite eigenvalue".to_owned() });
        }
        // α = Vᵀe₀₀₀: the 000 row of V.
        let alpha = (0..n).map(|k| vectors[(matrix.index_000, k)]).collect();
        Ok(Some(Self { vectors, values, alpha, scale: std::f64::consts::PI / matrix.k }))
    }

    /// The eigenvalues (ascending, Å⁻²).
    pub fn eigenvalues(&self) -> &[f64] {
        &self.values
    }

    /// The same decomposition with complex vectors (for the forward-mode Jacobian, which shares
    /// the complex code).
    pub fn to_complex(&self) -> EigenPropagator {
        let n = self.values.len();
        EigenPropagator {
            vectors: Mat::from_fn(n, n, |i, k| Complex64::new(self.vectors[(i, k)], 0.0)),
            values: self.values.clone(),
            alpha: self.alpha.iter().map(|&a| Complex64::new(a, 0.0)).collect(),
            scale: self.scale,
        }
    }

    /// V·y for complex y: one real product V·[Re y, Im y].
    fn to_beams(&self, y: &[Complex64]) -> Vec<Complex64> {
        let parts = Mat::from_fn(y.len(), 2, |k, c| if c == 0 { y[k].re } else { y[k].im });
        let out = &self.vectors * &parts;
        (0..out.nrows()).map(|i| Complex64::new(out[(i, 0)], out[(i, 1)])).collect()
    }

    /// Vᵀ·y for complex y: one real product Vᵀ·[Re y, Im y].
    fn to_eigenbasis(&self, y: &[Complex64]) -> Vec<Complex64> {
        let parts = Mat::from_fn(y.len(), 2, |k, c| if c == 0 { y[k].re } else { y[k].im });
        let out = self.vectors.transpose() * &parts;
        (0..out.nrows()).map(|j| Complex64::new(out[(j, 0)], out[(j, 1)])).collect()
    }

    /// ψ(t) = V·(e(t) ⊙ α).
    pub fn amplitudes(&self, thickness: f64) -> Vec<Complex64> {
        let e = phases(self.scale * thickness, &self.values);
        let y: Vec<Complex64> = e.iter().zip(&self.alpha).map(|(p, a)| p * a).collect();
        self.to_beams(&y)
    }

    /// ∂ψ/∂t = V·((iπμ/K) ⊙ e ⊙ α).
    pub fn thickness_derivative(&self, thickness: f64) -> Vec<Complex64> {
        let e = phases(self.scale * thickness, &self.values);
        let y: Vec<Complex64> = e.iter().zip(&self.alpha).zip(&self.values).map(|((p, a), &mu)| p * a * Complex64::new(0.0, self.scale * mu)).collect();
        self.to_beams(&y)
    }

    /// What both reverse passes need at one thickness `t` with intensity cotangents `bar`: τ,
    /// the phases e(τ), λ̃ = Vᵀ(ḡ ⊙ ψ) and ∂L/∂t = Σ_b 2·ḡ_b·Re(conj(ψ_b)·∂ψ_b/∂t) (one set of
    /// phases for ψ and ∂ψ/∂t).
    fn reverse_prelude(&self, t: f64, bar: &[f64]) -> (f64, Vec<Complex64>, Vec<Complex64>, f64) {
        let tau = self.scale * t;
        let e = phases(tau, &self.values);
        let phased: Vec<Complex64> = e.iter().zip(&self.alpha).map(|(p, a)| p * a).collect();
        let psi = self.to_beams(&phased);
        let lambda: Vec<Complex64> = psi.iter().zip(bar).map(|(p, g)| p * *g).collect();
        let lambda_tilde = self.to_eigenbasis(&lambda);
        let dy: Vec<Complex64> = phased.iter().zip(&self.values).map(|(p, &mu)| p * Complex64::new(0.0, self.scale * mu)).collect();
        let dpsi = self.to_beams(&dy);
        let d_thickness = psi.iter().zip(&dpsi).zip(bar).map(|((p, dp), g)| 2.0 * g * (p.conj() * dp).re).sum();
        (tau, e, lambda_tilde, d_thickness)
    }

    /// Reverse mode for intensity cotangents `cotangents[t][b]`: (Ā, ∂L/∂t per thickness) as
    /// [`EigenPropagator::vjp`] defines them, Im Ā computed only with `imaginary` (else 0).
    pub fn vjp(&self, thicknesses: &[f64], cotangents: &[Vec<f64>], imaginary: bool) -> Result<(MatrixCotangent, Vec<f64>), BlochError> {
        let n = self.values.len();
        if cotangents.len() != thicknesses.len() || cotangents.iter().any(|c| c.len() != n) {
            return Err(InputError::new("eigen vjp cotangents", format!("need {} thicknesses × {n} beams", thicknesses.len())).into());
        }
        if !imaginary {
            return self.vjp_symmetric(thicknesses, cotangents);
        }
        // Xᵀ (row k = column k of X) so that the inner loop writes contiguous memory.
        let (mut x_re, mut x_im) = (vec![0.0; n * n], vec![0.0; n * n]);
        let mut d_thickness = Vec::with_capacity(thicknesses.len());
        let mut g_row = vec![Complex64::new(0.0, 0.0); n];
        for (&t, bar) in thicknesses.iter().zip(cotangents) {
            let (tau, e, lambda_tilde, dt) = self.reverse_prelude(t, bar);
            d_thickness.push(dt);
            for (j, lt) in lambda_tilde.iter().enumerate() {
                divided_difference_row(tau, &self.values, &e, j, &mut g_row);
                // X_jk += conj(G_jk)·λ̃_j·α_k, stored at column j of Xᵀ (column-major).
                let re = &mut x_re[j * n..(j + 1) * n];
                for ((x, g), a) in re.iter_mut().zip(&g_row).zip(&self.alpha) {
                    *x += (g.conj() * lt).re * a;
                }
                let im = &mut x_im[j * n..(j + 1) * n];
                for ((x, g), a) in im.iter_mut().zip(&g_row).zip(&self.alpha) {
                    *x += (g.conj() * lt).im * a;
                }
            }
        }
        // Ā = V·X·Vᵀ = V·(V·Xᵀ)ᵀ, real and imaginary parts.
        let product = |xt: &[f64]| -> Mat<f64> {
            let left = &self.vectors * MatRef::from_column_major_slice(xt, n, n); // V·Xᵀ
            &self.vectors * left.transpose()
        };
        Ok((MatrixCotangent::Split { re: product(&x_re), im: Some(product(&x_im)) }, d_thickness))
    }

    /// [`Self::vjp`] when every ∂A is real symmetric: only sym(Re Ā) = V·sym(Re X)·Vᵀ matters.
    /// G is symmetric, so sym(Re X)_jk = ½(Re(conj(G_jk)·λ̃_j)·α_k + Re(conj(G_jk)·λ̃_k)·α_j) needs
    /// G on one triangle only (half the divided differences); then one full product and the
    /// lower triangle of the second (the scatter reads half of Ā).
    fn vjp_symmetric(&self, thicknesses: &[f64], cotangents: &[Vec<f64>]) -> Result<(MatrixCotangent, Vec<f64>), BlochError> {
        let n = self.values.len();
        // Row j of the lower triangle at [j·n, j·n + j] (row-major lower = column-major upper).
        let mut upper = vec![0.0; n * n];
        let mut d_thickness = Vec::with_capacity(thicknesses.len());
        let mut g_row = vec![Complex64::new(0.0, 0.0); n];
        for (&t, bar) in thicknesses.iter().zip(cotangents) {
            let (tau, e, lambda_tilde, dt) = self.reverse_prelude(t, bar);
            d_thickness.push(dt);
            for j in 0..n {
                let g = &mut g_row[..=j];
                divided_difference_row(tau, &self.values, &e, j, g);
                let (lj, aj) = (lambda_tilde[j], self.alpha[j]);
                let row = &mut upper[j * n..j * n + j + 1];
                for (((x, g), lk), ak) in row.iter_mut().zip(g.iter()).zip(&lambda_tilde).zip(&self.alpha) {
                    // Re(conj(g)·l) = g.re·l.re + g.im·l.im
                    let gj = g.re * lj.re + g.im * lj.im;
                    let gk = g.re * lk.re + g.im * lk.im;
                    *x += 0.5 * (gj * ak + gk * aj);
                }
            }
        }
        let stored = MatRef::from_column_major_slice(&upper, n, n); // stored[(k, j)] = S_jk, k ≤ j
        let symmetric = Mat::from_fn(n, n, |i, j| if i <= j { stored[(i, j)] } else { stored[(j, i)] });
        let left = &self.vectors * &symmetric;
        let mut lower = Mat::<f64>::zeros(n, n);
        triangular::matmul(
            lower.as_mut(),
            BlockStructure::TriangularLower,
            Accum::Replace,
            &left,
            BlockStructure::Rectangular,
            self.vectors.transpose(),
            BlockStructure::Rectangular,
            1.0,
            Par::Seq,
        );
        Ok((MatrixCotangent::SymmetricLower(lower), d_thickness))
    }

    /// `dψ[direction][t][beam]` along each direction (through the complex code).
    pub fn jvp(&self, thicknesses: &[f64], directions: &[MatRef<'_, Complex64>]) -> Result<Vec<Vec<Vec<Complex64>>>, BlochError> {
        self.to_complex().jvp(thicknesses, directions)
    }
}
