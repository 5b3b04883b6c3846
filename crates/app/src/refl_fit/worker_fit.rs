//! Web build: every fit runs in the npm package's Web Worker (`dist/worker.js`, the protocol of
//! `web/src/protocol.ts`), so the egui thread never computes a generation and the page stays
//! responsive whatever the fit does. One worker per device is started on first use and kept; its
//! engine (`Scatterlab.create(device)` inside the worker: CPU f64 or WebGPU f32) is what the
//! result's `engine` names. A cancel is posted as the protocol's `cancel` message when the next
//! progress message arrives (the worker sends one per DE generation and sampler step).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Function, Object, Promise, Reflect};
use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{Objective, ObjectiveOptions};
use scatterlab_refl::Engine;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::worker_protocol::{fit_options, fit_result, progress};
use super::{FitRequest, FitResult, ProgressSink};
use crate::compute_job::{self, run_if_ready, Job};
use crate::Device;

/// The worker script and the wasm it loads, relative to the page (index.html sits beside `dist/`).
const WORKER_PATH: &str = "dist/worker.js";
const WASM_PATH: &str = "dist/pkg/scatterlab_web_bg.wasm";

/// What a fit does with each of its progress messages.
type ProgressFn = Box<dyn Fn(&JsValue)>;

/// A request in flight: how to settle it and where its progress goes.
struct Pending {
    resolve: Function,
    reject: Function,
    on_progress: Option<ProgressFn>,
}

/// One started worker with its engine handle.
struct FitWorker {
    worker: web_sys::Worker,
    pending: Rc<RefCell<HashMap<u32, Pending>>>,
    next_id: Cell<u32>,
    /// The `init` request's promise (awaited by every fit; a failure drops the worker).
    init: Promise,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::ErrorEvent)>,
}

thread_local! {
    static WORKERS: RefCell<Vec<(Device, Rc<FitWorker>)>> = const { RefCell::new(Vec::new()) };
}

fn js_error(e: &JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| format!("{e:?}"))
}

fn page_url(path: &str) -> Result<String, String> {
    let base = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.base_uri().ok().flatten())
        .ok_or("no document base URL (not running in a page?)")?;
    web_sys::Url::new_with_base(path, &base)
        .map(|u| u.href())
        .map_err(|e| js_error(&e))
}

impl FitWorker {
    fn start(device: Device) -> Result<FitWorker, String> {
        let url = page_url(WORKER_PATH)?;
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        options.set_name("scatterlab fit");
        let worker = web_sys::Worker::new_with_options(&url, &options)
            .map_err(|e| format!("cannot start the fit worker {url}: {}", js_error(&e)))?;
        let pending: Rc<RefCell<HashMap<u32, Pending>>> = Rc::default();
        let on_message = {
            let pending = pending.clone();
            Closure::<dyn FnMut(_)>::new(move |event: web_sys::MessageEvent| {
                dispatch(&pending, &event.data())
            })
        };
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        let on_error = {
            let (pending, url) = (pending.clone(), url.clone());
            Closure::<dyn FnMut(_)>::new(move |event: web_sys::ErrorEvent| {
                let why = JsValue::from_str(&format!(
                    "the fit worker {url} failed: {} (was scripts/build-web.sh run?)",
                    event.message()
                ));
                for (_, p) in pending.borrow_mut().drain() {
                    let _ = p.reject.call1(&JsValue::NULL, &why);
                }
            })
        };
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let mut this = FitWorker {
            worker,
            pending,
            next_id: Cell::new(1),
            init: Promise::resolve(&JsValue::NULL),
            _on_message: on_message,
            _on_error: on_error,
        };
        let init = Object::new();
        let device_name = match device {
            Device::Cpu => "cpu",
            Device::Gpu => "gpu",
        };
        set(&init, "op", &"init".into());
        set(&init, "device", &device_name.into());
        set(&init, "wasmUrl", &page_url(WASM_PATH)?.into());
        this.init = this.request(init, None)?;
        Ok(this)
    }

    /// Posts `message` with a fresh id; the promise settles with the worker's answer.
    fn request(&self, message: Object, on_progress: Option<ProgressFn>) -> Result<Promise, String> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        set(&message, "id", &id.into());
        let pending = self.pending.clone();
        let promise = Promise::new(&mut |resolve, reject| {
            pending.borrow_mut().insert(
                id,
                Pending {
                    resolve,
                    reject,
                    on_progress: None,
                },
            );
        });
        if let Some(p) = self.pending.borrow_mut().get_mut(&id) {
            p.on_progress = on_progress;
        }
        self.worker
            .post_message(&message)
            .map_err(|e| format!("cannot post to the fit worker: {}", js_error(&e)))?;
        Ok(promise)
    }

    fn cancel(&self, id: u32) {
        let message = Object::new();
        set(&message, "op", &"cancel".into());
        set(&message, "id", &id.into());
        let _ = self.worker.post_message(&message);
    }
}

