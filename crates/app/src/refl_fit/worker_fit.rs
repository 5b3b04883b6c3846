//! Web build: every fit runs in the npm package's Web Worker (through `crate::worker_client`; the protocol of
//! `web/src/protocol.ts`), so the egui thread never computes a generation and the page stays
//! responsive whatever the fit does. One worker per device is started on first use and kept; its
//! engine (`Scatterlab.create(device)` inside the worker: CPU f64 or WebGPU f32) is what the
//! result's `engine` names. A cancel is posted as the protocol's `cancel` message when the next
//! progress message arrives (the worker sends one per DE generation and sampler step).

use std::cell::Cell;
use std::rc::Rc;

use js_sys::{Object, Reflect};
use scatterlab_core::CancelToken;
use scatterlab_refl::fit::{Objective, ObjectiveOptions};
use scatterlab_refl::Engine;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::worker_protocol::{fit_options, fit_result, progress};
use super::{FitRequest, FitResult, ProgressSink};
use crate::compute_job::{self, run_if_ready, Job};
use crate::worker_client::{get, js_error, ready, set, ProgressFn};

/// Starts `request` in the worker of its device; progress goes to `sink`, `cancel` stops it.
pub fn spawn(request: FitRequest, sink: ProgressSink, cancel: CancelToken, repaint: egui::Context) -> Job<Result<FitResult, String>> {
    let ctx = repaint.clone();
    compute_job::spawn(repaint, move || async move { run(request, sink, cancel, ctx).await })
}

async fn run(request: FitRequest, sink: ProgressSink, cancel: CancelToken, repaint: egui::Context) -> Result<FitResult, String> {
    let options = ObjectiveOptions { log_transform: request.settings.log_transform, roughness_limit: None };
    let objective = Objective::new(&request.model, options).map_err(|e| e.to_string())?;
    // One CPU evaluation (microseconds) for the "χ² start → end" line.
    let start = vec![objective.start()];
    let start_chi2 = run_if_ready(objective.chi2_batch(Engine::Cpu, &start)).and_then(|r| r.ok()).and_then(|v| v.first().copied()).unwrap_or(f64::NAN);
    let worker = ready(request.settings.device).await?;
    let (model, fit) = fit_options(&request)?;
    let message = Object::new();
    set(&message, "op", &"fit".into());
    set(&message, "model", &model.into());
    let fit_js = js_sys::JSON::parse(&fit.to_string()).map_err(|e| js_error(&e))?;
    set(&message, "options", &fit_js);
    // The id `request` is about to give this fit (ids are handed out in order, on this thread only).
    let id = worker.next_id();
    let cancel_sent = Rc::new(Cell::new(false));
    let on_progress: ProgressFn = {
        let (worker, cancel, sent, repaint) = (worker.clone(), cancel.clone(), cancel_sent.clone(), repaint.clone());
        Box::new(move |p: &JsValue| {
            let text = js_sys::JSON::stringify(p).ok().and_then(|s| s.as_string()).unwrap_or_default();
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
    let answer = JsFuture::from(worker.request(message, Some(on_progress))?).await.map_err(|e| js_error(&e))?;
    // The samples travel as a Float64Array; the rest of the result as JSON text.
    let mcmc = get(&answer, "mcmc");
    let samples = get(&mcmc, "sample_values").dyn_into::<js_sys::Float64Array>().ok().map(|a| a.to_vec());
    if samples.is_some() {
        let _ = Reflect::delete_property(mcmc.unchecked_ref::<Object>(), &"sample_values".into());
    }
    let json = js_sys::JSON::stringify(&answer).ok().and_then(|s| s.as_string()).ok_or("the fit worker's result is not JSON")?;
    fit_result(&json, samples, &request, start_chi2)
}
