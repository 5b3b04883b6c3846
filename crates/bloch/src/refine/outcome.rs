//! The result of a refinement as `result.json` holds it (issue 18, deliverable 5): agreement
//! (diffBloch's mean per-frame wR2 and R_obs at the grid-optimal scales, per frame too),
//! parameters with standard errors and correlations, atoms, the run's iterations, evaluations,
//! stop reason, timing, device and optimizer; and the per-site standard uncertainties that
//! `refined.cif` prints.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::output::{u_equivalent, SiteUncertainty};
use super::problem::{Problem, State};
use super::Evaluation;
use crate::crystal::{element_symbol, AsymmetricUnit, Displacement};
use crate::gradient::Param;

/// One parameter's value and standard error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ParamValue {
    /// Its value: the coordinate, U (Å²), occupancy or thickness (Å) it names; for a
    /// combination of axes (`d0`, …) and for orientation corrections (rad) the accumulated step.
    pub value: f64,
    /// Its standard error from the covariance at the optimum (null when JᵀJ is singular).
    pub stderr: Option<f64>,
}

/// One frame's agreement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FrameSummary {
    /// PETS frame id.
    pub id: i64,
    /// Scored reflections.
    pub n: usize,
    /// wR2 at its grid-optimal scale.
    #[serde(rename = "wR2")]
    pub wr2: f64,
    /// R_obs at its grid-optimal scale.
    #[serde(rename = "R_obs")]
    pub r_obs: f64,
    /// The wR2 scale.
    pub scale: f64,
}

/// One refined atom.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AtomSummary {
    /// Site label.
    pub label: String,
    /// Element symbol.
    pub element: String,
    /// Fractional coordinates.
    pub frac: [f64; 3],
    /// U_iso, or U_eq of an anisotropic site (Å²).
    pub u_iso: f64,
    /// CIF U_ij (U11, U22, U33, U12, U13, U23) of an anisotropic site.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub u_aniso: Option<[f64; 6]>,
    /// Occupancy.
    pub occupancy: f64,
}

/// Agreement at one point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    /// Mean per-frame wR2.
    #[serde(rename = "wR2")]
    pub wr2: f64,
    /// Mean per-frame R_obs.
    #[serde(rename = "R_obs")]
    pub r_obs: f64,
}

/// `result.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RefineResult {
    /// Mean per-frame wR2 of the refined model (diffBloch's metric).
    #[serde(rename = "wR2")]
    pub wr2: f64,
    /// Mean per-frame R_obs of the refined model.
    #[serde(rename = "R_obs")]
    pub r_obs: f64,
    /// The start model's agreement.
    pub start: Agreement,
    /// Per frame, in plan order.
    pub per_frame: Vec<FrameSummary>,
    /// Every refined parameter by name.
    pub parameters: BTreeMap<String, ParamValue>,
    /// Correlation matrix of the parameters, rows and columns in `parameter_order`.
    pub correlations: Option<Vec<Vec<f64>>>,
    /// Parameter names in the optimiser's column order.
    pub parameter_order: Vec<String>,
    /// The refined atoms (asymmetric unit).
    pub atoms: Vec<AtomSummary>,
    /// Taken iterations (epochs for first-order optimisers).
    pub iterations: usize,
    /// Model evaluations (each solves every frame).
    pub evaluations: usize,
    /// Why the run stopped (`converged`, `stationary`, `max_iterations`, …), or `paused` when a
    /// stepped caller (the app's Refine button with a step budget) stopped stepping a refiner that
    /// has not stopped itself and can resume.
    pub stop: String,
    /// Wall time (s) of the refinement, loading excluded.
    pub seconds: f64,
    /// The device that ran the refinement's model: `cpu` (f64) or `gpu (<adapter>), f32 Taylor`.
    /// The reported metrics, start and end, are scored in f64 on the CPU either way.
    pub device: String,
    /// The optimiser (`lm`, `adam`, `lbfgs`).
    pub optimizer: String,
    /// What it minimised (`chi2` or `wr2`).
    pub objective: super::problem::Objective,
    /// The scatterlab version.
    pub version: String,
    /// One entry per taken iteration, the start first.
    pub history: Vec<HistoryPoint>,
}

/// The run's state after one taken iteration.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HistoryPoint {
    /// Taken iterations so far.
    pub iteration: usize,
    /// Model evaluations so far.
    pub evaluations: usize,
    /// Σ r² (the LM cost: Σ_f wR2_f² at the continuous scales).
    pub cost: f64,
    /// Mean per-frame wR2 at the continuous optimal scales.
    #[serde(rename = "wR2")]
    pub wr2: f64,
    /// Largest |shift| / s.u. of the step that led here (LM; null otherwise).
    pub max_shift_su: Option<f64>,
}

