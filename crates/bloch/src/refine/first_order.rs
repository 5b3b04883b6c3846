//! First-order optimisers on diffBloch's objective, the mean per-frame wR2, for comparison with
//! diffBloch's configured run (`--optimizer adam|lbfgs`): Adam with the YAML's learning rate, one
//! epoch per step, and L-BFGS (memory [`LBFGS_MEMORY`]) with a backtracking Armijo line search.
//! The gradient is exact: ∇ mean_f wR2_f = (1/F) Σ_f (1/wR2_f) Σ_{i∈f} r_i ∇r_i, from the same
//! residuals and Jacobian Levenberg–Marquardt uses (continuous optimal scales).

use scatterlab_core::CancelToken;

use super::lm::{Optimizer, Refiner, StepReport, StopReason};
use super::problem::{Linearisation, Problem};
use super::RefineError;

/// Curvature pairs L-BFGS keeps.
pub const LBFGS_MEMORY: usize = 10;
/// Adam's β₁, β₂ and ε (PyTorch's defaults, as diffBloch uses them).
pub const ADAM: (f64, f64, f64) = (0.9, 0.999, 1e-8);
/// Halvings a line search may try before the point is taken as stationary.
const MAX_HALVINGS: usize = 30;

/// Optimiser memory: Adam's moments or L-BFGS's curvature pairs.
#[derive(Debug, Clone, Default)]
pub struct FirstOrder {
    m: Vec<f64>,
    v: Vec<f64>,
    pairs: Vec<(Vec<f64>, Vec<f64>)>,
}

impl FirstOrder {
    /// Empty memory for `n` parameters.
    pub fn new(n: usize) -> Self {
        Self { m: vec![0.0; n], v: vec![0.0; n], pairs: Vec::new() }
    }
}

/// The objective (mean per-frame wR2 over frames with a finite, non-zero value) and its gradient.
pub fn objective(problem: &Problem, lin: &Linearisation) -> (f64, Vec<f64>) {
    let n = problem.params().len();
    let mut gradient = vec![0.0; n];
    let (mut sum, mut count) = (0.0, 0usize);
    let mut row = 0;
    for (&wr2, &len) in lin.frame_wr2.iter().zip(&problem.frame_lengths()) {
        if wr2.is_finite() && wr2 > 0.0 {
            sum += wr2;
            count += 1;
            if !lin.jacobian.is_empty() {
                for i in row..row + len {
                    for (g, j) in gradient.iter_mut().zip(&lin.jacobian[i]) {
                        *g += lin.residuals[i] * j / wr2;
                    }
                }
            }
        }
        row += len;
    }
    let count = count.max(1) as f64;
    gradient.iter_mut().for_each(|g| *g /= count);
    (sum / count, gradient)
}

