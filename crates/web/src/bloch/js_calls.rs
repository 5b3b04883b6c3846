//! The Bloch calls of the JS handle: `blochSimulate`, `blochSimulateCases`, `blochRefine` and
//! `blochRocking` (helpers and the stepped runs' host in `js.rs`). A `device: "gpu"` option gets
//! the worker's kernel first ([`acquire`]): no adapter rejects naming device "gpu".

use std::rc::Rc;

use js_sys::{Array, Function, Object};
use scatterlab_core::CancelToken;
use wasm_bindgen::prelude::*;

use super::cases::{self, simulate_cases};
use super::engine::{acquire, Engine, GpuKernel};
use super::js::{set, texts, JsStepHost};
use super::refine::run_refine;
use super::rocking::{self, run_rocking};
use super::simulate::{self, simulate};
use crate::options::to_json;
use crate::{describe_js, js_value_error, Backend, Scatterlab};
use scatterlab_bloch::beams::Hkl;
use scatterlab_bloch::tilt_series::TiltAxis;

fn int32(hkl: &[Hkl]) -> JsValue {
    js_sys::Int32Array::from(hkl.concat().as_slice()).into()
}

fn float64(values: &[f64]) -> JsValue {
    js_sys::Float64Array::from(values).into()
}

impl Scatterlab {
    /// The kernel for `engine` when it is the GPU (on this handle's device when it has one).
    async fn bloch_gpu(&self, engine: Engine, op: &str) -> Result<Option<Rc<GpuKernel>>, JsError> {
        if engine != Engine::Gpu {
            return Ok(None);
        }
        let handle_ctx = match &self.session.backend {
            Backend::Gpu(pipeline) => Some(pipeline.context()),
            Backend::Cpu => None,
        };
        acquire(handle_ctx, op).await.map(Some).map_err(|e| JsError::new(&e))
    }
}

/// `device`, `solver` and `backend` of a result.
fn set_engine(out: &Object, engine: Engine, gpu: Option<&GpuKernel>) -> Result<(), JsError> {
    set(out, "device", &engine.device().into())?;
    set(out, "solver", &engine.solver().into())?;
    set(out, "backend", &gpu.map_or_else(|| "cpu f64".to_owned(), |k| k.describe.clone()).as_str().into())
}

#[wasm_bindgen]
impl Scatterlab {
    /// Simulates one static zone-axis case of the crystal in `cif` (CIF text), as `scatterlab
    /// bloch simulate --cif … --kv … --zone … --thickness …` does, diffBloch's conventions: on
    /// `options.device` `"cpu"` (default, f64, whatever the handle's device) or `"gpu"` (WebGPU,
    /// f32). Returns `{id, hkl (Int32Array, n×3), intensities (Float64Array, thickness-major),
    /// thicknesses, gXY, nBeams, solver, device, backend, seconds}`. Throws an `Error` naming a bad
    /// option (`"blochSimulate: options.kv must be a finite number (got NaN)"`), a bad CIF, a
    /// missing GPU or a failed solve.
    #[wasm_bindgen(js_name = blochSimulate, unchecked_return_type = "BlochSimulation")]
    pub async fn bloch_simulate(&self, cif: String, #[wasm_bindgen(unchecked_param_type = "BlochSimulateOptions")] options: JsValue) -> Result<JsValue, JsError> {
        let started = js_sys::Date::now();
        let options = to_json(&options, "options", "blochSimulate")?;
        let o = simulate::parse_options(&options).map_err(|e| JsError::new(&e))?;
        let gpu = self.bloch_gpu(o.engine, "blochSimulate").await?;
        let s = simulate(&cif, &o, gpu.as_deref()).await.map_err(|e| JsError::new(&e))?;
        let out = Object::new();
        set(&out, "id", &s.id.as_str().into())?;
        set(&out, "hkl", &int32(&s.hkl))?;
        set(&out, "intensities", &float64(&s.intensities))?;
        set(&out, "thicknesses", &float64(&s.thicknesses))?;
        set(&out, "gXY", &float64(&s.g_xy))?;
        set(&out, "nBeams", &(s.hkl.len() as f64).into())?;
        set_engine(&out, s.engine, gpu.as_deref())?;
        set(&out, "seconds", &((js_sys::Date::now() - started) / 1e3).into())?;
        Ok(out.into())
    }

