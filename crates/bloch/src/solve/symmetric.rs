//! The real symmetric (A = V·diag(μ)·Vᵀ) and Hermitian (A = V·diag(μ)·Vᴴ) eigendecompositions
//! used by the Bloch eigen paths: Householder tridiagonalisation and back-transformation (faer's
//! blocked stages, or for complex N ≤ [`SMALL_HERMITIAN_MAX`] the unblocked ones of
//! [`super::hermitian_small`]) around our [`super::divide_conquer`] (the stage where faer 0.24
//! spends most of the time at N ≈ 300).

use std::cell::RefCell;
use std::mem::MaybeUninit;

use faer::dyn_stack::{MemStack, StackReq};
use faer::linalg::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch, TridiagParams};
use faer::linalg::householder::{apply_block_householder_sequence_on_the_left_in_place_scratch, apply_block_householder_sequence_on_the_left_in_place_with_conj};
use faer::linalg::qr::no_pivoting::factor::recommended_block_size;
use faer::traits::ComplexField;
use faer::{Auto, Conj, Mat, Par};
use num_complex::Complex64;

use super::divide_conquer::tridiagonal_eigen;
use super::hermitian_small::{back_transform_small, tridiagonalise_small};

/// Sub-problem size at and below which the tridiagonal solve uses QL sweeps (leaves of 8–32
/// measured equal within noise on borane-sized frames, 4 and 64 slower, with faer's QR leaves;
/// 12–40 equal on quartz with ours).
pub const DIVIDE_AND_CONQUER_LEAF: usize = 32;

/// Largest N for the unblocked complex Householder stages ([`super::hermitian_small`]); faer's
/// blocked ones above. Alone in a loop the two are equal near N = 64 and faer's ~5 % faster
/// from N = 96; inside a gradient (caches shared with the rest of the tilt) the unblocked ones
/// win by more at N ≈ 40.
pub const SMALL_HERMITIAN_MAX: usize = 80;

thread_local! {
    /// The tridiagonalisation workspace, kept between calls instead of being allocated (and, by
    /// glibc, mapped and unmapped) for every tilt.
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

/// Why the decomposition failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SymmetricEigenError {
    /// The workspace size overflows usize.
    Workspace,
    /// The tridiagonal QL sweeps did not converge.
    NoConvergence,
    /// The matrix is not square.
    NotSquare,
}

/// faer's Householder tridiagonalisation of the square, non-empty `trid` in place: the block
/// reflectors and the workspace size both this and [`back_transform`] need.
fn tridiagonalise<T: ComplexField>(trid: &mut Mat<T>) -> Result<(Mat<T>, usize), SymmetricEigenError> {
    let n = trid.nrows();
    let bs = recommended_block_size::<T>(n, n);
    let mut householder = Mat::<T>::zeros(bs, n - 1);
    let params = <TridiagParams as Auto<T>>::auto();
    let request = StackReq::any_of(&[tridiag_in_place_scratch::<T>(n, Par::Seq, params.into()), apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(n - 1, bs, n)]);
    // Bytes with room to align (the kept buffer is a byte vector); usize::MAX on overflow.
    let bytes = request.unaligned_bytes_required();
    if bytes == usize::MAX {
        return Err(SymmetricEigenError::Workspace);
    }
    with_scratch(bytes, |stack| tridiag_in_place(trid.as_mut(), householder.as_mut(), Par::Seq, stack, params.into()));
    Ok((householder, bytes))
}

/// V ← Q·V for the tridiagonalisation's Q (its reflectors act on rows 2..N).
fn back_transform<T: ComplexField>(trid: &Mat<T>, householder: &Mat<T>, vectors: &mut Mat<T>, bytes: usize) {
    let n = trid.nrows();
    if n > 1 {
        with_scratch(bytes, |stack| {
            apply_block_householder_sequence_on_the_left_in_place_with_conj(
                trid.as_ref().submatrix(1, 0, n - 1, n - 1),
                householder.as_ref(),
                Conj::No,
                vectors.as_mut().subrows_mut(1, n - 1),
                Par::Seq,
                stack,
            )
        });
    }
}

