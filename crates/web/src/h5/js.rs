//! The JS handle `H5Session`: picked or dropped `File`s opened for reading in a Web Worker.

use js_sys::{Array, Object, Reflect};
use scatterlab_stem::load::{PixelData, PixelSlice};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::session::{parse_mask, H5Core};
use super::ssb::{parse_device, SsbDevice};
use super::storage::BlobStorage;
use crate::install_panic_hook;
use crate::options::to_json;

// The declarations of the raw `scatterlab/pkg` types: the same generated file the wrapper
// re-exports (web/src/h5.ts), from the Rust definitions in `src/protocol/`.
#[wasm_bindgen(typescript_custom_section)]
const TS_H5_TYPES: &'static str = include_str!("../../../../web/src/generated/h5.ts");

/// Files opened for reading: HDF5 trees, and one 4D-STEM acquisition read frame by frame or
/// streamed. Works only in a Web Worker (it reads with `FileReaderSync`); no file is ever read
/// whole. Methods throw `Error`s naming the file or object.
#[wasm_bindgen]
pub struct H5Session {
    core: H5Core,
}

fn err(e: String) -> JsError {
    JsError::new(&e)
}

fn set(obj: &Object, key: &str, value: &JsValue) -> Result<(), JsError> {
    Reflect::set(obj, &JsValue::from_str(key), value).map(|_| ()).map_err(|e| JsError::new(&crate::describe_js(&e)))
}

fn pixels(data: PixelSlice<'_>) -> Result<JsValue, JsError> {
    Ok(match data {
        PixelSlice::U8(v) => js_sys::Uint8Array::from(v).into(),
        PixelSlice::U16(v) => js_sys::Uint16Array::from(v).into(),
        PixelSlice::U32(v) => js_sys::Uint32Array::from(v).into(),
        PixelSlice::U64(_) => return Err(JsError::new("u64 pixels are not returned to JS")),
    })
}

#[wasm_bindgen]
impl H5Session {
    /// Opens `files` (picked or dropped `File` objects; names as the master's links give them).
    /// Throws where `FileReaderSync` is missing (the page's main thread: use a Web Worker).
    pub fn open(#[wasm_bindgen(unchecked_param_type = "File[]")] files: Array) -> Result<H5Session, JsError> {
        install_panic_hook();
        let mut list = Vec::new();
        for (i, item) in files.iter().enumerate() {
            let file = item.dyn_into::<web_sys::File>().map_err(|_| JsError::new(&format!("open: files[{i}] is not a File")))?;
            let name = file.name();
            let storage = BlobStorage::new(&file, name.clone()).map_err(|e| JsError::new(&e.to_string()))?;
            list.push((name, std::sync::Arc::new(storage) as scatterlab_hdf5::storage::DynStorage));
        }
        Ok(H5Session { core: H5Core::new(list).map_err(err)? })
    }

    /// The opened file names, sorted.
    #[wasm_bindgen(getter)]
    pub fn names(&self) -> Vec<String> {
        self.core.names().to_vec()
    }

    /// The tree of file `name`: groups, datasets (shape, dtype, chunking, filters), links
    /// (external ones with `resolved` against the opened files) and attributes, as parsed JSON.
    pub fn tree(&self, name: &str) -> Result<JsValue, JsError> {
        let text = self.core.tree_json(name).map_err(err)?;
        js_sys::JSON::parse(&text).map_err(|e| JsError::new(&crate::describe_js(&e)))
    }

    /// Opens the 4D-STEM acquisition of `master` for `readFrames` / streaming (ending a running
    /// stream) and returns its summary: shapes, dtype, chunking, filters, calibration, mask,
    /// data files and the missing ones.
    #[wasm_bindgen(js_name = stemInfo)]
    pub fn stem_info(&mut self, master: &str) -> Result<JsValue, JsError> {
        let info = self.core.stem_info(master).map_err(err)?;
        let text = serde_json::to_string(&info).map_err(|e| JsError::new(&e.to_string()))?;
        js_sys::JSON::parse(&text).map_err(|e| JsError::new(&crate::describe_js(&e)))
    }

    /// Global frames `first .. first + n` (at most 256 MiB) as stored, bad pixels zeroed unless
    /// `mask` is `"keep"`. A frame in a missing data file throws, naming the file.
    #[wasm_bindgen(js_name = readFrames, unchecked_return_type = "H5Pixels")]
    pub fn read_frames(&self, first: f64, n: u32, #[wasm_bindgen(unchecked_param_type = "H5MaskPolicy | undefined")] mask: Option<String>) -> Result<JsValue, JsError> {
        if !(first.is_finite() && first >= 0.0 && first.fract() == 0.0) {
            return Err(JsError::new(&format!("readFrames: first must be a whole number ≥ 0, got {first}")));
        }
        let policy = parse_mask(mask.as_deref()).map_err(err)?;
        let data: PixelData = self.core.read_frames(first as u64, n as usize, policy).map_err(err)?;
        pixels(data.as_slice())
    }

