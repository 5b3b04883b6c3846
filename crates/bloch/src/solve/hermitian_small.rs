//! The two Householder stages of a small Hermitian eigendecomposition (LAPACK zhetd2 and zunm2l's
//! unblocked order), real and imaginary parts in separate arrays so that every inner loop is a
//! contiguous AXPY over f64 lanes: A = Q·T·Qᴴ with T real symmetric tridiagonal (zlarfg's
//! reflectors leave a real sub-diagonal, so no unitary rescaling is needed), then V = Q·Z.
//!
//! Why our own: at the quartz sizes (N ≈ 40) faer 0.24's blocked complex tridiagonalisation and
//! block-reflector back-transformation took ~30 µs each (building block-reflector factors that
//! only pay off at large N); these loops run a few times faster there. Large matrices keep faer's
//! blocked code ([`super::symmetric::hermitian_eigen`] chooses by size).

use faer::{Mat, MatRef};
use num_complex::Complex64;

/// A Hermitian matrix reduced to real tridiagonal form, with the reflectors to undo it.
pub(crate) struct SmallTridiagonal {
    n: usize,
    /// Diagonal of T.
    pub diag: Vec<f64>,
    /// Sub-diagonal of T (length n − 1).
    pub off: Vec<f64>,
    /// Reflector k (acting on rows k + 1..n) is v = (1, v_re + i·v_im); stored per k, length
    /// n − k − 1 (the leading 1 included).
    v_re: Vec<Vec<f64>>,
    v_im: Vec<Vec<f64>>,
    /// τ of each reflector: H_k = I − τ_k·v·vᴴ.
    tau: Vec<Complex64>,
}

/// Runs `f` compiled for AVX2 + FMA where the CPU has them (the loops below are written for
/// LLVM to vectorise; this only widens the lanes).
macro_rules! with_avx2 {
    ($name:ident, $body:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        fn $name($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                fn wide($($arg: $ty),*) -> $ret {
                    $body($($arg),*)
                }
                if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                    // SAFETY: the CPU has AVX2 and FMA (checked just above).
                    return unsafe { wide($($arg),*) };
                }
            }
            $body($($arg),*)
        }
    };
}

