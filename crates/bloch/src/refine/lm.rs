//! Levenberg–Marquardt on the [`Problem`]'s residuals with the exact (forward-mode) Jacobian, one
//! iteration per [`Refiner::step`] call so that every front end (CLI, app thread, npm Worker,
//! Python) drives the same loop with its own progress display and cancellation.
//!
//! Damping follows Nielsen (1999): the step solves (JᵀJ + λ·diag(JᵀJ)) δ = −Jᵀr; a step that
//! lowers the cost is taken and λ shrinks by max(1/3, 1 − (2ρ − 1)³) with ρ the gain ratio; a
//! step that does not is refused and λ grows by ν (doubling). Bounds (U ≥ 0, 0 ≤ occupancy ≤ 1)
//! are kept by projecting the trial point. Stop: the crystallographer's rule — every parameter's
//! shift below `shift_su` of its standard uncertainty (SHELXL's shift/esd) — or a taken step
//! lowering the cost by less than `tolerance` (relative), ten refusals in a row, or
//! `max_iterations`.

use scatterlab_core::CancelToken;

use super::device::ModelDevice;
use super::linalg::{cholesky_solve, covariance};
use super::problem::{Linearisation, Objective, Problem, State};
use super::{Experiment, RefineError};

/// Refusals in a row after which the point is taken as stationary.
pub const MAX_REFUSALS: usize = 10;

/// The optimiser of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Optimizer {
    /// Levenberg–Marquardt on the residuals (the default).
    Lm,
    /// Adam on the mean per-frame wR2, as diffBloch's configured run (`refinement.optimizer`).
    Adam,
    /// L-BFGS on the mean per-frame wR2 with a backtracking line search.
    Lbfgs,
}

impl Optimizer {
    /// Its name as the CLI and `result.json` spell it.
    pub fn name(self) -> &'static str {
        match self {
            Optimizer::Lm => "lm",
            Optimizer::Adam => "adam",
            Optimizer::Lbfgs => "lbfgs",
        }
    }
}

/// Options of a refinement run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LmOptions {
    /// The optimiser.
    pub optimizer: Optimizer,
    /// Largest number of taken iterations (LM, L-BFGS) or epochs (Adam).
    pub max_iterations: usize,
    /// Relative cost decrease of a taken step below which the run has converged (LM, L-BFGS).
    pub tolerance: f64,
    /// Largest |shift| / s.u. of a taken LM step at which the run has converged.
    pub shift_su: f64,
    /// Initial damping relative to diag(JᵀJ) (LM).
    pub initial_lambda: f64,
    /// Learning rate (Adam; diffBloch's `refinement.optimizer.lr`).
    pub learning_rate: f64,
    /// What LM minimises (the first-order optimisers always minimise diffBloch's mean wR2).
    pub objective: Objective,
}

impl Default for LmOptions {
    fn default() -> Self {
        Self { optimizer: Optimizer::Lm, max_iterations: 50, tolerance: 1e-6, shift_su: 0.01, initial_lambda: 1e-3, learning_rate: 1e-3, objective: Objective::Chi2 }
    }
}

impl LmOptions {
    /// The options `scatterlab bloch refine` runs `config`'s experiment with: `optimizer`, at
    /// most `max_iterations` (default: 50, or the YAML's `refinement.steps` epochs for Adam),
    /// the YAML's learning rate; the rest the defaults.
    pub fn for_experiment(config: &super::ExperimentConfig, optimizer: Optimizer, max_iterations: Option<usize>) -> Self {
        let defaults = Self::default();
        let max_iterations = max_iterations.unwrap_or(if optimizer == Optimizer::Adam { config.refinement.steps } else { defaults.max_iterations });
        Self { optimizer, max_iterations, learning_rate: config.refinement.lr, ..defaults }
    }
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A taken step lowered the cost by less than the tolerance.
    Converged,
    /// [`MAX_REFUSALS`] steps in a row were refused (no descent left at this precision).
    Stationary,
    /// The iteration budget ran out.
    MaxIterations,
}

impl StopReason {
    /// Its name in `result.json`.
    pub fn name(self) -> &'static str {
        match self {
            StopReason::Converged => "converged",
            StopReason::Stationary => "stationary",
            StopReason::MaxIterations => "max_iterations",
        }
    }
}

