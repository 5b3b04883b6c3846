//! Implicit QL sweeps with Wilkinson shifts on a small symmetric tridiagonal matrix (EISPACK's
//! tql2; LAPACK dsteqr's splitting test): the leaves of [`super::divide_conquer`].
//!
//! Why our own: faer 0.24's tridiagonal QR spent ~18 µs on a 19-row leaf of the quartz matrices
//! (nearly diagonal, widely spread diagonal), half of it building rotations; these sweeps apply
//! each rotation straight to two contiguous eigenvector columns, which LLVM vectorises.

use faer::MatMut;

use super::divide_conquer::NoConvergence;

/// QL iterations allowed per eigenvalue before giving up (LAPACK dsteqr's 30).
const MAX_SWEEPS_PER_VALUE: usize = 30;

/// sqrt(a² + b²) without overflow or underflow for the magnitudes that can meet here.
#[inline(always)]
fn hypot(a: f64, b: f64) -> f64 {
    let big = a.abs().max(b.abs());
    if big > 1e-150 && big < 1e150 {
        (a * a + b * b).sqrt()
    } else {
        a.hypot(b)
    }
}

/// The eigenvalues of the tridiagonal matrix (diagonal `diag`, sub-diagonal `off`, length
/// n − 1) overwrite `diag`, ascending; `u` (n × n) receives the eigenvectors as columns.
pub fn tridiagonal_ql(diag: &mut [f64], off: &[f64], mut u: MatMut<'_, f64>) -> Result<(), NoConvergence> {
    let n = diag.len();
    if n == 0 {
        return Ok(());
    }
    // The vectors in one contiguous column-major block (two columns borrowed at a time).
    let mut z = vec![0.0; n * n];
    for i in 0..n {
        z[i * n + i] = 1.0;
    }
    let mut e = vec![0.0; n];
    e[..n - 1].copy_from_slice(&off[..n - 1]);
    sweeps(diag, &mut e, &mut z, n)?;
    // Ascending order (selection sort: n column swaps at most).
    for i in 0..n {
        let k = (i..n).fold(i, |k, j| if diag[j] < diag[k] { j } else { k });
        if k != i {
            diag.swap(i, k);
            let (left, right) = z.split_at_mut(k * n);
            left[i * n..(i + 1) * n].swap_with_slice(&mut right[..n]);
        }
    }
    for j in 0..n {
        for i in 0..n {
            u[(i, j)] = z[j * n + i];
        }
    }
    Ok(())
}

/// Runs [`ql_sweeps`] compiled for AVX2 + FMA where the CPU has them.
fn sweeps(d: &mut [f64], e: &mut [f64], z: &mut [f64], n: usize) -> Result<(), NoConvergence> {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2,fma")]
        fn sweeps_avx2(d: &mut [f64], e: &mut [f64], z: &mut [f64], n: usize) -> Result<(), NoConvergence> {
            ql_sweeps(d, e, z, n)
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU has AVX2 and FMA (checked just above).
            return unsafe { sweeps_avx2(d, e, z, n) };
        }
    }
    ql_sweeps(d, e, z, n)
}

/// The QL iteration proper (Numerical Recipes' tqli, 0-based): `e[i]` couples rows i and i + 1,
/// `e[n − 1]` is workspace; `z` (n × n column-major) accumulates the rotations.
#[inline(always)]
fn ql_sweeps(d: &mut [f64], e: &mut [f64], z: &mut [f64], n: usize) -> Result<(), NoConvergence> {
    let eps = f64::EPSILON;
    let mut budget = MAX_SWEEPS_PER_VALUE * n;
    for l in 0..n {
        loop {
            // The first negligible coupling at or below l (LAPACK dsteqr's relative test).
            let mut m = l;
            while m + 1 < n {
                let coupling = e[m].abs();
                if coupling <= eps * (d[m].abs().sqrt() * d[m + 1].abs().sqrt()) || coupling <= f64::MIN_POSITIVE {
                    break;
                }
                m += 1;
            }
            if m == l {
                break;
            }
            if budget == 0 || !e[l].is_finite() || !d[l].is_finite() {
                return Err(NoConvergence);
            }
            budget -= 1;
            // Wilkinson shift from the leading 2 × 2 block.
            let mut g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            let mut r = hypot(g, 1.0);
            g = d[m] - d[l] + e[l] / (g + r.copysign(g));
            let (mut s, mut c, mut p) = (1.0, 1.0, 0.0);
            let mut underflow = false;
            for i in (l..m).rev() {
                let f = s * e[i];
                let b = c * e[i];
                r = hypot(f, g);
                e[i + 1] = r;
                if r == 0.0 {
                    // The bulge vanished: deflate here and restart.
                    d[i + 1] -= p;
                    e[m] = 0.0;
                    underflow = true;
                    break;
                }
                s = f / r;
                c = g / r;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                let (left, right) = z.split_at_mut((i + 1) * n);
                rotate(&mut left[i * n..], &mut right[..n], c, s);
            }
            if underflow {
                continue;
            }
            d[l] -= p;
            e[l] = g;
            e[m] = 0.0;
        }
    }
    Ok(())
}

/// (x, y) ← (c·x − s·y, s·x + c·y) elementwise on two eigenvector columns.
#[inline(always)]
fn rotate(x: &mut [f64], y: &mut [f64], c: f64, s: f64) {
    let n = y.len();
    for (xv, yv) in x[..n].iter_mut().zip(y.iter_mut()) {
        let (a, b) = (*xv, *yv);
        *yv = s * a + c * b;
        *xv = c * a - s * b;
    }
}
