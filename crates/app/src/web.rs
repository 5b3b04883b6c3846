//! The browser entry point, exported to JavaScript by wasm-bindgen.
//!
//! ```js
//! import init, { start } from "./scatterlab_app.js";
//! await init();
//! await start("scatterlab-canvas");
//! ```
//!
//! After the first frame is painted the page's root element gets `data-app-ready="1"` and
//! `data-render-backend="<backend>"` (`"browserwebgpu"` for WebGPU, `"gl"` for WebGL2), which
//! end-to-end tests wait for.

use wasm_bindgen::prelude::*;

use crate::ScatterlabApp;

/// Starts the app on the `<canvas id=canvas_id>` of the current page.
///
/// Resolves once eframe is running; rejects (never panics) if the canvas is missing or eframe
/// cannot start, e.g. when neither WebGPU nor WebGL2 is available.
#[wasm_bindgen]
pub async fn start(canvas_id: String) -> Result<(), JsValue> {
    // A second call (hot reload, tests) finds the logger set already; that is fine.
    let _ = eframe::WebLogger::init(log::LevelFilter::Info);
    let document = web_sys::window()
        .and_then(|w| w.document())
        .ok_or_else(|| {
            JsValue::from_str("scatterlab: no window.document (not running in a page?)")
        })?;
    let canvas = document
        .get_element_by_id(&canvas_id)
        .ok_or_else(|| JsValue::from_str(&format!("scatterlab: no element with id {canvas_id:?}")))?
        .dyn_into::<web_sys::HtmlCanvasElement>()
        .map_err(|_| {
            JsValue::from_str(&format!(
                "scatterlab: element {canvas_id:?} is not a <canvas>"
            ))
        })?;
    eframe::WebRunner::new()
        .start(
            canvas,
            eframe::WebOptions::default(),
            Box::new(|cc| {
                let app = ScatterlabApp::new(cc);
                let backend = app.render_backend.clone();
                Ok(Box::new(app.on_first_frame(move || mark_ready(&backend))))
            }),
        )
        .await
}

/// Sets the readiness attributes on `document.documentElement`.
fn mark_ready(backend: &str) {
    let root = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element());
    let Some(root) = root else {
        log::error!("scatterlab: no document element to mark ready");
        return;
    };
    for (name, value) in [("data-render-backend", backend), ("data-app-ready", "1")] {
        if let Err(e) = root.set_attribute(name, value) {
            log::error!("scatterlab: cannot set {name}: {e:?}");
        }
    }
}
