//! Browser-only: 4D-STEM files the user picked or dropped, opened without reading them whole.
//! The acquisition opens from byte ranges (`Blob.slice().arrayBuffer()`, see [`super::staged`]);
//! while frames stream, each data file is read whole when the stream reaches it and let go after.
//!
//! The Browse page reads the master whole and the data files its links reach in ranges, one
//! fetch at a time as it asks for them ([`fetch_for_browse`]).
//!
//! Results arrive from `spawn_local` tasks, so they wait in this thread's inbox until the next UI
//! frame hands them to the workspace ([`deliver`]); a later open supersedes an earlier one still
//! in flight (its result is dropped).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;

use scatterlab_stem::load::Acquisition;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use crate::refl_fit::web_io::{self, js_error};

use super::browse::ExtraFile;
use super::staged::StagedFiles;
use super::staged_open::{open_staged, pick_master};
use super::StemPanel;

/// An opened acquisition with its staged files and the browser files behind them.
type Opened = (Acquisition, Arc<StagedFiles>, Rc<Vec<web_sys::File>>);
/// A range fetched for the Browse page: (generation, file index, start, bytes or why not).
type Fetched = (u64, usize, u64, Result<Vec<u8>, String>);

thread_local! {
    /// The number of the latest open (results of earlier ones are dropped).
    static GENERATION: Cell<u64> = const { Cell::new(0) };
    /// What the latest open produced, until the next frame takes it.
    static INBOX: RefCell<Option<Result<Opened, String>>> = const { RefCell::new(None) };
    /// Errors reading a data file while streaming, until the next frame shows them.
    static STREAM_ERRORS: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
    /// Set when an open finished: the app switches to the 4D-STEM workspace.
    static FOCUS: Cell<bool> = const { Cell::new(false) };
    /// The opened master read whole for the Browse page: (generation, file for the browser).
    static MASTER: RefCell<Option<(u64, ExtraFile)>> = const { RefCell::new(None) };
    /// The picked files of the latest open, which the Browse page fetches ranges of.
    static BROWSE_FILES: RefCell<Option<Rc<Vec<web_sys::File>>>> = const { RefCell::new(None) };
    /// Whether a range for the Browse page is being fetched (one at a time).
    static FETCHING: Cell<bool> = const { Cell::new(false) };
    /// A range fetched for the Browse page, until the next frame hands it over.
    static FETCHED: RefCell<Option<Fetched>> = const { RefCell::new(None) };
}

/// Largest master read whole for the Browse page (a single file with its frames inside can be
/// large: its tree is then not listed, the frames in memory are).
const BROWSE_MASTER_MAX: u64 = 64 << 20;

/// Bytes `start..end` of `file`.
async fn read_range(file: web_sys::File, start: u64, end: u64) -> Result<Vec<u8>, String> {
    let blob = file.slice_with_f64_and_f64(start as f64, end as f64).map_err(|e| format!("{}: {}", file.name(), js_error(e)))?;
    let buffer = JsFuture::from(blob.array_buffer()).await.map_err(|e| format!("{}: {}", file.name(), js_error(e)))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}

/// The whole of `file` (`len` bytes), copied once from the browser's buffer into the shared
/// bytes the stream reads (a `Vec` turned into an `Arc<[u8]>` would be a second copy of a data
/// file on the heap).
async fn read_whole(file: web_sys::File, len: u64) -> Result<Arc<[u8]>, String> {
    let name = file.name();
    let buffer = JsFuture::from(file.array_buffer()).await.map_err(|e| format!("{name}: {}", js_error(e)))?;
    let array = js_sys::Uint8Array::new(&buffer);
    if u64::from(array.length()) != len {
        return Err(format!("{name}: read {} bytes of {len}", array.length()));
    }
    let mut bytes: Arc<[u8]> = std::iter::repeat_n(0u8, array.length() as usize).collect();
    let target = Arc::get_mut(&mut bytes).ok_or_else(|| format!("{name}: buffer shared"))?;
    array.copy_to(target);
    Ok(bytes)
}

/// Reads the opened master whole (if small) for the Browse page; the next frame lists it.
fn read_master_for_browse(acq: &Acquisition, staged: &StagedFiles, files: &[web_sys::File], ctx: &egui::Context) {
    let name = acq.master().to_owned();
    let Some(file) = staged.index(&name).and_then(|i| files.get(i)).cloned() else { return };
    let len = file.size() as u64;
    if len > BROWSE_MASTER_MAX {
        return;
    }
    let (present, generation, repaint) = (staged.names(), GENERATION.with(Cell::get), ctx.clone());
    // The browser's own set of the picked files (the stream's lets go of what it read), which
    // the data files' trees and quick views are fetched into as the page asks.
    let browse = Arc::new(StagedFiles::new(files.iter().map(|f| (f.name(), f.size() as u64))));
    spawn_local(async move {
        match read_range(file, 0, len).await {
            Ok(bytes) => {
                let extra = ExtraFile { name, storage: scatterlab_hdf5::storage::bytes(bytes), present, staged: Some(browse) };
                MASTER.with(|m| *m.borrow_mut() = Some((generation, extra)));
            }
            // Browse then lists the frames only; loading goes on.
            Err(e) => log::warn!("reading the master for Browse: {e}"),
        }
        repaint.request_repaint();
    });
}

