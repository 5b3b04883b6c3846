//! The reflectivity functions of `scatterlab._native`: the fit objective of a task or model file
//! (χ² of a population in one batch, residuals, exact Jacobian) for Python optimisers and
//! samplers, and a whole fit run as `scatterlab refl fit` runs it. The GIL is released while the
//! model is evaluated, so Dask worker threads (and scipy/emcee callers' threads) run in parallel.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyTuple, PyType};
use scatterlab_refl::fit::{self, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;
use scatterlab_refl::{Engine, ReflError};

mod de_map;
mod run;

/// Registers the class and functions on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ReflObjective>()?;
    m.add_class::<de_map::ReflDeRun>()?;
    m.add_function(wrap_pyfunction!(run::refl_fit_task, m)?)?;
    Ok(())
}

/// A library error as a Python exception: bad input (a parameter, a data point, a file's syntax)
/// is a `ValueError` naming the object; a failed backend a `RuntimeError`.
pub(crate) fn refl_err(e: ReflError) -> PyErr {
    match e {
        ReflError::Input(_) | ReflError::Format { .. } | ReflError::NonFinite(_) => PyValueError::new_err(e.to_string()),
        ReflError::Gpu(_) => PyRuntimeError::new_err(e.to_string()),
    }
}

/// The model of a fit task (`refl-oracle-v1-fit`) or of a model file, as the CLI reads either.
pub(crate) fn load_model(text: &str) -> Result<Model, ReflError> {
    // A text with a JSON syntax error is no fit task by its format: parse_json then reports the
    // error at its line and column, as `scatterlab refl fit` does.
    let file = if fit::task::is_fit_task(text) { fit::task::task_to_model(text)? } else { scatterlab_refl::input::parse_json(text, "model file")? };
    Model::new(file)
}

/// `ReflObjective(text, log=False, roughness_limit=None)`: χ² of a fit task or model file
/// (JSON text) over its free parameters, in name order. Picklable (it travels as its text).
#[pyclass(module = "scatterlab._native", frozen)]
pub struct ReflObjective {
    text: String,
    options: ObjectiveOptions,
    model: Model,
    names: Vec<String>,
    bounds: Vec<[f64; 2]>,
    start: Vec<f64>,
    n_points: usize,
}

impl ReflObjective {
    fn objective(&self) -> PyResult<Objective<'_>> {
        Objective::new(&self.model, self.options).map_err(refl_err)
    }

    /// The free vector `x` (1-D float64 of the objective's width, finite) copied out.
    fn vector(&self, x: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
        let (row, _) = crate::convert::floats(x, 1, "x")?;
        if row.len() != self.names.len() {
            return Err(PyValueError::new_err(format!("x has {} values for the objective's {} free parameters ({})", row.len(), self.names.len(), self.names.join(", "))));
        }
        self.check_finite(&row, "x")?;
        Ok(row)
    }

    fn check_finite(&self, row: &[f64], what: &str) -> PyResult<()> {
        match row.iter().position(|v| !v.is_finite()) {
            Some(k) => Err(PyValueError::new_err(format!("{what}: parameter {k} ({}) is {}, not a finite number", self.names[k], row[k]))),
            None => Ok(()),
        }
    }
}

#[pymethods]
impl ReflObjective {
    #[new]
    #[pyo3(signature = (text, log=false, roughness_limit=None))]
    fn new(py: Python<'_>, text: String, log: bool, roughness_limit: Option<f64>) -> PyResult<Self> {
        let options = ObjectiveOptions { log_transform: log, roughness_limit };
        py.detach(move || {
            let model = load_model(&text).map_err(refl_err)?;
            let (names, bounds, start, n_points) = {
                let o = Objective::new(&model, options).map_err(refl_err)?;
                (o.names().iter().map(|s| s.to_string()).collect::<Vec<_>>(), (0..o.dimension()).map(|k| o.bounds(k)).collect::<Vec<_>>(), o.start(), o.n_points())
            };
            Ok(Self { text, options, model, names, bounds, start, n_points })
        })
    }

    /// Rebuilt from its text and options when unpickled (Dask, multiprocessing pools).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyType>, Bound<'py, PyTuple>)> {
        let me = slf.get();
        let args = PyTuple::new(
            slf.py(),
            [
                me.text.clone().into_pyobject(slf.py())?.into_any(),
                me.options.log_transform.into_pyobject(slf.py())?.to_owned().into_any(),
                me.options.roughness_limit.into_pyobject(slf.py())?,
            ],
        )?;
        Ok((slf.get_type(), args))
    }

    /// Names of the free parameters (the columns of a population), in name order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    /// `(p, 2)` array of [lower, upper] bounds (±inf where a parameter has none).
    #[getter]
    fn bounds<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let flat: Vec<f64> = self.bounds.iter().flatten().copied().collect();
        Array2::from_shape_vec((self.bounds.len(), 2), flat).unwrap_or_else(|_| Array2::zeros((0, 2))).into_pyarray(py)
    }

    /// The model's start values of the free parameters.
    #[getter]
    fn start<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        self.start.clone().into_pyarray(py)
    }

    /// Number of data points (χ² at a good fit is about this).
    #[getter]
    fn n_points(&self) -> usize {
        self.n_points
    }

    /// `chi2_batch(population)`: χ² of each row of a `(n, p)` float64 array, one batched engine
    /// call (all cores) with the GIL released. A row with a non-finite value or a width other
    /// than the number of free parameters raises `ValueError` naming it.
    fn chi2_batch<'py>(&self, py: Python<'py>, population: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (values, shape) = crate::convert::floats(population, 2, "population")?;
        let p = shape[1];
        if p != self.names.len() {
            return Err(PyValueError::new_err(format!("population has {p} columns for the objective's {} free parameters ({})", self.names.len(), self.names.join(", "))));
        }
        let mut rows = Vec::with_capacity(shape[0]);
        for (i, row) in values.chunks_exact(p.max(1)).enumerate() {
            self.check_finite(row, &format!("population row {i}"))?;
            rows.push(row.to_vec());
        }
        let chi2 = py.detach(|| -> PyResult<Vec<f64>> {
            if rows.is_empty() {
                return Ok(Vec::new());
            }
            pollster::block_on(self.objective()?.chi2_batch(Engine::Cpu, &rows)).map_err(refl_err)
        })?;
        Ok(chi2.into_pyarray(py))
    }

    /// `residuals(x)`: the weighted residuals (R − M)/σ of every data point (data order), plus
    /// the plausibility rows when a roughness limit is set; Σ r² is χ².
    fn residuals<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (r, _) = self.residuals_and_jacobian(py, x)?;
        Ok(r)
    }

    /// `jacobian(x)`: `(m, p)` array J[i, k] = ∂r_i/∂x_k, exact (forward-mode, f64 CPU).
    fn jacobian<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let (_, j) = self.residuals_and_jacobian(py, x)?;
        Ok(j)
    }

    /// `residuals_and_jacobian(x)`: both from one model evaluation.
    fn residuals_and_jacobian<'py>(&self, py: Python<'py>, x: &Bound<'py, PyAny>) -> PyResult<crate::convert::VectorAndMatrix<'py>> {
        let x = self.vector(x)?;
        let (r, rows) = py.detach(|| self.objective()?.residuals_and_jacobian(&x).map_err(refl_err))?;
        let (m, p) = (r.len(), rows.len());
        let j = Array2::from_shape_fn((m, p), |(i, k)| rows[k][i]);
        Ok((r.into_pyarray(py), j.into_pyarray(py)))
    }
}
