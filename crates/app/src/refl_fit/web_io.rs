//! Browser-only plumbing of the Fit tab: a file
//! picker (`<input type=file>`), and downloads (a `Blob` URL on an `<a download>`).

use std::sync::mpsc;

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::Incoming;

fn document() -> Result<web_sys::Document, String> {
    web_sys::window().and_then(|w| w.document()).ok_or_else(|| "no document (not running in a page?)".to_owned())
}

/// A JavaScript error as text.
pub(crate) fn js_error(e: JsValue) -> String {
    e.as_string().unwrap_or_else(|| format!("{e:?}"))
}

/// Opens the browser's file dialog for `accept` (several files with `multiple`, a folder's files
/// with `folder` where the browser has `webkitdirectory`); `on_pick` gets the chosen files. It is
/// never called when the user cancels (the input is then just dropped).
pub(crate) fn pick_files(accept: &str, multiple: bool, folder: bool, on_pick: impl FnOnce(Vec<web_sys::File>) + 'static) -> Result<(), String> {
    let input: web_sys::HtmlInputElement = document()?.create_element("input").map_err(js_error)?.dyn_into().map_err(|_| "cannot create a file input".to_owned())?;
    input.set_type("file");
    input.set_accept(accept);
    input.set_multiple(multiple);
    if folder {
        input.set_attribute("webkitdirectory", "").map_err(js_error)?;
    }
    let chosen = input.clone();
    let on_change = Closure::once_into_js(move || {
        let files = chosen.files().map_or_else(Vec::new, |list| (0..list.length()).filter_map(|i| list.get(i)).collect());
        on_pick(files);
    });
    input.set_onchange(Some(on_change.unchecked_ref()));
    input.click();
    Ok(())
}

/// Opens the browser's file dialog; the chosen file's bytes arrive through `tx`.
pub fn pick_file(tx: mpsc::Sender<Incoming>, repaint: egui::Context) -> Result<(), String> {
    pick_files(".json,.ort,.txt,.dat,.csv,.xy", false, false, move |files| {
        let Some(file) = files.into_iter().next() else {
            return;
        };
        let name = file.name();
        wasm_bindgen_futures::spawn_local(async move {
            let bytes = JsFuture::from(file.array_buffer()).await.map(|buffer| js_sys::Uint8Array::new(&buffer).to_vec()).map_err(js_error);
            let _ = tx.send((name, bytes));
            repaint.request_repaint();
        });
    })
}

/// Offers `bytes` as a download named `name`.
pub fn download(name: &str, bytes: &[u8], mime: &str) -> Result<(), String> {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let options = web_sys::BlobPropertyBag::new();
    options.set_type(mime);
    let blob = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &options).map_err(js_error)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(js_error)?;
    let anchor: web_sys::HtmlAnchorElement = document()?.create_element("a").map_err(js_error)?.dyn_into().map_err(|_| "cannot create a link".to_owned())?;
    anchor.set_href(&url);
    anchor.set_download(name);
    anchor.click();
    // Revoked a little later: some browsers start the download only after this task ends.
    let revoke = Closure::once_into_js(move || {
        let _ = web_sys::Url::revoke_object_url(&url);
    });
    if let Some(w) = web_sys::window() {
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(revoke.unchecked_ref(), 10_000);
    }
    Ok(())
}