/// What one [`Refiner::step`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepReport {
    /// Taken iterations so far.
    pub iteration: usize,
    /// Model evaluations so far (each one solves every frame).
    pub evaluations: usize,
    /// Σ r² now.
    pub cost: f64,
    /// Mean per-frame wR2 at the continuous optimal scales, now.
    pub wr2: f64,
    /// Damping now.
    pub lambda: f64,
    /// Largest |shift| / s.u. of the last taken step (NaN before the first, or without a
    /// covariance).
    pub max_shift_su: f64,
    /// Set once the run has stopped.
    pub stop: Option<StopReason>,
}

/// A refinement in progress: the current structure, its linearisation and the damping state.
#[derive(Debug, Clone)]
pub struct Refiner {
    pub(super) experiment: Experiment,
    pub(super) problem: Problem,
    pub(super) options: LmOptions,
    pub(super) state: State,
    pub(super) current: Linearisation,
    pub(super) lambda: f64,
    pub(super) nu: f64,
    pub(super) iteration: usize,
    pub(super) evaluations: usize,
    pub(super) refusals: usize,
    pub(super) max_shift_su: f64,
    pub(super) stop: Option<StopReason>,
    pub(super) history: Vec<StepReport>,
    pub(super) start: State,
    pub(super) offsets: Vec<f64>,
    pub(super) first_order: super::first_order::FirstOrder,
    pub(super) device: ModelDevice,
}

impl Refiner {
    /// Starts at the experiment's start structure with the model on `device` (one model
    /// evaluation with the Jacobian); [`Refiner::new`] and [`Refiner::new_on`] call it.
    pub(super) async fn begin(experiment: Experiment, options: LmOptions, device: ModelDevice) -> Result<Self, RefineError> {
        let objective = if options.optimizer == Optimizer::Lm { options.objective } else { Objective::Wr2 };
        let problem = Problem::new(&experiment, objective)?;
        let state = problem.start(&experiment);
        let current = problem.linearise_on(&experiment, &state, true, &device).await?;
        let n = problem.params().len();
        let first_order = super::first_order::FirstOrder::new(n);
        let start = state.clone();
        let mut refiner = Self {
            experiment,
            problem,
            options,
            state,
            current,
            lambda: options.initial_lambda,
            nu: 2.0,
            iteration: 0,
            evaluations: 1,
            refusals: 0,
            max_shift_su: f64::NAN,
            stop: None,
            history: Vec::new(),
            start,
            offsets: vec![0.0; n],
            first_order,
            device,
        };
        if options.max_iterations == 0 {
            refiner.stop = Some(StopReason::MaxIterations);
        }
        let report = refiner.report();
        refiner.history.push(report);
        Ok(refiner)
    }

    /// The experiment.
    pub fn experiment(&self) -> &Experiment {
        &self.experiment
    }

    /// The parameters and their names.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// The start point.
    pub fn start(&self) -> &State {
        &self.start
    }

    /// Σ of the steps taken along each parameter.
    pub fn offsets(&self) -> &[f64] {
        &self.offsets
    }

    /// The options.
    pub fn options(&self) -> &LmOptions {
        &self.options
    }

    /// The current point (structure and frames).
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The current linearisation (residuals, Jacobian, per-frame wR2 and scales).
    pub fn linearisation(&self) -> &Linearisation {
        &self.current
    }

    /// One report per taken iteration, the start included.
    pub fn history(&self) -> &[StepReport] {
        &self.history
    }

    /// Taken iterations.
    pub fn iterations(&self) -> usize {
        self.iteration
    }

    /// Model evaluations (each solves every frame).
    pub fn evaluations(&self) -> usize {
        self.evaluations
    }

    /// Why the run stopped, once it has.
    pub fn stop_reason(&self) -> Option<StopReason> {
        self.stop
    }

    /// Whether the run has stopped.
    pub fn is_done(&self) -> bool {
        self.stop.is_some()
    }

    pub(super) fn report(&self) -> StepReport {
        StepReport {
            iteration: self.iteration,
            evaluations: self.evaluations,
            cost: self.current.cost(),
            wr2: super::metric::finite_mean(self.current.frame_wr2.iter().copied()),
            lambda: self.lambda,
            max_shift_su: self.max_shift_su,
            stop: self.stop,
        }
    }

