//! The app's side of the npm package's worker protocol (`web/src/protocol.ts`) for fits, as plain
//! Rust on JSON text so it is tested natively: a [`FitRequest`] becomes the worker's `fit` options,
//! and the worker's progress messages and result (the fields of `scatterlab refl fit`'s output plus
//! `state` and `mcmc`) become the app's [`Progress`] and [`FitResult`].
//!
//! The web build runs every fit in that worker (`worker_fit.rs`), so the egui thread only paints;
//! the desktop build runs the same fitters on a thread (`job.rs`) and never uses this module.

use scatterlab_refl::fit::{DeResult, Objective, ObjectiveOptions};
use serde_json::{json, Map, Value};

use super::{DeState, FitRequest, FitResult, McmcSummary, Method, Progress, Stage, Start};

/// The `fit` request's `model` and `options` for `request` (the worker's `FitOptions`).
pub fn fit_options(request: &FitRequest) -> Result<(String, Value), String> {
    let s = &request.settings;
    let model = request.model.to_json(request.model.values()).map_err(|e| e.to_string())?;
    let method = match (&request.start, s.method) {
        (Start::Polish, _) | (_, Method::Lm) => "lm",
        (_, Method::DeLm) => "de",
        (_, Method::Mcmc) => "mcmc",
    };
    // JS numbers hold whole numbers exactly up to 2^53; the worker rejects anything else by name.
    let mut options = json!({
        "method": method,
        "seed": s.seed as f64,
        "maxGenerations": s.max_generations,
        "popsize": s.popsize,
        "steps": s.mcmc_steps.max(2),
        "log": s.log_transform,
    });
    if let (Start::Resume(state), Some(o)) = (&request.start, options.as_object_mut()) {
        let r = &state.result;
        o.insert(
            "resume".into(),
            json!({
                "population": r.population,
                "energies": r.energies,
                "evaluations": r.evaluations,
                "generations": state.generations,
            }),
        );
    }
    Ok((model, options))
}

/// A worker progress message's `progress` object, as the app's [`Progress`].
pub fn progress(p: &Value) -> Option<Progress> {
    let stage = match p.get("method")?.as_str()? {
        "de" => Stage::De,
        "lm" => Stage::Lm,
        "mcmc" => Stage::Mcmc,
        _ => return None,
    };
    let count = |k: &str| p.get(k).and_then(Value::as_f64).map(|v| v.max(0.0) as usize);
    Some(Progress {
        stage,
        iteration: count("iteration")?,
        max_iterations: count("maxIterations")?,
        best_chi2: p.get("bestChi2")?.as_f64()?,
        evaluations: count("evaluations")?,
        // The npm worker reports χ² only, not the vector behind it.
        best_values: None,
    })
}

fn field<'v>(o: &'v Value, k: &str) -> Result<&'v Value, String> {
    o.get(k).ok_or_else(|| format!("the fit worker's result has no \"{k}\""))
}

fn number(o: &Value, k: &str) -> Result<f64, String> {
    field(o, k)?.as_f64().ok_or_else(|| format!("the fit worker's result: \"{k}\" is not a number"))
}

fn numbers(v: &Value, what: &str) -> Result<Vec<f64>, String> {
    v.as_array()
        .ok_or_else(|| format!("the fit worker's result: {what} is not an array"))?
        .iter()
        // JSON has no NaN: JSON.stringify writes null, which reads back as NaN.
        .map(|x| Ok(x.as_f64().unwrap_or(f64::NAN)))
        .collect()
}

