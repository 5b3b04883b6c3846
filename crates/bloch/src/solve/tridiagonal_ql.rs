//! Implicit QL sweeps with Wilkinson shifts on small symmetric tridiagonal matrices (EISPACK's
//! tql2; LAPACK dsteqr's splitting test): the leaves of [`super::divide_conquer`].
//!
//! Why our own: faer 0.24's tridiagonal QR spent ~18 µs on a 19-row leaf of the quartz matrices
//! (nearly diagonal, widely spread diagonal), half of it building rotations; these sweeps apply
//! each rotation straight to two contiguous eigenvector columns, which LLVM vectorises. A sweep
//! is one long dependency chain (a square root and a division per rotation), so two leaves are
//! swept in lockstep ([`tridiagonal_ql_pair`]): the CPU overlaps their chains.

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

/// One tridiagonal problem: diagonal `d`, couplings `e` (e[i] couples rows i and i + 1,
/// e[n − 1] is workspace), eigenvectors accumulated in `z` (n × n column-major).
struct Problem<'a> {
    d: &'a mut [f64],
    e: Vec<f64>,
    z: Vec<f64>,
    n: usize,
    /// The eigenvalue being converged (rows above it are done).
    l: usize,
    budget: usize,
}

/// A sweep in progress: rows l..=m, the next rotation at i (counting down to l).
struct Sweep {
    l: usize,
    m: usize,
    i: usize,
    s: f64,
    c: f64,
    p: f64,
    g: f64,
}

impl<'a> Problem<'a> {
    fn new(d: &'a mut [f64], off: &[f64]) -> Self {
        let n = d.len();
        let mut z = vec![0.0; n * n];
        for i in 0..n {
            z[i * n + i] = 1.0;
        }
        let mut e = vec![0.0; n];
        e[..n.saturating_sub(1)].copy_from_slice(&off[..n.saturating_sub(1)]);
        Self { d, e, z, n, l: 0, budget: MAX_SWEEPS_PER_VALUE * n }
    }

    /// The next sweep (None when every eigenvalue has converged): finds the first negligible
    /// coupling at or below l (LAPACK dsteqr's relative test) and the Wilkinson shift.
    #[inline(always)]
    fn next_sweep(&mut self) -> Result<Option<Sweep>, NoConvergence> {
        let (d, e, n) = (&*self.d, &self.e, self.n);
        while self.l < n {
            let l = self.l;
            let mut m = l;
            while m + 1 < n {
                let coupling = e[m].abs();
                if coupling <= f64::EPSILON * (d[m].abs().sqrt() * d[m + 1].abs().sqrt()) || coupling <= f64::MIN_POSITIVE {
                    break;
                }
                m += 1;
            }
            if m == l {
                self.l += 1;
                continue;
            }
            if self.budget == 0 || !e[l].is_finite() || !d[l].is_finite() {
                return Err(NoConvergence);
            }
            self.budget -= 1;
            let g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            let r = hypot(g, 1.0);
            let g = d[m] - d[l] + e[l] / (g + r.copysign(g));
            return Ok(Some(Sweep { l, m, i: m, s: 1.0, c: 1.0, p: 0.0, g }));
        }
        Ok(None)
    }

    /// One rotation of `sweep` (rows i − 1, i); true when the sweep is over (its last rotation
    /// done and the sweep closed, or the bulge vanished and the sweep was abandoned).
    #[inline(always)]
    fn step(&mut self, sweep: &mut Sweep) -> bool {
        let (d, e, n) = (&mut *self.d, &mut self.e, self.n);
        let i = sweep.i - 1;
        let f = sweep.s * e[i];
        let b = sweep.c * e[i];
        let r = hypot(f, sweep.g);
        e[i + 1] = r;
        if r == 0.0 {
            // The bulge vanished: deflate here; the next sweep restarts from l.
            d[i + 1] -= sweep.p;
            e[sweep.m] = 0.0;
            return true;
        }
        let (s, c) = (f / r, sweep.g / r);
        let g = d[i + 1] - sweep.p;
        let r = (d[i] - g) * s + 2.0 * c * b;
        let p = s * r;
        d[i + 1] = g + p;
        *sweep = Sweep { i, s, c, p, g: c * r - b, ..*sweep };
        let (left, right) = self.z.split_at_mut((i + 1) * n);
        rotate(&mut left[i * n..], &mut right[..n], c, s);
        if i == sweep.l {
            d[sweep.l] -= sweep.p;
            e[sweep.l] = sweep.g;
            e[sweep.m] = 0.0;
            return true;
        }
        false
    }

