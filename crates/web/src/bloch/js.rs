//! `Scatterlab.blochSimulate` and `Scatterlab.blochRefine` for JavaScript: options read as JSON
//! (non-finite numbers kept so that the parser names them), progress through a callback, cancel
//! through an `AbortSignal` seen between refinement steps.

use std::collections::BTreeMap;

use js_sys::{Array, Function, Object, Promise, Reflect};
use scatterlab_core::CancelToken;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::options::NON_FINITE;
use super::refine::{run_refine, RefineHost, RefineProgress};
use super::simulate::simulate;
use crate::fit_js::EventLoop;
use crate::{describe_js, js_value_error, Scatterlab};

/// A JS value as JSON for the option parsers: a non-finite number becomes the string
/// [`NON_FINITE`]` + "NaN"` (so the parser names it), `undefined` is `null`; a function or symbol
/// is an error naming its place (`{op}: options.x`).
fn to_json(v: &JsValue, name: &str, op: &str) -> Result<Value, JsError> {
    if v.is_undefined() || v.is_null() {
        return Ok(Value::Null);
    }
    if let Some(x) = v.as_f64() {
        return Ok(serde_json::Number::from_f64(x).map_or_else(|| Value::String(format!("{NON_FINITE}{x}")), Value::Number));
    }
    if let Some(b) = v.as_bool() {
        return Ok(Value::Bool(b));
    }
    if let Some(s) = v.as_string() {
        return Ok(Value::String(s));
    }
    // Arrays and typed arrays (`thicknesses: new Float64Array(…)`) alike.
    if Array::is_array(v) || v.is_instance_of::<js_sys::Float64Array>() || v.is_instance_of::<js_sys::Int32Array>() || v.is_instance_of::<js_sys::Float32Array>() {
        return Array::from(v).iter().enumerate().map(|(i, x)| to_json(&x, &format!("{name}[{i}]"), op)).collect::<Result<Vec<_>, _>>().map(Value::Array);
    }
    if v.is_object() && !v.is_function() {
        let mut map = serde_json::Map::new();
        for entry in Object::entries(v.unchecked_ref()).iter() {
            let pair: Array = entry.unchecked_into();
            let key = pair.get(0).as_string().unwrap_or_default();
            map.insert(key.clone(), to_json(&pair.get(1), &format!("{name}.{key}"), op)?);
        }
        return Ok(Value::Object(map));
    }
    Err(JsError::new(&format!("{op}: {name} is not a JSON value (a function or symbol)")))
}

fn set(obj: &Object, key: &str, value: &JsValue) -> Result<(), JsError> {
    Reflect::set(obj, &JsValue::from_str(key), value).map(|_| ()).map_err(js_value_error)
}

/// `{name: text}` of the JS call; a value that is not text is an error naming its file.
fn texts(files: &Object) -> Result<BTreeMap<String, String>, JsError> {
    let mut out = BTreeMap::new();
    for entry in Object::entries(files).iter() {
        let pair: Array = entry.unchecked_into();
        let name = pair.get(0).as_string().unwrap_or_default();
        let text = pair.get(1).as_string().ok_or_else(|| JsError::new(&format!("blochRefine: files[{name:?}] must be the file's text (read a File with file.text())")))?;
        out.insert(name, text);
    }
    Ok(out)
}

/// The browser side of [`RefineHost`]: JS progress callback, `AbortSignal`, the event loop, `Date.now`.
struct JsRefineHost {
    on_progress: Option<Function>,
    signal: Option<Object>,
    cancel: CancelToken,
    /// What the progress callback last returned, if a Promise: awaited at the next pause.
    pending: Option<Promise>,
    /// The first exception thrown by the callback; it ends the run.
    error: Option<JsValue>,
    event_loop: EventLoop,
}

impl JsRefineHost {
    fn check_signal(&self) {
        let aborted = self.signal.as_ref().is_some_and(|s| Reflect::get(s, &"aborted".into()).is_ok_and(|v| v.is_truthy()));
        if aborted || self.error.is_some() {
            self.cancel.cancel();
        }
    }
}

impl RefineHost for JsRefineHost {
    fn progress(&mut self, p: &RefineProgress) {
        if let Some(f) = &self.on_progress {
            let obj = Object::new();
            let entries: [(&str, f64); 6] = [
                ("iteration", p.iteration as f64),
                ("maxIterations", p.max_iterations as f64),
                ("evaluations", p.evaluations as f64),
                ("wR2", p.wr2),
                ("cost", p.cost),
                ("seconds", p.seconds),
            ];
            for (k, v) in entries {
                let _ = Reflect::set(&obj, &k.into(), &v.into());
            }
            match f.call1(&JsValue::NULL, &obj) {
                Ok(ret) => self.pending = ret.dyn_into::<Promise>().ok(),
                Err(e) => {
                    self.error.get_or_insert(e);
                }
            }
        }
        self.check_signal();
    }