    /// The 4D-STEM reductions of `scatterlab stem reduce` on the acquisition opened by
    /// `stemInfo`: `options.device` `"cpu"` (default, u64 sums) or `"gpu"` (the worker's WebGPU,
    /// paired-u32 sums: the same integers). Resolves to `{products, present, record}` where
    /// `products` is keyed like the CLI's `.npy` files (`{shape, data: Float64Array, integer}`;
    /// integer products are exact counts). `onProgress(done, total)` per batch of frames; the
    /// event loop gets a turn after every batch, so `signal` (an `AbortSignal`) stops it there.
    /// Throws naming a bad option, a missing data file (unless `allowMissing`), or a missing GPU.
    #[wasm_bindgen(unchecked_return_type = "StemReduction")]
    pub async fn reduce(
        &self,
        #[wasm_bindgen(unchecked_param_type = "StemReduceOptions | undefined")] options: JsValue,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "((done: number, total: number) => void) | undefined")] on_progress: Option<js_sys::Function>,
        #[wasm_bindgen(unchecked_param_type = "AbortSignal | undefined")] signal: Option<Object>,
    ) -> Result<JsValue, JsError> {
        let options = to_json(&options, "options", "reduce")?;
        let cancel = scatterlab_core::CancelToken::new();
        let aborted = |s: &Option<Object>| s.as_ref().is_some_and(|s| Reflect::get(s, &"aborted".into()).is_ok_and(|v| v.is_truthy()));
        if aborted(&signal) {
            return Err(JsError::new("reduce: cancelled"));
        }
        let mut thrown: Option<JsValue> = None;
        let mut progress = |done: u64, total: u64| {
            if let (Some(f), None) = (&on_progress, &thrown) {
                if let Err(e) = f.call2(&JsValue::NULL, &(done as f64).into(), &(total as f64).into()) {
                    thrown = Some(e);
                    cancel.cancel();
                }
            }
        };
        let event_loop = std::rc::Rc::new(crate::fit_js::EventLoop::new());
        let (c, sig) = (cancel.clone(), signal.clone());
        let mut pause = move || -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
            let (el, c, sig) = (event_loop.clone(), c.clone(), sig.clone());
            Box::pin(async move {
                el.turn().await;
                if aborted(&sig) {
                    c.cancel();
                }
            })
        };
        let gpu = match super::reduce::parse_options(&options).map_err(err)?.1 {
            super::reduce::Device::Gpu => Some(shared_gpu("reduce").await.map_err(err)?),
            super::reduce::Device::Cpu => None,
        };
        let r = self.core.reduce(&options, gpu.as_ref(), &mut progress, &cancel, Some(&mut pause)).await;
        if let Some(e) = thrown {
            return Err(JsError::new(&format!("reduce: onProgress threw: {}", crate::describe_js(&e))));
        }
        let r = r.map_err(err)?;
        let products = Object::new();
        for p in &r.products {
            let item = Object::new();
            set(&item, "shape", &p.shape.iter().map(|&d| JsValue::from(d as f64)).collect::<Array>().into())?;
            set(&item, "data", &js_sys::Float64Array::from(p.values.as_slice()).into())?;
            set(&item, "integer", &p.integer.into())?;
            set(&products, &p.name, &item.into())?;
        }
        let out = Object::new();
        set(&out, "products", &products.into())?;
        let present: Vec<u8> = r.present.iter().map(|&p| u8::from(p)).collect();
        set(&out, "present", &js_sys::Uint8Array::from(present.as_slice()).into())?;
        set(&out, "record", &js_sys::JSON::parse(&r.record_json).map_err(|e| JsError::new(&crate::describe_js(&e)))?)?;
        Ok(out.into())
    }

    /// RGBA8 of an image (`values`, row-major; NaN = no data, transparent) through the fixtures'
    /// display pipeline: `options.colormap` (default `"gray"`), `transform` (`"linear"`, `"log"`,
    /// `"sqrt"`, `"gamma"` with `gamma`), limits `limits: [low, high]` or `percentiles` (default
    /// `[0, 100]`). The bytes fit `new ImageData(new Uint8ClampedArray(rgba.buffer), cols, rows)`.
    #[wasm_bindgen(js_name = displayRgba)]
    pub fn display_rgba(values: &[f64], #[wasm_bindgen(unchecked_param_type = "StemDisplayOptions | undefined")] options: JsValue) -> Result<js_sys::Uint8Array, JsError> {
        let options = to_json(&options, "options", "displayRgba")?;
        let rgba = super::reduce::display_rgba(values, &options).map_err(err)?;
        Ok(js_sys::Uint8Array::from(rgba.as_slice()))
    }

    /// Single-sideband ptychography of the acquisition opened by `stemInfo` (frames streamed
    /// from the files; `options.device` `"cpu"` (default, f64) or `"gpu"` (WebGPU, f32, the
    /// record's `device` naming the adapter; no WebGPU rejects naming device "gpu")), fitting the
    /// aberrations first when `options.fit` asks. Runs to its end in one call (in a worker: the
    /// UI thread stays free). Throws naming a bad option, missing calibration or missing data
    /// file. `onProgress(done, total)` is called per batch of work: frames of each pass over the
    /// data, then loss evaluations of the fit; if it throws, the reconstruction stops and throws
    /// that.
    #[wasm_bindgen(unchecked_return_type = "SsbResult")]
    pub async fn ssb(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SsbOptions | undefined")] options: JsValue,
        #[wasm_bindgen(js_name = onProgress, unchecked_param_type = "((done: number, total: number) => void) | undefined")] on_progress: Option<js_sys::Function>,
    ) -> Result<JsValue, JsError> {
        let options = to_json(&options, "options", "ssb")?;
        let cancel = scatterlab_core::CancelToken::new();
        let mut thrown: Option<JsValue> = None;
        let mut progress = |done: u64, total: u64| {
            if let (Some(f), None) = (&on_progress, &thrown) {
                if let Err(e) = f.call2(&JsValue::NULL, &(done as f64).into(), &(total as f64).into()) {
                    thrown = Some(e);
                    cancel.cancel();
                }
            }
        };
        let r = match parse_device(&options).map_err(err)? {
            SsbDevice::Cpu => self.core.ssb(&options, &mut progress, &cancel),
            SsbDevice::Gpu => match shared_gpu("ssb").await {
                Ok(ctx) => self.core.ssb_gpu(&ctx, &options, &mut progress, &cancel).await,
                Err(e) => Err(e),
            },
        };
        if let Some(e) = thrown {
            return Err(JsError::new(&format!("ssb: onProgress threw: {}", crate::describe_js(&e))));
        }
        let r = r.map_err(err)?;
        let out = Object::new();
        set(&out, "phase", &js_sys::Float32Array::from(r.phase.as_slice()).into())?;
        let shape = Array::of2(&(r.shape[0] as f64).into(), &(r.shape[1] as f64).into());
        set(&out, "shape", &shape.into())?;
        let parse = |text: &str| js_sys::JSON::parse(text).map_err(|e| JsError::new(&crate::describe_js(&e)));
        let aberrations = serde_json::to_string(&r.aberrations).map_err(|e| JsError::new(&e.to_string()))?;
        set(&out, "aberrations", &parse(&aberrations)?)?;
        set(&out, "record", &parse(&r.record_json)?)?;
        Ok(out.into())
    }

    /// Starts (or restarts) a stream of every frame; returns the total number of frames.
    #[wasm_bindgen(js_name = streamStart)]
    pub fn stream_start(&mut self, #[wasm_bindgen(unchecked_param_type = "H5MaskPolicy | undefined")] mask: Option<String>) -> Result<f64, JsError> {
        let policy = parse_mask(mask.as_deref()).map_err(err)?;
        Ok(self.core.stream_start(policy).map_err(err)? as f64)
    }

    /// The next batch of at most `maxFrames` frames (0 = about 4 MiB; never across two data
    /// files). Each call does one batch of work, so a worker can return to its event loop
    /// between calls. Throws naming a missing data file (the stream stays where it was).
    #[wasm_bindgen(js_name = streamNext, unchecked_return_type = "H5StreamStep")]
    pub fn stream_next(&mut self, max_frames: u32) -> Result<JsValue, JsError> {
        let step = self.core.stream_next(max_frames as usize).map_err(err)?;
        let out = Object::new();
        let (first, n, data) = match &step.batch {
            Some(b) => (b.first_frame as f64, b.n as f64, pixels(b.data)?),
            None => (step.frames_total as f64, 0.0, js_sys::Uint16Array::new_with_length(0).into()),
        };
        set(&out, "first", &first.into())?;
        set(&out, "n", &n.into())?;
        set(&out, "data", &data)?;
        set(&out, "done", &(step.frames_done >= step.frames_total).into())?;
        set(&out, "framesDone", &(step.frames_done as f64).into())?;
        set(&out, "framesTotal", &(step.frames_total as f64).into())?;
        Ok(out.into())
    }
}

thread_local! {
    /// The worker's WebGPU device for `ssb` (requested once, then reused).
    static SSB_GPU: std::cell::RefCell<Option<scatterlab_gpu::GpuContext>> = const { std::cell::RefCell::new(None) };
}

/// The worker's GPU for `op`: no WebGPU (or no adapter) is an error naming device "gpu".
async fn shared_gpu(op: &str) -> Result<scatterlab_gpu::GpuContext, String> {
    if let Some(ctx) = SSB_GPU.with(|c| c.borrow().clone()) {
        return Ok(ctx);
    }
    crate::check_webgpu_present().map_err(|e| format!("{op}: {e}"))?;
    let ctx = scatterlab_gpu::GpuContext::new(&scatterlab_gpu::GpuOptions::default()).await.map_err(|e| format!("{op}: device \"gpu\": {e}"))?;
    SSB_GPU.with(|c| *c.borrow_mut() = Some(ctx.clone()));
    Ok(ctx)
}