    /// Sorts the eigenvalues ascending (selection sort: n column swaps at most) and writes the
    /// vectors into `u`.
    fn finish(self, mut u: MatMut<'_, f64>) {
        let (d, mut z, n) = (self.d, self.z, self.n);
        for i in 0..n {
            let k = (i..n).fold(i, |k, j| if d[j] < d[k] { j } else { k });
            if k != i {
                d.swap(i, k);
                let (left, right) = z.split_at_mut(k * n);
                left[i * n..(i + 1) * n].swap_with_slice(&mut right[..n]);
            }
        }
        for j in 0..n {
            for i in 0..n {
                u[(i, j)] = z[j * n + i];
            }
        }
    }
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

/// Sweeps one or two problems to convergence, a rotation of each in turn.
#[inline(always)]
fn sweep_all(a: &mut Problem<'_>, mut b: Option<&mut Problem<'_>>) -> Result<(), NoConvergence> {
    let mut sweep_a = a.next_sweep()?;
    let mut sweep_b = match b.as_mut() {
        Some(b) => b.next_sweep()?,
        None => None,
    };
    while sweep_a.is_some() || sweep_b.is_some() {
        if let Some(s) = sweep_a.as_mut() {
            if a.step(s) {
                sweep_a = a.next_sweep()?;
            }
        }
        if let (Some(s), Some(b)) = (sweep_b.as_mut(), b.as_mut()) {
            if b.step(s) {
                sweep_b = b.next_sweep()?;
            }
        }
    }
    Ok(())
}

/// [`sweep_all`] compiled for AVX2 + FMA where the CPU has them.
fn sweep_all_dispatch(a: &mut Problem<'_>, b: Option<&mut Problem<'_>>) -> Result<(), NoConvergence> {
    scatterlab_core::x86_build!(
        avx2,
        fn wide(a: &mut Problem<'_>, b: Option<&mut Problem<'_>>) -> Result<(), NoConvergence> {
            sweep_all(a, b)
        }
    );
    #[cfg(target_arch = "x86_64")]
    if scatterlab_core::simd::level().avx2() {
        // SAFETY: `simd::level()` found AVX2 and FMA, all `x86_build!(avx2, …)` enables on `wide`.
        return unsafe { wide(a, b) };
    }
    sweep_all(a, b)
}

/// The eigenvalues of the tridiagonal matrix (diagonal `diag`, sub-diagonal `off`, length
/// n − 1) overwrite `diag`, ascending; `u` (n × n) receives the eigenvectors as columns.
/// Lengths that disagree (`off` shorter than n − 1, `u` not n × n) are an error.
pub fn tridiagonal_ql(diag: &mut [f64], off: &[f64], u: MatMut<'_, f64>) -> Result<(), NoConvergence> {
    let n = diag.len();
    if n == 0 {
        return Ok(());
    }
    if off.len() + 1 < n || u.nrows() != n || u.ncols() != n {
        return Err(NoConvergence);
    }
    let mut a = Problem::new(diag, off);
    sweep_all_dispatch(&mut a, None)?;
    a.finish(u);
    Ok(())
}

/// [`tridiagonal_ql`] on two independent problems at once (their sweeps interleaved).
pub fn tridiagonal_ql_pair(first: (&mut [f64], &[f64], MatMut<'_, f64>), second: (&mut [f64], &[f64], MatMut<'_, f64>)) -> Result<(), NoConvergence> {
    let ((d0, e0, u0), (d1, e1, u1)) = (first, second);
    let fits = |d: &[f64], e: &[f64], u: &MatMut<'_, f64>| e.len() + 1 >= d.len() && u.nrows() == d.len() && u.ncols() == d.len();
    if d0.is_empty() || d1.is_empty() || !fits(d0, e0, &u0) || !fits(d1, e1, &u1) {
        tridiagonal_ql(d0, e0, u0)?;
        return tridiagonal_ql(d1, e1, u1);
    }
    let (mut a, mut b) = (Problem::new(d0, e0), Problem::new(d1, e1));
    sweep_all_dispatch(&mut a, Some(&mut b))?;
    a.finish(u0);
    b.finish(u1);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use faer::Mat;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    fn random(n: usize, rng: &mut StdRng) -> (Vec<f64>, Vec<f64>) {
        ((0..n).map(|_| rng.gen_range(-2.0..2.0)).collect(), (0..n.saturating_sub(1)).map(|_| rng.gen_range(-0.5..0.5) * 10f64.powi(rng.gen_range(-12..1))).collect())
    }

    #[test]
    fn paired_sweeps_equal_single_sweeps_and_diagonalise() {
        // Interleaving changes no arithmetic: the pair must reproduce the single runs bit for
        // bit, and T·u = u·λ with orthonormal u.
        let mut rng = StdRng::seed_from_u64(3);
        for (n0, n1) in [(1, 1), (1, 7), (5, 2), (16, 19), (32, 31), (3, 30)] {
            let (d0, e0) = random(n0, &mut rng);
            let (d1, e1) = random(n1, &mut rng);
            let (mut s0, mut s1, mut p0, mut p1) = (d0.clone(), d1.clone(), d0.clone(), d1.clone());
            let (mut u0, mut u1, mut v0, mut v1) = (Mat::<f64>::zeros(n0, n0), Mat::<f64>::zeros(n1, n1), Mat::<f64>::zeros(n0, n0), Mat::<f64>::zeros(n1, n1));
            tridiagonal_ql(&mut s0, &e0, u0.as_mut()).unwrap();
            tridiagonal_ql(&mut s1, &e1, u1.as_mut()).unwrap();
            tridiagonal_ql_pair((&mut p0, &e0, v0.as_mut()), (&mut p1, &e1, v1.as_mut())).unwrap();
            assert_eq!((&s0, &s1), (&p0, &p1), "{n0}, {n1}");
            assert!(u0 == v0 && u1 == v1, "{n0}, {n1}");
            for (d, e, lambda, u) in [(&d0, &e0, &s0, &u0), (&d1, &e1, &s1, &u1)] {
                let n = d.len();
                let t = Mat::<f64>::from_fn(n, n, |i, j| {
                    if i == j {
                        d[i]
                    } else if i == j + 1 {
                        e[j]
                    } else if j == i + 1 {
                        e[i]
                    } else {
                        0.0
                    }
                });
                let residual = &t * u - u * Mat::<f64>::from_fn(n, n, |i, j| if i == j { lambda[i] } else { 0.0 });
                let orthogonality = u.transpose() * u - Mat::<f64>::identity(n, n);
                assert!(residual.norm_max() < 1e-14 && orthogonality.norm_max() < 1e-14, "{n}");
                assert!(lambda.windows(2).all(|w| w[0] <= w[1]));
            }
        }
    }
}
