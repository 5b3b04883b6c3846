//! `BlobStorage`: hdf5-reader's [`Storage`] over a browser `Blob` (a picked or dropped `File`),
//! read range by range with `FileReaderSync`, so a 20 GB acquisition is never held in wasm
//! memory: only the metadata cache (4 MiB) and the chunk reads in flight (≤ 4 MiB each).
//!
//! Why here and not in `scatterlab-hdf5`: the domain crates stay free of browser bindings and
//! build and test the same on every target; a `Blob` back end is web glue, and the web crate may
//! import the domains but not the other way round. Its only user is the npm package's worker
//! (the egui app, issue 8, spawns that same worker: `FileReaderSync` does not exist on the main
//! thread where eframe runs), so nothing else needs it.
//!
//! `Storage` must be `Send + Sync`, which JS objects are not. Without `unsafe`: the `Blob` and
//! its reader live in a thread-local registry, and the storage holds only the slot's number
//! (wasm32 without threads has one thread; on any other thread the slot is simply not found and
//! reads fail with an error saying so). Dropping the storage frees the slot.

use std::cell::RefCell;

use hdf5_reader::error::{Error as ReaderError, Result as ReaderResult};
use scatterlab_hdf5::storage::{Storage, StorageBuffer};
use scatterlab_hdf5::H5Error;
use wasm_bindgen::JsValue;
use web_sys::{Blob, FileReaderSync};

/// What [`BlobStorage::new`] says when `FileReaderSync` is missing (the page's main thread).
pub const NEEDS_WORKER: &str = "FileReaderSync is only available in a Web Worker: open files from the scatterlab worker \
                                (Scatterlab.openFiles), not on the page's main thread";

struct Entry {
    blob: Blob,
    reader: FileReaderSync,
}

thread_local! {
    /// Open blobs by slot; `None` = free slot.
    static REGISTRY: RefCell<Vec<Option<Entry>>> = const { RefCell::new(Vec::new()) };
}

/// A `Blob` (or `File`) as HDF5 storage: positioned reads of `blob.slice(off, off + len)`.
#[derive(Debug)]
pub struct BlobStorage {
    slot: usize,
    len: u64,
    name: String,
}

impl BlobStorage {
    /// Registers `blob`; `name` is how read errors refer to it. Fails with an error saying a
    /// Web Worker is needed where `FileReaderSync` does not exist (the main thread).
    pub fn new(blob: &Blob, name: impl Into<String>) -> Result<Self, H5Error> {
        let name = name.into();
        let reader = FileReaderSync::new().map_err(|e| H5Error::Io { file: name.clone(), detail: format!("{NEEDS_WORKER} ({})", describe(&e)) })?;
        let len = blob.size();
        if !(len.is_finite() && len >= 0.0) {
            return Err(H5Error::Io { file: name, detail: format!("Blob.size is {len}") });
        }
        let entry = Entry { blob: blob.clone(), reader };
        let slot = REGISTRY.with(|r| {
            let mut r = r.borrow_mut();
            match r.iter().position(Option::is_none) {
                Some(i) => {
                    if let Some(s) = r.get_mut(i) {
                        *s = Some(entry);
                    }
                    i
                }
                None => {
                    r.push(Some(entry));
                    r.len() - 1
                }
            }
        });
        Ok(Self { slot, len: len as u64, name })
    }

    /// The name errors use.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Blobs registered and not yet dropped (for tests of the slot bookkeeping).
    pub fn live() -> usize {
        REGISTRY.with(|r| r.borrow().iter().filter(|e| e.is_some()).count())
    }

    fn fail(&self, what: String) -> ReaderError {
        ReaderError::Io(std::io::Error::other(format!("{}: {what}", self.name)))
    }
}

impl Storage for BlobStorage {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_range(&self, offset: u64, len: usize) -> ReaderResult<StorageBuffer> {
        let end = offset.checked_add(len as u64).filter(|&e| e <= self.len);
        let Some(end) = end else {
            return Err(self.fail(format!("read of {len} bytes at {offset} runs past the end ({} bytes)", self.len)));
        };
        let buffer = REGISTRY.with(|r| {
            let r = r.borrow();
            let Some(Some(entry)) = r.get(self.slot) else {
                return Err(format!("blob slot {} is not registered on this thread", self.slot));
            };
            let slice = entry.blob.slice_with_f64_and_f64(offset as f64, end as f64).map_err(|e| format!("Blob.slice: {}", describe(&e)))?;
            entry.reader.read_as_array_buffer(&slice).map_err(|e| format!("FileReaderSync.readAsArrayBuffer at {offset}: {}", describe(&e)))
        });
        let buffer = buffer.map_err(|what| self.fail(what))?;
        let bytes = js_sys::Uint8Array::new(&buffer);
        if bytes.length() as usize != len {
            // The file changed (or shrank) after it was picked.
            return Err(self.fail(format!("asked for {len} bytes at {offset}, the browser returned {}", bytes.length())));
        }
        let mut out = vec![0u8; len];
        bytes.copy_to(&mut out);
        Ok(StorageBuffer::from_vec(out))
    }
}

impl Drop for BlobStorage {
    fn drop(&mut self) {
        // `try_with`: during thread teardown the registry may already be gone; nothing to free then.
        let _ = REGISTRY.try_with(|r| {
            if let Ok(mut r) = r.try_borrow_mut() {
                if let Some(s) = r.get_mut(self.slot) {
                    *s = None;
                }
            }
        });
    }
}

/// A thrown JS value in words.
fn describe(e: &JsValue) -> String {
    crate::describe_js(e)
}