/// The accumulated step of each parameter, its value and its variance mapped onto the
/// quantities a reader wants (coordinates, U, occupancy, thickness).
pub struct Summary<'a> {
    /// The problem (parameters and names).
    pub problem: &'a Problem,
    /// The start point.
    pub start: &'a State,
    /// The refined point.
    pub refined: &'a State,
    /// Σ of the steps taken along each parameter (before projection onto the bounds).
    pub offsets: &'a [f64],
    /// The parameter covariance (None when singular or not computed).
    pub covariance: Option<&'a [Vec<f64>]>,
}

impl Summary<'_> {
    fn stderr(&self, p: usize) -> Option<f64> {
        self.covariance.and_then(|c| c.get(p).and_then(|row| row.get(p))).map(|v| v.max(0.0).sqrt())
    }

    /// The value of parameter `p` (see [`ParamValue::value`]).
    fn value(&self, p: usize) -> f64 {
        let asu = &self.refined.asu;
        let single = |v: &[f64]| -> Option<usize> {
            let nonzero: Vec<usize> = (0..v.len()).filter(|&k| v[k].abs() > 1e-12).collect();
            matches!(nonzero.as_slice(), [k] if (v[*k] - 1.0).abs() < 1e-12).then(|| nonzero[0])
        };
        let offset = self.offsets.get(p).copied().unwrap_or(f64::NAN);
        match self.problem.params()[p] {
            Param::Position { site, dir } => match self.start.asu.position_basis(site).ok().and_then(|b| b.get(dir).copied()).and_then(|b| single(&b)) {
                Some(k) => asu.sites[site].frac[k],
                None => offset,
            },
            Param::Uiso { site } => match asu.sites[site].displacement {
                Displacement::Iso(u) => u,
                Displacement::Aniso(_) => f64::NAN,
            },
            Param::Uaniso { site, dir } => match (asu.sites[site].displacement, self.start.asu.adp_basis(site).ok().and_then(|b| b.get(dir).copied()).and_then(|b| single(&b))) {
                (Displacement::Aniso(u), Some(k)) => u[k],
                _ => offset,
            },
            Param::Occupancy { site } => asu.sites[site].occupancy,
            Param::Thickness { frame } => self.refined.frames.get(frame).and_then(|f| f.thicknesses.first().copied()).unwrap_or(f64::NAN),
            Param::Orientation { .. } => offset,
        }
    }

    /// Every parameter by name.
    pub fn parameters(&self) -> BTreeMap<String, ParamValue> {
        self.problem.names().iter().enumerate().map(|(p, name)| (name.clone(), ParamValue { value: self.value(p), stderr: self.stderr(p) })).collect()
    }

    /// The correlation matrix, or None without a covariance.
    pub fn correlations(&self) -> Option<Vec<Vec<f64>>> {
        let c = self.covariance?;
        let d: Vec<f64> = (0..c.len()).map(|i| c[i][i].max(0.0).sqrt()).collect();
        Some((0..c.len()).map(|i| (0..c.len()).map(|j| if d[i] > 0.0 && d[j] > 0.0 { c[i][j] / (d[i] * d[j]) } else { f64::NAN }).collect()).collect())
    }

    /// Per site of the refined structure: the s.u. of its coordinates, U and occupancy, with the
    /// covariance of all of a site's directions propagated (frac = start + Σ_d t_d b_d).
    pub fn site_uncertainties(&self) -> Vec<SiteUncertainty> {
        let asu = &self.refined.asu;
        let params = self.problem.params();
        let cov = |a: usize, b: usize| self.covariance.map_or(0.0, |c| c[a][b]);
        (0..asu.sites.len())
            .map(|site| {
                let mut su = SiteUncertainty::default();
                let of_site = |want: fn(&Param) -> bool| -> Vec<usize> { (0..params.len()).filter(|&p| params[p].site() == Some(site) && want(&params[p])).collect() };
                let positions = of_site(|p| matches!(p, Param::Position { .. }));
                let basis = self.start.asu.position_basis(site).unwrap_or_default();
                for k in 0..3 {
                    let var: f64 = positions
                        .iter()
                        .flat_map(|&a| positions.iter().map(move |&b| (a, b)))
                        .map(|(a, b)| component(&basis, params[a], k) * component(&basis, params[b], k) * cov(a, b))
                        .sum();
                    su.frac[k] = var.max(0.0).sqrt();
                }
                let adps = of_site(|p| matches!(p, Param::Uaniso { .. }));
                let adp_basis = self.start.asu.adp_basis(site).unwrap_or_default();
                for k in 0..6 {
                    let var: f64 = adps
                        .iter()
                        .flat_map(|&a| adps.iter().map(move |&b| (a, b)))
                        .map(|(a, b)| adp_component(&adp_basis, params[a], k) * adp_component(&adp_basis, params[b], k) * cov(a, b))
                        .sum();
                    su.u_aniso[k] = var.max(0.0).sqrt();
                }
                if let Some(&p) = of_site(|p| matches!(p, Param::Uiso { .. })).first() {
                    su.u_iso = cov(p, p).max(0.0).sqrt();
                } else if let Displacement::Aniso(u) = asu.sites[site].displacement {
                    // U_eq = c·U: var = Σ_ab (c·b_a)(c·b_b) cov_ab over the site's ADP directions.
                    let (_, c) = u_equivalent(u, &asu.cell);
                    let along = |p: Param| (0..6).map(|k| c[k] * adp_component(&adp_basis, p, k)).sum::<f64>();
                    let var: f64 = adps.iter().flat_map(|&a| adps.iter().map(move |&b| (a, b))).map(|(a, b)| along(params[a]) * along(params[b]) * cov(a, b)).sum();
                    su.u_iso = var.max(0.0).sqrt();
                }
                if let Some(&p) = of_site(|p| matches!(p, Param::Occupancy { .. })).first() {
                    su.occupancy = cov(p, p).max(0.0).sqrt();
                }
                su
            })
            .collect()
    }
}

