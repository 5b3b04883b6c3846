//! Levenberg–Marquardt with the engine's exact Jacobian (CPU, f64), bounds by projection, and the
//! covariance (JᵀJ)⁻¹ at the optimum.
//!
//! The damping is Marquardt's λ·diag(JᵀJ), which makes the step invariant to parameter units (Å
//! next to 1e-3 optical constants). A step leaving the bounds is projected onto them. Standard
//! errors are √diag((JᵀJ)⁻¹) with J the Jacobian of the σ-weighted residuals: they assume the data
//! errors are right (no rescaling by the reduced χ²), as the MCMC posterior does, so the two agree.

use scatterlab_core::CancelToken;

use super::{FitProgress, Objective};
use crate::ReflError;
use scatterlab_core::linalg::{cholesky, solve_factored as cholesky_solve, spd_inverse};

/// LM settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LmOptions {
    /// Maximum number of Jacobian evaluations.
    pub max_iterations: usize,
    /// Stop when χ² improves by less than this fraction.
    pub ftol: f64,
    /// Stop when every step component is below this fraction of its parameter's bound range (or value).
    pub xtol: f64,
}

impl Default for LmOptions {
    fn default() -> Self {
        LmOptions { max_iterations: 200, ftol: 1e-10, xtol: 1e-10 }
    }
}

/// The optimum and its uncertainties.
#[derive(Clone, Debug, PartialEq)]
pub struct LmResult {
    /// Free-parameter vector at the optimum.
    pub x: Vec<f64>,
    /// χ² there.
    pub chi2: f64,
    /// Standard errors (1σ).
    pub stderr: Vec<f64>,
    /// Covariance matrix.
    pub covariance: Vec<Vec<f64>>,
    /// Correlation matrix.
    pub correlation: Vec<Vec<f64>>,
    /// Jacobian evaluations.
    pub iterations: usize,
    /// Objective evaluations (each Jacobian counts one).
    pub evaluations: usize,
}

fn normal_equations(residuals: &[f64], jac: &[Vec<f64>]) -> (Vec<Vec<f64>>, Vec<f64>) {
    let n = jac.len();
    let mut jtj = vec![vec![0.0; n]; n];
    for a in 0..n {
        for b in 0..=a {
            let v: f64 = jac[a].iter().zip(&jac[b]).map(|(x, y)| x * y).sum();
            jtj[a][b] = v;
            jtj[b][a] = v;
        }
    }
    let jtr = jac.iter().map(|row| row.iter().zip(residuals).map(|(j, r)| j * r).sum()).collect();
    (jtj, jtr)
}

/// Minimises χ² from `x0`.
pub fn levenberg_marquardt(
    objective: &Objective<'_>,
    x0: &[f64],
    options: &LmOptions,
    progress: &mut dyn FnMut(&FitProgress),
    cancel: &CancelToken,
) -> Result<LmResult, ReflError> {
    let n = objective.dimension();
    if x0.len() != n {
        return Err(ReflError::input("LM start vector", format!("has {} values for {n} free parameters", x0.len())));
    }
    let bounds: Vec<[f64; 2]> = (0..n).map(|k| objective.bounds(k)).collect();
    let project = |x: &mut Vec<f64>| x.iter_mut().zip(&bounds).for_each(|(v, b)| *v = v.clamp(b[0], b[1]));
    let mut x = x0.to_vec();
    project(&mut x);
    let (mut residuals, mut jac) = objective.residuals_and_jacobian(&x)?;
    let mut chi2: f64 = residuals.iter().map(|r| r * r).sum();
    let mut evaluations = 1;
    let mut lambda = 1e-3;
    let mut iterations = 1;
    while iterations < options.max_iterations && !cancel.is_cancelled() {
        let (jtj, jtr) = normal_equations(&residuals, &jac);
        let mut improved = false;
        let mut small_step = false;
        for _ in 0..30 {
            let mut a = jtj.clone();
            for (k, row) in a.iter_mut().enumerate() {
                row[k] += lambda * jtj[k][k].max(1e-300);
            }
            let Some(l) = cholesky(&a) else {
                lambda *= 10.0;
                continue;
            };
            let step = cholesky_solve(&l, &jtr.iter().map(|g| -g).collect::<Vec<_>>());
            let mut trial: Vec<f64> = x.iter().zip(&step).map(|(a, b)| a + b).collect();
            project(&mut trial);
            small_step = trial.iter().zip(&x).zip(&bounds).all(|((t, v), b)| (t - v).abs() <= options.xtol * (b[1] - b[0]).min(v.abs().max(1e-300)).max(1e-300));
            let (r_new, j_new) = objective.residuals_and_jacobian(&trial)?;
            evaluations += 1;
            let chi2_new: f64 = r_new.iter().map(|r| r * r).sum();
            if chi2_new.is_finite() && chi2_new < chi2 {
                let gain = (chi2 - chi2_new) / chi2.max(1e-300);
                (x, residuals, jac, chi2) = (trial, r_new, j_new, chi2_new);
                lambda = (lambda / 10.0).max(1e-12);
                improved = gain > options.ftol;
                small_step = small_step || gain <= options.ftol;
                break;
            }
            lambda *= 10.0;
            if small_step {
                break;
            }
        }
        iterations += 1;
        progress(&FitProgress { method: "lm", iteration: iterations, max_iterations: options.max_iterations, best_chi2: chi2, evaluations });
        if !improved || small_step {
            break;
        }
    }
    let (jtj, _) = normal_equations(&residuals, &jac);
    let covariance =
        spd_inverse(&jtj).ok_or_else(|| ReflError::input("LM covariance", "JᵀJ is singular at the optimum: some parameter does not affect the data (fix it or add data)"))?;
    let stderr: Vec<f64> = (0..n).map(|k| covariance[k][k].sqrt()).collect();
    let correlation = (0..n).map(|a| (0..n).map(|b| covariance[a][b] / (stderr[a] * stderr[b])).collect()).collect();
    Ok(LmResult { x, chi2, stderr, covariance, correlation, iterations, evaluations })
}
