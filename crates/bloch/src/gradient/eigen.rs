//! Derivatives of ψ(t) = V·(e(t) ⊙ α) through the Hermitian eigendecomposition A = V·diag(μ)·Vᴴ
//! (Daleckii–Krein, plan §4.1): d exp(iτA)\[E\] = V·(G ∘ (Vᴴ·E·V))·Vᴴ with the divided differences
//! of exp, G_jk = (e_j − e_k)/(μ_j − μ_k), G_jj = iτ·e_j: the quotient where the phase gap
//! |τ(μ_j − μ_k)| ≥ 1 rad, below it **G_jk = e_k·τ·(e^{ix} − 1)/x**, x = τ(μ_j − μ_k), by two
//! Taylor series (no cancellation; = iτ·exp(iτm)·sinc(τδ), m and δ the mean and half gap, the
//! reference form in the tests). This covers j = k, exact and near degeneracies; G is constant on
//! a degenerate eigenspace, so the result does not depend on the basis the eigensolver picks
//! inside it (the naive 1/(μ_j − μ_k) is 0/0 there).

use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::{Accum, Mat, MatRef, Par};
use num_complex::Complex64;

use scatterlab_core::InputError;

use super::matrix::MatrixCotangent;
use crate::solve::EigenPropagator;
use crate::BlochError;

#[cfg(test)]
/// sin(x)/x, 1 at 0 (accurate in f64 for every x ≠ 0: no cancellation).
fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        x.sin() / x
    }
}

/// G_jk(τ) = iτ·exp(iτ(μ_j + μ_k)/2)·sinc(τ(μ_j − μ_k)/2): the reference form for the tests.
#[cfg(test)]
pub(crate) fn divided_difference(tau: f64, mu_j: f64, mu_k: f64) -> Complex64 {
    let mean = 0.5 * (mu_j + mu_k);
    let half_gap = 0.5 * (mu_j - mu_k);
    Complex64::from_polar(tau * sinc(tau * half_gap), tau * mean) * Complex64::new(0.0, 1.0)
}

/// Below this phase gap |τ(μ_j − μ_k)| row `j` of G uses the series form; above it the plain
/// quotient (e_j − e_k)/(μ_j − μ_k), which needs no transcendental per pair (the N² sin/cos
/// dominated the reverse pass). Each phase τμ carries a rounding error ≈ ε·τ|μ|, so the quotient
/// is off by ≈ ε·|μ|/|Δμ| relative and the series form by ≈ ε·τ|μ|: at a gap of 1 rad and above
/// the quotient is no worse.
const QUOTIENT_MIN_PHASE_GAP: f64 = 1.0;

/// Taylor coefficients (in x²) of sin(x)/x: (−1)ᵐ/(2m+1)!, m = 0..9 (the next term is below
/// 1e-19 for |x| < 1).
const SINC_SERIES: [f64; 10] = [
    1.0,
    -1.0 / 6.0,
    1.0 / 120.0,
    -1.0 / 5040.0,
    1.0 / 362880.0,
    -1.0 / 39916800.0,
    1.0 / 6227020800.0,
    -1.0 / 1307674368000.0,
    1.0 / 355687428096000.0,
    -1.0 / 121645100408832000.0,
];
/// Taylor coefficients (in x²) of (1 − cos x)/x²: (−1)ᵐ/(2m+2)!, m = 0..9.
const VERSINE_SERIES: [f64; 10] = [
    1.0 / 2.0,
    -1.0 / 24.0,
    1.0 / 720.0,
    -1.0 / 40320.0,
    1.0 / 3628800.0,
    -1.0 / 479001600.0,
    1.0 / 87178291200.0,
    -1.0 / 20922789888000.0,
    1.0 / 6402373705728000.0,
    -1.0 / 2432902008176640000.0,
];

/// (e^{ix} − 1)/x = i·sin(x)/x − (1 − cos x)/x for |x| < 1, by the two series (no cancellation,
/// no transcendental call).
#[inline(always)]
fn exp_minus_one_over_x(x: f64) -> Complex64 {
    let y = x * x;
    let horner = |c: &[f64; 10]| c.iter().rev().fold(0.0, |acc, &k| acc * y + k);
    Complex64::new(-x * horner(&VERSINE_SERIES), horner(&SINC_SERIES))
}

/// e_k(τ) = exp(iτμ_k) for every eigenvalue.
pub(crate) fn phases(tau: f64, values: &[f64]) -> Vec<Complex64> {
    values.iter().map(|&mu| Complex64::from_polar(1.0, tau * mu)).collect()
}