    async fn pause(&mut self) {
        if let Some(p) = self.pending.take() {
            if let Err(e) = JsFuture::from(p).await {
                self.error.get_or_insert(e);
            }
        }
        // Every pause turns the loop: a step solves every frame several times (≫ a yield's cost).
        self.event_loop.turn().await;
        self.check_signal();
    }

    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}

#[wasm_bindgen]
impl Scatterlab {
    /// Simulates one static zone-axis case of the crystal in `cif` (CIF text), as `scatterlab
    /// bloch simulate --cif … --kv … --zone … --thickness …` does: CPU f64 whatever the handle's
    /// device, diffBloch's conventions. Returns `{id, hkl (Int32Array, n×3), intensities
    /// (Float64Array, thickness-major), thicknesses, gXY, nBeams, solver, device, seconds}`.
    /// Throws an `Error` naming a bad option (`"blochSimulate: options.kv must be a finite
    /// number (got NaN)"`), a bad CIF or a failed solve.
    #[wasm_bindgen(js_name = blochSimulate, unchecked_return_type = "BlochSimulation")]
    pub fn bloch_simulate(&self, cif: String, #[wasm_bindgen(unchecked_param_type = "BlochSimulateOptions")] options: JsValue) -> Result<JsValue, JsError> {
        let started = js_sys::Date::now();
        let options = to_json(&options, "options", "blochSimulate")?;
        let s = simulate(&cif, &options).map_err(|e| JsError::new(&e))?;
        let out = Object::new();
        let hkl: Vec<i32> = s.hkl.concat();
        set(&out, "id", &s.id.as_str().into())?;
        set(&out, "hkl", &js_sys::Int32Array::from(hkl.as_slice()).into())?;
        set(&out, "intensities", &js_sys::Float64Array::from(s.intensities.as_slice()).into())?;
        set(&out, "thicknesses", &js_sys::Float64Array::from(s.thicknesses.as_slice()).into())?;
        set(&out, "gXY", &js_sys::Float64Array::from(s.g_xy.as_slice()).into())?;
        set(&out, "nBeams", &(s.hkl.len() as f64).into())?;
        set(&out, "solver", &(if s.solver == scatterlab_bloch::solve::Solver::Eigen { "eigen" } else { "expm" }).into())?;
        set(&out, "device", &"cpu".into())?;
        set(&out, "seconds", &((js_sys::Date::now() - started) / 1e3).into())?;
        Ok(out.into())
    }

    /// Refines the start structure of a diffBloch experiment against its PETS intensities, as
    /// `scatterlab bloch refine` does (CPU f64). `files` maps file names to texts: the experiment
    /// YAML and the two files it names. `onProgress` gets `{iteration, maxIterations, evaluations,
    /// wR2, cost, seconds}` after the start point and after every iteration; if it returns a
    /// Promise, the run awaits it. The run returns to the event loop after every iteration, so an
    /// `abort()` on `signal` takes effect there: it resolves with the structure reached and
    /// `cancelled: true`. Resolves to `{result (result.json), refinedCif, csv, cancelled,
    /// warnings}`; rejects naming a bad option, a missing file or the file and item at fault.
    #[wasm_bindgen(js_name = blochRefine, unchecked_return_type = "BlochRefineResult")]
    pub async fn bloch_refine(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string>")] files: Object,
        #[wasm_bindgen(unchecked_param_type = "BlochRefineOptions | null | undefined")] options: JsValue,
        #[wasm_bindgen(unchecked_param_type = "((progress: BlochRefineProgress) => unknown) | null | undefined")] on_progress: Option<Function>,
        #[wasm_bindgen(unchecked_param_type = "AbortSignal | null | undefined")] signal: Option<Object>,
    ) -> Result<JsValue, JsError> {
        let options = to_json(&options, "options", "blochRefine")?;
        let files = texts(&files)?;
        let cancel = CancelToken::new();
        let mut host = JsRefineHost { on_progress, signal, cancel: cancel.clone(), pending: None, error: None, event_loop: EventLoop::new() };
        host.check_signal();
        let answer = run_refine(&files, &options, &mut host, &cancel).await;
        if let Some(e) = host.error {
            return Err(JsError::new(&format!("blochRefine: onProgress threw: {}", describe_js(&e))));
        }
        let a = answer.map_err(|e| JsError::new(&e))?;
        let out = Object::new();
        set(&out, "result", &js_sys::JSON::parse(&a.result.to_string()).map_err(js_value_error)?)?;
        set(&out, "refinedCif", &a.refined_cif.as_str().into())?;
        set(&out, "csv", &a.csv.as_str().into())?;
        set(&out, "cancelled", &a.cancelled.into())?;
        set(&out, "warnings", &a.warnings.iter().map(|w| JsValue::from_str(w)).collect::<Array>().into())?;
        Ok(out.into())
    }
}
