//! The Bloch-wave refinement functions of `scatterlab._native`: the least-squares loss Σ r² of a
//! diffBloch experiment (the residuals Levenberg–Marquardt minimises, [`Problem`]) and its exact
//! gradient 2 Jᵀr, per frame, for any subset of the frozen plan's frames. A driver shards frames
//! over Dask workers and sums the per-frame terms in global frame order: the same numbers as one
//! process, because each frame's residuals depend on that frame alone (its own optimal scale).
//!
//! A subset is solved as the experiment restricted to those frames ([`Problem::new`] on a copy
//! whose plan keeps only them) — the crate's own linearisation, not a copy of it; per-frame
//! parameters (thickness, orientation) map to the full problem's columns by name.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use scatterlab_bloch::refine::problem::Objective;
use scatterlab_bloch::refine::{Experiment, Problem, RefineError};

/// Registers the class on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<BlochRefinement>()
}

fn refine_err(e: RefineError) -> PyErr {
    match e {
        RefineError::Io { .. } => PyFileNotFoundError::new_err(e.to_string()),
        RefineError::Cancelled => PyRuntimeError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// The experiment restricted to some frames, with its problem.
struct Shard {
    experiment: Experiment,
    problem: Problem,
    /// Column of the full problem of each of this problem's parameters.
    columns: Vec<usize>,
}

/// Per-frame loss and gradient (full-problem columns).
type Terms = Vec<(f64, Vec<f64>)>;

/// `BlochRefinement(experiment, objective="chi2")`: the refinement problem of a diffBloch
/// experiment directory (or its `experiment.yaml`), plan frozen at the start structure.
/// Parameters are offsets from the start along the problem's columns (`names`), as the LM
/// refiner steps them. Picklable (rebuilt from its path).
#[pyclass(module = "scatterlab._native", frozen)]
pub struct BlochRefinement {
    path: String,
    objective: Objective,
    experiment: Experiment,
    names: Vec<String>,
    /// Sub-problems by their (sorted) frames: a worker asked for the same shard again reuses it.
    shards: Mutex<HashMap<Vec<usize>, Arc<Shard>>>,
}

impl BlochRefinement {
    fn shard(&self, frames: &[usize]) -> Result<Arc<Shard>, RefineError> {
        if let Some(s) = self.shards.lock().ok().and_then(|m| m.get(frames).cloned()) {
            return Ok(s);
        }
        let mut experiment = self.experiment.clone();
        experiment.plan.frames = frames.iter().map(|&i| self.experiment.plan.frames[i].clone()).collect();
        let problem = Problem::new(&experiment, self.objective)?;
        let columns = problem
            .names()
            .iter()
            .map(|n| self.names.iter().position(|m| m == n).ok_or_else(|| RefineError::Inconsistent { item: format!("parameter {n}"), message: "not in the full problem".into() }))
            .collect::<Result<Vec<_>, _>>()?;
        let shard = Arc::new(Shard { experiment, problem, columns });
        if let Ok(mut m) = self.shards.lock() {
            m.insert(frames.to_vec(), shard.clone());
        }
        Ok(shard)
    }

    /// The terms of `frames` (sorted, unique, in range) at offsets `params`.
    fn terms(&self, params: &[f64], frames: &[usize]) -> Result<Terms, RefineError> {
        let n = self.names.len();
        let mut out: Terms = vec![(0.0, vec![0.0; n]); frames.len()];
        // A frame that scores nothing adds nothing (and a problem of such frames alone is refused).
        let (scoring, slots): (Vec<usize>, Vec<usize>) =
            frames.iter().enumerate().filter(|(_, &f)| !self.experiment.plan.frames[f].scored.is_empty()).map(|(k, &f)| (f, k)).unzip();
        if scoring.is_empty() {
            return Ok(out);
        }
        let shard = self.shard(&scoring)?;
        let delta: Vec<f64> = shard.columns.iter().map(|&c| params[c]).collect();
        let state = shard.problem.start(&shard.experiment).stepped(shard.problem.params(), &delta)?;
        let lin = shard.problem.linearise(&shard.experiment, &state, true)?;
        let mut row = 0;
        for (&slot, len) in slots.iter().zip(shard.problem.frame_lengths()) {
            let (loss, gradient) = &mut out[slot];
            for i in row..row + len {
                let r = lin.residuals[i];
                *loss += r * r;
                for (&c, j) in shard.columns.iter().zip(&lin.jacobian[i]) {
                    gradient[c] += 2.0 * r * j;
                }
            }
            row += len;
        }
        Ok(out)
    }

    fn params(&self, params: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
        let (values, _) = crate::convert::floats(params, 1, "params")?;
        if values.len() != self.names.len() {
            return Err(PyValueError::new_err(format!("params has {} values for the refinement's {} parameters ({})", values.len(), self.names.len(), self.names.join(", "))));
        }
        if let Some(k) = values.iter().position(|v| !v.is_finite()) {
            return Err(PyValueError::new_err(format!("params: parameter {k} ({}) is {}, not a finite number", self.names[k], values[k])));
        }
        Ok(values)
    }

    /// `frames` sorted, checked to be in range and unique.
    fn frames(&self, frames: Option<Vec<i64>>) -> PyResult<Vec<usize>> {
        let count = self.experiment.plan.frames.len();
        let Some(frames) = frames else { return Ok((0..count).collect()) };
        let mut out = Vec::with_capacity(frames.len());
        for f in frames {
            match usize::try_from(f) {
                Ok(i) if i < count => out.push(i),
                _ => return Err(PyValueError::new_err(format!("frame {f}: out of range (the plan has {count} frames, 0..{count})"))),
            }
        }
        out.sort_unstable();
        if let Some(w) = out.windows(2).find(|w| w[0] == w[1]) {
            return Err(PyValueError::new_err(format!("frame {} is listed twice", w[0])));
        }
        Ok(out)
    }
}

#[pymethods]
impl BlochRefinement {
    #[new]
    #[pyo3(signature = (experiment, objective="chi2"))]
    fn new(py: Python<'_>, experiment: String, objective: &str) -> PyResult<Self> {
        let objective = match objective {
            "chi2" => Objective::Chi2,
            "wr2" => Objective::Wr2,
            other => return Err(PyValueError::new_err(format!("objective '{other}': expected 'chi2' or 'wr2'"))),
        };
        py.detach(move || {
            let loaded = Experiment::load(Path::new(&experiment)).map_err(refine_err)?;
            let problem = Problem::new(&loaded, objective).map_err(refine_err)?;
            let names = problem.names().to_vec();
            Ok(Self { path: experiment, objective, experiment: loaded, names, shards: Mutex::new(HashMap::new()) })
        })
    }

    /// Rebuilt from its path and objective when unpickled.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
        let me = slf.get();
        let objective = match me.objective {
            Objective::Chi2 => "chi2",
            Objective::Wr2 => "wr2",
        };
        Ok((slf.get_type(), PyTuple::new(slf.py(), [me.path.as_str(), objective])?))
    }

    /// Number of frames of the plan (frames are 0..frame_count, in plan order).
    #[getter]
    fn frame_count(&self) -> usize {
        self.experiment.plan.frames.len()
    }

    /// PETS ids of the frames, in plan order.
    #[getter]
    fn frame_ids(&self) -> Vec<i64> {
        self.experiment.plan.frames.iter().map(|f| f.id).collect()
    }

    /// Names of the parameters (`Si1.y`, `O1.Uiso`, …), the columns of `params` and gradients.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// `frame_terms(params, frames=None) -> (losses, gradients)`: per frame of `frames` (global
    /// indices, any order, each once; None: all), Σ r² over its scored reflections and its
    /// gradient 2 Jᵀr, `(k,)` and `(k, p)` in the order given. GIL released while solving.
    #[pyo3(signature = (params, frames=None))]
    fn frame_terms<'py>(&self, py: Python<'py>, params: &Bound<'py, PyAny>, frames: Option<Vec<i64>>) -> PyResult<crate::convert::VectorAndMatrix<'py>> {
        let given: Option<Vec<i64>> = frames.clone();
        let (params, sorted) = (self.params(params)?, self.frames(frames)?);
        let terms = py.detach(|| self.terms(&params, &sorted)).map_err(refine_err)?;
        // Back to the caller's order.
        let order: Vec<usize> = match given {
            None => (0..sorted.len()).collect(),
            Some(g) => g.iter().map(|&f| sorted.binary_search(&(f as usize)).unwrap_or(0)).collect(),
        };
        let n = self.names.len();
        let losses: Vec<f64> = order.iter().map(|&k| terms[k].0).collect();
        let gradients = Array2::from_shape_fn((order.len(), n), |(i, c)| terms[order[i]].1[c]);
        Ok((losses.into_pyarray(py), gradients.into_pyarray(py)))
    }

    /// `loss_and_gradient(params, frames=None) -> (float, ndarray)`: the sum of
    /// [`frame_terms`](Self::frame_terms) over `frames` (None: all), added in ascending frame
    /// order — the order a sharded driver must add the workers' terms in to get the same bits.
    #[pyo3(signature = (params, frames=None))]
    fn loss_and_gradient<'py>(&self, py: Python<'py>, params: &Bound<'py, PyAny>, frames: Option<Vec<i64>>) -> PyResult<(f64, Bound<'py, PyArray1<f64>>)> {
        let (params, sorted) = (self.params(params)?, self.frames(frames)?);
        let terms = py.detach(|| self.terms(&params, &sorted)).map_err(refine_err)?;
        let mut loss = 0.0;
        let mut gradient = vec![0.0; self.names.len()];
        for (l, g) in &terms {
            loss += l;
            gradient.iter_mut().zip(g).for_each(|(a, b)| *a += b);
        }
        Ok((loss, gradient.into_pyarray(py)))
    }
}
