//! Derivatives of ψ(t) = V·(e(t) ⊙ α) through the Hermitian eigendecomposition A = V·diag(μ)·Vᴴ
//! (Daleckii–Krein, plan §4.1): d exp(iτA)[E] = V·(G ∘ (Vᴴ·E·V))·Vᴴ with the divided differences
//! of exp, G_jk = (e_j − e_k)/(μ_j − μ_k), G_jj = iτ·e_j, written without cancellation as
//! **G_jk = iτ·exp(iτm)·sinc(τδ)**, m = (μ_j + μ_k)/2, δ = (μ_j − μ_k)/2. One expression covers
//! j = k, exact and near degeneracies; G is constant on a degenerate eigenspace, so the result
//! does not depend on the basis faer picks inside it (the naive 1/(μ_j − μ_k) is 0/0 there).

use faer::{Mat, MatRef};
use num_complex::Complex64;

use scatterlab_core::InputError;

use crate::solve::EigenPropagator;
use crate::BlochError;

/// sin(x)/x, 1 at 0 (accurate in f64 for every x ≠ 0: no cancellation).
fn sinc(x: f64) -> f64 {
    if x == 0.0 {
        1.0
    } else {
        x.sin() / x
    }
}

/// G_jk(τ) = iτ·exp(iτ(μ_j + μ_k)/2)·sinc(τ(μ_j − μ_k)/2).
pub(crate) fn divided_difference(tau: f64, mu_j: f64, mu_k: f64) -> Complex64 {
    let mean = 0.5 * (mu_j + mu_k);
    let half_gap = 0.5 * (mu_j - mu_k);
    Complex64::from_polar(tau * sinc(tau * half_gap), tau * mean) * Complex64::new(0.0, 1.0)
}

/// Below this phase gap |τ(μ_j − μ_k)| row `j` of G uses the sinc form; above it the plain
/// quotient (e_j − e_k)/(μ_j − μ_k), which needs no transcendental per pair (the N² sin/cos
/// dominated the reverse pass). Each phase τμ carries a rounding error ≈ ε·τ|μ|, so the quotient
/// is off by ≈ ε·|μ|/|Δμ| relative and the sinc form by ≈ ε·τ|μ|: at a gap of 1 rad and above the
/// quotient is no worse.
const QUOTIENT_MIN_PHASE_GAP: f64 = 1.0;

/// e_k(τ) = exp(iτμ_k) for every eigenvalue.
pub(crate) fn phases(tau: f64, values: &[f64]) -> Vec<Complex64> {
    values.iter().map(|&mu| Complex64::from_polar(1.0, tau * mu)).collect()
}

/// Row `j` of G(τ) into `row`, given the phases `e` = [`phases`]`(τ, values)`: the quotient of
/// differences where the phase gap is large, [`divided_difference`] where it is small.
pub(crate) fn divided_difference_row(tau: f64, values: &[f64], e: &[Complex64], j: usize, row: &mut [Complex64]) {
    let (mu_j, e_j) = (values[j], e[j]);
    // Two passes so that the first (every entry as a quotient) vectorises; the second redoes the
    // few small-gap entries (those near j in a sorted spectrum, including j itself) in sinc form.
    for ((g, &mu_k), e_k) in row.iter_mut().zip(values).zip(e) {
        *g = (e_j - e_k) * (mu_j - mu_k).recip();
    }
    for (k, g) in row.iter_mut().enumerate() {
        if (tau * (mu_j - values[k])).abs() < QUOTIENT_MIN_PHASE_GAP {
            *g = divided_difference(tau, mu_j, values[k]);
        }
    }
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

    /// V·y.
    fn to_beams(&self, y: &[Complex64]) -> Vec<Complex64> {
        let n = self.len();
        (0..n).map(|i| (0..n).map(|k| self.vectors[(i, k)] * y[k]).sum()).collect()
    }

    /// dψ(t) along each direction E (an N×N perturbation of A, Hermitian or not), for every
    /// thickness: result[direction][thickness][beam]. Costs 2 GEMMs per direction plus 2N² per
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
        let y: Vec<Complex64> =
            self.phased(thickness).iter().zip(&self.values).map(|(p, &mu)| p * Complex64::new(0.0, self.scale * mu)).collect();
        self.to_beams(&y)
    }

    /// Reverse mode for intensity cotangents `cotangents[t][b]` = ∂L/∂I_b(t), I = |ψ|²: returns
    /// (Ā, ∂L/∂t per thickness), with Ā defined by dL = 2·Re Σ_ab conj(Ā_ab)·dA_ab.
    /// Ā = V·X·Vᴴ, X = Σ_t conj(G(t)) ∘ (λ̃(t)·αᴴ), λ̃ = Vᴴ(ḡ ⊙ ψ): N² per thickness + 2 GEMMs.
    /// Cotangents that are not one row of N per thickness are an error.
    pub fn vjp(&self, thicknesses: &[f64], cotangents: &[Vec<f64>]) -> Result<(Mat<Complex64>, Vec<f64>), BlochError> {
        let n = self.len();
        if cotangents.len() != thicknesses.len() || cotangents.iter().any(|c| c.len() != n) {
            return Err(InputError::new("eigen vjp cotangents", format!("need {} thicknesses × {n} beams", thicknesses.len())).into());
        }
        let mut x = Mat::<Complex64>::zeros(n, n);
        let mut d_thickness = Vec::with_capacity(thicknesses.len());
        for (&t, bar) in thicknesses.iter().zip(cotangents) {
            let psi = self.to_beams(&self.phased(t));
            let lambda: Vec<Complex64> = psi.iter().zip(bar).map(|(p, g)| p * *g).collect();
            let lambda_tilde: Vec<Complex64> = (0..n).map(|j| (0..n).map(|i| self.vectors[(i, j)].conj() * lambda[i]).sum()).collect();
            let tau = self.scale * t;
            let e = phases(tau, &self.values);
            let mut g_row = vec![Complex64::new(0.0, 0.0); n];
            for (j, lt) in lambda_tilde.iter().enumerate() {
                divided_difference_row(tau, &self.values, &e, j, &mut g_row);
                for ((k, g), a) in g_row.iter().enumerate().zip(&self.alpha) {
                    x[(j, k)] += g.conj() * lt * a.conj();
                }
            }
            let dpsi = self.thickness_derivative(t);
            d_thickness.push(psi.iter().zip(&dpsi).zip(bar).map(|((p, dp), g)| 2.0 * g * (p.conj() * dp).re).sum());
        }
        let a_bar = &self.vectors * (&x * self.vectors.adjoint());
        Ok((a_bar, d_thickness))
    }
}

#[cfg(test)]
#[path = "eigen_tests.rs"]
mod tests;
