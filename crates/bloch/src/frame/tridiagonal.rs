//! The forward-only fast path for real symmetric A (plan bloch-gradients.md § 8 "Risk"):
//! ψ(t) = exp(iτA)·e_z without eigenvectors.
//!
//! With 000 moved to index 0, faer's Householder tridiagonalisation A = Q·T·Qᵀ leaves e_1 alone
//! (its reflectors act on rows 2..N: Q·e_1 = e_1), so ψ(t) = Q·exp(iτT)·e_1. The tridiagonal
//! propagation is the scaled Taylor action of [`TaylorPlan`] with O(N) matrix–vector products
//! (T shifted to centre its Gershgorin interval, a phase that drops out of |ψ|²), and Q is applied
//! to the N × 2T real block of Re/Im columns once. Cost: 4/3·N³ for T instead of the full
//! eigendecomposition (tridiagonalisation + divide and conquer + the 2N³ back-transform).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch, TridiagParams};
use faer::linalg::householder::{apply_block_householder_sequence_on_the_left_in_place_scratch, apply_block_householder_sequence_on_the_left_in_place_with_conj};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::{Auto, Conj, Mat, Par};
use num_complex::Complex64;

use crate::matrix::{Conventions, StructureMatrix};
use crate::propagate::TaylorPlan;
use crate::BlochError;

/// Taylor substep bound ‖h·(T − σ)‖₁ ≤ θ and terms per substep: truncation ≤ 6⁴¹/41! ≈ 2e-18,
/// the largest term 6⁶/6! ≈ 65 (rounding ~1e-14), 6.8 products per unit of ‖τ(T − σ)‖ against
/// 18 with θ = 1 and 18 terms.
const THETA: f64 = 6.0;
const TERMS: u32 = 40;

/// Intensities `I[thickness][beam]` of a real symmetric `a` (the real part of `matrix.a`, which
/// supplies K, the 000 index and the conventions) at ascending `thicknesses`.
pub fn tridiagonal_intensities(matrix: &StructureMatrix, a: &Mat<f64>, thicknesses: &[f64], object: &str) -> Result<Vec<Vec<f64>>, BlochError> {
    let n = a.nrows();
    let z = matrix.index_000;
    // Swap 000 into index 0 (a symmetric permutation).
    let p = |i: usize| {
        if i == 0 {
            z
        } else if i == z {
            0
        } else {
            i
        }
    };
    let mut trid = Mat::<f64>::from_fn(n, n, |i, j| a[(p(i), p(j))]);
    let bs = recommended_block_size::<f64>(n, n);
    let mut householder = Mat::<f64>::zeros(bs, n.saturating_sub(1));
    let params = <TridiagParams as Auto<f64>>::auto();
    let n_cols = 2 * thicknesses.len();
    let mut buffer = MemBuffer::new(StackReq::any_of(&[
        tridiag_in_place_scratch::<f64>(n, Par::Seq, params.into()),
        apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(n.saturating_sub(1), bs, n_cols),
    ]));
    tridiag_in_place(trid.as_mut(), householder.as_mut(), Par::Seq, MemStack::new(&mut buffer), params.into());
    let diag: Vec<f64> = (0..n).map(|i| trid[(i, i)]).collect();
    let off: Vec<f64> = (0..n.saturating_sub(1)).map(|i| trid[(i + 1, i)]).collect();
    // Gershgorin interval of T; σ its centre, ‖T − σ‖₁ ≤ its half-width.
    let radius = |i: usize| off.get(i).map_or(0.0, |e| e.abs()) + if i > 0 { off[i - 1].abs() } else { 0.0 };
    let low = (0..n).map(|i| diag[i] - radius(i)).fold(f64::INFINITY, f64::min);
    let high = (0..n).map(|i| diag[i] + radius(i)).fold(f64::NEG_INFINITY, f64::max);
    if !(low.is_finite() && high.is_finite()) {
        return Err(BlochError::Numerical { object: object.to_owned(), message: "non-finite tridiagonal matrix".to_owned() });
    }
    let sigma = 0.5 * (low + high);
    let shifted: Vec<f64> = diag.iter().map(|d| d - sigma).collect();
    let norm = (0..n).map(|i| shifted[i].abs() + radius(i)).fold(0.0, f64::max);
    let plan = TaylorPlan::new(norm, std::f64::consts::PI / matrix.k, thicknesses, THETA, TERMS)?;
    let c = match matrix.conventions {
        Conventions::DiffBloch => 1.0,
        Conventions::Abtem => 1.0 / matrix.mii[z],
    };
    let mut v = vec![Complex64::new(0.0, 0.0); n];
    v[0] = Complex64::new(c, 0.0);
    let (mut term, mut next) = (vec![Complex64::new(0.0, 0.0); n], vec![Complex64::new(0.0, 0.0); n]);
    let mut block = Mat::<f64>::zeros(n, n_cols);
    for (t, &(h, substeps)) in plan.steps.iter().enumerate() {
        for _ in 0..substeps {
            // v ← Σ_k (i·h·(T − σ))^k / k! · v
            term.copy_from_slice(&v);
            for k in 1..=plan.terms {
                let factor = Complex64::new(0.0, h / f64::from(k));
                for i in 0..n {
                    let mut s = term[i] * shifted[i];
                    if i > 0 {
                        s += term[i - 1] * off[i - 1];
                    }
                    if i + 1 < n {
                        s += term[i + 1] * off[i];
                    }
                    next[i] = s * factor;
                }
                std::mem::swap(&mut term, &mut next);
                v.iter_mut().zip(&term).for_each(|(v, t)| *v += t);
            }
        }
        for (i, value) in v.iter().enumerate() {
            block[(i, 2 * t)] = value.re;
            block[(i, 2 * t + 1)] = value.im;
        }
    }
    if n > 1 {
        apply_block_householder_sequence_on_the_left_in_place_with_conj(
            trid.as_ref().submatrix(1, 0, n - 1, n - 1),
            householder.as_ref(),
            Conj::No,
            block.as_mut().subrows_mut(1, n - 1),
            Par::Seq,
            MemStack::new(&mut buffer),
        );
    }
    let readout = |b: usize| match matrix.conventions {
        Conventions::DiffBloch => 1.0,
        Conventions::Abtem => matrix.mii[b] * matrix.mii[b],
    };
    Ok((0..thicknesses.len()).map(|t| (0..n).map(|b| (block[(p(b), 2 * t)].powi(2) + block[(p(b), 2 * t + 1)].powi(2)) * readout(b)).collect()).collect())
}
