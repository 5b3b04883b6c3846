//! `Scatterlab.fit` for JavaScript: options in, progress out through a callback, cancel through an
//! `AbortSignal`, the CLI's result object back (see [`crate::fit`] for how the fit yields).

use js_sys::{Function, Object, Promise, Reflect};
use scatterlab_core::CancelToken;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use crate::fit::{run_fit, FitHost, FitReport};
use crate::{describe_js, Backend, Scatterlab};

mod convert;
mod types;

use convert::{parse_options, result_object};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &Function, ms: i32) -> JsValue;

    /// The DOM's `MessageChannel` (declared here rather than through web-sys: two members are used).
    #[wasm_bindgen(js_name = MessageChannel)]
    type JsMessageChannel;
    #[wasm_bindgen(constructor, js_class = "MessageChannel", catch)]
    fn new() -> Result<JsMessageChannel, JsValue>;
    #[wasm_bindgen(method, getter, js_class = "MessageChannel")]
    fn port1(this: &JsMessageChannel) -> JsMessagePort;
    #[wasm_bindgen(method, getter, js_class = "MessageChannel")]
    fn port2(this: &JsMessageChannel) -> JsMessagePort;

    /// One end of a [`JsMessageChannel`].
    #[wasm_bindgen(js_name = MessagePort)]
    type JsMessagePort;
    #[wasm_bindgen(method, setter, js_class = "MessagePort")]
    fn set_onmessage(this: &JsMessagePort, handler: &Function);
    #[wasm_bindgen(method, js_class = "MessagePort", js_name = postMessage)]
    fn post_message(this: &JsMessagePort, message: &JsValue);
}

/// Longest stretch of work between two returns to the event loop (the first pause always returns):
/// often enough for a cancel to land within a generation plus 20 ms, rarely enough that the yields
/// (tens of µs each through a `MessageChannel`) cost nothing measurable.
const YIELD_EVERY_MS: f64 = 20.0;

/// Returns to the event loop as one macrotask: messages already queued for this worker (a cancel)
/// are handled before it resolves. A `MessageChannel` message, not `setTimeout(0)`: browsers clamp
/// a busy loop's zero timeouts to ≥ 4 ms, which cost a full-length fit ~30 % of its time (4.5 s →
/// 3.1 s on `benches/web/fit_wasm.mjs`). `setTimeout` remains where there is no `MessageChannel`.
async fn yield_to_event_loop(channel: Option<&JsMessageChannel>) {
    let _ = JsFuture::from(Promise::new(&mut |resolve, _| match channel {
        Some(c) => {
            c.port1().set_onmessage(&resolve);
            c.port2().post_message(&JsValue::NULL);
        }
        None => {
            let _ = set_timeout(&resolve, 0);
        }
    }))
    .await;
}

/// A way back to the event loop for the other long calls (`blochRefine`), through the same
/// channel as a fit's pauses ([`yield_to_event_loop`]).
pub(crate) struct EventLoop(Option<JsMessageChannel>);

impl EventLoop {
    /// A channel of its own (`setTimeout` where the global has no `MessageChannel`).
    pub(crate) fn new() -> Self {
        EventLoop(JsMessageChannel::new().ok())
    }

    /// Returns to the event loop once: queued messages (a cancel) are handled first.
    pub(crate) async fn turn(&self) {
        yield_to_event_loop(self.0.as_ref()).await;
    }
}

/// The browser side of [`FitHost`]: JS progress callback, `AbortSignal`, `setTimeout` and `Date.now`.
struct JsHost {
    on_progress: Option<Function>,
    signal: Option<Object>,
    cancel: CancelToken,
    /// What the progress callback last returned, if a Promise: awaited at the next pause.
    pending: Option<Promise>,
    /// The first exception thrown by the callback; it ends the fit.
    error: Option<JsValue>,
    last_yield_ms: f64,
    /// The channel [`yield_to_event_loop`] posts through (`None` where the global has none).
    channel: Option<JsMessageChannel>,
}

