//! The fit objective: χ² of every dataset of a model against its data, over the varying parameters.
//!
//! χ² = Σ_datasets Σ_i ((R_i − M_i)/σ_i)², or with the log transform Σ ((ln R_i − ln M_i)/(σ_i/R_i))²
//! (relative errors; every R_i must be positive). Optionally a Névot–Croce plausibility term adds
//! ((σ_j − f·d)/1 Å)² for every interface whose roughness exceeds f × the thinner adjacent layer.
//! Fitters see only the free parameters `x` (the model's varying ones, in name order) and their bounds.

use crate::limits::{show, MAX_ABS_DATA_R, MAX_DATA_SIGMA, MIN_DATA_SIGMA};
use crate::model::{BuiltStack, Model};
use crate::{Engine, ReflError};

/// Checks one measured point: R finite with |R| ≤ [`MAX_ABS_DATA_R`], dR finite within
/// [`MIN_DATA_SIGMA`]..[`MAX_DATA_SIGMA`], and R > 0 when fitting log R. Why the bounds: with them
/// every weighted residual stays below ~1e112, so χ² is finite over any number of points.
pub fn check_point(object: &str, r: f64, dr: f64, log_transform: bool) -> Result<(), ReflError> {
    let (r_text, dr_text) = (show(r), show(dr));
    let problem = if !r.is_finite() {
        format!("R = {r_text} is not a finite number")
    } else if r.abs() > MAX_ABS_DATA_R {
        format!("R = {r_text} is beyond the limit |R| ≤ {MAX_ABS_DATA_R:e}")
    } else if !dr.is_finite() {
        format!("dR = {dr_text} is not a finite number")
    } else if dr < MIN_DATA_SIGMA {
        format!("dR = {dr_text} is below the limit {MIN_DATA_SIGMA:e} (it must be positive)")
    } else if dr > MAX_DATA_SIGMA {
        format!("dR = {dr_text} is above the limit {MAX_DATA_SIGMA:e}")
    } else if log_transform && r <= 0.0 {
        format!("R = {r_text}: the log transform needs R > 0")
    } else {
        return Ok(());
    };
    Err(ReflError::input(object, problem))
}

/// Options of the objective.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ObjectiveOptions {
    /// Fit ln R instead of R.
    pub log_transform: bool,
    /// If set, penalise roughness above this fraction of the thinner adjacent layer (e.g. 0.5).
    pub roughness_limit: Option<f64>,
}

/// χ² of a model against its data, as a function of the free parameters.
#[derive(Debug)]
pub struct Objective<'m> {
    model: &'m Model,
    free: Vec<usize>,
    base: Vec<f64>,
    data: Vec<(Vec<f64>, Vec<f64>)>,
    options: ObjectiveOptions,
}

impl<'m> Objective<'m> {
    /// Builds the objective; every dataset needs R and dR, each point checked by [`check_point`]
    /// (finite, |R| ≤ [`MAX_ABS_DATA_R`], [`MIN_DATA_SIGMA`] ≤ dR ≤ [`MAX_DATA_SIGMA`], R > 0 for
    /// the log transform) so that χ² cannot overflow.
    pub fn new(model: &'m Model, options: ObjectiveOptions) -> Result<Self, ReflError> {
        let mut data = Vec::new();
        for (i, d) in model.datasets().iter().enumerate() {
            let object = format!("dataset {i} '{}'", d.name);
            let (Some(r), Some(dr)) = (d.r, d.dr) else {
                return Err(ReflError::input(object, "needs R and dR columns to be fitted"));
            };
            for (k, (&ri, &ei)) in r.iter().zip(dr).enumerate() {
                check_point(&format!("{object} point {k}"), ri, ei, options.log_transform)?;
            }
            data.push((r.to_vec(), dr.to_vec()));
        }
        let free = model.varying();
        if free.is_empty() {
            return Err(ReflError::input("model parameters", "none has \"vary\": true"));
        }
        if let Some(f) = options.roughness_limit {
            if !(f.is_finite() && f > 0.0) {
                return Err(ReflError::input("roughness limit", format!("must be a positive fraction, got {f}")));
            }
        }
        Ok(Objective { model, free, base: model.values().to_vec(), data, options })
    }

    /// The model.
    pub fn model(&self) -> &Model {
        self.model
    }

    /// Number of free parameters.
    pub fn dimension(&self) -> usize {
        self.free.len()
    }

    /// Names of the free parameters.
    pub fn names(&self) -> Vec<&str> {
        self.free.iter().map(|&i| self.model.parameter_names()[i].as_str()).collect()
    }

    /// Bounds of free parameter k.
    pub fn bounds(&self, k: usize) -> [f64; 2] {
        self.model.bounds(self.free[k]).unwrap_or([f64::NEG_INFINITY, f64::INFINITY])
    }

    /// The model's start values of the free parameters.
    pub fn start(&self) -> Vec<f64> {
        self.free.iter().map(|&i| self.base[i]).collect()
    }

    /// Number of data points.
    pub fn n_points(&self) -> usize {
        self.data.iter().map(|(r, _)| r.len()).sum()
    }