/// One Adam epoch or one L-BFGS iteration of `refiner`.
pub fn step(refiner: &mut Refiner, cancel: &CancelToken) -> Result<StepReport, RefineError> {
    cancel.check().map_err(|_| RefineError::Cancelled)?;
    let (value, gradient) = objective(&refiner.problem, &refiner.current);
    let delta = match refiner.options.optimizer {
        Optimizer::Adam => adam_delta(&mut refiner.first_order, &gradient, refiner.iteration + 1, refiner.options.learning_rate),
        _ => {
            let direction = lbfgs_direction(&refiner.first_order.pairs, &gradient);
            let slope: f64 = direction.iter().zip(&gradient).map(|(d, g)| d * g).sum();
            let (direction, slope) = if slope < 0.0 { (direction, slope) } else { (gradient.iter().map(|g| -g).collect(), -gradient.iter().map(|g| g * g).sum::<f64>()) };
            let mut t = 1.0;
            let mut accepted = None;
            for _ in 0..MAX_HALVINGS {
                cancel.check().map_err(|_| RefineError::Cancelled)?;
                let trial: Vec<f64> = direction.iter().map(|d| t * d).collect();
                let state = refiner.state.stepped(refiner.problem.params(), &trial)?;
                refiner.evaluations += 1;
                if let Ok(lin) = refiner.problem.linearise(&refiner.experiment, &state, false) {
                    let (v, _) = objective(&refiner.problem, &lin);
                    if v.is_finite() && v <= value + 1e-4 * t * slope {
                        accepted = Some(trial);
                        break;
                    }
                }
                t *= 0.5;
            }
            match accepted {
                Some(d) => d,
                None => {
                    refiner.stop = Some(StopReason::Stationary);
                    return Ok(refiner.report());
                }
            }
        }
    };
    let state = refiner.state.stepped(refiner.problem.params(), &delta)?;
    let next = refiner.problem.linearise(&refiner.experiment, &state, true)?;
    refiner.evaluations += 1;
    let (new_value, new_gradient) = objective(&refiner.problem, &next);
    if refiner.options.optimizer == Optimizer::Lbfgs {
        let y: Vec<f64> = new_gradient.iter().zip(&gradient).map(|(a, b)| a - b).collect();
        if y.iter().zip(&delta).map(|(a, b)| a * b).sum::<f64>() > 1e-300 {
            refiner.first_order.pairs.push((delta.clone(), y));
            if refiner.first_order.pairs.len() > LBFGS_MEMORY {
                refiner.first_order.pairs.remove(0);
            }
        }
    }
    refiner.state = state;
    refiner.current = next;
    refiner.offsets.iter_mut().zip(&delta).for_each(|(o, d)| *o += d);
    refiner.iteration += 1;
    if refiner.options.optimizer == Optimizer::Lbfgs && (value - new_value).abs() <= refiner.options.tolerance * value {
        refiner.stop = Some(StopReason::Converged);
    } else if refiner.iteration >= refiner.options.max_iterations {
        refiner.stop = Some(StopReason::MaxIterations);
    }
    Ok(refiner.report())
}

fn adam_delta(memory: &mut FirstOrder, gradient: &[f64], t: usize, lr: f64) -> Vec<f64> {
    let (b1, b2, eps) = ADAM;
    let t = i32::try_from(t).unwrap_or(i32::MAX);
    memory
        .m
        .iter_mut()
        .zip(memory.v.iter_mut())
        .zip(gradient)
        .map(|((m, v), g)| {
            *m = b1 * *m + (1.0 - b1) * g;
            *v = b2 * *v + (1.0 - b2) * g * g;
            let (mh, vh) = (*m / (1.0 - b1.powi(t)), *v / (1.0 - b2.powi(t)));
            -lr * mh / (vh.sqrt() + eps)
        })
        .collect()
}

/// The two-loop recursion: −H·g from the stored (s, y) pairs (steepest descent without pairs).
fn lbfgs_direction(pairs: &[(Vec<f64>, Vec<f64>)], gradient: &[f64]) -> Vec<f64> {
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut q = gradient.to_vec();
    let mut alphas = Vec::with_capacity(pairs.len());
    for (s, y) in pairs.iter().rev() {
        let alpha = dot(s, &q) / dot(y, s);
        q.iter_mut().zip(y).for_each(|(q, y)| *q -= alpha * y);
        alphas.push(alpha);
    }
    if let Some((s, y)) = pairs.last() {
        let gamma = dot(s, y) / dot(y, y);
        q.iter_mut().for_each(|q| *q *= gamma);
    } else {
        // No curvature yet: a first step of 1e-3 in the gradient's largest component.
        let scale = q.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        if scale > 0.0 {
            q.iter_mut().for_each(|q| *q *= 1e-3 / scale);
        }
    }
    for ((s, y), alpha) in pairs.iter().zip(alphas.iter().rev()) {
        let beta = dot(y, &q) / dot(y, s);
        q.iter_mut().zip(s).for_each(|(q, s)| *q += (alpha - beta) * s);
    }
    q.iter().map(|v| -v).collect()
}
