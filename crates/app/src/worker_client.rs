//! The web app's client of the npm package's Web Worker (`dist/worker.js`, the protocol of
//! `web/src/protocol.ts`): every heavy computation of the web build — reflectivity fits, Bloch
//! simulations, tilt series and refinements — is posted there, so the egui thread never computes
//! and the page stays responsive. One worker per device is started on first use and kept; its
//! engine (`Scatterlab.create(device)` inside the worker: CPU f64 or WebGPU f32) is what the
//! results name. Progress messages (`progress`, `blochProgress`, `ssbProgress`, …) go to the
//! request's callback; a cancel is the protocol's `cancel` message.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Function, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::Device;

/// The worker script and the wasm it loads, relative to the page (index.html sits beside `dist/`).
const WORKER_PATH: &str = "dist/worker.js";
const WASM_PATH: &str = "dist/pkg/scatterlab_web_bg.wasm";

/// What a request does with each of its progress messages.
pub type ProgressFn = Box<dyn Fn(&JsValue)>;

/// A request in flight: how to settle it and where its progress goes.
struct Pending {
    resolve: Function,
    reject: Function,
    on_progress: Option<ProgressFn>,
}

/// One started worker with its engine handle.
pub struct AppWorker {
    pub(crate) worker: web_sys::Worker,
    pending: Rc<RefCell<HashMap<u32, Pending>>>,
    next_id: Cell<u32>,
    /// The `init` request's promise (awaited by every fit; a failure drops the worker).
    pub(crate) init: Promise,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::ErrorEvent)>,
}

thread_local! {
    static WORKERS: RefCell<Vec<(Device, Rc<AppWorker>)>> = const { RefCell::new(Vec::new()) };
    /// The worker script and its wasm as an embedding page gives them ([`set_engine_urls`]).
    static ENGINE_URLS: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Where the worker script and its wasm are, for a page that is not `index.html` beside `dist/`
/// (the npm package's `mountViewer` passes the package's own files, wherever the bundler put
/// them). Takes effect for workers started afterwards.
pub fn set_engine_urls(worker: String, wasm: String) {
    ENGINE_URLS.with(|u| *u.borrow_mut() = Some((worker, wasm)));
}

/// The worker's and the wasm's URLs: as set, else beside the page.
fn engine_urls() -> Result<(String, String), String> {
    match ENGINE_URLS.with(|u| u.borrow().clone()) {
        Some(urls) => Ok(urls),
        None => Ok((page_url(WORKER_PATH)?, page_url(WASM_PATH)?)),
    }
}

/// A JS error (an `Error`, a string, anything) as text.
pub fn js_error(e: &JsValue) -> String {
    e.as_string().or_else(|| e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message()))).unwrap_or_else(|| format!("{e:?}"))
}

fn page_url(path: &str) -> Result<String, String> {
    let base = web_sys::window().and_then(|w| w.document()).and_then(|d| d.base_uri().ok().flatten()).ok_or("no document base URL (not running in a page?)")?;
    web_sys::Url::new_with_base(path, &base).map(|u| u.href()).map_err(|e| js_error(&e))
}

impl AppWorker {
    fn start(device: Device) -> Result<AppWorker, String> {
        let (url, wasm_url) = engine_urls()?;
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        options.set_name("scatterlab fit");
        let worker = web_sys::Worker::new_with_options(&url, &options).map_err(|e| format!("cannot start the fit worker {url}: {}", js_error(&e)))?;
        let pending: Rc<RefCell<HashMap<u32, Pending>>> = Rc::default();
        let on_message = {
            let pending = pending.clone();
            Closure::<dyn FnMut(_)>::new(move |event: web_sys::MessageEvent| dispatch(&pending, &event.data()))
        };
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let on_error = {
            let (pending, url) = (pending.clone(), url.clone());
            Closure::<dyn FnMut(_)>::new(move |event: web_sys::ErrorEvent| {
                let why = JsValue::from_str(&format!("the fit worker {url} failed: {} (was scripts/build-web.sh run?)", event.message()));
                for (_, p) in pending.borrow_mut().drain() {
                    let _ = p.reject.call1(&JsValue::NULL, &why);
                }
            })
        };
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let mut this = AppWorker { worker, pending, next_id: Cell::new(1), init: Promise::resolve(&JsValue::NULL), _on_message: on_message, _on_error: on_error };
        let init = Object::new();
        let device_name = match device {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
        };
        set(&init, "op", &"init".into());
        set(&init, "device", &device_name.into());
        set(&init, "wasmUrl", &wasm_url.into());
        this.init = this.request(init, None)?;
        Ok(this)
    }