    /// Runs the cases of a Bloch cases file (`cases`: its JSON text, the format of `scatterlab
    /// bloch simulate <cases.json>`, e.g. the fixture's `reference.json`) on `options.device`
    /// (`"cpu"` default or `"gpu"`), the ones named in `options.ids` (default all). Resolves to
    /// one `{id, hkl, intensities, thicknesses, nBeams, device, solver, backend}` per case, or
    /// `{id, error}` for a case that failed (the others still run); rejects naming an unreadable
    /// file, an unknown id or a bad option.
    #[wasm_bindgen(js_name = blochSimulateCases, unchecked_return_type = "BlochCaseResult[]")]
    pub async fn bloch_simulate_cases(
        &self,
        cases: String,
        #[wasm_bindgen(unchecked_param_type = "BlochCasesOptions | null | undefined")] options: JsValue,
    ) -> Result<JsValue, JsError> {
        let options = to_json(&options, "options", "blochSimulateCases")?;
        let o = cases::parse_options(&options).map_err(|e| JsError::new(&e))?;
        let gpu = self.bloch_gpu(o.engine, "blochSimulateCases").await?;
        let results = simulate_cases(&cases, &o, gpu.as_deref()).await.map_err(|e| JsError::new(&e))?;
        let list = Array::new();
        for r in results {
            let out = Object::new();
            set(&out, "id", &r.id.as_str().into())?;
            match &r.error {
                Some(e) => set(&out, "error", &e.as_str().into())?,
                None => {
                    set(&out, "hkl", &int32(&r.hkl))?;
                    set(&out, "intensities", &float64(&r.intensities))?;
                    set(&out, "thicknesses", &float64(&r.thicknesses))?;
                    set(&out, "nBeams", &(r.hkl.len() as f64).into())?;
                    set_engine(&out, o.engine, gpu.as_deref())?;
                }
            }
            list.push(&out);
        }
        Ok(list.into())
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
        let mut host = JsStepHost::new(on_progress, signal, &cancel);
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

    /// A tilt series of `blochSimulate`'s case: `options` are its options plus `tilts` (`{axis:
    /// "x" | "y", fromDeg, toDeg, n}` or `{axis, anglesDeg}`, offsets added to `options.tilt`);
    /// each tilt is solved as its own static case, one per return to the event loop, on
    /// `options.device`. `onProgress` gets `{done, total, seconds}` after every tilt (a returned
    /// Promise is awaited); an `abort()` on `signal` stops the sweep after the tilt in progress
    /// and resolves with the tilts done and `cancelled: true`. Resolves to `{id, hkl (union of
    /// the tilts' beams), intensities ([tilt][thickness][beam], 0 where a beam is absent at a
    /// tilt), tilts (offsets, degrees), thicknesses, nBeams, nTilts, axis, device, solver,
    /// backend, cancelled, seconds}`.
    #[wasm_bindgen(js_name = blochRocking, unchecked_return_type = "BlochRocking")]
    pub async fn bloch_rocking(
        &self,
        cif: String,
        #[wasm_bindgen(unchecked_param_type = "BlochRockingOptions")] options: JsValue,
        #[wasm_bindgen(unchecked_param_type = "((progress: BlochRockingProgress) => unknown) | null | undefined")] on_progress: Option<Function>,
        #[wasm_bindgen(unchecked_param_type = "AbortSignal | null | undefined")] signal: Option<Object>,
    ) -> Result<JsValue, JsError> {
        let started = js_sys::Date::now();
        let options = to_json(&options, "options", "blochRocking")?;
        let o = rocking::parse_options(&options).map_err(|e| JsError::new(&e))?;
        let gpu = self.bloch_gpu(o.sim.engine, "blochRocking").await?;
        let cancel = CancelToken::new();
        let mut host = JsStepHost::new(on_progress, signal, &cancel);
        let answer = run_rocking(&cif, &o, gpu.as_deref(), &mut host, &cancel).await;
        if let Some(e) = host.error {
            return Err(JsError::new(&format!("blochRocking: onProgress threw: {}", describe_js(&e))));
        }
        let a = answer.map_err(|e| JsError::new(&e))?;
        let out = Object::new();
        set(&out, "id", &a.id.as_str().into())?;
        set(&out, "hkl", &int32(&a.series.hkl()))?;
        set(&out, "intensities", &float64(&a.series.intensities()))?;
        set(&out, "tilts", &float64(&a.series.tilts()))?;
        set(&out, "thicknesses", &float64(&a.thicknesses))?;
        set(&out, "nBeams", &(a.series.n_beams() as f64).into())?;
        set(&out, "nTilts", &(a.series.len() as f64).into())?;
        set(&out, "axis", &(if a.axis == TiltAxis::X { "x" } else { "y" }).into())?;
        set_engine(&out, a.engine, gpu.as_deref())?;
        set(&out, "cancelled", &a.cancelled.into())?;
        set(&out, "seconds", &((js_sys::Date::now() - started) / 1e3).into())?;
        Ok(out.into())
    }
}
