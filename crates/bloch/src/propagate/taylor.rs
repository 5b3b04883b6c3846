//! The f64 CPU twin of `shaders/bloch/propagate.wgsl`: scaled Taylor steps of exp(i·h·A) on a
//! vector, planned by [`TaylorPlan`].

use num_complex::Complex64;
use scatterlab_core::InputError;

use crate::BlochError;

/// How a thickness series is stepped: per thickness step, the substep size `h` (s·Δt / substeps,
/// in the units of the matrix's inverse) and the number of substeps; `terms` Taylor terms each.
#[derive(Clone, Debug, PartialEq)]
pub struct TaylorPlan {
    /// Per thickness: (h, substeps) for the step from the previous thickness (or from 0).
    pub steps: Vec<(f64, u32)>,
    /// Taylor terms per substep (the truncation error is ≤ θ^(m+1)/(m+1)! per substep).
    pub terms: u32,
}

impl TaylorPlan {
    /// Plans `thicknesses` (non-decreasing, ≥ 0; Å) for matrices whose 1-norm is at most
    /// `norm1` (use [`norm1`]), with phase scale `scale` (π / K_n) so that each substep has
    /// ‖h·A‖₁ ≤ `theta`, summing `terms` Taylor terms. θ = 1 with 18 terms reaches f64 rounding
    /// (1/19! ≈ 8e-18); θ = 1 with 12 terms reaches f32's (1/13! ≈ 2e-10).
    pub fn new(norm1: f64, scale: f64, thicknesses: &[f64], theta: f64, terms: u32) -> Result<Self, BlochError> {
        for (what, v) in [("matrix 1-norm", norm1), ("phase scale", scale), ("Taylor θ", theta)] {
            if !(v.is_finite() && v >= 0.0) || (what == "Taylor θ" && v == 0.0) {
                return Err(InputError::new(what, format!("must be a finite non-negative number (got {v})")).into());
            }
        }
        if terms == 0 {
            return Err(InputError::new("Taylor terms", "must be at least 1").into());
        }
        let mut steps = Vec::with_capacity(thicknesses.len());
        let mut previous = 0.0;
        for (k, &t) in thicknesses.iter().enumerate() {
            if !(t.is_finite() && t >= previous) {
                return Err(InputError::new(format!("thickness[{k}]"), format!("thicknesses must be finite, ≥ 0 and non-decreasing (got {t} after {previous})")).into());
            }
            let phase = scale * (t - previous);
            let substeps = (phase * norm1 / theta).ceil().max(1.0);
            if substeps > f64::from(u32::MAX) {
                return Err(InputError::new(format!("thickness[{k}]"), format!("needs {substeps:e} substeps")).into());
            }
            steps.push((phase / substeps, substeps as u32));
            previous = t;
        }
        Ok(TaylorPlan { steps, terms })
    }

    /// Matrix–vector products this plan costs per item.
    pub fn matvecs(&self) -> u64 {
        self.steps.iter().map(|&(_, s)| u64::from(s)).sum::<u64>() * u64::from(self.terms)
    }
}

/// The 1-norm (largest column sum of |a_ij|) of the row-major `n`×`n` matrix `a`.
pub fn norm1(n: usize, a: &[Complex64]) -> f64 {
    (0..n).map(|j| (0..n).map(|i| a.get(i * n + j).map_or(0.0, |v| v.norm())).sum::<f64>()).fold(0.0, f64::max)
}

/// ψ at every thickness of `plan` for the row-major `n`×`n` matrix `a`, starting from e₀:
/// each substep v ← Σₖ (i·h·A)ᵏ v / k! with `plan.terms` terms.
pub fn propagate_taylor(n: usize, a: &[Complex64], plan: &TaylorPlan) -> Result<Vec<Vec<Complex64>>, BlochError> {
    if n == 0 || a.len() != n * n {
        return Err(InputError::new("propagation matrix", format!("{} values are not an {n}×{n} matrix (n ≥ 1)", a.len())).into());
    }
    let mut v = vec![Complex64::new(0.0, 0.0); n];
    v[0] = Complex64::new(1.0, 0.0);
    let (mut term, mut next) = (v.clone(), v.clone());
    let mut out = Vec::with_capacity(plan.steps.len());
    for &(h, substeps) in &plan.steps {
        for _ in 0..substeps {
            term.copy_from_slice(&v);
            for k in 1..=plan.terms {
                let f = h / f64::from(k);
                for (i, row) in a.chunks_exact(n).enumerate() {
                    let acc: Complex64 = row.iter().zip(&term).map(|(x, y)| x * y).sum();
                    // (i·f)·acc
                    next[i] = Complex64::new(-f * acc.im, f * acc.re);
                }
                std::mem::swap(&mut term, &mut next);
                for (vi, ti) in v.iter_mut().zip(&term) {
                    *vi += ti;
                }
            }
        }
        out.push(v.clone());
    }
    Ok(out)
}