/// The worker's result (JSON text, `mcmc.sample_values` taken out and given as `sample_values`,
/// row-major) for `request`, with the χ² at the start values computed by the caller.
pub fn fit_result(json: &str, sample_values: Option<Vec<f64>>, request: &FitRequest, start_chi2: f64) -> Result<FitResult, String> {
    let r: Value = serde_json::from_str(json).map_err(|e| format!("the fit worker's result: {e}"))?;
    let options = ObjectiveOptions { log_transform: request.settings.log_transform, roughness_limit: None };
    let objective = Objective::new(&request.model, options).map_err(|e| e.to_string())?;
    let names: Vec<String> = objective.names().iter().map(|n| n.to_string()).collect();
    let parameters = field(&r, "parameters")?.as_object().cloned().unwrap_or_else(Map::new);
    let (mut x, mut stderr) = (Vec::new(), Vec::new());
    for name in &names {
        let p = parameters.get(name).ok_or_else(|| format!("the fit worker's result lacks parameter {name}"))?;
        x.push(number(p, "value")?);
        stderr.push(p.get("stderr").and_then(Value::as_f64).unwrap_or(f64::NAN));
    }
    let cancelled = field(&r, "cancelled")?.as_bool().unwrap_or(false);
    let de = match r.get("state") {
        Some(s) if !s.is_null() => Some(de_state(s, &r, names.len())?),
        _ => None,
    };
    let mcmc = match r.get("mcmc") {
        Some(m) if !m.is_null() => Some(mcmc_summary(m, &x, sample_values, names.len())?),
        _ => None,
    };
    let mut notes = Vec::new();
    if request.settings.method == Method::Mcmc && mcmc.is_none() && cancelled {
        notes.push("MCMC cancelled before the end of burn-in: showing the LM result".to_owned());
    }
    let values = objective.full(&x);
    Ok(FitResult {
        method: request.settings.method,
        names,
        values,
        stderr: stderr.iter().all(|s| s.is_finite()).then_some(stderr),
        x,
        chi2: number(&r, "chi2")?,
        start_chi2,
        n_points: number(&r, "n_points")? as usize,
        evaluations: number(&r, "evaluations")? as usize,
        seconds: number(&r, "seconds")?,
        engine: format!("web worker: {}", field(&r, "backend")?.as_str().unwrap_or("?")),
        de,
        mcmc,
        cancelled,
        notes,
    })
}

/// The result's `state` as the app's resumable [`DeState`] (best member = lowest χ²).
fn de_state(s: &Value, r: &Value, dim: usize) -> Result<DeState, String> {
    let population: Vec<Vec<f64>> = field(s, "population")?
        .as_array()
        .ok_or("the fit worker's state: population is not an array")?
        .iter()
        .map(|m| numbers(m, "a population member"))
        .collect::<Result<_, _>>()?;
    let energies = numbers(field(s, "energies")?, "state.energies")?;
    if population.len() != energies.len() || population.iter().any(|m| m.len() != dim) {
        return Err(format!("the fit worker's state: {} members, {} energies, {dim} parameters do not match", population.len(), energies.len()));
    }
    let best = (0..energies.len()).min_by(|&a, &b| energies[a].total_cmp(&energies[b])).ok_or("the fit worker's state has an empty population")?;
    let generations = number(s, "generations")? as usize;
    let converged = r.get("converged").and_then(Value::as_bool).unwrap_or(false);
    Ok(DeState {
        result: DeResult { x: population[best].clone(), chi2: energies[best], evaluations: number(s, "evaluations")? as usize, generations, converged, population, energies },
        generations,
        converged,
    })
}

/// The result's `mcmc` summary with its samples (values = medians, as the worker reports them).
fn mcmc_summary(m: &Value, median: &[f64], values: Option<Vec<f64>>, dim: usize) -> Result<McmcSummary, String> {
    let values = values.unwrap_or_default();
    if dim == 0 || !values.len().is_multiple_of(dim) {
        return Err(format!("the fit worker's samples: {} values are not rows of {dim}", values.len()));
    }
    let samples = (0..dim).map(|k| values.iter().skip(k).step_by(dim).copied().collect()).collect();
    Ok(McmcSummary {
        samples,
        median: median.to_vec(),
        lower_68: numbers(field(m, "lower_68")?, "mcmc.lower_68")?,
        upper_68: numbers(field(m, "upper_68")?, "mcmc.upper_68")?,
        acceptance_fraction: number(m, "acceptance_fraction")?,
        autocorrelation_time: numbers(field(m, "autocorrelation_time")?, "mcmc.autocorrelation_time")?,
    })
}
