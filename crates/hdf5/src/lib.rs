//! HDF5 reading for scatterlab, built on the pure-Rust `hdf5-reader` crate (pinned `=0.12.1`).
//!
//! `hdf5-reader` parses the file structure; this crate closes its gaps for detector data
//! (docs/plans/hdf5-loading.md):
//! - [`filters`]: our bitshuffle+LZ4 (32008) and multi-block HDF5-LZ4 (32004) decoders, writing
//!   into caller buffers, and [`registry`] to plug them into hdf5-reader's typed reads;
//! - [`raw`]: a dataset's dense chunk table from any chunk index type, chunk bytes read in a few
//!   large requests, and decoding straight into a reused frame buffer;
//! - [`storage`]: where bytes come from (native file, memory, a read counter for tests);
//! - [`links`](mod@links) and [`tree`](mod@tree): a group's links (external ones included, compact or dense) and
//!   the file browser's tree of groups, datasets and links, errors caught per object;
//! - [`values`]: numbers and strings of metadata whatever their stored type; [`hash`]: source
//!   file hashes for provenance;
//! - [`H5File`]: an open file that names itself in every [`H5Error`].
//!
//! ```no_run
//! # fn main() -> scatterlab_hdf5::Result<()> {
//! let file = scatterlab_hdf5::H5File::open_path("dev_small_data_000001.h5")?;
//! let ds = scatterlab_hdf5::open_raw(&file, "/entry/data/data")?;
//! let (mut frame, mut scratch) = (vec![0u8; ds.chunk_bytes() as usize], Vec::new());
//! ds.read_chunks(&file, 0..ds.n_chunks(), |i, loc, bytes| {
//!     ds.decode_chunk_into(i, loc, bytes, &mut frame, &mut scratch)
//! })?;
//! # Ok(())
//! # }
//! ```

// Sizes read from a user's file flow through this crate into allocations and slices, and wasm32's
// usize is 32 bits: every narrowing conversion is checked (or says why it cannot truncate).
#![warn(clippy::cast_possible_truncation)]

pub mod error;
pub mod file;
pub mod filters;
pub mod hash;
pub mod links;
pub mod raw;
pub mod storage;
pub mod tree;
pub mod values;

pub use error::{DecodeError, H5Error, Result};
pub use file::H5File;
pub use filters::{filter_name, registry};
pub use hash::{hash_storage, HashKind};
pub use links::{links, LinkInfo, LinkTarget};
pub use raw::{open_raw, ChunkLoc, RawDataset, RawLayout};
pub use tree::{tree, Node, NodeKind, Tree, TreeOptions};

/// The version string recorded in provenance: this crate and the pinned readers it builds on.
pub const READER_VERSION: &str = concat!("scatterlab-hdf5 ", env!("CARGO_PKG_VERSION"), " (hdf5-reader 0.12.1, own bitshuffle+LZ4 and LZ4 block decoders)");
