//! `refl_fit_task`: a whole fit as `scatterlab refl fit` runs it on the CPU (crates/cli/src/refl_fit.rs):
//! DE seeded with `seed`, polished by LM, the better of the two kept; LM alone from the start
//! values; or DE + LM then the ensemble sampler. The same seed gives the CLI's numbers, so whole
//! fits spread over Dask workers with `client.map` equal sequential CLI runs.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{self, DeOptions, DeResult, FitProgress, LmOptions, LmResult, McmcOptions, Objective, ObjectiveOptions};
use scatterlab_refl::Engine;

use super::{load_model, refl_err};

/// What one fit produced (the CLI's result file, less its timing and device).
pub(super) struct Outcome {
    names: Vec<String>,
    x: Vec<f64>,
    stderr: Vec<f64>,
    chi2: f64,
    n_points: usize,
    evaluations: usize,
    generations: Option<usize>,
    stops: Vec<String>,
    /// MCMC: acceptance, autocorrelation times, 68 % bounds, the LM values it started from.
    mcmc: Option<McmcSummary>,
}

impl Outcome {
    /// Nothing fitted yet: the objective's names and point count.
    fn new(objective: &Objective<'_>) -> Self {
        let names = objective.names().iter().map(|s| s.to_string()).collect();
        Outcome { names, x: Vec::new(), stderr: Vec::new(), chi2: f64::NAN, n_points: objective.n_points(), evaluations: 0, generations: None, stops: Vec::new(), mcmc: None }
    }
}

struct McmcSummary {
    acceptance_fraction: f64,
    autocorrelation_time: Vec<f64>,
    lower_68: Vec<f64>,
    upper_68: Vec<f64>,
    lm_value: Vec<f64>,
    lm_stderr: Vec<f64>,
    samples: usize,
}

fn lm_stop(r: &LmResult, options: &LmOptions) -> String {
    if r.iterations >= options.max_iterations {
        format!("LM stopped at its iteration limit ({})", r.iterations)
    } else {
        format!("LM converged in {} iterations", r.iterations)
    }
}

/// The CLI's `refl fit` run, step for step (CPU f64 engine).
fn run(text: &str, method: &str, seed: u64, log: bool, steps: usize) -> PyResult<Outcome> {
    let model = load_model(text).map_err(refl_err)?;
    let objective = Objective::new(&model, ObjectiveOptions { log_transform: log, roughness_limit: None }).map_err(refl_err)?;
    let (engine, cancel, lm_options) = (Engine::Cpu, CancelToken::new(), LmOptions::default());
    let mut progress = |_: &FitProgress| {};
    let mut out = Outcome::new(&objective);
    match method {
        "lm" => {
            let r = fit::levenberg_marquardt(&objective, &objective.start(), &lm_options, &mut progress, &cancel).map_err(refl_err)?;
            out.stops.push(lm_stop(&r, &lm_options));
            (out.x, out.stderr, out.chi2, out.evaluations) = (r.x, r.stderr, r.chi2, r.evaluations);
        }
        "de" | "mcmc" => {
            let de =
                pollster::block_on(fit::differential_evolution(&objective, engine, &DeOptions { seed, ..Default::default() }, None, &mut progress, &cancel)).map_err(refl_err)?;
            let (x, chi2, lm) = polish(&objective, &de, &mut out)?;
            if method == "de" {
                (out.x, out.stderr, out.chi2, out.evaluations) = (x, lm.stderr, chi2, de.evaluations + lm.evaluations);
            } else {
                let options = McmcOptions { steps, burn: steps / 4, seed, ..Default::default() };
                let m = pollster::block_on(fit::ensemble_sampler(&objective, engine, &x, &lm.stderr, &options, &mut progress, &cancel)).map_err(refl_err)?;
                out.stops.push(format!("MCMC {steps} steps, acceptance {:.2}", m.acceptance_fraction));
                let chi2_median = pollster::block_on(objective.chi2_batch(Engine::Cpu, std::slice::from_ref(&m.median))).map_err(refl_err)?[0];
                out.stderr = m.upper_68.iter().zip(&m.lower_68).map(|(u, l)| 0.5 * (u - l)).collect();
                out.mcmc = Some(McmcSummary {
                    acceptance_fraction: m.acceptance_fraction,
                    autocorrelation_time: m.autocorrelation_time.clone(),
                    lower_68: m.lower_68.clone(),
                    upper_68: m.upper_68.clone(),
                    lm_value: x,
                    lm_stderr: lm.stderr,
                    samples: m.samples.len(),
                });
                (out.x, out.chi2, out.evaluations) = (m.median, chi2_median, de.evaluations + lm.evaluations + m.evaluations);
            }
        }
        other => return Err(PyValueError::new_err(format!("method '{other}': expected 'de', 'lm' or 'mcmc'"))),
    }
    checked(out)
}

