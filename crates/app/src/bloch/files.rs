//! Files in and out of the Bloch workspace: on the desktop typed paths and an export folder,
//! each with the system's dialog beside it ([`dialog_button`]); in the browser the app's file picker (`refl_fit::web_io`, the same `<input type=file>` the other
//! workspaces use) reading picked files as text, and downloads.

use std::sync::mpsc;

/// Picked files as (name, text or why it could not be read).
pub type PickedTexts = Vec<(String, Result<String, String>)>;

/// Saves `bytes` as `name`: into folder `dir` on the desktop, as a download in the browser.
/// Returns what happened, for the page's message line.
#[cfg(not(target_arch = "wasm32"))]
pub fn save(dir: &str, name: &str, bytes: &[u8], _mime: &str) -> Result<String, String> {
    let dir = if dir.trim().is_empty() { "." } else { dir.trim() };
    let path = std::path::Path::new(dir).join(name);
    std::fs::write(&path, bytes).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(format!("wrote {}", path.display()))
}

/// Saves `bytes` as `name`: into folder `dir` on the desktop, as a download in the browser.
/// Returns what happened, for the page's message line.
#[cfg(target_arch = "wasm32")]
pub fn save(_dir: &str, name: &str, bytes: &[u8], mime: &str) -> Result<String, String> {
    crate::refl_fit::web_io::download(name, bytes, mime).map_err(|e| format!("cannot download {name}: {e}"))?;
    Ok(format!("downloading {name}"))
}

/// Opens the browser's file dialog (`accept`, several files with `multiple`); the chosen files'
/// texts arrive together through the returned receiver, and the UI is asked to repaint.
#[cfg(target_arch = "wasm32")]
pub fn pick_texts(accept: &str, multiple: bool, repaint: egui::Context) -> Result<mpsc::Receiver<PickedTexts>, String> {
    use wasm_bindgen_futures::JsFuture;
    let (tx, rx) = mpsc::channel();
    crate::refl_fit::web_io::pick_files(accept, multiple, false, move |files| {
        wasm_bindgen_futures::spawn_local(async move {
            let mut out = Vec::with_capacity(files.len());
            for file in files {
                let text = JsFuture::from(file.text()).await.map_err(crate::refl_fit::web_io::js_error).and_then(|v| v.as_string().ok_or_else(|| "not text".to_owned()));
                out.push((file.name(), text));
            }
            let _ = tx.send(out);
            repaint.request_repaint();
        });
    })?;
    Ok(rx)
}

/// The desktop has no browser picker: paths are typed instead.
#[cfg(not(target_arch = "wasm32"))]
pub fn pick_texts(_accept: &str, _multiple: bool, _repaint: egui::Context) -> Result<mpsc::Receiver<PickedTexts>, String> {
    Err("type a path on the desktop".to_owned())
}

/// The files dropped on the window this frame, read as text and sent through `tx` (natively at
/// once; in the browser when their bytes arrive, with a repaint).
pub fn take_dropped(ctx: &egui::Context, tx: &mpsc::Sender<PickedTexts>) {
    let dropped = ctx.input(|i| i.raw.dropped_files.clone());
    if dropped.is_empty() {
        return;
    }
    let name_of = |file: &egui::DroppedFileHandle| file.path().file_name().map_or_else(|| "dropped file".to_owned(), |n| n.to_string_lossy().into_owned());
    let text = |bytes: Result<Vec<u8>, String>| bytes.and_then(|b| String::from_utf8(b).map_err(|_| "not UTF-8 text".to_owned()));
    #[cfg(not(target_arch = "wasm32"))]
    {
        let _ = tx.send(dropped.iter().map(|f| (name_of(f), text(f.bytes()))).collect());
    }
    #[cfg(target_arch = "wasm32")]
    {
        let (tx, repaint) = (tx.clone(), ctx.clone());
        let named: Vec<_> = dropped.into_iter().map(|f| (name_of(&f), f)).collect();
        wasm_bindgen_futures::spawn_local(async move {
            let mut out = Vec::with_capacity(named.len());
            for (name, file) in named {
                out.push((name, text(file.bytes_async().await)));
            }
            let _ = tx.send(out);
            repaint.request_repaint();
        });
    }
}

/// A button that asks with the system's dialog (desktop, `rfd`, as the other workspaces do) and
/// gives the chosen path once, in the frame after the user answered. The open dialog is kept in
/// the UI's memory under the button's label and `ask`'s title, so the pages' states stay plain
/// data that hosts and tests build; the typed path fields stay beside the button.
#[cfg(not(target_arch = "wasm32"))]
pub fn dialog_button(ui: &mut egui::Ui, label: &str, hover: &str, ask: crate::file_dialog::Ask) -> Option<std::path::PathBuf> {
    let title = match &ask {
        crate::file_dialog::Ask::OpenFile { title } | crate::file_dialog::Ask::Folder { title } => *title,
    };
    let id = egui::Id::unique(("bloch file dialog", label.to_owned(), title));
    let mut pending: crate::file_dialog::Pending = ui.data_mut(|d| d.get_temp(id)).unwrap_or_default();
    let button = ui.add_enabled(!pending.is_open(), egui::Button::new(label)).on_hover_text(hover);
    if button.clicked() {
        pending.start(ask, ui.ctx());
    }
    let answer = pending.take();
    ui.data_mut(|d| d.insert_temp(id, pending));
    answer
}
