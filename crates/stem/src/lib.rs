//! 4D-STEM for scatterlab.
//!
//! [`load`] opens acquisitions as Dectris ARINA/EIGER detectors write them (a master file with
//! external links to `<prefix>_data_NNNNNN.h5` files, bitshuffle+LZ4 chunks) or as one file
//! with a `/entry/data/data` dataset, and reads frames, scan regions and binned frames with
//! the bad-pixel policy applied and recorded. Data model (CONVENTIONS.md):
//! `I[scan_row, scan_col, det_row, det_col]`, frame = `scan_row * scan_cols + scan_col`.

pub mod gpu;
pub mod load;
pub mod reduce;
pub mod sampling;
pub mod ssb;

/// This crate's version, as results record it (`"scatterlab-stem <VERSION>"`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub use load::{Acquisition, DirFileSet, FileSet, Hints, LoadError, MapFileSet, MaskPolicy, ReadOptions};