    /// Posts `message` with a fresh id; the promise settles with the worker's answer.
    pub fn request(&self, message: Object, on_progress: Option<ProgressFn>) -> Result<Promise, String> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        set(&message, "id", &id.into());
        let pending = self.pending.clone();
        let promise = Promise::new(&mut |resolve, reject| {
            pending.borrow_mut().insert(id, Pending { resolve, reject, on_progress: None });
        });
        if let Some(p) = self.pending.borrow_mut().get_mut(&id) {
            p.on_progress = on_progress;
        }
        self.worker.post_message(&message).map_err(|e| format!("cannot post to the fit worker: {}", js_error(&e)))?;
        Ok(promise)
    }

    /// The id the next [`AppWorker::request`] will get (ids are handed out in order, on this
    /// thread only), so a progress callback can name its own request in a cancel.
    pub fn next_id(&self) -> u32 {
        self.next_id.get()
    }

    /// Asks the worker to stop request `id` (a fit or refinement stops at its next pause).
    pub fn cancel(&self, id: u32) {
        let message = Object::new();
        set(&message, "op", &"cancel".into());
        set(&message, "id", &id.into());
        let _ = self.worker.post_message(&message);
    }
}

/// Sets `o[k] = v` (a failure is impossible on a plain object).
pub fn set(o: &Object, k: &str, v: &JsValue) {
    let _ = Reflect::set(o, &k.into(), v);
}

/// `o[k]`, undefined when absent.
pub fn get(o: &JsValue, k: &str) -> JsValue {
    Reflect::get(o, &k.into()).unwrap_or(JsValue::UNDEFINED)
}

/// The keys under which the worker posts a request's progress (one per kind of request).
const PROGRESS_KEYS: [&str; 4] = ["progress", "blochProgress", "rockingProgress", "ssbProgress"];

/// Routes one worker message: progress to its request, a response to its promise.
fn dispatch(pending: &Rc<RefCell<HashMap<u32, Pending>>>, data: &JsValue) {
    let Some(id) = get(data, "id").as_f64().map(|v| v as u32) else {
        return;
    };
    let progress = PROGRESS_KEYS.iter().map(|k| get(data, k)).find(|v| !v.is_undefined());
    if let Some(progress) = progress {
        // Taken out while it runs: the callback may post a cancel, which borrows nothing here.
        let callback = pending.borrow_mut().get_mut(&id).and_then(|p| p.on_progress.take());
        if let Some(f) = callback {
            f(&progress);
            if let Some(p) = pending.borrow_mut().get_mut(&id) {
                p.on_progress = Some(f);
            }
        }
        return;
    }
    let Some(p) = pending.borrow_mut().remove(&id) else {
        return;
    };
    if get(data, "ok").is_truthy() {
        let _ = p.resolve.call1(&JsValue::NULL, &get(data, "result"));
    } else {
        let _ = p.reject.call1(&JsValue::NULL, &get(data, "error"));
    }
}

/// The started worker of `device`, starting it if needed.
pub fn worker_for(device: Device) -> Result<Rc<AppWorker>, String> {
    if let Some(w) = WORKERS.with(|ws| ws.borrow().iter().find(|(d, _)| *d == device).map(|(_, w)| w.clone())) {
        return Ok(w);
    }
    let w = Rc::new(AppWorker::start(device)?);
    WORKERS.with(|ws| ws.borrow_mut().push((device, w.clone())));
    Ok(w)
}

/// Stops and forgets the worker of `device` (after its init failed).
pub fn forget_worker(device: Device) {
    WORKERS.with(|ws| {
        ws.borrow_mut().retain(|(d, w)| {
            if *d == device {
                w.worker.terminate();
            }
            *d != device
        })
    });
}

/// The worker of `device`, started and initialised (a failed init forgets it, so the next call
/// starts afresh).
pub async fn ready(device: Device) -> Result<Rc<AppWorker>, String> {
    let worker = worker_for(device)?;
    if let Err(e) = JsFuture::from(worker.init.clone()).await {
        forget_worker(device);
        return Err(js_error(&e));
    }
    Ok(worker)
}

/// A JS value as JSON text (empty when it cannot be stringified).
pub fn json_text(v: &JsValue) -> String {
    js_sys::JSON::stringify(v).ok().and_then(|s| s.as_string()).unwrap_or_default()
}
