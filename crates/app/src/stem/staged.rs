//! Files read in pieces that arrive asynchronously (the browser's `File`s: a page cannot read a
//! file synchronously outside a Web Worker). The HDF5 and STEM crates read synchronously, so a
//! read of bytes not yet here fails, the set records which bytes were wanted, the caller fetches
//! them (`Blob.slice().arrayBuffer()` in the browser) and tries again:
//! - opening parses the master and every data file's header and chunk index from ranges (read
//!   ahead by [`READ_AHEAD`]); once open, only the master's ranges are kept;
//! - streaming holds one data file whole at a time ([`StagedFiles::hold_only`]), so memory is one
//!   data file's compressed bytes plus the decoded frames, however many files there are.
//!
//! Nothing here touches the browser, so native tests drive it with files from disk.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use scatterlab_hdf5::storage::{DynStorage, Storage, StorageBuffer};
use scatterlab_stem::load::FileSet;

/// Bytes fetched from the start of a wanted range when opening: Dectris data files put one chunk
/// index node (a few KiB) between every few dozen chunks, so reading ahead further fetches chunks
/// (with 256 KiB, opening dev_medium fetched 16 MB: all of its data files).
pub const READ_AHEAD: u64 = 8 << 10;
/// The metadata block size staged files are parsed with ([`FileSet::metadata_block_bytes`]).
pub const METADATA_BLOCK: usize = 4 << 10;

/// One file of a staged set: its name, length and the bytes fetched so far.
#[derive(Debug)]
pub struct StagedFile {
    name: String,
    len: u64,
    bytes: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    /// The whole file, while the stream reads it.
    whole: Option<Arc<[u8]>>,
    /// Ranges fetched for metadata, by start offset.
    ranges: BTreeMap<u64, Arc<[u8]>>,
}

/// A range some read wanted and did not find: (file index, start, end).
pub type Wanted = (usize, u64, u64);

/// Files known by name and length whose bytes arrive later.
#[derive(Debug, Default)]
pub struct StagedFiles {
    files: Vec<Arc<StagedFile>>,
    wanted: Arc<Mutex<Option<Wanted>>>,
}

impl StagedFiles {
    /// A set of files given as (name, length in bytes), nothing fetched yet.
    pub fn new(files: impl IntoIterator<Item = (String, u64)>) -> Self {
        let files = files.into_iter().map(|(name, len)| Arc::new(StagedFile { name, len, bytes: Mutex::default() })).collect();
        Self { files, wanted: Arc::default() }
    }

    /// The files' names, in the order given.
    pub fn names(&self) -> Vec<String> {
        self.files.iter().map(|f| f.name.clone()).collect()
    }

    /// The index of file `name`.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.files.iter().position(|f| f.name == name)
    }

    /// The range the last failed read wanted (taken: the next call returns `None` until another
    /// read fails), widened to `read_ahead` bytes and clamped to the file.
    pub fn take_wanted(&self, read_ahead: u64) -> Option<Wanted> {
        let (i, start, end) = self.wanted.lock().ok()?.take()?;
        let len = self.files.get(i)?.len;
        Some((i, start, end.max(start.saturating_add(read_ahead)).min(len)))
    }

    /// Keeps `bytes` fetched from `start` of file `index` (metadata: kept while the set lives),
    /// merged with the ranges it overlaps or touches, so no byte is held twice.
    pub fn put_range(&self, index: usize, start: u64, bytes: Vec<u8>) {
        let Some(mut held) = self.files.get(index).and_then(|f| f.bytes.lock().ok()) else { return };
        let end = start + bytes.len() as u64;
        let touching: Vec<u64> = held.ranges.range(..=end).filter(|(&s, r)| s + r.len() as u64 >= start).map(|(&s, _)| s).collect();
        let (mut lo, mut hi) = (start, end);
        let parts: Vec<(u64, Arc<[u8]>)> = touching.iter().filter_map(|s| held.ranges.remove(s).map(|r| (*s, r))).collect();
        for (s, r) in &parts {
            lo = lo.min(*s);
            hi = hi.max(s + r.len() as u64);
        }
        let mut merged = vec![0u8; (hi - lo) as usize];
        for (s, r) in &parts {
            merged[(s - lo) as usize..(s - lo) as usize + r.len()].copy_from_slice(r);
        }
        merged[(start - lo) as usize..(end - lo) as usize].copy_from_slice(&bytes);
        held.ranges.insert(lo, merged.into());
    }

    /// Keeps the whole of file `index` (its length must match) and lets go of every other file
    /// held whole: the stream reads one data file at a time.
    pub fn put_whole(&self, index: usize, bytes: Arc<[u8]>) -> Result<(), String> {
        let file = self.files.get(index).ok_or_else(|| format!("no file number {index}"))?;
        if bytes.len() as u64 != file.len {
            return Err(format!("{}: read {} bytes of {}", file.name, bytes.len(), file.len));
        }
        self.hold_only(None);
        if let Ok(mut held) = file.bytes.lock() {
            held.whole = Some(bytes);
        }
        Ok(())
    }

    /// Lets go of the metadata ranges of every file except `keep` (once an acquisition is open
    /// its chunk indexes are parsed and the ranges are not read again; Dectris data files
    /// interleave index nodes with chunks, so opening fetches most of each file's pages).
    pub fn drop_ranges(&self, keep: Option<usize>) {
        for (i, f) in self.files.iter().enumerate() {
            if Some(i) != keep {
                if let Ok(mut held) = f.bytes.lock() {
                    held.ranges.clear();
                }
            }
        }
    }

    /// Lets go of every whole file except `keep`.
    pub fn hold_only(&self, keep: Option<usize>) {
        for (i, f) in self.files.iter().enumerate() {
            if Some(i) != keep {
                if let Ok(mut held) = f.bytes.lock() {
                    held.whole = None;
                }
            }
        }
    }

    /// Whether file `index` is held whole.
    pub fn is_whole(&self, index: usize) -> bool {
        self.files.get(index).and_then(|f| f.bytes.lock().ok()).is_some_and(|h| h.whole.is_some())
    }

    /// Bytes held now: whole files and metadata ranges (what this set costs in memory).
    pub fn held_bytes(&self) -> u64 {
        self.files.iter().filter_map(|f| f.bytes.lock().ok().map(|h| h.whole.as_ref().map_or(0, |w| w.len() as u64) + h.ranges.values().map(|r| r.len() as u64).sum::<u64>())).sum()
    }
}

