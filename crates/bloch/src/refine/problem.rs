//! The refinement as a least-squares problem: the trainable parameters of an experiment, and
//! per frame the weighted residuals of the scored reflections at the frame's optimal scale.
//!
//! Frame f contributes r_i = w_i (s_f I_c,i − I_o,i) / D_f over its scored reflections, with
//! the scale s_f = Σ w² I_o I_c / Σ w² I_c² that minimises the frame's sum, eliminated (variable
//! projection) with its derivative entering the Jacobian exactly:
//! ∂s/∂θ = Σ w² (I_o − 2 s I_c) ∂I_c/∂θ / Σ w² I_c². Two objectives ([`Objective`]):
//! - `chi2` (the default): w_i = 1/σ_i, D_f = 1 — χ², the maximum-likelihood fit when the file's
//!   σ are the intensities' standard deviations (PETS writes them so);
//! - `wr2`: the Klar weights w_i of [`super::metric::wr2_weights`], D_f = sqrt(Σ w_i² I_o,i²), so
//!   that Σ_i r_i² is the frame's wR2² at its continuous optimal scale (Σ_f wR2_f², diffBloch's
//!   loss up to the mean of squares).
//!
//! Klar's weights put far more weight on strong reflections than their σ warrant
//! (w² ≈ 4I/(σ² + 4μ²I²) against 1/σ²), so the χ² estimate scatters less around the truth for the
//! same data; the agreement is reported with diffBloch's wR2 in either case.

use super::experiment::Selection;
use super::metric::frame_metrics;
use super::{Evaluation, Experiment, FrameFit, RefineError};
use crate::crystal::{AsymmetricUnit, Displacement};
use crate::gradient::params::displaced;
use crate::gradient::{FramePlan, GradientModel, Param};

/// Thinnest crystal a thickness step may reach (Å).
pub const MIN_THICKNESS_A: f64 = 1.0;

/// A point of the refinement: the structure and the frames (their thickness and orientation
/// change only when the YAML's preprocessing fits ask for them; beam sets stay frozen).
#[derive(Debug, Clone)]
pub struct State {
    /// The structure.
    pub asu: AsymmetricUnit,
    /// The frames, in plan order.
    pub frames: Vec<FramePlan>,
}

impl State {
    /// This state moved by `delta` along `params`, projected onto the physical bounds
    /// (U_iso ≥ 0, 0 ≤ occupancy ≤ 1, thickness ≥ [`MIN_THICKNESS_A`]).
    pub fn stepped(&self, params: &[Param], delta: &[f64]) -> Result<State, RefineError> {
        let mut out = self.clone();
        for (param, &step) in params.iter().zip(delta) {
            match *param {
                Param::Thickness { frame } => {
                    if let Some(f) = out.frames.get_mut(frame) {
                        f.shift_thickness(step);
                        for t in &mut f.thicknesses {
                            *t = t.max(MIN_THICKNESS_A);
                        }
                    }
                }
                Param::Orientation { frame, axis } => {
                    if let Some(f) = out.frames.get_mut(frame) {
                        f.rotate(axis, step)?;
                    }
                }
                _ => out.asu = displaced(&out.asu, param, step)?,
            }
        }
        for atom in &mut out.asu.sites {
            atom.occupancy = atom.occupancy.clamp(0.0, 1.0);
            if let Displacement::Iso(u) = &mut atom.displacement {
                *u = u.max(0.0);
            }
        }
        Ok(out)
    }
}

/// What the least-squares problem minimises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// χ² with the file's σ (w = 1/σ), each frame at its optimal scale.
    Chi2,
    /// Σ_f wR2_f² with Klar's weights (diffBloch's residual).
    Wr2,
}

/// The scored reflections of one frame, as rows of the gradient model.
#[derive(Debug, Clone)]
struct ScoredRows {
    /// Flat row of each scored reflection in [`GradientModel::rows`].
    rows: Vec<usize>,
    observed: Vec<f64>,
    /// The objective's weights w.
    weights: Vec<f64>,
    /// The objective's D_f.
    norm: f64,
    /// Klar weights (for the reported wR2).
    klar: Vec<f64>,
    /// sqrt(Σ klar² I_o²).
    klar_norm: f64,
}

