//! The wasm-bindgen surface of the `scatterlab` npm package.
//!
//! One small handle, [`Scatterlab`], created for one device that the caller chooses:
//! `"cpu"` (the f64 recursion of [`scatterlab_refl::cpu`]) or `"gpu"` (the f32 WGSL kernel
//! `shaders/refl/parratt.wgsl` on WebGPU). There is no silent fallback: asking for `"gpu"` where
//! WebGPU has no adapter is an error that says so.
//!
//! From JavaScript (wasm-bindgen `--target web` output in `dist/pkg/`):
//! ```js
//! import init, { Scatterlab } from "./scatterlab_web.js";
//! await init();
//! const lab = await Scatterlab.create("gpu");
//! const { R_s, R_p, device } = await lab.reflectivity(8047.8, q, thickness, roughness,
//!                                                     delta_o, beta_o, delta_e, beta_e);
//! ```
//! Bad inputs reject with a JS `Error` whose message names the offending object
//! (`"layer 1 thickness: not a finite number (NaN)"`, `"q[3]: ... outside 0 < q < 2k0 ..."`).
//!
//! The same logic is available to Rust callers (and the browser tests) through [`Session`].
//!
//! `lab.fit(modelJson, options, onProgress, signal)` fits a model to its data ([`fit`]); it returns
//! to the event loop between DE generations so that a Web Worker can receive a cancel.
//!
//! [`h5`]: `H5Session` opens the user's HDF5 / 4D-STEM `File`s in a Web Worker (read range by
//! range, never whole): file trees, acquisition summaries, frames and a pull stream of batches.
//!
//! [`bloch`]: `lab.blochSimulate(cifText, options)` and `lab.blochRefine(files, options,
//! onProgress, signal)` (one refinement iteration per step, so a cancel lands), CPU f64.

mod bench;
pub mod bloch;
pub mod fit;
mod fit_js;
pub mod h5;
pub mod options;
// The worker protocols' TypeScript, generated from Rust types (native unit tests only).
#[cfg(all(test, not(target_arch = "wasm32")))]
mod protocol;

use scatterlab_core::DeviceKind;
use scatterlab_refl::gpu::ParrattGpu;
use scatterlab_refl::{CurveRequest, Engine, ReflError, Reflectivity, Stack};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** The device a handle computes on. */
export type ScatterlabDevice = "cpu" | "gpu";
/**
 * The arithmetic of a handle's curves: `"f64"` on the CPU; on the GPU `"f32"` (the default, within
 * 2e-3) or `"df64"` (hi/lo f32 pairs, within 1e-6 of the CPU's f64, several times slower).
 */
export type ScatterlabPrecision = "f64" | "f32" | "df64";
/** Result of `Scatterlab.reflectivity`: one entry per q. */
export interface ReflectivityResult {
  /** s-polarised (TE) power reflectance |r_s|². */
  R_s: Float64Array;
  /** p-polarised (TM) power reflectance |r_p|². */
  R_p: Float64Array;
  /** The device that computed it. */
  device: ScatterlabDevice;
}
"#;

/// What actually evaluates the curves behind a [`Session`].
#[derive(Debug)]
enum Backend {
    /// f64 recursion on the calling thread.
    Cpu,
    /// f32 WGSL kernel on a WebGPU (or native wgpu) device.
    Gpu(Box<ParrattGpu>),
}

/// The Rust-level engine behind the JS [`Scatterlab`] handle: one device, chosen once.
#[derive(Debug)]
pub struct Session {
    backend: Backend,
    /// On the GPU: the recursion in df64 instead of f32 (the caller's choice, never ours).
    df64: bool,
}

impl Session {
    /// Opens a session on `device`. For [`DeviceKind::Gpu`] this acquires an adapter and a
    /// device and compiles the reflectivity kernel; any failure is returned, never hidden.
    pub async fn new(device: DeviceKind) -> Result<Self, String> {
        let backend = match device {
            DeviceKind::Cpu => Backend::Cpu,
            DeviceKind::Gpu => {
                check_webgpu_present()?;
                let ctx = scatterlab_gpu::GpuContext::new(&scatterlab_gpu::GpuOptions::default()).await.map_err(|e| format!("device \"gpu\": {e}"))?;
                let pipeline = ParrattGpu::new(&ctx).await.map_err(|e| format!("device \"gpu\": {e}"))?;
                Backend::Gpu(Box::new(pipeline))
            }
        };
        Ok(Self { backend, df64: false })
    }

