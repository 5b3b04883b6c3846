//! The eigen path for a real symmetric A (every Im A_ab == 0: a centrosymmetric crystal with its
//! origin on −1, e.g. borane Pccn or SrTiO3): faer's real solver (~2× faster than the complex one
//! at N = 315) and real GEMMs in the reverse pass (a complex GEMM costs 4 real ones).
//!
//! V and α = Vᵀe₀₀₀ are real; ψ(t) = V·(e(t) ⊙ α). The reverse pass is [`super::eigen`]'s
//! Ā = V·X·Vᵀ with X = Σ_t conj(G(t)) ∘ (λ̃(t)·αᵀ) split as Re Ā = V·Re X·Vᵀ and
//! Im Ā = V·Im X·Vᵀ. Im Ā only meets an imaginary ∂A, which a real A's structural and
//! orientation directions never have when the crystal is centrosymmetric at the origin (F and
//! every symmetry-keeping ∂F real): the caller says whether it is needed.

use std::cell::RefCell;
use std::mem::MaybeUninit;

use faer::diag::Diag;
use faer::dyn_stack::MemStack;
use faer::linalg::evd::{self, ComputeEigenvectors, SelfAdjointEvdParams};
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatRef, Par, Spec};
use num_complex::Complex64;
use scatterlab_core::InputError;

use super::eigen::{divided_difference_row, phases};
use super::matrix::MatrixCotangent;
use crate::matrix::StructureMatrix;
use crate::solve::EigenPropagator;
use crate::BlochError;

/// Sub-problem size below which faer's tridiagonal eigensolver switches from divide and
/// conquer to QR sweeps.
const DIVIDE_AND_CONQUER_LEAF: usize = 64;

