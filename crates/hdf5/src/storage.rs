//! Storage back ends: where the bytes of a file come from.
//!
//! Everything is hdf5-reader's [`Storage`] trait (positioned reads of a byte range), so the same
//! reader runs over a native file, bytes in memory, and (in the browser, later) `Blob` slices.
//! Chunk data is read from the plain storage in large coalesced ranges ([`crate::raw`]); only
//! metadata goes through [`cached`], which turns the many small header and index reads into
//! few block reads (they matter where a read has a fixed cost, like `FileReaderSync`).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use hdf5_reader::storage::{BlockCacheStorage, BytesStorage, FileStorage};
pub use hdf5_reader::storage::{DynStorage, Storage, StorageBuffer};

use crate::error::{H5Error, Result};

/// Block size of the metadata cache ([`cached`]).
pub const METADATA_BLOCK_BYTES: usize = 64 * 1024;
/// Blocks the metadata cache keeps (64 × 64 KiB = 4 MiB).
pub const METADATA_BLOCKS: usize = 64;

/// A native file, read with positioned reads (`pread` / `seek_read`): no memory map, so a file
/// that changes or shrinks underneath gives read errors, not a crash.
pub fn open_native(path: impl AsRef<Path>) -> Result<DynStorage> {
    let path = path.as_ref();
    let file = path.display().to_string();
    match std::fs::File::open(path) {
        Ok(f) => FileStorage::from_file(f).map(|s| Arc::new(s) as DynStorage).map_err(|e| H5Error::Io { file, detail: e.to_string() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(H5Error::MissingFile { name: file, needed_by: "open".into() }),
        Err(e) => Err(H5Error::Io { file, detail: e.to_string() }),
    }
}

/// Bytes in memory (tests, small files, files fetched whole).
pub fn bytes(data: Vec<u8>) -> DynStorage {
    Arc::new(BytesStorage::new(data))
}

/// `inner` behind an LRU cache of [`METADATA_BLOCKS`] blocks of [`METADATA_BLOCK_BYTES`], for
/// metadata reads.
pub fn cached(inner: DynStorage) -> DynStorage {
    cached_with(inner, METADATA_BLOCK_BYTES)
}

/// `inner` behind an LRU cache of `block_bytes` blocks (at least 512 B), as many as make
/// [`METADATA_BLOCKS`] × [`METADATA_BLOCK_BYTES`] (4 MiB).
pub fn cached_with(inner: DynStorage, block_bytes: usize) -> DynStorage {
    let block = block_bytes.max(512);
    Arc::new(BlockCacheStorage::new(inner, block, (METADATA_BLOCKS * METADATA_BLOCK_BYTES / block).max(1)))
}

/// Counts of the reads a [`Metered`] storage served.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadStats {
    /// Number of `read_range` calls.
    pub reads: u64,
    /// Bytes returned in total.
    pub bytes: u64,
    /// The largest single read, in bytes.
    pub peak: u64,
}

/// A storage that counts its reads, for tests of read coalescing and memory bounds.
pub struct Metered {
    inner: DynStorage,
    reads: AtomicU64,
    bytes: AtomicU64,
    peak: AtomicU64,
}

impl Metered {
    /// Wraps `inner`.
    pub fn new(inner: DynStorage) -> Arc<Self> {
        Arc::new(Self { inner, reads: AtomicU64::new(0), bytes: AtomicU64::new(0), peak: AtomicU64::new(0) })
    }

    /// The counts so far.
    pub fn stats(&self) -> ReadStats {
        ReadStats { reads: self.reads.load(Ordering::Relaxed), bytes: self.bytes.load(Ordering::Relaxed), peak: self.peak.load(Ordering::Relaxed) }
    }

    /// Sets the counts back to zero.
    pub fn reset(&self) {
        for c in [&self.reads, &self.bytes, &self.peak] {
            c.store(0, Ordering::Relaxed);
        }
    }
}

impl Storage for Metered {
    fn len(&self) -> u64 {
        self.inner.len()
    }

    fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<StorageBuffer> {
        let out = self.inner.read_range(offset, len)?;
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(out.len() as u64, Ordering::Relaxed);
        self.peak.fetch_max(out.len() as u64, Ordering::Relaxed);
        Ok(out)
    }
}
