//! The browser entry point, exported to JavaScript by wasm-bindgen.
//!
//! ```js
//! import init, { start } from "./scatterlab_app.js";
//! await init();
//! const app = await start("scatterlab-canvas");
//! JSON.parse(app.status());          // tab, fit progress and result
//! app.landmark("Run fit");           // [x, y, w, h] of that button on the canvas, CSS px
//! app.open_files([...input.files]);  // a 4D-STEM master + data files, read in pieces
//! app.command(JSON.stringify({do: "stemDisplay", target: "image", percentiles: [0, 100]}));
//! app.heap_bytes();                  // the wasm linear memory (it only grows: the peak)
//! app.destroy();                     // stops the app and lets go of the canvas
//! ```
//!
//! After the first frame is painted the page's root element gets `data-app-ready="1"` and
//! `data-render-backend="<backend>"` (`"browserwebgpu"` for WebGPU, `"gl"` for WebGL2), which
//! end-to-end tests wait for.
//!
//! A page that embeds the app (the npm package's `mountViewer`, `web/src/viewer.ts`) starts it on
//! its own canvas instead, with a listener for the app's [`crate::events`] (JSON texts, one call
//! each, delivered at the end of the frame that found them; a `{"type": "ready"}` after the first
//! frame), and tells it where the package's worker and wasm are:
//! ```js
//! set_engine_urls(workerUrl, engineWasmUrl);
//! const app = await start_on_canvas(canvas, (json) => console.log(JSON.parse(json)));
//! ```
//! The canvas (not the page's root) then gets the `data-app-ready` / `data-render-backend` marks.

use std::cell::RefCell;
use std::rc::Rc;

use wasm_bindgen::prelude::*;

use crate::{landmarks, ScatterlabApp};

/// A running app, as seen from the page: its status and where its named buttons are, so a host
/// page or a browser test can follow a fit and click the real widgets (see [`crate::landmarks`]).
#[wasm_bindgen]
pub struct AppControl {
    ctx: Rc<RefCell<Option<egui::Context>>>,
    runner: eframe::WebRunner,
}

#[wasm_bindgen]
impl AppControl {
    /// The app's status as JSON text (`"{}"` before the first frame): frames drawn, tab, and the
    /// Fit tab's model, running fit, progress, message and last result (χ², engine, evaluations).
    pub fn status(&self) -> String {
        self.ctx.borrow().as_ref().map_or_else(|| "{}".to_owned(), landmarks::status)
    }

    /// `[x, y, width, height]` in CSS pixels relative to the canvas of the widget last drawn under
    /// `name` (e.g. `"tab Fit"`, `"Open file…"`, `"Run fit"`, `"Cancel"`, `"model JSON"`,
    /// `"plots PNG"`), or `undefined` if it has not been drawn.
    pub fn landmark(&self, name: &str) -> Option<Vec<f32>> {
        let ctx = self.ctx.borrow();
        let ctx = ctx.as_ref()?;
        let r = landmarks::rect(ctx, name)?;
        let zoom = ctx.zoom_factor();
        Some(vec![r.min.x * zoom, r.min.y * zoom, r.width() * zoom, r.height() * zoom])
    }

    /// Opens a 4D-STEM acquisition from `files` (an array of `File`: a Dectris master with its
    /// data files, or one HDF5 file) without reading them whole; the app switches to 4D-STEM
    /// once it opened, and shows the error naming the file if it cannot. Returns at once.
    pub fn open_files(&self, files: js_sys::Array) -> Result<(), JsValue> {
        let ctx = self.ctx.borrow().clone().ok_or_else(|| JsValue::from_str("scatterlab: the app is not running (not started yet, or destroyed)"))?;
        let files = files
            .iter()
            .map(|f| f.dyn_into::<web_sys::File>().map_err(|_| JsValue::from_str("scatterlab: open_files takes an array of File objects")))
            .collect::<Result<Vec<_>, _>>()?;
        crate::stem::browser_files::open_files(files, ctx);
        Ok(())
    }

    /// Queues a command for the next frame (JSON, see [`crate::script`]): set a virtual
    /// detector, display settings, the workspace. Throws if it does not parse or a field is bad;
    /// a failure while applying shows in `status().commandError`.
    pub fn command(&self, json: &str) -> Result<(), JsValue> {
        let ctx = self.ctx.borrow().clone().ok_or_else(|| JsValue::from_str("scatterlab: the app is not running (not started yet, or destroyed)"))?;
        let command = crate::script::Command::parse(json).map_err(|e| JsValue::from_str(&e))?;
        crate::script::post(&ctx, command);
        Ok(())
    }

    /// Stops the app: its frames, its event handlers on the page and its renderer end (eframe's
    /// `WebRunner::destroy`); the canvas stays for the page to remove. Later calls do nothing.
    pub fn destroy(&self) {
        self.runner.destroy();
        self.ctx.borrow_mut().take();
    }