/// Residuals (and optionally their Jacobian) at one parameter point.
#[derive(Debug, Clone)]
pub struct Linearisation {
    /// r, frames in plan order, scored reflections in file order.
    pub residuals: Vec<f64>,
    /// ∂r/∂θ, one row per residual, one column per parameter (empty when not asked for).
    pub jacobian: Vec<Vec<f64>>,
    /// Per frame: diffBloch's wR2 at its continuous optimal scale (NaN for a frame with no
    /// scored row), whatever the objective.
    pub frame_wr2: Vec<f64>,
    /// Per frame: the objective's optimal scale s_f.
    pub scales: Vec<f64>,
}

impl Linearisation {
    /// Σ r².
    pub fn cost(&self) -> f64 {
        self.residuals.iter().map(|r| r * r).sum()
    }
}

/// The trainable parameters and scored rows of an experiment.
#[derive(Debug, Clone)]
pub struct Problem {
    objective: Objective,
    params: Vec<Param>,
    names: Vec<String>,
    frames: Vec<FramePlan>,
    scored: Vec<ScoredRows>,
}

impl Problem {
    /// The problem of `experiment` with the trainable groups of its YAML (positions along each
    /// site's free directions, U_iso or the free U_aniso directions, occupancies).
    pub fn new(experiment: &Experiment, objective: Objective) -> Result<Self, RefineError> {
        let plan = &experiment.plan;
        let frames = (0..plan.frames.len()).map(|i| plan.frame_plan(i)).collect::<Result<Vec<_>, _>>()?;
        let (mut params, mut names) = trainable_params(&experiment.start, experiment.config.refinement.trainable)?;
        // diffBloch fits each rotation's thickness and orientation before refining; here they
        // are refined jointly with the structure when the YAML asks for them.
        for (frame, planned) in plan.frames.iter().enumerate() {
            if experiment.config.preprocess.optimize_thickness {
                params.push(Param::Thickness { frame });
                names.push(format!("frame{}.thickness", planned.id));
            }
            if experiment.config.preprocess.optimize_orientation {
                for (axis, label) in ["x", "y", "z"].iter().enumerate() {
                    params.push(Param::Orientation { frame, axis });
                    names.push(format!("frame{}.rot_{label}", planned.id));
                }
            }
        }
        if params.is_empty() {
            return Err(RefineError::Inconsistent { item: "refinement.trainable".to_owned(), message: "selects no free parameter".to_owned() });
        }
        let mut scored = Vec::with_capacity(frames.len());
        let mut offset = 0;
        for (planned, frame) in plan.frames.iter().zip(&frames) {
            let union = frame.union();
            let rows = planned
                .scored
                .iter()
                .map(|s| {
                    union
                        .binary_search(&s.hkl)
                        .map(|j| offset + j)
                        .map_err(|_| RefineError::Inconsistent { item: format!("frame {}: reflection {:?}", planned.id, s.hkl), message: "scored but not solved".to_owned() })
                })
                .collect::<Result<Vec<_>, _>>()?;
            offset += union.len() * frame.thicknesses.len();
            let observed: Vec<f64> = planned.scored.iter().map(|s| s.intensity).collect();
            let sigmas: Vec<f64> = planned.scored.iter().map(|s| s.sigma).collect();
            let klar = super::metric::wr2_weights(&observed, &sigmas, super::metric::MU);
            let klar_norm = observed.iter().zip(&klar).map(|(o, w)| (w * o) * (w * o)).sum::<f64>().sqrt();
            let (weights, norm) = match objective {
                Objective::Wr2 => (klar.clone(), klar_norm),
                Objective::Chi2 => {
                    if let Some(bad) = planned.scored.iter().find(|s| !(s.sigma > 0.0 && s.sigma.is_finite())) {
                        return Err(RefineError::Pets {
                            file: experiment.pets.file.clone(),
                            line: bad.line,
                            message: format!("sigma {} must be positive for the chi2 objective", bad.sigma),
                        });
                    }
                    (sigmas.iter().map(|s| 1.0 / s).collect(), 1.0)
                }
            };
            scored.push(ScoredRows { rows, observed, weights, norm, klar, klar_norm });
        }
        if scored.iter().all(|s| s.rows.is_empty()) {
            return Err(RefineError::Inconsistent { item: experiment.pets.file.clone(), message: "no observed reflection is scored in any frame".to_owned() });
        }
        Ok(Self { objective, params, names, frames, scored })
    }