thread_local! {
    /// faer's eigensolver workspace (2.5 MB at N = 315), kept between tilts instead of being
    /// allocated (and, by glibc, mapped and unmapped) for every tilt.
    static SCRATCH: RefCell<Vec<MaybeUninit<u8>>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on a workspace of at least `bytes` (this thread's kept one, grown as needed, or a
/// fresh one if it is in use).
fn with_scratch<R>(bytes: usize, f: impl FnOnce(&mut MemStack) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            if buffer.len() < bytes {
                buffer.resize(bytes, MaybeUninit::uninit());
            }
            f(MemStack::new(&mut buffer[..]))
        }
        Err(_) => f(MemStack::new(&mut vec![MaybeUninit::uninit(); bytes][..])),
    })
}

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
        if !matrix.hermitian || (0..n).any(|j| (0..n).any(|i| matrix.a[(i, j)].im != 0.0)) {
            return Ok(None);
        }
        let real = Mat::from_fn(n, n, |i, j| matrix.a[(i, j)].re);
        let (mut vectors, mut values) = (Mat::<f64>::zeros(n, n), Diag::<f64>::zeros(n));
        let mut raw: SelfAdjointEvdParams = <SelfAdjointEvdParams as faer::Auto<f64>>::auto();
        // Divide and conquer down to 64 (faer's default 128 leaves N ≈ 315 to QR sweeps in
        // 128-blocks): ~4 % off a borane gradient, measured alternating 32/64/128.
        raw.recursion_threshold = DIVIDE_AND_CONQUER_LEAF;
        let params: Spec<SelfAdjointEvdParams, f64> = raw.into();
        // Bytes with room to align (the kept buffer is a byte vector); usize::MAX on overflow.
        let bytes = evd::self_adjoint_evd_scratch::<f64>(n, ComputeEigenvectors::Yes, Par::Seq, params).unaligned_bytes_required();
        if bytes == usize::MAX {
            return Err(BlochError::Numerical { object: object.to_owned(), message: format!("eigensolver workspace for {n} beams overflows") });
        }
        with_scratch(bytes, |stack| evd::self_adjoint_evd(real.as_ref(), values.as_mut(), Some(vectors.as_mut()), Par::Seq, stack, params)).map_err(
            |e| BlochError::Numerical { object: object.to_owned(), message: format!("real symmetric eigendecomposition did not converge ({e:?})") },
        )?;
        let values: Vec<f64> = values.column_vector().iter().copied().collect();
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

    /// V·y for complex y (two real matrix-vector products).
    fn to_beams(&self, y: &[Complex64]) -> Vec<Complex64> {
        let n = self.values.len();
        let mut out = vec![Complex64::new(0.0, 0.0); n];
        for (k, yk) in y.iter().enumerate() {
            let column = self.vectors.col(k);
            for (o, v) in out.iter_mut().zip(column.iter()) {
                *o += yk * v;
            }
        }
        out
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

    /// Reverse mode for intensity cotangents `cotangents[t][b]`: (Ā, ∂L/∂t per thickness) as
    /// [`EigenPropagator::vjp`] defines them, Im Ā computed only with `imaginary` (else 0).
    pub fn vjp(&self, thicknesses: &[f64], cotangents: &[Vec<f64>], imaginary: bool) -> Result<(MatrixCotangent, Vec<f64>), BlochError> {
        let n = self.values.len();
        if cotangents.len() != thicknesses.len() || cotangents.iter().any(|c| c.len() != n) {
            return Err(InputError::new("eigen vjp cotangents", format!("need {} thicknesses × {n} beams", thicknesses.len())).into());
        }
        // Xᵀ (row k = column k of X) so that the inner loop writes contiguous memory; Im X
        // only when Im Ā is wanted.
        let (mut x_re, mut x_im) = (vec![0.0; n * n], vec![0.0; if imaginary { n * n } else { 0 }]);
        let mut d_thickness = Vec::with_capacity(thicknesses.len());
        let mut g_row = vec![Complex64::new(0.0, 0.0); n];
        for (&t, bar) in thicknesses.iter().zip(cotangents) {
            let psi = self.amplitudes(t);
            // λ̃ = Vᵀ(ḡ ⊙ ψ).
            let lambda: Vec<Complex64> = psi.iter().zip(bar).map(|(p, g)| p * *g).collect();
            let lambda_tilde: Vec<Complex64> =
                (0..n).map(|j| self.vectors.col(j).iter().zip(&lambda).map(|(v, l)| l * v).sum()).collect();
            let tau = self.scale * t;
            let e = phases(tau, &self.values);
            for (j, lt) in lambda_tilde.iter().enumerate() {
                divided_difference_row(tau, &self.values, &e, j, &mut g_row);
                // X_jk += conj(G_jk)·λ̃_j·α_k, stored at column j of Xᵀ (column-major).
                let re = &mut x_re[j * n..(j + 1) * n];
                for ((x, g), a) in re.iter_mut().zip(&g_row).zip(&self.alpha) {
                    *x += (g.conj() * lt).re * a;
                }
                if let Some(im) = x_im.get_mut(j * n..(j + 1) * n) {
                    for ((x, g), a) in im.iter_mut().zip(&g_row).zip(&self.alpha) {
                        *x += (g.conj() * lt).im * a;
                    }
                }
            }
            let dpsi = self.thickness_derivative(t);
            d_thickness.push(psi.iter().zip(&dpsi).zip(bar).map(|((p, dp), g)| 2.0 * g * (p.conj() * dp).re).sum());
        }
        if imaginary {
            // Ā = V·X·Vᵀ = V·(V·Xᵀ)ᵀ, real and imaginary parts.
            let product = |xt: &[f64]| -> Mat<f64> {
                let left = &self.vectors * MatRef::from_column_major_slice(xt, n, n); // V·Xᵀ
                &self.vectors * left.transpose()
            };
            return Ok((MatrixCotangent::Split { re: product(&x_re), im: Some(product(&x_im)) }, d_thickness));
        }
        // Every ∂A is then real symmetric, so only sym(Re Ā) = V·sym(Re X)·Vᵀ matters: one full
        // product and the lower triangle of the second (a quarter of the GEMM work saved, and
        // the scatter reads half of Ā).
        let xt = MatRef::from_column_major_slice(&x_re, n, n);
        let symmetric = Mat::from_fn(n, n, |i, j| 0.5 * (xt[(i, j)] + xt[(j, i)]));
        let left = &self.vectors * &symmetric;
        let mut lower = Mat::<f64>::zeros(n, n);
        triangular::matmul(lower.as_mut(), BlockStructure::TriangularLower, Accum::Replace, &left, BlockStructure::Rectangular, self.vectors.transpose(), BlockStructure::Rectangular, 1.0, Par::Seq);
        Ok((MatrixCotangent::SymmetricLower(lower), d_thickness))
    }

    /// dψ[direction][t][beam] along each direction (through the complex code).
    pub fn jvp(&self, thicknesses: &[f64], directions: &[MatRef<'_, Complex64>]) -> Result<Vec<Vec<Vec<Complex64>>>, BlochError> {
        self.to_complex().jvp(thicknesses, directions)
    }
}
