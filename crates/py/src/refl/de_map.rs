//! `ReflDeRun`: the DE of `refl_fit_task(method="de")` with χ² evaluated by the caller, one
//! generation at a time, so `scatterlab.refl.fit_task(map=...)` spreads each generation's trial
//! vectors over Dask workers. The random stream, the selection and the stop rule stay in Rust
//! (`DeRun::start_population` / `start_evaluated`, `trials` / `accept`), so the fit equals the
//! in-process one whenever the caller's χ² equal `chi2_batch`'s. The GIL is released while Rust runs.

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scatterlab_refl::fit::{DeOptions, DeRun, Objective, ObjectiveOptions};
use scatterlab_refl::model::Model;

use super::{load_model, refl_err};

/// `ReflDeRun(text, seed=1, log=False)`: a DE run of the task or model file `text` (JSON) with
/// the CLI's options. Loop: `rows = pending()`; while it is not None, `accept(χ² of each row)`;
/// then `finish()` polishes with LM in-process and returns `refl_fit_task`'s result dict.
#[pyclass(module = "scatterlab._native")]
pub struct ReflDeRun {
    model: Model,
    objective_options: ObjectiveOptions,
    de_options: DeOptions,
    /// None until the start population's χ² have been accepted.
    run: Option<DeRun>,
    /// The rows awaiting χ² (parameter units): the start population, then each generation's
    /// trial vectors; empty once the run is done.
    pending: Vec<Vec<f64>>,
}

impl ReflDeRun {
    fn objective(&self) -> PyResult<Objective<'_>> {
        Objective::new(&self.model, self.objective_options).map_err(refl_err)
    }

    /// Accepts `energies` for the pending rows and builds the next rows (none when done). On an
    /// error nothing changes (`DeRun::accept` checks before it selects).
    fn advance(&mut self, energies: Vec<f64>) -> PyResult<()> {
        let rows = self.pending.clone();
        let run = match self.run.take() {
            Some(mut run) => {
                let accepted = run.accept(rows, energies).map_err(refl_err);
                self.run = Some(run);
                accepted?;
                self.run.take()
            }
            None => Some(DeRun::start_evaluated(&self.objective()?, &self.de_options, rows, energies).map_err(refl_err)?),
        };
        if let Some(run) = run {
            self.pending = if run.is_done() { Vec::new() } else { run.trials() };
            self.run = Some(run);
        }
        Ok(())
    }
}

#[pymethods]
impl ReflDeRun {
    #[new]
    #[pyo3(signature = (text, seed=1, log=false))]
    fn new(py: Python<'_>, text: String, seed: u64, log: bool) -> PyResult<Self> {
        let objective_options = ObjectiveOptions { log_transform: log, roughness_limit: None };
        // The options of `refl_fit_task` (and of `scatterlab refl fit`).
        let de_options = DeOptions { seed, ..Default::default() };
        py.detach(move || {
            let model = load_model(&text).map_err(refl_err)?;
            let pending = DeRun::start_population(&Objective::new(&model, objective_options).map_err(refl_err)?, &de_options).map_err(refl_err)?;
            Ok(Self { model, objective_options, de_options, run: None, pending })
        })
    }

    /// The `(n, p)` rows whose χ² the run needs next (the start population, then a generation's
    /// trial vectors, columns in name order), or None when DE is done.
    fn pending<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let (n, p) = (self.pending.len(), self.pending[0].len());
        let flat: Vec<f64> = self.pending.iter().flatten().copied().collect();
        let a = Array2::from_shape_vec((n, p), flat).map_err(|e| PyValueError::new_err(format!("differential evolution pending rows: {e}")))?;
        Ok(Some(a.into_pyarray(py)))
    }

    /// `accept(chi2)`: the χ² of each pending row, in row order (1-D float64; NaN ranks last).
    /// A count other than the number of pending rows raises `ValueError` and changes nothing.
    fn accept(&mut self, py: Python<'_>, chi2: &Bound<'_, PyAny>) -> PyResult<()> {
        let (energies, _) = crate::convert::floats(chi2, 1, "chi2")?;
        if self.pending.is_empty() {
            return Err(PyValueError::new_err("differential evolution: the run is done, no rows await χ²"));
        }
        if energies.len() != self.pending.len() {
            return Err(PyValueError::new_err(format!("differential evolution: {} χ² values for {} pending rows", energies.len(), self.pending.len())));
        }
        py.detach(|| self.advance(energies))
    }

    /// Whether DE is done (converged or at its generation limit).
    #[getter]
    fn done(&self) -> bool {
        self.pending.is_empty()
    }

    /// `finish()`: once done, polishes DE's best member with LM in-process, as `refl_fit_task`
    /// does, and returns its result dict (method "de").
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let run = match (&self.run, self.pending.is_empty()) {
            (Some(run), true) => run.clone(),
            _ => return Err(PyValueError::new_err("differential evolution: not done yet (rows still await χ²)")),
        };
        let out = py.detach(|| -> PyResult<_> {
            let de = run.finish().map_err(refl_err)?;
            super::run::finish_de(&self.objective()?, &de)
        })?;
        super::run::to_dict(py, out, "de")
    }
}