    /// What it minimises.
    pub fn objective(&self) -> Objective {
        self.objective
    }

    /// The parameters, in column order.
    pub fn params(&self) -> &[Param] {
        &self.params
    }

    /// Their names (`Si1.y`, `O1.Uiso`, …), in column order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The number of residuals of each frame, in plan order.
    pub fn frame_lengths(&self) -> Vec<usize> {
        self.scored.iter().map(|s| s.rows.len()).collect()
    }

    /// The number of residuals.
    pub fn residual_count(&self) -> usize {
        self.scored.iter().map(|s| s.rows.len()).sum()
    }

    /// The start point: the experiment's start structure and planned frames.
    pub fn start(&self, experiment: &Experiment) -> State {
        State { asu: experiment.start.clone(), frames: self.frames.clone() }
    }

    /// The gradient model of `state` on the experiment's frozen optics.
    pub fn model(&self, experiment: &Experiment, state: &State) -> Result<GradientModel, RefineError> {
        let plan = &experiment.plan;
        Ok(GradientModel::new(state.asu.clone(), plan.optics, state.frames.clone(), plan.grid_g_max_inv_a, plan.absorption)?)
    }

    /// diffBloch's metrics of `state` (each frame at its grid-optimal scales), as
    /// [`Experiment::evaluate`] gives them for the planned frames.
    pub fn evaluate(&self, experiment: &Experiment, state: &State) -> Result<Evaluation, RefineError> {
        let intensities = self.model(experiment, state)?.intensities()?;
        let mut frames = Vec::with_capacity(self.scored.len());
        for (planned, rows) in experiment.plan.frames.iter().zip(&self.scored) {
            let calculated: Vec<f64> = rows.rows.iter().map(|&r| intensities[r]).collect();
            let sigmas: Vec<f64> = planned.scored.iter().map(|s| s.sigma).collect();
            let metrics = frame_metrics(&calculated, &rows.observed, &sigmas);
            frames.push(FrameFit { id: planned.id, hkl: planned.scored.iter().map(|s| s.hkl).collect(), observed: rows.observed.clone(), sigmas, calculated, metrics });
        }
        let wr2 = super::metric::finite_mean(frames.iter().map(|f| f.metrics.wr2.value));
        let r_obs = super::metric::finite_mean(frames.iter().map(|f| f.metrics.r_obs.value));
        Ok(Evaluation { frames, wr2, r_obs })
    }

    /// Residuals of `state`, with the Jacobian when `with_jacobian`.
    pub fn linearise(&self, experiment: &Experiment, state: &State, with_jacobian: bool) -> Result<Linearisation, RefineError> {
        let model = self.model(experiment, state)?;
        let (intensities, columns) = if with_jacobian { model.intensities_and_jacobian(&self.params)? } else { (model.intensities()?, Vec::new()) };
        Ok(self.assemble(&intensities, &columns, with_jacobian))
    }

