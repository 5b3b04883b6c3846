//! HDF5 / 4D-STEM files in the browser: the user's picked or dropped `File`s read in a Web
//! Worker through `FileReaderSync`, range by range (`BlobStorage`, wasm32 only), never whole.
//!
//! JS: `H5Session.open(files)` → `tree(name)`, `stemInfo(master)`, `readFrames(first, n)`,
//! `streamStart()` + `streamNext(maxFrames)` (one batch per call, so the worker yields between
//! batches and sees a cancel), `reduce(options)` (the CLI's 4D-STEM products, [`reduce`]),
//! `display(values, options)` (RGBA), `ssb(options)` (single-sideband ptychography of the open
//! acquisition, [`ssb`]). The npm wrapper drives it from its worker (`web/src/worker.ts`).

mod info;
#[cfg(target_arch = "wasm32")]
mod js;
pub mod reduce;
mod session;
pub mod ssb;
#[cfg(target_arch = "wasm32")]
mod storage;

pub use info::{DataFileInfo, StemInfo};
#[cfg(target_arch = "wasm32")]
pub use js::H5Session;
pub use session::{parse_mask, H5Core, StreamStep, MAX_READ_BYTES};
#[cfg(target_arch = "wasm32")]
pub use storage::{BlobStorage, NEEDS_WORKER};

#[cfg(test)]
mod ssb_tests;
#[cfg(test)]
mod tests;
