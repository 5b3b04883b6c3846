//! HDF5 reading for scatterlab, built on the pure-Rust `hdf5-reader` crate.
//!
//! `hdf5-reader` parses the file structure; this crate closes its gaps for detector data
//! (docs/plans/hdf5-loading.md): our own bitshuffle+LZ4 (32008) and HDF5-LZ4 (32004) decoders,
//! raw chunk access through its public index walkers, and storage back ends.

pub mod error;
pub mod filters;

pub use error::{DecodeError, H5Error, Result};
pub use filters::{filter_name, registry};

/// The version string recorded in provenance: this crate and the pinned readers it builds on.
pub const READER_VERSION: &str = concat!("scatterlab-hdf5 ", env!("CARGO_PKG_VERSION"), " (hdf5-reader 0.12.1, lz4_flex 0.14.2)");