/// The CLI's LM polish of a DE result: records DE's and LM's stops and the generations in `out`
/// and returns the better of the two (x, χ²) with the LM result (its stderr is reported).
fn polish(objective: &Objective<'_>, de: &DeResult, out: &mut Outcome) -> PyResult<(Vec<f64>, f64, LmResult)> {
    let lm_options = LmOptions::default();
    let lm = fit::levenberg_marquardt(objective, &de.x, &lm_options, &mut |_: &FitProgress| {}, &CancelToken::new()).map_err(refl_err)?;
    out.stops.push(if de.converged { format!("DE converged in {} generations", de.generations) } else { format!("DE stopped at its generation limit ({})", de.generations) });
    out.stops.push(lm_stop(&lm, &lm_options));
    out.generations = Some(de.generations);
    let (x, chi2) = if lm.chi2 <= de.chi2 { (lm.x.clone(), lm.chi2) } else { (de.x.clone(), de.chi2) };
    Ok((x, chi2, lm))
}

/// Method "de" after a DE run driven elsewhere (the `map=` hook): the LM polish in-process, as
/// [`refl_fit_task`] does after its own DE.
pub(super) fn finish_de(objective: &Objective<'_>, de: &DeResult) -> PyResult<Outcome> {
    let mut out = Outcome::new(objective);
    let (x, chi2, lm) = polish(objective, de, &mut out)?;
    (out.x, out.stderr, out.chi2, out.evaluations) = (x, lm.stderr, chi2, de.evaluations + lm.evaluations);
    checked(out)
}

/// As the CLI: never a silent NaN in a result.
fn checked(out: Outcome) -> PyResult<Outcome> {
    if !out.chi2.is_finite() {
        return Err(PyValueError::new_err(format!("the fit ended with a non-finite χ² ({}); the data or the model overflow at the fitted parameters", out.chi2)));
    }
    if let Some((name, v)) = out.names.iter().zip(&out.x).find(|(_, v)| !v.is_finite()) {
        return Err(PyValueError::new_err(format!("the fit ended with a non-finite value of parameter '{name}' ({v})")));
    }
    Ok(out)
}

/// `refl_fit_task(text, method="de", seed=1, log=False, steps=2000) -> dict`: fits the task or
/// model file `text` (JSON) as `scatterlab refl fit --device cpu` does and returns its result:
/// `parameters` ({name: {value, stderr}}), `chi2`, `n_points`, `evaluations`, `generations`
/// (DE), `method`, `backend`, `stops` and, for mcmc, `mcmc`. Runs with the GIL released.
#[pyfunction]
#[pyo3(signature = (text, method="de", seed=1, log=false, steps=2000))]
pub fn refl_fit_task<'py>(py: Python<'py>, text: &str, method: &str, seed: u64, log: bool, steps: usize) -> PyResult<Bound<'py, PyDict>> {
    if method == "mcmc" && steps == 0 {
        return Err(PyValueError::new_err("steps: MCMC needs at least one step"));
    }
    let out = py.detach(|| run(text, method, seed, log, steps))?;
    to_dict(py, out, method)
}

/// The result dict of [`refl_fit_task`] (the CLI's result file's fields).
pub(super) fn to_dict<'py>(py: Python<'py>, out: Outcome, method: &str) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let params = PyDict::new(py);
    for ((name, value), stderr) in out.names.iter().zip(&out.x).zip(&out.stderr) {
        let p = PyDict::new(py);
        p.set_item("value", value)?;
        p.set_item("stderr", stderr)?;
        params.set_item(name, p)?;
    }
    d.set_item("parameters", params)?;
    d.set_item("chi2", out.chi2)?;
    d.set_item("n_points", out.n_points)?;
    d.set_item("evaluations", out.evaluations)?;
    if let Some(g) = out.generations {
        d.set_item("generations", g)?;
    }
    d.set_item("method", method)?;
    d.set_item("backend", "cpu f64")?;
    d.set_item("stops", out.stops)?;
    if let Some(m) = out.mcmc {
        let s = PyDict::new(py);
        s.set_item("acceptance_fraction", m.acceptance_fraction)?;
        s.set_item("autocorrelation_time", m.autocorrelation_time)?;
        s.set_item("lower_68", m.lower_68)?;
        s.set_item("upper_68", m.upper_68)?;
        s.set_item("lm_value", m.lm_value)?;
        s.set_item("lm_stderr", m.lm_stderr)?;
        s.set_item("samples", m.samples)?;
        d.set_item("mcmc", s)?;
    }
    Ok(d)
}