with_avx2!(tridiagonalise_small_dispatch, tridiagonalise_impl, (a: MatRef<'_, Complex64>) -> SmallTridiagonal);
with_avx2!(back_transform_dispatch, back_transform_impl, (t: &SmallTridiagonal, z: MatRef<'_, f64>) -> Mat<Complex64>);

/// Reduces the Hermitian `a` (its lower triangle is read) to real tridiagonal form.
pub(crate) fn tridiagonalise_small(a: MatRef<'_, Complex64>) -> SmallTridiagonal {
    tridiagonalise_small_dispatch(a)
}

/// V = Q·Z for the real n × n `z` (the eigenvectors of T).
pub(crate) fn back_transform_small(t: &SmallTridiagonal, z: MatRef<'_, f64>) -> Mat<Complex64> {
    back_transform_dispatch(t, z)
}

#[inline(always)]
fn tridiagonalise_impl(a: MatRef<'_, Complex64>) -> SmallTridiagonal {
    let n = a.nrows();
    // Full Hermitian storage, column-major, from the lower triangle (both triangles are then
    // updated: every loop an AXPY, no reductions).
    let (mut re, mut im) = (vec![0.0; n * n], vec![0.0; n * n]);
    for j in 0..n {
        for i in j..n {
            let x = a[(i, j)];
            re[j * n + i] = x.re;
            im[j * n + i] = x.im;
            re[i * n + j] = x.re;
            im[i * n + j] = -x.im;
        }
        im[j * n + j] = 0.0;
    }
    let mut diag = vec![0.0; n];
    let mut off = vec![0.0; n.saturating_sub(1)];
    let (mut v_re, mut v_im, mut tau) = (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
    let (mut p_re, mut p_im) = (vec![0.0; n], vec![0.0; n]);
    for k in 0..n.saturating_sub(1) {
        let (start, m) = (k + 1, n - k - 1);
        let column = k * n + start;
        let (x_re, x_im) = (&re[column..column + m], &im[column..column + m]);
        let (vr, vi, t, beta) = householder(x_re, x_im);
        off[k] = beta;
        if t != Complex64::new(0.0, 0.0) {
            two_sided_update(&mut re, &mut im, n, start, &vr, &vi, t, &mut p_re[..m], &mut p_im[..m]);
        }
        v_re.push(vr);
        v_im.push(vi);
        tau.push(t);
    }
    for (i, d) in diag.iter_mut().enumerate() {
        *d = re[i * n + i];
    }
    SmallTridiagonal { n, diag, off, v_re, v_im, tau }
}

/// zlarfg on x = (α, x₁…): (v with v₀ = 1, τ, β) such that (I − τ v vᴴ)ᴴ·x = β·e₀, β real.
/// τ = 0 (and v = e₀) when x is already β·e₀ with β real.
fn householder(x_re: &[f64], x_im: &[f64]) -> (Vec<f64>, Vec<f64>, Complex64, f64) {
    let m = x_re.len();
    let alpha = Complex64::new(x_re[0], x_im[0]);
    let tail2: f64 = x_re[1..].iter().zip(&x_im[1..]).map(|(r, i)| r * r + i * i).sum();
    let (mut v_re, mut v_im) = (vec![0.0; m], vec![0.0; m]);
    v_re[0] = 1.0;
    if tail2 == 0.0 && alpha.im == 0.0 {
        return (v_re, v_im, Complex64::new(0.0, 0.0), alpha.re);
    }
    let norm = (alpha.norm_sqr() + tail2).sqrt();
    let beta = if alpha.re >= 0.0 { -norm } else { norm };
    let tau = Complex64::new((beta - alpha.re) / beta, -alpha.im / beta);
    let scale = (alpha - beta).inv();
    for i in 1..m {
        let v = Complex64::new(x_re[i], x_im[i]) * scale;
        v_re[i] = v.re;
        v_im[i] = v.im;
    }
    (v_re, v_im, tau, beta)
}

/// A₂₂ ← Hᴴ·A₂₂·H on the trailing block starting at `start` (zhetd2: p = τ·A₂₂·v,
/// w = p − ½τ(pᴴv)·v, A₂₂ −= v·wᴴ + w·vᴴ), both triangles, diagonal kept real.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn two_sided_update(re: &mut [f64], im: &mut [f64], n: usize, start: usize, v_re: &[f64], v_im: &[f64], tau: Complex64, p_re: &mut [f64], p_im: &mut [f64]) {
    let m = v_re.len();
    p_re.fill(0.0);
    p_im.fill(0.0);
    // p = A₂₂·v, column AXPYs.
    for j in 0..m {
        let (vr, vi) = (v_re[j], v_im[j]);
        let base = (start + j) * n + start;
        let (cr, ci) = (&re[base..base + m], &im[base..base + m]);
        for (((pr, pi), &ar), &ai) in p_re.iter_mut().zip(p_im.iter_mut()).zip(cr).zip(ci) {
            *pr += ar * vr - ai * vi;
            *pi += ar * vi + ai * vr;
        }
    }
    // p ← τ·p; w = p + α·v with α = −½·τ·(pᴴv).
    let mut dot = Complex64::new(0.0, 0.0);
    for i in 0..m {
        let p = tau * Complex64::new(p_re[i], p_im[i]);
        p_re[i] = p.re;
        p_im[i] = p.im;
        dot += p.conj() * Complex64::new(v_re[i], v_im[i]);
    }
    let alpha = -0.5 * tau * dot;
    for i in 0..m {
        let w = Complex64::new(p_re[i], p_im[i]) + alpha * Complex64::new(v_re[i], v_im[i]);
        p_re[i] = w.re;
        p_im[i] = w.im;
    }
    let (w_re, w_im) = (&*p_re, &*p_im);
    // A₂₂ −= v·wᴴ + w·vᴴ: column j subtracts v·conj(w_j) + w·conj(v_j).
    for j in 0..m {
        let (wr, wi, vr, vi) = (w_re[j], -w_im[j], v_re[j], -v_im[j]);
        let base = (start + j) * n + start;
        let (cr, ci) = (&mut re[base..base + m], &mut im[base..base + m]);
        for ((((ar, ai), &xr), &xi), (&yr, &yi)) in cr.iter_mut().zip(ci.iter_mut()).zip(v_re).zip(v_im).zip(w_re.iter().zip(w_im)) {
            *ar -= (xr * wr - xi * wi) + (yr * vr - yi * vi);
            *ai -= (xr * wi + xi * wr) + (yr * vi + yi * vr);
        }
        im[base + j] = 0.0;
    }
}

#[inline(always)]
fn back_transform_impl(t: &SmallTridiagonal, z: MatRef<'_, f64>) -> Mat<Complex64> {
    let n = t.n;
    // M = Z row-major (row i of M contiguous), so each reflector is two row AXPYs per row.
    let (mut re, mut im) = (vec![0.0; n * n], vec![0.0; n * n]);
    for j in 0..n {
        for i in 0..n {
            re[i * n + j] = z[(i, j)];
        }
    }
    let (mut w_re, mut w_im) = (vec![0.0; n], vec![0.0; n]);
    // V = H₀·H₁·…·H_{n−2}·Z: the last reflector first.
    for k in (0..n.saturating_sub(1)).rev() {
        let tau = t.tau[k];
        if tau == Complex64::new(0.0, 0.0) {
            continue;
        }
        let (v_re, v_im) = (&t.v_re[k], &t.v_im[k]);
        let start = k + 1;
        // w = vᴴ·M[rows] (a row vector), accumulated row by row.
        w_re.fill(0.0);
        w_im.fill(0.0);
        for (i, (&vr, &vi)) in v_re.iter().zip(v_im).enumerate() {
            let row = (start + i) * n;
            let (mr, mi) = (&re[row..row + n], &im[row..row + n]);
            // conj(v)·m
            for (((wr, wi), &a), &b) in w_re.iter_mut().zip(w_im.iter_mut()).zip(mr).zip(mi) {
                *wr += vr * a + vi * b;
                *wi += vr * b - vi * a;
            }
        }
        // M[rows] −= (τ·v)·w.
        for (i, (&vr, &vi)) in v_re.iter().zip(v_im).enumerate() {
            let s = tau * Complex64::new(vr, vi);
            let row = (start + i) * n;
            let (mr, mi) = (&mut re[row..row + n], &mut im[row..row + n]);
            for (((a, b), &xr), &xi) in mr.iter_mut().zip(mi.iter_mut()).zip(&w_re).zip(&w_im) {
                *a -= s.re * xr - s.im * xi;
                *b -= s.re * xi + s.im * xr;
            }
        }
    }
    Mat::from_fn(n, n, |i, j| Complex64::new(re[i * n + j], im[i * n + j]))
}