    /// The size of the app's wasm linear memory in bytes. It never shrinks, so it is the peak
    /// the heap has reached so far.
    pub fn heap_bytes(&self) -> f64 {
        wasm_bindgen::memory().dyn_into::<js_sys::WebAssembly::Memory>().map_or(0.0, |m| m.buffer().dyn_into::<js_sys::ArrayBuffer>().map_or(0.0, |b| f64::from(b.byte_length())))
    }
}

/// Starts the app on the `<canvas id=canvas_id>` of the current page.
///
/// Resolves once eframe is running, with an [`AppControl`]; rejects (never panics) if the canvas
/// is missing or eframe cannot start, e.g. when neither WebGPU nor WebGL2 is available.
#[wasm_bindgen]
pub async fn start(canvas_id: String) -> Result<AppControl, JsValue> {
    let document = web_sys::window().and_then(|w| w.document()).ok_or_else(|| JsValue::from_str("scatterlab: no window.document (not running in a page?)"))?;
    let canvas = document
        .get_element_by_id(&canvas_id)
        .ok_or_else(|| JsValue::from_str(&format!("scatterlab: no element with id {canvas_id:?}")))?
        .dyn_into::<web_sys::HtmlCanvasElement>()
        .map_err(|_| JsValue::from_str(&format!("scatterlab: element {canvas_id:?} is not a <canvas>")))?;
    let root = document.document_element().ok_or_else(|| JsValue::from_str("scatterlab: the page has no root element"))?;
    start_with(canvas, root, None).await
}

/// Starts the app on `canvas` (an embedding page's), sending each of the app's events to
/// `on_event` as JSON text (see [`crate::events`]; a `{"type": "ready", "renderBackend": …}` after
/// the first frame). The canvas gets the `data-app-ready` / `data-render-backend` marks.
#[wasm_bindgen]
pub async fn start_on_canvas(canvas: web_sys::HtmlCanvasElement, on_event: Option<js_sys::Function>) -> Result<AppControl, JsValue> {
    let marked: web_sys::Element = canvas.clone().into();
    start_with(canvas, marked, on_event).await
}

/// Where the npm package's worker script and its wasm are (the app runs fits and Bloch work
/// there); without this call, `dist/worker.js` and `dist/pkg/` beside the page.
#[wasm_bindgen]
pub fn set_engine_urls(worker_url: String, wasm_url: String) {
    crate::worker_client::set_engine_urls(worker_url, wasm_url);
}

/// What both entries share: eframe on `canvas`, readiness marked on `marked`, events (if a
/// listener is given) sent to it.
async fn start_with(canvas: web_sys::HtmlCanvasElement, marked: web_sys::Element, on_event: Option<js_sys::Function>) -> Result<AppControl, JsValue> {
    // A second call (hot reload, tests, a second viewer) finds the logger set already; that is fine.
    let _ = eframe::WebLogger::init(log::LevelFilter::Info);
    let shared: Rc<RefCell<Option<egui::Context>>> = Rc::default();
    let runner = eframe::WebRunner::new();
    let control = AppControl { ctx: shared.clone(), runner: runner.clone() };
    runner
        .start(
            canvas,
            eframe::WebOptions::default(),
            Box::new(move |cc| {
                *shared.borrow_mut() = Some(cc.egui_ctx.clone());
                let app = ScatterlabApp::new(cc);
                let backend = app.render_backend.clone();
                let ready_listener = on_event.clone();
                let app = app.on_first_frame(move || {
                    mark_ready(&marked, &backend);
                    if let Some(f) = &ready_listener {
                        send(f, serde_json::json!({"type": "ready", "renderBackend": backend}).to_string());
                    }
                });
                Ok(match on_event {
                    Some(f) => Box::new(app.on_events(move |events| events.into_iter().for_each(|e| send(&f, e)))),
                    None => Box::new(app),
                })
            }),
        )
        .await?;
    Ok(control)
}

/// Calls the page's listener with one event; a listener that throws is logged, not fatal.
fn send(listener: &js_sys::Function, event: String) {
    if let Err(e) = listener.call1(&JsValue::NULL, &JsValue::from_str(&event)) {
        log::error!("scatterlab: the event listener threw: {}", crate::worker_client::js_error(&e));
    }
}

/// Sets the readiness attributes on `marked` (the page's root element, or an embedded canvas).
fn mark_ready(marked: &web_sys::Element, backend: &str) {
    for (name, value) in [("data-render-backend", backend), ("data-app-ready", "1")] {
        if let Err(e) = marked.set_attribute(name, value) {
            log::error!("scatterlab: cannot set {name}: {e:?}");
        }
    }
}