    /// The residuals (and with `with_jacobian` their Jacobian) from the model's intensities and
    /// intensity Jacobian (`columns[param][row]`), whichever device computed them.
    pub(super) fn assemble(&self, intensities: &[f64], columns: &[Vec<f64>], with_jacobian: bool) -> Linearisation {
        let n = self.params.len();
        let mut out = Linearisation { residuals: Vec::new(), jacobian: Vec::new(), frame_wr2: Vec::new(), scales: Vec::new() };
        for frame in &self.scored {
            let calc: Vec<f64> = frame.rows.iter().map(|&r| intensities[r]).collect();
            let (mut num, mut den) = (0.0, 0.0);
            for ((c, o), w) in calc.iter().zip(&frame.observed).zip(&frame.weights) {
                num += w * w * o * c;
                den += w * w * c * c;
            }
            let scale = if den > 0.0 { num / den } else { 0.0 };
            let start = out.residuals.len();
            out.residuals.extend(calc.iter().zip(&frame.observed).zip(&frame.weights).map(|((c, o), w)| w * (scale * c - o) / frame.norm));
            let wr2 = match self.objective {
                Objective::Wr2 => out.residuals[start..].iter().map(|r| r * r).sum::<f64>().sqrt(),
                Objective::Chi2 => klar_wr2(&calc, frame),
            };
            out.frame_wr2.push(if frame.rows.is_empty() { f64::NAN } else { wr2 });
            out.scales.push(scale);
            if with_jacobian {
                // ∂s/∂θ_p, then ∂r_i/∂θ_p = w_i (s ∂I_i + ∂s I_i) / D.
                let d_scale: Vec<f64> = (0..n)
                    .map(|p| {
                        let dot: f64 = frame
                            .rows
                            .iter()
                            .zip(&calc)
                            .zip(frame.observed.iter().zip(&frame.weights))
                            .map(|((&r, c), (o, w))| w * w * (o - 2.0 * scale * c) * columns[p][r])
                            .sum();
                        if den > 0.0 {
                            dot / den
                        } else {
                            0.0
                        }
                    })
                    .collect();
                for ((&r, c), w) in frame.rows.iter().zip(&calc).zip(&frame.weights) {
                    out.jacobian.push((0..n).map(|p| w * (scale * columns[p][r] + d_scale[p] * c) / frame.norm).collect());
                }
            }
        }
        out
    }
}

/// diffBloch's wR2 of one frame at its continuous optimal scale.
fn klar_wr2(calc: &[f64], frame: &ScoredRows) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for ((c, o), w) in calc.iter().zip(&frame.observed).zip(&frame.klar) {
        num += w * w * o * c;
        den += w * w * c * c;
    }
    let scale = if den > 0.0 { num / den } else { 0.0 };
    let sum: f64 = calc.iter().zip(&frame.observed).zip(&frame.klar).map(|((c, o), w)| (w * (scale * c - o)).powi(2)).sum();
    sum.sqrt() / frame.klar_norm
}

/// The trainable parameters of `asu` under `trainable`, with their names.
fn trainable_params(asu: &AsymmetricUnit, trainable: super::experiment::Trainable) -> Result<(Vec<Param>, Vec<String>), RefineError> {
    let (mut params, mut names) = (Vec::new(), Vec::new());
    for (site, atom) in asu.sites.iter().enumerate() {
        if trainable.positions == Selection::All {
            for (dir, basis) in asu.position_basis(site)?.iter().enumerate() {
                params.push(Param::Position { site, dir });
                names.push(format!("{}.{}", atom.label, direction_name(basis, &["x", "y", "z"], dir)));
            }
        }
        if trainable.adp == Selection::All {
            match atom.displacement {
                Displacement::Iso(_) => {
                    params.push(Param::Uiso { site });
                    names.push(format!("{}.Uiso", atom.label));
                }
                Displacement::Aniso(_) => {
                    for (dir, basis) in asu.adp_basis(site)?.iter().enumerate() {
                        params.push(Param::Uaniso { site, dir });
                        names.push(format!("{}.{}", atom.label, direction_name(basis, &["U11", "U22", "U33", "U12", "U13", "U23"], dir)));
                    }
                }
            }
        }
        if trainable.occupancy == Selection::All {
            params.push(Param::Occupancy { site });
            names.push(format!("{}.occ", atom.label));
        }
    }
    Ok((params, names))
}

/// `axes[k]` when the free direction is the single axis k, else a combination named by its
/// index (`p0`, …): the value of such a parameter is a step along the basis vector.
fn direction_name(basis: &[f64], axes: &[&str], dir: usize) -> String {
    let nonzero: Vec<usize> = (0..basis.len()).filter(|&k| basis[k].abs() > 1e-12).collect();
    match nonzero.as_slice() {
        [k] if (basis[*k] - 1.0).abs() < 1e-12 => axes[*k].to_owned(),
        _ => format!("d{dir}"),
    }
}