/// Row `j` of G(τ) into `row` (as many entries as `row` holds), given the phases `e` =
/// [`phases`]`(τ, values)`: the quotient of differences where the phase gap is large; where it
/// is small G_jk = e_k·(e^{iτΔ} − 1)/Δ, Δ = μ_j − μ_k, by [`exp_minus_one_over_x`] (G_jj = iτe_j).
/// G is symmetric, so the row is also column `j`.
pub(crate) fn divided_difference_row(tau: f64, values: &[f64], e: &[Complex64], j: usize, row: &mut [Complex64]) {
    #[inline(always)]
    fn fill(tau: f64, values: &[f64], e: &[Complex64], j: usize, row: &mut [Complex64]) {
        let (mu_j, e_j) = (values[j], e[j]);
        // Both forms for every entry, then a select: branch-free, so the loop vectorises (the
        // discarded form may be ∞ or NaN).
        for ((g, &mu_k), &e_k) in row.iter_mut().zip(values).zip(e) {
            let gap = mu_j - mu_k;
            let x = tau * gap;
            let series = e_k * (exp_minus_one_over_x(x) * tau);
            let quotient = (e_j - e_k) * gap.recip();
            let small = x.abs() < QUOTIENT_MIN_PHASE_GAP;
            *g = Complex64::new(if small { series.re } else { quotient.re }, if small { series.im } else { quotient.im });
        }
    }
    scatterlab_core::x86_build!(
        avx2,
        fn fill_avx2(tau: f64, values: &[f64], e: &[Complex64], j: usize, row: &mut [Complex64]) {
            fill(tau, values, e, j, row)
        }
    );
    #[cfg(target_arch = "x86_64")]
    if scatterlab_core::simd::level().avx2() {
        // SAFETY: `simd::level()` found AVX2 and FMA, all `x86_build!(avx2, …)` enables on `fill_avx2`.
        return unsafe { fill_avx2(tau, values, e, j, row) };
    }
    fill(tau, values, e, j, row)
}

/// Vᴴ·E·V (two GEMMs).
fn to_eigenbasis(v: &Mat<Complex64>, e: MatRef<'_, Complex64>) -> Mat<Complex64> {
    v.adjoint() * (e * v)
}

impl EigenPropagator {
    /// Number of beams.
    fn len(&self) -> usize {
        self.values.len()
    }

    /// e(t) ⊙ α: the excitations propagated to thickness `t`.
    fn phased(&self, thickness: f64) -> Vec<Complex64> {
        let tau = self.scale * thickness;
        self.values.iter().zip(&self.alpha).map(|(&mu, &a)| Complex64::from_polar(1.0, tau * mu) * a).collect()
    }

    /// V·y (column by column: contiguous).
    fn to_beams(&self, y: &[Complex64]) -> Vec<Complex64> {
        let mut out = vec![Complex64::new(0.0, 0.0); self.len()];
        for (k, &yk) in y.iter().enumerate() {
            for (o, v) in out.iter_mut().zip(self.vectors.col_as_slice(k)) {
                *o += v * yk;
            }
        }
        out
    }

    /// Vᴴ·y (a dot product per column).
    fn to_eigenbasis_vector(&self, y: &[Complex64]) -> Vec<Complex64> {
        (0..self.len()).map(|k| self.vectors.col_as_slice(k).iter().zip(y).map(|(v, x)| v.conj() * x).sum()).collect()
    }