    /// One LM iteration: trial steps until one lowers the cost (then the Jacobian is re-evaluated
    /// there) or the run stops, with the model on the refiner's device. Cancellation is checked
    /// between model evaluations.
    pub async fn step_async(&mut self, cancel: &CancelToken) -> Result<StepReport, RefineError> {
        if self.stop.is_some() {
            return Ok(self.report());
        }
        if self.options.optimizer != Optimizer::Lm {
            let report = super::first_order::step(self, cancel)?;
            self.history.push(report);
            return Ok(report);
        }
        let n = self.problem.params().len();
        let (jtj, jtr) = normal_equations(&self.current.jacobian, &self.current.residuals, n);
        let diag_floor = 1e-12 * jtj.iter().enumerate().map(|(i, row)| row[i]).fold(0.0_f64, f64::max).max(f64::MIN_POSITIVE);
        let old_cost = self.current.cost();
        loop {
            cancel.check().map_err(|_| RefineError::Cancelled)?;
            let mut damped = jtj.clone();
            for (i, row) in damped.iter_mut().enumerate() {
                row[i] += self.lambda * jtj[i][i].max(diag_floor);
            }
            let minus_g: Vec<f64> = jtr.iter().map(|g| -g).collect();
            let Some(delta) = cholesky_solve(&damped, &minus_g) else {
                self.lambda *= self.nu;
                self.nu *= 2.0;
                if self.refuse() {
                    break;
                }
                continue;
            };
            let trial_state = self.state.stepped(self.problem.params(), &delta)?;
            let trial = self.problem.linearise_on(&self.experiment, &trial_state, false, &self.device).await;
            self.evaluations += 1;
            // A trial the model refuses (e.g. a matrix it cannot solve) counts as a refusal.
            let new_cost = trial.as_ref().map_or(f64::INFINITY, Linearisation::cost);
            // Decrease of Σr² the linear model predicts: |r|² − |r + Jδ|² = δᵀ(λDδ − Jᵀr).
            let predicted: f64 = (0..n).map(|i| delta[i] * (self.lambda * jtj[i][i].max(diag_floor) * delta[i] - jtr[i])).sum();
            let rho = if predicted > 0.0 { (old_cost - new_cost) / predicted } else { -1.0 };
            if new_cost.is_finite() && new_cost < old_cost {
                cancel.check().map_err(|_| RefineError::Cancelled)?;
                self.current = self.problem.linearise_on(&self.experiment, &trial_state, true, &self.device).await?;
                self.evaluations += 1;
                self.state = trial_state;
                self.offsets.iter_mut().zip(&delta).for_each(|(o, d)| *o += d);
                self.iteration += 1;
                self.refusals = 0;
                self.lambda *= (1.0 - (2.0 * rho - 1.0).powi(3)).max(1.0 / 3.0);
                self.nu = 2.0;
                self.max_shift_su = self.covariance().map_or(f64::NAN, |c| delta.iter().enumerate().map(|(i, d)| d.abs() / c[i][i].max(0.0).sqrt()).fold(0.0, f64::max));
                if self.max_shift_su < self.options.shift_su || (old_cost - new_cost) <= self.options.tolerance * old_cost {
                    self.stop = Some(StopReason::Converged);
                } else if self.iteration >= self.options.max_iterations {
                    self.stop = Some(StopReason::MaxIterations);
                }
                break;
            }
            self.lambda *= self.nu;
            self.nu *= 2.0;
            if self.refuse() {
                break;
            }
        }
        let report = self.report();
        self.history.push(report);
        Ok(report)
    }

    fn refuse(&mut self) -> bool {
        self.refusals += 1;
        if self.refusals >= MAX_REFUSALS {
            self.stop = Some(StopReason::Stationary);
        }
        self.stop.is_some()
    }

    /// The covariance of the parameters at the current point, σ̂²·(JᵀJ)⁻¹ with
    /// σ̂² = Σr² / (m − n); `None` when JᵀJ is singular (a parameter the data do not determine).
    pub fn covariance(&self) -> Option<Vec<Vec<f64>>> {
        let n = self.problem.params().len();
        let m = self.current.residuals.len();
        let (jtj, _) = normal_equations(&self.current.jacobian, &self.current.residuals, n);
        let variance = self.current.cost() / (m.saturating_sub(n).max(1)) as f64;
        covariance(&jtj).map(|c| c.iter().map(|row| row.iter().map(|v| v * variance).collect()).collect())
    }
}

/// JᵀJ and Jᵀr.
fn normal_equations(jacobian: &[Vec<f64>], residuals: &[f64], n: usize) -> (Vec<Vec<f64>>, Vec<f64>) {
    let mut jtj = vec![vec![0.0; n]; n];
    let mut jtr = vec![0.0; n];
    for (row, r) in jacobian.iter().zip(residuals) {
        for i in 0..n {
            jtr[i] += row[i] * r;
            for j in 0..=i {
                jtj[i][j] += row[i] * row[j];
            }
        }
    }
    for i in 0..n {
        for j in 0..i {
            jtj[j][i] = jtj[i][j];
        }
    }
    (jtj, jtr)
}
