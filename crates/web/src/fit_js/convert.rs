//! JS ⇄ Rust for `Scatterlab.fit`: options (unknown keys rejected by name) and the result object.

use js_sys::{Array, Object, Reflect};
use scatterlab_refl::fit::DeResult;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::fit::{FitMethod, FitOptions, FitOutcome};
use crate::js_value_error;

fn field(obj: &Object, key: &str) -> Result<JsValue, JsError> {
    Reflect::get(obj, &key.into()).map_err(js_value_error)
}

/// A whole number in `min..=2^53`, or `default` when absent.
fn count(obj: &Object, key: &str, default: u64, min: u64) -> Result<u64, JsError> {
    let v = field(obj, key)?;
    if v.is_undefined() {
        return Ok(default);
    }
    match v.as_f64() {
        Some(x) if x.fract() == 0.0 && x >= min as f64 && x <= 9_007_199_254_740_992.0 => Ok(x as u64),
        _ => Err(JsError::new(&format!("fit options.{key}: expected a whole number ≥ {min}, got {v:?}"))),
    }
}

/// Numbers of an array-like, each finite unless `allow_inf`.
fn numbers(v: &JsValue, what: &str, allow_inf: bool) -> Result<Vec<f64>, JsError> {
    if !v.is_object() {
        return Err(JsError::new(&format!("{what}: expected an array of numbers")));
    }
    Array::from(v)
        .iter()
        .enumerate()
        .map(|(i, x)| x.as_f64().filter(|x| allow_inf || x.is_finite()).ok_or_else(|| JsError::new(&format!("{what}[{i}]: expected a finite number, got {x:?}"))))
        .collect()
}

fn parse_state(v: &JsValue) -> Result<DeResult, JsError> {
    let obj: Object = v.clone().dyn_into().map_err(|_| JsError::new("fit options.resume: expected a FitState object"))?;
    let rows = field(&obj, "population")?;
    if !rows.is_object() {
        return Err(JsError::new("fit options.resume.population: expected an array of parameter vectors"));
    }
    let population = Array::from(&rows).iter().enumerate().map(|(i, r)| numbers(&r, &format!("fit options.resume.population[{i}]"), false)).collect::<Result<Vec<_>, _>>()?;
    let energies = numbers(&field(&obj, "energies")?, "fit options.resume.energies", true)?;
    if population.is_empty() || energies.len() != population.len() {
        return Err(JsError::new(&format!("fit options.resume: {} members but {} energies (need as many, at least one)", population.len(), energies.len())));
    }
    let best = energies.iter().enumerate().fold(0, |b, (i, &e)| if e < energies[b] { i } else { b });
    Ok(DeResult {
        x: population[best].clone(),
        chi2: energies[best],
        evaluations: count(&obj, "evaluations", 0, 0).map_err(|_| JsError::new("fit options.resume.evaluations: expected a whole number"))? as usize,
        generations: count(&obj, "generations", 0, 0).map_err(|_| JsError::new("fit options.resume.generations: expected a whole number"))? as usize,
        converged: false,
        population,
        energies,
    })
}

/// Reads `FitOptions` from JS; unknown keys are rejected by name (a typo must not pass silently).
pub(super) fn parse_options(options: Option<Object>) -> Result<FitOptions, JsError> {
    let mut out = FitOptions::default();
    let Some(obj) = options else { return Ok(out) };
    const KEYS: [&str; 7] = ["method", "seed", "maxGenerations", "popsize", "steps", "log", "resume"];
    for key in Object::keys(&obj).iter().filter_map(|k| k.as_string()) {
        if !KEYS.contains(&key.as_str()) {
            return Err(JsError::new(&format!("fit options: unknown option \"{key}\" (expected one of {})", KEYS.join(", "))));
        }
    }
    let method = field(&obj, "method")?;
    out.method = match method.as_string().as_deref() {
        _ if method.is_undefined() => FitMethod::De,
        Some("de") => FitMethod::De,
        Some("lm") => FitMethod::Lm,
        Some("mcmc") => FitMethod::Mcmc,
        _ => return Err(JsError::new(&format!("fit options.method: unknown method {method:?} (expected \"de\", \"lm\" or \"mcmc\")"))),
    };
    out.seed = count(&obj, "seed", out.seed, 0)?;
    out.max_generations = count(&obj, "maxGenerations", out.max_generations as u64, 1)? as usize;
    out.popsize = count(&obj, "popsize", out.popsize as u64, 1)? as usize;
    out.steps = count(&obj, "steps", out.steps as u64, 2)? as usize;
    out.log = field(&obj, "log")?.is_truthy();
    let resume = field(&obj, "resume")?;
    if !resume.is_undefined() && !resume.is_null() {
        out.resume = Some(parse_state(&resume)?);
    }
    Ok(out)
}

fn array(values: &[f64]) -> JsValue {
    values.iter().map(|&v| JsValue::from(v)).collect::<Array>().into()
}

/// The CLI's result fields (plus cancelled/converged/generations/state/model) as a JS object.
pub(super) fn result_object(out: &FitOutcome, device: &str, backend: &str) -> Result<JsValue, JsError> {
    let obj = Object::new();
    let set = |o: &Object, k: &str, v: JsValue| Reflect::set(o, &k.into(), &v).map(|_| ()).map_err(js_value_error);
    let parameters = Object::new();
    for ((name, &value), &stderr) in out.names.iter().zip(&out.x).zip(&out.stderr) {
        let p = Object::new();
        set(&p, "value", value.into())?;
        set(&p, "stderr", stderr.into())?;
        set(&parameters, name, p.into())?;
    }
    set(&obj, "parameters", parameters.into())?;
    set(&obj, "chi2", out.chi2.into())?;
    set(&obj, "n_points", (out.n_points as f64).into())?;
    set(&obj, "evaluations", (out.evaluations as f64).into())?;
    set(&obj, "seconds", out.seconds.into())?;
    set(&obj, "device", device.into())?;
    set(&obj, "method", out.method.name().into())?;
    set(&obj, "backend", backend.into())?;
    set(&obj, "cancelled", out.cancelled.into())?;
    set(&obj, "converged", out.converged.into())?;
    set(&obj, "generations", (out.generations as f64).into())?;
    if let Some(s) = &out.state {
        let state = Object::new();
        set(&state, "population", s.population.iter().map(|x| array(x)).collect::<Array>().into())?;
        set(&state, "energies", array(&s.energies))?;
        set(&state, "evaluations", (s.evaluations as f64).into())?;
        set(&state, "generations", (s.generations as f64).into())?;
        set(&obj, "state", state.into())?;
    }
    set(&obj, "model", out.model_json.as_str().into())?;
    if let Some(m) = &out.mcmc {
        let o = Object::new();
        set(&o, "acceptance_fraction", m.acceptance_fraction.into())?;
        set(&o, "autocorrelation_time", array(&m.autocorrelation_time))?;
        set(&o, "lower_68", array(&m.lower_68))?;
        set(&o, "upper_68", array(&m.upper_68))?;
        set(&o, "lm_value", array(&m.lm_value))?;
        set(&o, "lm_stderr", array(&m.lm_stderr))?;
        set(&o, "samples", (m.samples as f64).into())?;
        set(&o, "sample_values", js_sys::Float64Array::from(m.sample_values.as_slice()).into())?;
        set(&obj, "mcmc", o.into())?;
    }
    Ok(obj.into())
}