/// Opens the acquisition among `files` (its `*_master.h5`, else the only HDF5 file) in the
/// background; the next UI frame after it opened starts loading it.
pub fn open_files(files: Vec<web_sys::File>, repaint: egui::Context) {
    let generation = GENERATION.with(|g| {
        g.set(g.get() + 1);
        g.get()
    });
    let post = move |result: Result<Opened, String>| {
        if GENERATION.with(Cell::get) == generation {
            INBOX.with(|i| *i.borrow_mut() = Some(result));
            FOCUS.with(|f| f.set(true));
        }
        repaint.request_repaint();
    };
    let names: Vec<String> = files.iter().map(web_sys::File::name).collect();
    let master = match pick_master(&names) {
        Ok(m) => m,
        Err(e) => return post(Err(e)),
    };
    let staged = Arc::new(StagedFiles::new(names.into_iter().zip(files.iter().map(|f| f.size() as u64))));
    let files = Rc::new(files);
    spawn_local(async move {
        let fetch = |i: usize, start: u64, end: u64| {
            let file = files.get(i).cloned();
            async move { read_range(file.ok_or_else(|| format!("no file number {i}"))?, start, end).await }
        };
        let result = open_staged(&staged, &master, fetch).await;
        post(result.map(|acq| (acq, staged.clone(), files.clone())));
    });
}

/// Opens the browser's file dialog (several files, for a master and its data files), or with
/// `folder` its folder dialog (`webkitdirectory`, where the browser has one: every HDF5 file of
/// the folder is offered, and the folder's one master opens).
pub fn pick_files(repaint: egui::Context, folder: bool) -> Result<(), String> {
    const HDF5: [&str; 4] = [".h5", ".hdf5", ".nxs", ".hdf"];
    web_io::pick_files(&HDF5.join(","), true, folder, move |files| {
        let hdf5 = |f: &web_sys::File| HDF5.iter().any(|x| f.name().to_lowercase().ends_with(x));
        let files: Vec<web_sys::File> = files.into_iter().filter(hdf5).collect();
        if !files.is_empty() {
            open_files(files, repaint);
        }
    })
}

/// Whether an open finished since the last call (the app then shows the 4D-STEM workspace).
pub fn take_focus() -> bool {
    FOCUS.with(|f| f.replace(false))
}

/// Hands what arrived since the last frame to `panel`: an opened acquisition starts loading (its
/// data files are read whole one at a time as the stream reaches them), an error is shown.
pub fn deliver(panel: &mut StemPanel, ctx: &egui::Context) {
    for e in STREAM_ERRORS.with(|s| std::mem::take(&mut *s.borrow_mut())) {
        panel.cancel();
        panel.set_error(e);
    }
    if let Some((generation, extra)) = MASTER.with(|m| m.borrow_mut().take()) {
        if generation == GENERATION.with(Cell::get) {
            panel.browser.set_extra(Some(extra));
        }
    }
    fetch_for_browse(panel, ctx);
    let Some(result) = INBOX.with(|i| i.borrow_mut().take()) else { return };
    match result {
        Ok((acq, staged, files)) => {
            read_master_for_browse(&acq, &staged, &files, ctx);
            BROWSE_FILES.with(|b| *b.borrow_mut() = Some(files.clone()));
            let (held, repaint) = (staged.clone(), ctx.clone());
            let request = Box::new(move |i: usize| {
                let (held, repaint, file) = (held.clone(), repaint.clone(), files.get(i).cloned());
                spawn_local(async move {
                    let Some(file) = file else { return };
                    let len = file.size() as u64;
                    let whole = match read_whole(file, len).await {
                        Ok(bytes) => held.put_whole(i, bytes),
                        Err(e) => Err(e),
                    };
                    if let Err(e) = whole {
                        STREAM_ERRORS.with(|s| s.borrow_mut().push(format!("reading a data file: {e}")));
                    }
                    repaint.request_repaint();
                });
            });
            panel.open_staged(acq, staged, request);
        }
        Err(e) => panel.set_error(e),
    }
}

/// Hands the Browse page the range it waited for, then fetches the next range it wants (one at
/// a time: each arrival may make the reader ask for another).
fn fetch_for_browse(panel: &mut StemPanel, ctx: &egui::Context) {
    if let Some((generation, i, start, bytes)) = FETCHED.with(|f| f.borrow_mut().take()) {
        FETCHING.with(|f| f.set(false));
        if generation == GENERATION.with(Cell::get) {
            panel.browser.put_range(i, start, bytes);
        }
    }
    if FETCHING.with(Cell::get) {
        return;
    }
    let Some((i, start, end)) = panel.browser.wanted() else { return };
    let Some(file) = BROWSE_FILES.with(|b| b.borrow().as_ref().and_then(|f| f.get(i).cloned())) else {
        return panel.browser.put_range(i, start, Err(format!("picked file number {i} is no longer available")));
    };
    FETCHING.with(|f| f.set(true));
    let (generation, repaint) = (GENERATION.with(Cell::get), ctx.clone());
    spawn_local(async move {
        let bytes = read_range(file, start, end).await;
        FETCHED.with(|f| *f.borrow_mut() = Some((generation, i, start, bytes)));
        repaint.request_repaint();
    });
}
