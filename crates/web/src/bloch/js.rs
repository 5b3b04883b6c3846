//! The JavaScript side of the Bloch calls (the calls themselves: `js_calls.rs`): options read as
//! JSON by [`crate::options::to_json`] (non-finite numbers kept so that the parser names them), results as typed arrays, and the
//! host of the stepped runs (`blochRefine`, `blochRocking`): progress through a callback, cancel
//! through an `AbortSignal` seen between steps.

use std::collections::BTreeMap;

use js_sys::{Array, Function, Object, Promise, Reflect};
use scatterlab_core::CancelToken;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::refine::{RefineHost, RefineProgress};
use super::rocking::{RockingHost, RockingProgress};
use crate::fit_js::EventLoop;
use crate::js_value_error;

pub(super) fn set(obj: &Object, key: &str, value: &JsValue) -> Result<(), JsError> {
    Reflect::set(obj, &JsValue::from_str(key), value).map(|_| ()).map_err(js_value_error)
}

/// `{name: text}` of the JS call; a value that is not text is an error naming its file.
pub(super) fn texts(files: &Object) -> Result<BTreeMap<String, String>, JsError> {
    let mut out = BTreeMap::new();
    for entry in Object::entries(files).iter() {
        let pair: Array = entry.unchecked_into();
        let name = pair.get(0).as_string().unwrap_or_default();
        let text = pair.get(1).as_string().ok_or_else(|| JsError::new(&format!("blochRefine: files[{name:?}] must be the file's text (read a File with file.text())")))?;
        out.insert(name, text);
    }
    Ok(out)
}

/// The browser side of [`RefineHost`] and [`RockingHost`]: JS progress callback, `AbortSignal`,
/// the event loop, `Date.now`.
pub(super) struct JsStepHost {
    on_progress: Option<Function>,
    signal: Option<Object>,
    cancel: CancelToken,
    /// What the progress callback last returned, if a Promise: awaited at the next pause.
    pending: Option<Promise>,
    /// The first exception thrown by the callback; it ends the run.
    pub(super) error: Option<JsValue>,
    event_loop: EventLoop,
}

impl JsStepHost {
    /// A host that cancels `cancel` when `signal` is aborted or `on_progress` throws.
    pub(super) fn new(on_progress: Option<Function>, signal: Option<Object>, cancel: &CancelToken) -> Self {
        let host = Self { on_progress, signal, cancel: cancel.clone(), pending: None, error: None, event_loop: EventLoop::new() };
        host.check_signal();
        host
    }

    /// Calls the progress callback with `{key: value}` of `entries`.
    fn report(&mut self, entries: &[(&str, f64)]) {
        if let Some(f) = &self.on_progress {
            let obj = Object::new();
            for (k, v) in entries {
                let _ = Reflect::set(&obj, &(*k).into(), &(*v).into());
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

    /// Awaits the callback's Promise, turns the event loop once, then looks at the signal.
    async fn turn(&mut self) {
        if let Some(p) = self.pending.take() {
            if let Err(e) = JsFuture::from(p).await {
                self.error.get_or_insert(e);
            }
        }
        // Every pause turns the loop: a step (an iteration, a tilt) costs far more than a yield.
        self.event_loop.turn().await;
        self.check_signal();
    }

    fn check_signal(&self) {
        let aborted = self.signal.as_ref().is_some_and(|s| Reflect::get(s, &"aborted".into()).is_ok_and(|v| v.is_truthy()));
        if aborted || self.error.is_some() {
            self.cancel.cancel();
        }
    }
}

impl RefineHost for JsStepHost {
    fn progress(&mut self, p: &RefineProgress) {
        self.report(&[
            ("iteration", p.iteration as f64),
            ("maxIterations", p.max_iterations as f64),
            ("evaluations", p.evaluations as f64),
            ("wR2", p.wr2),
            ("cost", p.cost),
            ("seconds", p.seconds),
        ]);
    }

    async fn pause(&mut self) {
        self.turn().await;
    }

    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}

impl RockingHost for JsStepHost {
    fn progress(&mut self, p: &RockingProgress) {
        self.report(&[("done", p.done as f64), ("total", p.total as f64), ("seconds", p.seconds)]);
    }

    async fn pause(&mut self) {
        self.turn().await;
    }

    fn now_ms(&self) -> f64 {
        js_sys::Date::now()
    }
}