impl JsHost {
    fn check_signal(&self) {
        let aborted = self.signal.as_ref().is_some_and(|s| Reflect::get(s, &"aborted".into()).is_ok_and(|v| v.is_truthy()));
        if aborted || self.error.is_some() {
            self.cancel.cancel();
        }
    }
}

impl FitHost for JsHost {
    fn progress(&mut self, report: &FitReport) {
        if let Some(f) = &self.on_progress {
            let p = &report.progress;
            let obj = Object::new();
            let entries: [(&str, JsValue); 7] = [
                ("method", p.method.into()),
                ("iteration", (p.iteration as f64).into()),
                ("maxIterations", (p.max_iterations as f64).into()),
                ("bestChi2", p.best_chi2.into()),
                ("evaluations", (p.evaluations as f64).into()),
                ("seconds", report.seconds.into()),
                ("evaluationsPerSecond", report.evaluations_per_second.into()),
            ];
            for (k, v) in entries {
                let _ = Reflect::set(&obj, &k.into(), &v);
            }
            match f.call1(&JsValue::NULL, &obj) {
                Ok(ret) => self.pending = ret.dyn_into::<Promise>().ok(),
                Err(e) => {
                    self.error.get_or_insert(e);
                }
            }
        }
        // On the GPU the event loop turns while batches run, so an abort can already be visible.
        self.check_signal();
    }

    async fn pause(&mut self) {
        if let Some(p) = self.pending.take() {
            if let Err(e) = JsFuture::from(p).await {
                self.error.get_or_insert(e);
            }
        }
        let now = self.now_ms();
        if now - self.last_yield_ms >= YIELD_EVERY_MS {
            yield_to_event_loop(self.channel.as_ref()).await;
            self.last_yield_ms = self.now_ms();
        }
        self.check_signal();
    }

    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}

#[wasm_bindgen]
impl Scatterlab {
    /// Fits a model (model JSON, or a fixture fit task) to its data on this handle's device (LM
    /// always on the CPU, f64). `onProgress` is called after every DE generation, LM iteration and
    /// sampler step; if it returns a Promise, the fit awaits it before the next generation. The fit
    /// returns to the event loop between DE generations (after the first, then whenever 20 ms of
    /// work have passed), so an `abort()` on `signal` (an `AbortSignal`, or any object whose
    /// `aborted` turns true) — e.g. from a worker's message handler — takes effect there: the fit stops and
    /// resolves with its best point, `cancelled: true` and its `state`. Rejects with an `Error`
    /// naming a bad input or option; an exception thrown by `onProgress` ends the fit and rejects.
    #[wasm_bindgen(unchecked_return_type = "FitResult")]
    pub async fn fit(
        &self,
        model: String,
        #[wasm_bindgen(unchecked_param_type = "FitOptions | null | undefined")] options: Option<Object>,
        #[wasm_bindgen(unchecked_param_type = "((progress: FitProgress) => unknown) | null | undefined")] on_progress: Option<Function>,
        #[wasm_bindgen(unchecked_param_type = "AbortSignal | null | undefined")] signal: Option<Object>,
    ) -> Result<JsValue, JsError> {
        let options = parse_options(options)?;
        let cancel = CancelToken::new();
        let mut host = JsHost { on_progress, signal, cancel: cancel.clone(), pending: None, error: None, last_yield_ms: f64::NEG_INFINITY, channel: JsMessageChannel::new().ok() };
        host.check_signal();
        let outcome = run_fit(&model, &options, self.session.engine(), &mut host, &cancel).await.map_err(|e| JsError::new(&e.to_string()));
        if let Some(e) = host.error {
            return Err(JsError::new(&format!("fit: onProgress threw: {}", describe_js(&e))));
        }
        let backend = match &self.session.backend {
            Backend::Cpu => "cpu f64".to_owned(),
            Backend::Gpu(p) => format!("{} f32 (DE/MCMC batches), cpu f64 (LM)", p.context().describe()),
        };
        result_object(&outcome?, self.session.device().name(), &backend)
    }
}