    /// The full parameter vector for free values `x`.
    pub fn full(&self, x: &[f64]) -> Vec<f64> {
        let mut v = self.base.clone();
        for (&i, &xi) in self.free.iter().zip(x) {
            v[i] = xi;
        }
        v
    }

    /// Weighted residuals of one model curve set (data order), plus the plausibility rows.
    fn residuals_of(&self, curves: &[Vec<f64>], full: &[f64]) -> Result<Vec<f64>, ReflError> {
        let mut out = Vec::with_capacity(self.n_points());
        for ((r, dr), m) in self.data.iter().zip(curves) {
            for ((&ri, &ei), &mi) in r.iter().zip(dr).zip(m) {
                out.push(if self.options.log_transform { (ri.ln() - mi.max(1e-300).ln()) * ri / ei } else { (ri - mi) / ei });
            }
        }
        out.extend(self.penalty(full)?);
        Ok(out)
    }

    /// Plausibility rows: how far each roughness exceeds f × the thinner adjacent film (Å).
    fn penalty(&self, full: &[f64]) -> Result<Vec<f64>, ReflError> {
        let Some(f) = self.options.roughness_limit else { return Ok(Vec::new()) };
        let layers: Vec<(f64, f64)> = match self.model.stack(0, full)? {
            BuiltStack::Uniaxial(s) => s.layers.iter().map(|l| (l.thickness, l.roughness)).collect(),
            BuiltStack::General(g) => g.layers.iter().map(|l| (l.thickness, l.roughness)).collect(),
        };
        let n = layers.len();
        Ok((1..n)
            .map(|j| {
                let mut limit = f64::INFINITY;
                if j > 1 {
                    limit = limit.min(layers[j - 1].0);
                }
                if j + 1 < n {
                    limit = limit.min(layers[j].0);
                }
                (layers[j].1 - f * limit).max(0.0)
            })
            .collect())
    }

    /// χ² for each member of a population of free vectors: one engine call for all of them. Natively,
    /// a CPU population is split over the available cores (the GPU gets it in one dispatch).
    pub async fn chi2_batch(&self, engine: Engine<'_>, xs: &[Vec<f64>]) -> Result<Vec<f64>, ReflError> {
        #[cfg(not(target_arch = "wasm32"))]
        if matches!(engine, Engine::Cpu) {
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(xs.len() / 4);
            if threads > 1 {
                let chunk = xs.len().div_ceil(threads);
                let parts: Vec<Result<Vec<f64>, ReflError>> = std::thread::scope(|s| {
                    let handles: Vec<_> = xs.chunks(chunk).map(|c| s.spawn(move || pollster::block_on(self.chi2_serial(Engine::Cpu, c)))).collect();
                    handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err(ReflError::input("objective", "a worker thread panicked")))).collect()
                });
                let mut out = Vec::with_capacity(xs.len());
                for part in parts {
                    out.extend(part?);
                }
                return Ok(out);
            }
        }
        self.chi2_serial(engine, xs).await
    }

    /// [`Self::chi2_batch`] on the calling thread.
    async fn chi2_serial(&self, engine: Engine<'_>, xs: &[Vec<f64>]) -> Result<Vec<f64>, ReflError> {
        let fulls: Vec<Vec<f64>> = xs.iter().map(|x| self.full(x)).collect();
        let refs: Vec<&[f64]> = fulls.iter().map(|v| v.as_slice()).collect();
        let curves = self.model.evaluate(engine, &refs).await?;
        curves.iter().zip(&fulls).map(|(c, full)| Ok(self.residuals_of(c, full)?.iter().map(|r| r * r).sum())).collect()
    }

    /// Weighted residuals and their Jacobian `J[k][i] = ∂r_i/∂x_k` (exact, CPU f64).
    pub fn residuals_and_jacobian(&self, x: &[f64]) -> Result<(Vec<f64>, Vec<Vec<f64>>), ReflError> {
        let full = self.full(x);
        let jac = self.model.jacobian(&full, &self.free)?;
        let residuals = self.residuals_of(&jac.curves, &full)?;
        let n_data = self.n_points();
        let mut rows = Vec::with_capacity(self.free.len());
        for k in 0..self.free.len() {
            let mut row = Vec::with_capacity(residuals.len());
            for (((r, dr), m), dm) in self.data.iter().zip(&jac.curves).zip(&jac.d) {
                for i in 0..r.len() {
                    // r_i = (R − M)/σ → −∂M/σ; log: (ln R − ln M)·R/σ → −∂M/M · R/σ.
                    let w = if self.options.log_transform { r[i] / (dr[i] * m[i].max(1e-300)) } else { 1.0 / dr[i] };
                    row.push(-dm[k][i] * w);
                }
            }
            rows.push(row);
        }
        if residuals.len() > n_data {
            // Plausibility rows by central differences: piecewise linear in thickness/roughness.
            for (k, row) in rows.iter_mut().enumerate() {
                let h = 1e-6 * x[k].abs().max(1e-6);
                let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
                xp[k] += h;
                xm[k] -= h;
                let (pp, pm) = (self.penalty(&self.full(&xp))?, self.penalty(&self.full(&xm))?);
                row.extend(pp.iter().zip(&pm).map(|(a, b)| (a - b) / (2.0 * h)));
            }
        }
        Ok((residuals, rows))
    }
}