/// (V, μ ascending) of the symmetric `a` (only its lower triangle is read; it is consumed as
/// the tridiagonalisation's workspace, which saves an N² copy per tilt).
pub fn symmetric_eigen(a: Mat<f64>) -> Result<(Mat<f64>, Vec<f64>), SymmetricEigenError> {
    let n = a.nrows();
    if n == 0 || a.ncols() != n {
        return if n == 0 { Ok((Mat::zeros(0, 0), Vec::new())) } else { Err(SymmetricEigenError::NotSquare) };
    }
    let mut trid = a;
    let (householder, bytes) = tridiagonalise(&mut trid)?;
    let mut values: Vec<f64> = (0..n).map(|i| trid[(i, i)]).collect();
    let mut off: Vec<f64> = (0..n - 1).map(|i| trid[(i + 1, i)]).collect();
    let mut vectors = Mat::<f64>::zeros(n, n);
    tridiagonal_eigen(&mut values, &mut off, vectors.as_mut(), DIVIDE_AND_CONQUER_LEAF).map_err(|_| SymmetricEigenError::NoConvergence)?;
    back_transform(&trid, &householder, &mut vectors, bytes);
    Ok((vectors, values))
}

/// (V, μ ascending) of the Hermitian `a` (lower triangle read, consumed as workspace): a
/// complex tridiagonalisation A = Q·T·Qᴴ, our divide and conquer on the real T, V = Q·Z. Up to
/// [`SMALL_HERMITIAN_MAX`] the unblocked Householder stages of [`super::hermitian_small`] (T
/// real by construction; ~20 % of a quartz gradient saved); above it faer's blocked ones, T
/// made real by a unitary diagonal D (|T|'s sub-diagonal; faer's construction), V = Q·D·Z.
pub fn hermitian_eigen(a: Mat<Complex64>) -> Result<(Mat<Complex64>, Vec<f64>), SymmetricEigenError> {
    let n = a.nrows();
    if n == 0 || a.ncols() != n {
        return if n == 0 { Ok((Mat::zeros(0, 0), Vec::new())) } else { Err(SymmetricEigenError::NotSquare) };
    }
    if n <= SMALL_HERMITIAN_MAX {
        let mut small = tridiagonalise_small(a.as_ref());
        let (mut values, mut off) = (std::mem::take(&mut small.diag), std::mem::take(&mut small.off));
        let mut real = Mat::<f64>::zeros(n, n);
        tridiagonal_eigen(&mut values, &mut off, real.as_mut(), DIVIDE_AND_CONQUER_LEAF).map_err(|_| SymmetricEigenError::NoConvergence)?;
        return Ok((back_transform_small(&small, real.as_ref()), values));
    }
    let mut trid = a;
    let (householder, bytes) = tridiagonalise(&mut trid)?;
    let mut values: Vec<f64> = (0..n).map(|i| trid[(i, i)].re).collect();
    let mut off: Vec<f64> = (0..n - 1).map(|i| trid[(i + 1, i)].norm()).collect();
    // D: d₀ = 1, dᵢ = unit(tᵢ,ᵢ₋₁·dᵢ₋₁), so that D⁻¹·T·D is real with sub-diagonal |tᵢ,ᵢ₋₁|.
    let mut scale = vec![Complex64::new(1.0, 0.0); n];
    for i in 1..n {
        let x = trid[(i, i - 1)] * scale[i - 1];
        let norm = x.norm();
        scale[i] = if norm == 0.0 { Complex64::new(1.0, 0.0) } else { x / norm };
    }
    let mut real = Mat::<f64>::zeros(n, n);
    tridiagonal_eigen(&mut values, &mut off, real.as_mut(), DIVIDE_AND_CONQUER_LEAF).map_err(|_| SymmetricEigenError::NoConvergence)?;
    let mut vectors = Mat::<Complex64>::from_fn(n, n, |i, j| scale[i] * real[(i, j)]);
    back_transform(&trid, &householder, &mut vectors, bytes);
    Ok((vectors, values))
}

#[cfg(test)]
#[path = "symmetric_tests.rs"]
mod tests;
