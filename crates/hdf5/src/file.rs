//! An open HDF5 file: hdf5-reader's handle (metadata, typed reads) plus the plain storage that
//! chunk data is read from, and the name every error carries.

use hdf5_reader::{Hdf5File, OpenOptions};

use crate::error::{H5Error, Result};
use crate::filters::registry;
use crate::storage::{cached_with, open_native, DynStorage, StorageBuffer, METADATA_BLOCK_BYTES};

/// An open HDF5 file.
pub struct H5File {
    inner: Hdf5File,
    raw: DynStorage,
    base: u64,
    name: String,
}

impl H5File {
    /// Opens `storage` as HDF5. `name` is how errors refer to the file (its file name).
    ///
    /// Metadata is read through a 4 MiB block cache ([`crate::storage::cached`]); chunk data is
    /// read from `storage` directly. hdf5-reader's chunk cache is off (`chunk_cache_bytes = 0`):
    /// bulk reads stream every chunk once, and retaining them would only grow the heap.
    pub fn open(storage: DynStorage, name: impl Into<String>) -> Result<Self> {
        Self::open_with_block(storage, name, METADATA_BLOCK_BYTES)
    }

    /// [`Self::open`] with metadata read in blocks of `block_bytes` (the cache keeps 4 MiB).
    /// Small blocks suit storages fetched range by range (the browser's files before they are
    /// read whole): chunk index nodes lie between the chunks, so 64 KiB blocks would fetch
    /// nearly all of a Dectris data file to read its index.
    pub fn open_with_block(storage: DynStorage, name: impl Into<String>, block_bytes: usize) -> Result<Self> {
        let name = name.into();
        let options = OpenOptions::default().with_chunk_cache_bytes(0).with_filter_registry(registry());
        let inner = Hdf5File::from_storage_with_options(cached_with(storage.clone(), block_bytes), options).map_err(|source| H5Error::Open { file: name.clone(), source })?;
        let base = inner.superblock().base_address;
        Ok(Self { inner, raw: storage, base, name })
    }

    /// Opens a native file by path; errors name it by its file name.
    pub fn open_path(path: impl AsRef<std::path::Path>) -> Result<Self> {
        let path = path.as_ref();
        let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
        Self::open(open_native(path)?, name)
    }

    /// The name errors use.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// hdf5-reader's handle (groups, datasets, attributes, typed reads with our filters).
    pub fn reader(&self) -> &Hdf5File {
        &self.inner
    }

    /// Total bytes of the underlying storage.
    pub fn len(&self) -> u64 {
        self.raw.len()
    }

    /// Whether the storage is empty (it never is for a file that opened).
    pub fn is_empty(&self) -> bool {
        self.raw.len() == 0
    }

    /// Reads `len` bytes at HDF5 address `addr` (relative to the superblock, as every address
    /// in the file is) from the uncached storage. `object` names what is read, for errors.
    pub fn read_at(&self, addr: u64, len: usize, object: &str) -> Result<StorageBuffer> {
        let offset =
            self.base.checked_add(addr).ok_or_else(|| H5Error::Format { file: self.name.clone(), object: object.to_string(), detail: format!("address {addr:#x} overflows") })?;
        let end = offset.checked_add(len as u64);
        if end.is_none_or(|e| e > self.raw.len()) {
            return Err(H5Error::Format {
                file: self.name.clone(),
                object: object.to_string(),
                detail: format!("{len} bytes at address {addr:#x} run past the end of the file ({} bytes)", self.raw.len()),
            });
        }
        self.raw.read_range(offset, len).map_err(|e| H5Error::Io { file: self.name.clone(), detail: format!("{object}: {e}") })
    }

    /// Turns an hdf5-reader error about `object` into ours.
    pub fn err(&self, object: &str, e: hdf5_reader::error::Error) -> H5Error {
        H5Error::from_reader(&self.name, object, e)
    }
}
