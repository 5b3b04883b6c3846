//! The two Householder stages of a small Hermitian eigendecomposition (LAPACK zhetd2 and zunm2r's
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

/// Rows are padded to a multiple of this, and row loops start on a multiple of it, so that the
/// vectorised loops cover every row (the scalar remainder never runs; padding rows stay zero).
const LANES: usize = 4;

/// A Hermitian matrix reduced to real tridiagonal form, with the reflectors to undo it.
pub(crate) struct SmallTridiagonal {
    n: usize,
    /// Diagonal of T.
    pub diag: Vec<f64>,
    /// Sub-diagonal of T (length n − 1).
    pub off: Vec<f64>,
    /// Padded row count (a multiple of [`LANES`]).
    ld: usize,
    /// Reflector k acts on rows k + 1..n: v = (1, …) at [k·ld, (k + 1)·ld) (zero outside those
    /// rows), real and imaginary parts.
    v_re: Vec<f64>,
    v_im: Vec<f64>,
    /// τ of each reflector: H_k = I − τ_k·v·vᴴ.
    tau: Vec<Complex64>,
}

/// n rounded up to whole chunks.
fn padded(n: usize) -> usize {
    n.div_ceil(LANES) * LANES
}

/// a·b + c: one fused instruction where the caller was compiled with FMA, else two (a software
/// fma would be far slower than either, e.g. on wasm).
#[inline(always)]
fn madd<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Runs the kernel compiled for AVX2 + FMA where the CPU has them (the loops are written for
/// LLVM to vectorise; this widens the lanes and fuses the multiply-adds).
macro_rules! with_avx2 {
    ($name:ident, $body:ident, ($($arg:ident: $ty:ty),*) -> $ret:ty) => {
        fn $name($($arg: $ty),*) -> $ret {
            scatterlab_core::x86_build!(
                avx2,
                fn wide($($arg: $ty),*) -> $ret {
                    $body::<true>($($arg),*)
                }
            );
            #[cfg(target_arch = "x86_64")]
            if scatterlab_core::simd::level().avx2() {
                // SAFETY: `simd::level()` found AVX2 and FMA, all `x86_build!(avx2, …)` enables on `wide`.
                return unsafe { wide($($arg),*) };
            }
            $body::<false>($($arg),*)
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
fn tridiagonalise_impl<const FMA: bool>(a: MatRef<'_, Complex64>) -> SmallTridiagonal {
    let n = a.nrows();
    let ld = padded(n);
    // Full Hermitian storage, column-major with `ld` rows per column, from the lower triangle
    // (both triangles are then updated: every loop an AXPY, no reductions).
    let (mut re, mut im) = (vec![0.0; ld * n], vec![0.0; ld * n]);
    for j in 0..n {
        for i in j..n {
            let x = a[(i, j)];
            re[j * ld + i] = x.re;
            im[j * ld + i] = x.im;
            re[i * ld + j] = x.re;
            im[i * ld + j] = -x.im;
        }
        im[j * ld + j] = 0.0;
    }
    let mut off = vec![0.0; n.saturating_sub(1)];
    let reflectors = n.saturating_sub(1);
    let (mut v_re, mut v_im, mut tau) = (vec![0.0; reflectors * ld], vec![0.0; reflectors * ld], Vec::with_capacity(reflectors));
    let mut work = vec![0.0; 2 * ld];
    for k in 0..reflectors {
        let start = k + 1;
        let column = k * ld;
        let (vr, vi) = (&mut v_re[column..column + ld], &mut v_im[column..column + ld]);
        let (t, beta) = householder(&re[column..column + ld], &im[column..column + ld], start, n, vr, vi);
        off[k] = beta;
        if t != Complex64::new(0.0, 0.0) {
            let (p_re, p_im) = work.split_at_mut(ld);
            two_sided_update::<FMA>(&mut re, &mut im, ld, start, n, vr, vi, t, p_re, p_im);
        }
        tau.push(t);
    }
    let diag = (0..n).map(|i| re[i * ld + i]).collect();
    SmallTridiagonal { n, diag, off, ld, v_re, v_im, tau }
}

/// zlarfg on x = column rows start..n (α = x[start]), without zlarfg's rescaling loop: the
/// Bloch matrices are O(1) (a norm below ~1e-154 drops the reflector, one above ~1e154 gives NaN,
/// which the callers report as a non-finite spectrum). v (written into the zeroed `v_re`,
/// `v_im`: v[start] = 1, zero outside start..n), (τ, β) returned, such that
/// (I − τ v vᴴ)ᴴ·x = β·e_start, β real. τ = 0 when x is already β·e_start with β real.
fn householder(x_re: &[f64], x_im: &[f64], start: usize, n: usize, v_re: &mut [f64], v_im: &mut [f64]) -> (Complex64, f64) {
    let alpha = Complex64::new(x_re[start], x_im[start]);
    let tail2: f64 = x_re[start + 1..n].iter().zip(&x_im[start + 1..n]).map(|(r, i)| r * r + i * i).sum();
    v_re[start] = 1.0;
    if tail2 == 0.0 && alpha.im == 0.0 {
        return (Complex64::new(0.0, 0.0), alpha.re);
    }
    let norm = (alpha.norm_sqr() + tail2).sqrt();
    let beta = if alpha.re >= 0.0 { -norm } else { norm };
    let tau = Complex64::new((beta - alpha.re) / beta, -alpha.im / beta);
    let scale = (alpha - beta).inv();
    for i in start + 1..n {
        let v = Complex64::new(x_re[i], x_im[i]) * scale;
        v_re[i] = v.re;
        v_im[i] = v.im;
    }
    (tau, beta)
}

/// A₂₂ ← Hᴴ·A₂₂·H on the trailing block rows/columns start..n (zhetd2: p = τ·A₂₂·v,
/// w = p − ½τ(pᴴv)·v, A₂₂ −= v·wᴴ + w·vᴴ), both triangles, diagonal kept real. The row loops
/// run over whole chunks from the chunk holding `start`: v and w are zero on the rows above
/// it, so those rows are left as they are.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn two_sided_update<const FMA: bool>(
    re: &mut [f64],
    im: &mut [f64],
    ld: usize,
    start: usize,
    n: usize,
    v_re: &[f64],
    v_im: &[f64],
    tau: Complex64,
    p_re: &mut [f64],
    p_im: &mut [f64],
) {
    let first = start / LANES * LANES;
    let rows = first..ld;
    p_re.fill(0.0);
    p_im.fill(0.0);
    // p = A₂₂·v, column AXPYs, two columns per pass (half the loads and stores of p).
    let mut j = start;
    while j < n {
        let pair = j + 1 < n;
        let (v0r, v0i) = (v_re[j], v_im[j]);
        let (v1r, v1i) = if pair { (v_re[j + 1], v_im[j + 1]) } else { (0.0, 0.0) };
        let (b0, b1) = (j * ld, if pair { (j + 1) * ld } else { j * ld });
        let (c0r, c0i) = (&re[b0 + first..b0 + ld], &im[b0 + first..b0 + ld]);
        let (c1r, c1i) = (&re[b1 + first..b1 + ld], &im[b1 + first..b1 + ld]);
        let (pr, pi) = (&mut p_re[rows.clone()], &mut p_im[rows.clone()]);
        for ((((pr, pi), (&ar, &ai)), &br), &bi) in pr.iter_mut().zip(pi.iter_mut()).zip(c0r.iter().zip(c0i)).zip(c1r).zip(c1i) {
            *pr = madd::<FMA>(ar, v0r, madd::<FMA>(-ai, v0i, madd::<FMA>(br, v1r, madd::<FMA>(-bi, v1i, *pr))));
            *pi = madd::<FMA>(ar, v0i, madd::<FMA>(ai, v0r, madd::<FMA>(br, v1i, madd::<FMA>(bi, v1r, *pi))));
        }
        j += 2;
    }
    // p ← τ·p; w = p + α·v with α = −½·τ·(pᴴv) (p is garbage above `start`: cleared).
    let mut dot = Complex64::new(0.0, 0.0);
    for i in start..n {
        let p = tau * Complex64::new(p_re[i], p_im[i]);
        p_re[i] = p.re;
        p_im[i] = p.im;
        dot += p.conj() * Complex64::new(v_re[i], v_im[i]);
    }
    let alpha = -0.5 * tau * dot;
    for i in first..start {
        p_re[i] = 0.0;
        p_im[i] = 0.0;
    }
    for i in start..n {
        let w = Complex64::new(p_re[i], p_im[i]) + alpha * Complex64::new(v_re[i], v_im[i]);
        p_re[i] = w.re;
        p_im[i] = w.im;
    }
    let (w_re, w_im) = (&*p_re, &*p_im);
    // A₂₂ −= v·wᴴ + w·vᴴ: column j subtracts v·conj(w_j) + w·conj(v_j).
    let (vr_rows, vi_rows, wr_rows, wi_rows) = (&v_re[rows.clone()], &v_im[rows.clone()], &w_re[rows.clone()], &w_im[rows.clone()]);
    for j in start..n {
        // conj(w_j), conj(v_j), negated: the update is then a plain multiply-add.
        let (wr, wi, vr, vi) = (-w_re[j], w_im[j], -v_re[j], v_im[j]);
        let base = j * ld;
        let (cr, ci) = (&mut re[base + first..base + ld], &mut im[base + first..base + ld]);
        let operands = vr_rows.iter().zip(vi_rows).zip(wr_rows.iter().zip(wi_rows));
        for ((ar, ai), ((&xr, &xi), (&yr, &yi))) in cr.iter_mut().zip(ci.iter_mut()).zip(operands) {
            // a −= x·conj(w_j) + y·conj(v_j), x = v, y = w.
            let r = madd::<FMA>(xr, wr, madd::<FMA>(-xi, wi, madd::<FMA>(yr, vr, madd::<FMA>(-yi, vi, *ar))));
            let m = madd::<FMA>(xr, wi, madd::<FMA>(xi, wr, madd::<FMA>(yr, vi, madd::<FMA>(yi, vr, *ai))));
            *ar = r;
            *ai = m;
        }
        im[base + j] = 0.0;
    }
}

#[inline(always)]
fn back_transform_impl<const FMA: bool>(t: &SmallTridiagonal, z: MatRef<'_, f64>) -> Mat<Complex64> {
    let n = t.n;
    let ld = padded(n);
    // M = Z row-major with `ld` columns per row (row i of M contiguous, padding zero), so each
    // reflector is two row AXPYs per row.
    let (mut re, mut im) = (vec![0.0; ld * n], vec![0.0; ld * n]);
    for j in 0..n {
        for i in 0..n {
            re[i * ld + j] = z[(i, j)];
        }
    }
    let (mut w_re, mut w_im) = (vec![0.0; ld], vec![0.0; ld]);
    // V = H₀·H₁·…·H_{n−2}·Z: the last reflector first.
    for k in (0..n.saturating_sub(1)).rev() {
        let tau = t.tau[k];
        if tau == Complex64::new(0.0, 0.0) {
            continue;
        }
        let (v_re, v_im) = (&t.v_re[k * t.ld..(k + 1) * t.ld], &t.v_im[k * t.ld..(k + 1) * t.ld]);
        // w = vᴴ·M[rows] (a row vector), accumulated row by row.
        w_re.fill(0.0);
        w_im.fill(0.0);
        let mut i = k + 1;
        while i < n {
            // Two rows per pass (half the loads and stores of w); a missing second row adds 0.
            let pair = i + 1 < n;
            let (v0r, v0i) = (v_re[i], v_im[i]);
            let (v1r, v1i) = if pair { (v_re[i + 1], v_im[i + 1]) } else { (0.0, 0.0) };
            let (r0, r1) = (i * ld, if pair { (i + 1) * ld } else { i * ld });
            let (m0r, m0i, m1r, m1i) = (&re[r0..r0 + ld], &im[r0..r0 + ld], &re[r1..r1 + ld], &im[r1..r1 + ld]);
            for ((((wr, wi), (&a, &b)), &c), &d) in w_re.iter_mut().zip(w_im.iter_mut()).zip(m0r.iter().zip(m0i)).zip(m1r).zip(m1i) {
                // conj(v₀)·m₀ + conj(v₁)·m₁
                *wr = madd::<FMA>(v0r, a, madd::<FMA>(v0i, b, madd::<FMA>(v1r, c, madd::<FMA>(v1i, d, *wr))));
                *wi = madd::<FMA>(v0r, b, madd::<FMA>(-v0i, a, madd::<FMA>(v1r, d, madd::<FMA>(-v1i, c, *wi))));
            }
            i += 2;
        }
        // M[rows] −= (τ·v)·w.
        for i in k + 1..n {
            let s = -(tau * Complex64::new(v_re[i], v_im[i]));
            let row = i * ld;
            let (mr, mi) = (&mut re[row..row + ld], &mut im[row..row + ld]);
            for (((a, b), &xr), &xi) in mr.iter_mut().zip(mi.iter_mut()).zip(&w_re).zip(&w_im) {
                *a = madd::<FMA>(s.re, xr, madd::<FMA>(-s.im, xi, *a));
                *b = madd::<FMA>(s.re, xi, madd::<FMA>(s.im, xr, *b));
            }
        }
    }
    Mat::from_fn(n, n, |i, j| Complex64::new(re[i * ld + j], im[i * ld + j]))
}