    /// [`Session::new`] with the arithmetic named: `"f64"` (CPU only), `"f32"` or `"df64"` (GPU
    /// only). A precision the device does not have is an error naming both, never a substitute.
    pub async fn with_precision(device: DeviceKind, precision: &str) -> Result<Self, String> {
        let df64 = match (device, precision) {
            (DeviceKind::Cpu, "f64") | (DeviceKind::Gpu, "f32") => false,
            (DeviceKind::Gpu, "df64") => true,
            (DeviceKind::Cpu, "f32" | "df64") => return Err(format!("precision \"{precision}\": device \"cpu\" computes in f64 only; \"{precision}\" needs device \"gpu\"")),
            (DeviceKind::Gpu, "f64") => return Err("precision \"f64\": device \"gpu\" has no f64; ask for \"df64\" (within 1e-6 of f64) or \"f32\"".to_owned()),
            _ => return Err(format!("precision: unknown precision {precision:?} (expected \"f64\", \"f32\" or \"df64\")")),
        };
        Ok(Self { df64, ..Self::new(device).await? })
    }

    /// The device this session computes on.
    pub fn device(&self) -> DeviceKind {
        match self.backend {
            Backend::Cpu => DeviceKind::Cpu,
            Backend::Gpu(_) => DeviceKind::Gpu,
        }
    }

    /// The backend in words: `"cpu f64"`, or the adapter and wgpu backend,
    /// e.g. `"unnamed adapter / browserwebgpu"`.
    pub fn backend(&self) -> String {
        match &self.backend {
            Backend::Cpu => "cpu f64".to_owned(),
            Backend::Gpu(pipeline) => pipeline.context().describe(),
        }
    }

    /// The GPU adapter's details (name, vendor, architecture/driver, backend), when on the GPU.
    pub fn adapter_info(&self) -> Option<scatterlab_gpu::wgpu::AdapterInfo> {
        match &self.backend {
            Backend::Cpu => None,
            Backend::Gpu(pipeline) => Some(pipeline.context().adapter_info.clone()),
        }
    }

    /// The engine batched evaluations run on.
    pub fn engine(&self) -> Engine<'_> {
        match &self.backend {
            Backend::Cpu => Engine::Cpu,
            Backend::Gpu(pipeline) if self.df64 => Engine::GpuDf64(pipeline),
            Backend::Gpu(pipeline) => Engine::Gpu(pipeline),
        }
    }

    /// The arithmetic of its curves: `"f64"` (CPU), `"f32"` or `"df64"` (GPU).
    pub fn precision(&self) -> &'static str {
        self.engine().precision()
    }

    /// Reflectivity of `stack` at `energy_ev` over `q`. Inputs are validated first; an invalid
    /// one is reported by name (without a batch index: this is a single curve).
    pub async fn reflectivity(&self, energy_ev: f64, q: &[f64], stack: &Stack) -> Result<Reflectivity, ReflError> {
        let request = CurveRequest { stack, energy_ev, q };
        request.validate()?;
        let mut results = scatterlab_refl::compute(self.engine(), &[request]).await?;
        Ok(results.pop().unwrap_or_default())
    }
}

/// Parses the JS device name (`"cpu"` or `"gpu"`, case-insensitive).
pub fn parse_device(device: &str) -> Result<DeviceKind, String> {
    device.parse::<DeviceKind>().map_err(|e| e.to_string())
}

/// On the web, says clearly when WebGPU is missing instead of a generic "no adapter".
#[cfg(target_arch = "wasm32")]
fn check_webgpu_present() -> Result<(), String> {
    let global = js_sys::global();
    let navigator = js_sys::Reflect::get(&global, &JsValue::from_str("navigator")).unwrap_or(JsValue::UNDEFINED);
    let gpu = if navigator.is_object() { js_sys::Reflect::get(&navigator, &JsValue::from_str("gpu")).unwrap_or(JsValue::UNDEFINED) } else { JsValue::UNDEFINED };
    if gpu.is_undefined() || gpu.is_null() {
        return Err("device \"gpu\": WebGPU is not available here (navigator.gpu is undefined); \
                    use a WebGPU-enabled browser on a secure origin (https or 127.0.0.1), or device \"cpu\""
            .to_owned());
    }
    Ok(())
}

#[cfg(not(target_arch = "wasm32"))]
fn check_webgpu_present() -> Result<(), String> {
    Ok(())
}

/// A reflectivity engine on one device, as exported to JavaScript.
///
/// Create it with `Scatterlab.create(device)`; free it with `free()` (or let the GC do it).
#[wasm_bindgen]
#[derive(Debug)]
pub struct Scatterlab {
    session: Session,
}