fn component(basis: &[[f64; 3]], param: Param, k: usize) -> f64 {
    match param {
        Param::Position { dir, .. } => basis.get(dir).map_or(0.0, |b| b[k]),
        _ => 0.0,
    }
}

fn adp_component(basis: &[[f64; 6]], param: Param, k: usize) -> f64 {
    match param {
        Param::Uaniso { dir, .. } => basis.get(dir).map_or(0.0, |b| b[k]),
        _ => 0.0,
    }
}

/// The atoms of `asu` as `result.json` lists them.
pub fn atoms(asu: &AsymmetricUnit) -> Vec<AtomSummary> {
    asu.sites
        .iter()
        .map(|atom| {
            let (u_iso, u_aniso) = match atom.displacement {
                Displacement::Iso(u) => (u, None),
                Displacement::Aniso(u) => (u_equivalent(u, &asu.cell).0, Some(u)),
            };
            AtomSummary { label: atom.label.clone(), element: element_symbol(atom.z).unwrap_or("?").to_owned(), frac: atom.frac, u_iso, u_aniso, occupancy: atom.occupancy }
        })
        .collect()
}

/// The per-frame summaries of an evaluation.
pub fn per_frame(evaluation: &Evaluation) -> Vec<FrameSummary> {
    evaluation.frames.iter().map(|f| FrameSummary { id: f.id, n: f.metrics.n, wr2: f.metrics.wr2.value, r_obs: f.metrics.r_obs.value, scale: f.metrics.wr2.scale }).collect()
}

/// Everything a finished run writes: `result.json`, the s.u. of `refined.cif` and the refined
/// model's evaluation (for the observed-vs-calculated CSV).
#[derive(Debug, Clone)]
pub struct Finished {
    /// `result.json`.
    pub result: RefineResult,
    /// Per refined site, for [`super::output::refined_cif`].
    pub uncertainties: Vec<SiteUncertainty>,
    /// The refined model scored frame by frame.
    pub evaluation: Evaluation,
}

/// The result of `refiner` at its current point (two more model evaluations: start and end
/// scored with diffBloch's grid-optimal scales). `seconds`: the run's wall time.
pub fn finish(refiner: &super::Refiner, seconds: f64) -> Result<Finished, super::RefineError> {
    let experiment = refiner.experiment();
    let problem = refiner.problem();
    let evaluation = problem.evaluate(experiment, refiner.state())?;
    let start = problem.evaluate(experiment, refiner.start())?;
    let covariance = refiner.covariance();
    let summary = Summary { problem, start: refiner.start(), refined: refiner.state(), offsets: refiner.offsets(), covariance: covariance.as_deref() };
    let result = RefineResult {
        wr2: evaluation.wr2,
        r_obs: evaluation.r_obs,
        start: Agreement { wr2: start.wr2, r_obs: start.r_obs },
        per_frame: per_frame(&evaluation),
        parameters: summary.parameters(),
        correlations: summary.correlations(),
        parameter_order: problem.names().to_vec(),
        atoms: atoms(&refiner.state().asu),
        iterations: refiner.iterations(),
        evaluations: refiner.evaluations() + 2,
        stop: refiner.stop_reason().map_or("paused", |s| s.name()).to_owned(),
        seconds,
        device: refiner.device().label(),
        optimizer: refiner.options().optimizer.name().to_owned(),
        objective: problem.objective(),
        version: scatterlab_core::VERSION.to_owned(),
        history: refiner
            .history()
            .iter()
            .map(|h| HistoryPoint {
                iteration: h.iteration,
                evaluations: h.evaluations,
                cost: h.cost,
                wr2: h.wr2,
                max_shift_su: h.max_shift_su.is_finite().then_some(h.max_shift_su),
            })
            .collect(),
    };
    Ok(Finished { result, uncertainties: summary.site_uncertainties(), evaluation })
}