fn set(o: &Object, k: &str, v: &JsValue) {
    let _ = Reflect::set(o, &k.into(), v);
}

fn get(o: &JsValue, k: &str) -> JsValue {
    Reflect::get(o, &k.into()).unwrap_or(JsValue::UNDEFINED)
}

/// Routes one worker message: progress to its fit, a response to its promise.
fn dispatch(pending: &Rc<RefCell<HashMap<u32, Pending>>>, data: &JsValue) {
    let Some(id) = get(data, "id").as_f64().map(|v| v as u32) else {
        return;
    };
    let progress = get(data, "progress");
    if !progress.is_undefined() {
        // Taken out while it runs: the callback may post a cancel, which borrows nothing here.
        let callback = pending
            .borrow_mut()
            .get_mut(&id)
            .and_then(|p| p.on_progress.take());
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
fn worker_for(device: Device) -> Result<Rc<FitWorker>, String> {
    if let Some(w) = WORKERS.with(|ws| {
        ws.borrow()
            .iter()
            .find(|(d, _)| *d == device)
            .map(|(_, w)| w.clone())
    }) {
        return Ok(w);
    }
    let w = Rc::new(FitWorker::start(device)?);
    WORKERS.with(|ws| ws.borrow_mut().push((device, w.clone())));
    Ok(w)
}

fn forget_worker(device: Device) {
    WORKERS.with(|ws| {
        ws.borrow_mut().retain(|(d, w)| {
            if *d == device {
                w.worker.terminate();
            }
            *d != device
        })
    });
}

/// Starts `request` in the worker of its device; progress goes to `sink`, `cancel` stops it.
pub fn spawn(
    request: FitRequest,
    sink: ProgressSink,
    cancel: CancelToken,
    repaint: egui::Context,
) -> Job<Result<FitResult, String>> {
    let ctx = repaint.clone();
    compute_job::spawn(repaint, move || async move {
        run(request, sink, cancel, ctx).await
    })
}

async fn run(
    request: FitRequest,
    sink: ProgressSink,
    cancel: CancelToken,
    repaint: egui::Context,
) -> Result<FitResult, String> {
    let options = ObjectiveOptions {
        log_transform: request.settings.log_transform,
        roughness_limit: None,
    };
    let objective = Objective::new(&request.model, options).map_err(|e| e.to_string())?;
    // One CPU evaluation (microseconds) for the "χ² start → end" line.
    let start = vec![objective.start()];
    let start_chi2 = run_if_ready(objective.chi2_batch(Engine::Cpu, &start))
        .and_then(|r| r.ok())
        .and_then(|v| v.first().copied())
        .unwrap_or(f64::NAN);
    let device = request.settings.device;
    let worker = worker_for(device)?;
    if let Err(e) = JsFuture::from(worker.init.clone()).await {
        forget_worker(device);
        return Err(js_error(&e));
    }
    let (model, fit) = fit_options(&request)?;
    let message = Object::new();
    set(&message, "op", &"fit".into());
    set(&message, "model", &model.into());
    let fit_js = js_sys::JSON::parse(&fit.to_string()).map_err(|e| js_error(&e))?;
    set(&message, "options", &fit_js);
    // The id `request` is about to give this fit (ids are handed out in order, on this thread only).
    let id = worker.next_id.get();
    let cancel_sent = Rc::new(Cell::new(false));
    let on_progress: ProgressFn = {
        let (worker, cancel, sent, repaint) = (
            worker.clone(),
            cancel.clone(),
            cancel_sent.clone(),
            repaint.clone(),
        );
        Box::new(move |p: &JsValue| {
            let text = js_sys::JSON::stringify(p)
                .ok()
                .and_then(|s| s.as_string())
                .unwrap_or_default();
            if let Some(p) = serde_json::from_str(&text).ok().as_ref().and_then(progress) {
                if let Ok(mut slot) = sink.lock() {
                    *slot = Some(p);
                }
                repaint.request_repaint();
            }
            if cancel.is_cancelled() && !sent.get() {
                sent.set(true);
                worker.cancel(id);
            }
        })
    };
    let answer = JsFuture::from(worker.request(message, Some(on_progress))?)
        .await
        .map_err(|e| js_error(&e))?;
    // The samples travel as a Float64Array; the rest of the result as JSON text.
    let mcmc = get(&answer, "mcmc");
    let samples = get(&mcmc, "sample_values")
        .dyn_into::<js_sys::Float64Array>()
        .ok()
        .map(|a| a.to_vec());
    if samples.is_some() {
        let _ = Reflect::delete_property(mcmc.unchecked_ref::<Object>(), &"sample_values".into());
    }
    let json = js_sys::JSON::stringify(&answer)
        .ok()
        .and_then(|s| s.as_string())
        .ok_or("the fit worker's result is not JSON")?;
    fit_result(&json, samples, &request, start_chi2)
}