#[wasm_bindgen]
impl Scatterlab {
    /// Opens a handle on `"cpu"` (f64) or `"gpu"` (WebGPU, f32 unless `precision` is `"df64"`;
    /// a `ScatterlabPrecision`, left a plain optional string in the signature so that it stays
    /// optional in the generated TypeScript). Rejects with an `Error` that says why when the device
    /// cannot be had (for example no WebGPU adapter) or has no such precision; never falls back.
    pub async fn create(#[wasm_bindgen(unchecked_param_type = "ScatterlabDevice")] device: String, precision: Option<String>) -> Result<Scatterlab, JsError> {
        install_panic_hook();
        let kind = parse_device(&device).map_err(|e| JsError::new(&e))?;
        let precision = precision.unwrap_or_else(|| if kind == DeviceKind::Gpu { "f32" } else { "f64" }.to_owned());
        let session = Session::with_precision(kind, &precision).await.map_err(|e| JsError::new(&e))?;
        Ok(Scatterlab { session })
    }

    /// The arithmetic of its curves: `"f64"` (CPU), `"f32"` or `"df64"` (GPU).
    #[wasm_bindgen(getter, unchecked_return_type = "ScatterlabPrecision")]
    pub fn precision(&self) -> String {
        self.session.precision().to_owned()
    }

    /// The device this handle computes on: `"cpu"` or `"gpu"`.
    #[wasm_bindgen(getter, unchecked_return_type = "ScatterlabDevice")]
    pub fn device(&self) -> String {
        self.session.device().name().to_owned()
    }

    /// The backend in words: `"cpu f64"`, or the GPU adapter and wgpu backend
    /// (e.g. `"unnamed adapter / browserwebgpu"`).
    #[wasm_bindgen(getter)]
    pub fn backend(&self) -> String {
        self.session.backend()
    }

    /// Power reflectances of one layer stack at `energy_ev` (eV) for every `q` (Å⁻¹,
    /// 0 < q < 2k0). The stack is given as per-layer columns, fronting medium first and
    /// substrate last: thickness (Å), roughness of the interface above each layer (Å), and the
    /// ordinary/extraordinary δ and β. Resolves to `{R_s, R_p, device}`; rejects with an
    /// `Error` naming the offending input or the GPU failure.
    #[allow(clippy::too_many_arguments)]
    #[wasm_bindgen(unchecked_return_type = "ReflectivityResult")]
    pub async fn reflectivity(
        &self,
        energy_ev: f64,
        q: Vec<f64>,
        thickness: Vec<f64>,
        roughness: Vec<f64>,
        delta_o: Vec<f64>,
        beta_o: Vec<f64>,
        delta_e: Vec<f64>,
        beta_e: Vec<f64>,
    ) -> Result<JsValue, JsError> {
        let stack = Stack::from_columns(&thickness, &roughness, &delta_o, &beta_o, &delta_e, &beta_e).map_err(js_error)?;
        let result = self.session.reflectivity(energy_ev, &q, &stack).await.map_err(js_error)?;
        let out = js_sys::Object::new();
        let set = |key: &str, value: &JsValue| js_sys::Reflect::set(&out, &JsValue::from_str(key), value).map(|_| ());
        set("R_s", &js_sys::Float64Array::from(result.r_s.as_slice()).into()).map_err(js_value_error)?;
        set("R_p", &js_sys::Float64Array::from(result.r_p.as_slice()).into()).map_err(js_value_error)?;
        set("device", &JsValue::from_str(self.session.device().name())).map_err(js_value_error)?;
        Ok(out.into())
    }
}

fn js_error(e: ReflError) -> JsError {
    JsError::new(&e.to_string())
}

fn js_value_error(e: JsValue) -> JsError {
    JsError::new(&describe_js(&e))
}

/// A thrown JS value in words: its message if it is an `Error`, else its text.
fn describe_js(e: &JsValue) -> String {
    match e.dyn_ref::<js_sys::Error>() {
        Some(error) => error.message().into(),
        None => e.as_string().unwrap_or_else(|| format!("{e:?}")),
    }
}

/// Routes Rust panics to `console.error` with their message (a bug, never an input error).
fn install_panic_hook() {
    #[cfg(target_arch = "wasm32")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let default = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                console_error(&format!("scatterlab panicked: {info}"));
                default(info);
            }));
        });
    }
}

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str);
}

#[cfg(test)]
mod tests;