impl FileSet for StagedFiles {
    fn open(&self, name: &str) -> scatterlab_stem::load::Result<Option<DynStorage>> {
        // Link targets may carry directories; the files of one acquisition sit together.
        let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
        Ok(self.index(base).and_then(|i| {
            let file = self.files.get(i)?.clone();
            Some(Arc::new(StagedStorage { file, index: i, wanted: self.wanted.clone() }) as DynStorage)
        }))
    }

    fn list(&self) -> Vec<String> {
        self.names()
    }

    fn metadata_block_bytes(&self) -> usize {
        METADATA_BLOCK
    }
}

/// One staged file as HDF5 storage.
struct StagedStorage {
    file: Arc<StagedFile>,
    index: usize,
    wanted: Arc<Mutex<Option<Wanted>>>,
}

impl Storage for StagedStorage {
    fn len(&self) -> u64 {
        self.file.len
    }

    fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<StorageBuffer> {
        let end = offset.saturating_add(len as u64);
        let not_here = || std::io::Error::other(format!("{}: bytes {offset}..{end} are not fetched yet", self.file.name));
        if end > self.file.len {
            return Err(
                std::io::Error::new(std::io::ErrorKind::UnexpectedEof, format!("{}: bytes {offset}..{end} lie past its end ({} bytes)", self.file.name, self.file.len)).into()
            );
        }
        let held = self.file.bytes.lock().map_err(|_| not_here())?;
        let found =
            held.whole.as_ref().map(|w| (0u64, w)).or_else(|| held.ranges.range(..=offset).next_back().filter(|(&start, r)| start + r.len() as u64 >= end).map(|(&s, r)| (s, r)));
        if let Some((start, bytes)) = found {
            return StorageBuffer::from_shared(bytes.clone(), (offset - start) as usize, len);
        }
        if let Ok(mut w) = self.wanted.lock() {
            *w = Some((self.index, offset, end));
        }
        Err(not_here().into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_ranges_merge_and_read_back() {
        let file: Vec<u8> = (0..64u8).collect();
        let files = StagedFiles::new([("a.h5".to_owned(), 64)]);
        files.put_range(0, 0, file[0..10].to_vec());
        files.put_range(0, 20, file[20..30].to_vec());
        files.put_range(0, 40, file[40..48].to_vec());
        files.put_range(0, 5, file[5..25].to_vec());
        assert_eq!(files.held_bytes(), 30 + 8, "0..30 merged, 40..48 apart");
        let storage = files.open("a.h5").expect("set").expect("file");
        let read = storage.read_range(3, 25).expect("0..30 is held");
        assert_eq!(read.as_ref(), &file[3..28]);
        assert!(storage.read_range(28, 4).is_err(), "30..32 was never fetched");
        assert_eq!(files.take_wanted(0), Some((0, 28, 32)));
    }
}