    /// dψ(t) along each direction E (an N×N perturbation of A, Hermitian or not), for every
    /// thickness: `result[direction][thickness][beam]`. Costs 2 GEMMs per direction plus 2N² per
    /// direction and thickness; G(t) is evaluated once per thickness for all directions.
    /// A direction that is not N×N is an error.
    pub fn jvp(&self, thicknesses: &[f64], directions: &[MatRef<'_, Complex64>]) -> Result<Vec<Vec<Vec<Complex64>>>, BlochError> {
        let n = self.len();
        if let Some(bad) = directions.iter().find(|e| e.nrows() != n || e.ncols() != n) {
            return Err(InputError::new("eigen jvp direction", format!("{}×{} for {n} beams", bad.nrows(), bad.ncols())).into());
        }
        let rotated: Vec<Mat<Complex64>> = directions.iter().map(|e| to_eigenbasis(&self.vectors, *e)).collect();
        let mut out = vec![Vec::with_capacity(thicknesses.len()); directions.len()];
        let mut g_row = vec![Complex64::new(0.0, 0.0); n];
        for &t in thicknesses {
            let tau = self.scale * t;
            let e = phases(tau, &self.values);
            let mut y = vec![vec![Complex64::new(0.0, 0.0); n]; directions.len()];
            for j in 0..n {
                // Row j of G(t) ∘ α (α folded in once for every direction).
                divided_difference_row(tau, &self.values, &e, j, &mut g_row);
                for (g, a) in g_row.iter_mut().zip(&self.alpha) {
                    *g *= a;
                }
                for (yd, e) in y.iter_mut().zip(&rotated) {
                    yd[j] = (0..n).map(|k| g_row[k] * e[(j, k)]).sum();
                }
            }
            for (o, yd) in out.iter_mut().zip(&y) {
                o.push(self.to_beams(yd));
            }
        }
        Ok(out)
    }

    /// ∂ψ/∂t at thickness `t` = V·((iπμ/K) ⊙ e ⊙ α) = (iπ/K)·A·ψ(t).
    pub fn thickness_derivative(&self, thickness: f64) -> Vec<Complex64> {
        let y: Vec<Complex64> = self.phased(thickness).iter().zip(&self.values).map(|(p, &mu)| p * Complex64::new(0.0, self.scale * mu)).collect();
        self.to_beams(&y)
    }

    /// Reverse mode for intensity cotangents `cotangents[t][b]` = ∂L/∂I_b(t), I = |ψ|²: returns
    /// (Ā's Hermitian part, lower triangle stored; ∂L/∂t per thickness), with Ā defined by
    /// dL = 2·Re Σ_ab conj(Ā_ab)·dA_ab. A Hermitian A only moves along Hermitian ∂A, which see
    /// only herm(Ā) = V·herm(X)·Vᴴ, X = Σ_t conj(G(t)) ∘ (λ̃(t)·αᴴ), λ̃ = Vᴴ(ḡ ⊙ ψ): G on one
    /// triangle (G is symmetric), one full product and the lower triangle of the second.
    /// Cotangents that are not one row of N per thickness are an error.
    pub fn vjp(&self, thicknesses: &[f64], cotangents: &[Vec<f64>]) -> Result<(MatrixCotangent, Vec<f64>), BlochError> {
        let n = self.len();
        if cotangents.len() != thicknesses.len() || cotangents.iter().any(|c| c.len() != n) {
            return Err(InputError::new("eigen vjp cotangents", format!("need {} thicknesses × {n} beams", thicknesses.len())).into());
        }
        // herm(X) on the lower triangle: column k, rows j ≥ k.
        let mut h = Mat::<Complex64>::zeros(n, n);
        let mut d_thickness = Vec::with_capacity(thicknesses.len());
        let mut g_col = vec![Complex64::new(0.0, 0.0); n];
        for (&t, bar) in thicknesses.iter().zip(cotangents) {
            let tau = self.scale * t;
            let e = phases(tau, &self.values);
            let phased: Vec<Complex64> = e.iter().zip(&self.alpha).map(|(p, a)| p * a).collect();
            let psi = self.to_beams(&phased);
            let lambda: Vec<Complex64> = psi.iter().zip(bar).map(|(p, g)| p * *g).collect();
            let lambda_tilde = self.to_eigenbasis_vector(&lambda);
            for k in 0..n {
                // G_jk for j ≥ k (row k of G from k on).
                let g = &mut g_col[k..];
                divided_difference_row(tau, &self.values[k..], &e[k..], 0, g);
                // ½[conj(G_jk)·λ̃_j·conj(α_k) + G_jk·conj(λ̃_k)·α_j]
                let (ak, lk) = (0.5 * self.alpha[k].conj(), 0.5 * lambda_tilde[k].conj());
                let column = &mut h.col_as_slice_mut(k)[k..];
                for (((x, g), lj), aj) in column.iter_mut().zip(g.iter()).zip(&lambda_tilde[k..]).zip(&self.alpha[k..]) {
                    *x += g.conj() * lj * ak + g * lk * aj;
                }
            }
            // ∂ψ/∂t = V·((iπμ/K) ⊙ e ⊙ α), from the same phases.
            let dy: Vec<Complex64> = phased.iter().zip(&self.values).map(|(p, &mu)| p * Complex64::new(0.0, self.scale * mu)).collect();
            let dpsi = self.to_beams(&dy);
            d_thickness.push(psi.iter().zip(&dpsi).zip(bar).map(|((p, dp), g)| 2.0 * g * (p.conj() * dp).re).sum());
        }
        for k in 0..n {
            for j in 0..k {
                h[(j, k)] = h[(k, j)].conj();
            }
        }
        let left = &self.vectors * &h;
        let mut lower = Mat::<Complex64>::zeros(n, n);
        triangular::matmul(
            lower.as_mut(),
            BlockStructure::TriangularLower,
            Accum::Replace,
            &left,
            BlockStructure::Rectangular,
            self.vectors.adjoint(),
            BlockStructure::Rectangular,
            Complex64::new(1.0, 0.0),
            Par::Seq,
        );
        Ok((MatrixCotangent::HermitianLower(lower), d_thickness))
    }
}

#[cfg(test)]
#[path = "eigen_tests.rs"]
mod tests;
