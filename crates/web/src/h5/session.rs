//! The logic behind the JS `H5Session` handle, independent of where bytes come from (the
//! browser's `BlobStorage`, native files in the unit tests): a set of files by name, one
//! opened acquisition, and one pull stream over it. Errors are strings naming the file or
//! object (the handle turns them into JS `Error`s).

use scatterlab_hdf5::storage::DynStorage;
use scatterlab_hdf5::{tree, H5File, TreeOptions};
use scatterlab_stem::load::{Acquisition, FileSet, FrameBatch, Hints, MapFileSet, MaskPolicy, PixelData, StreamCursor};

use super::info::StemInfo;

/// Largest `readFrames` result: bigger reads belong in a stream (the wasm heap holds the result).
pub const MAX_READ_BYTES: usize = 256 << 20;

/// Files by name, the acquisition opened by the last `stem_info`, and its stream.
pub struct H5Core {
    files: MapFileSet,
    names: Vec<String>,
    acq: Option<Acquisition>,
    cursor: Option<StreamCursor>,
}

/// One step of a pull stream: a batch (absent once done) and the progress after it.
pub struct StreamStep<'a> {
    /// The batch, `None` when every frame was already delivered.
    pub batch: Option<FrameBatch<'a>>,
    /// Frames delivered so far, this batch included.
    pub frames_done: u64,
    /// Total frames.
    pub frames_total: u64,
}

/// Parses the JS mask policy: `"zero"` (default: bad pixels set to 0) or `"keep"`.
pub fn parse_mask(mask: Option<&str>) -> Result<MaskPolicy, String> {
    match mask {
        None | Some("zero") => Ok(MaskPolicy::ZeroMasked),
        Some("keep") => Ok(MaskPolicy::Keep),
        Some(other) => Err(format!("mask: unknown policy {other:?} (expected \"zero\" or \"keep\")")),
    }
}

impl H5Core {
    /// A session over `files` (name, storage); a later file of the same name replaces an earlier one.
    pub fn new(files: Vec<(String, DynStorage)>) -> Result<Self, String> {
        if files.is_empty() {
            return Err("open: no files given".into());
        }
        let mut set = MapFileSet::new();
        for (name, storage) in files {
            set.insert(name, storage);
        }
        let names = set.list();
        Ok(Self { files: set, names, acq: None, cursor: None })
    }

    /// The file names, sorted.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    fn storage(&self, name: &str, op: &str) -> Result<DynStorage, String> {
        self.files.open(name).map_err(|e| e.to_string())?.ok_or_else(|| format!("{op}: no file named {name:?} among the opened files ({})", self.names.join(", ")))
    }

    /// The tree of file `name` as JSON ([`scatterlab_hdf5::Tree`]); external links are marked
    /// resolved when their target file is in the set.
    pub fn tree_json(&self, name: &str) -> Result<String, String> {
        let file = H5File::open(self.storage(name, "tree")?, name).map_err(|e| e.to_string())?;
        let mut t = tree(&file, &TreeOptions::default());
        t.resolve_external(|f| self.files.open(f).ok().flatten().is_some());
        serde_json::to_string(&t).map_err(|e| format!("tree of {name}: {e}"))
    }

    /// Opens the acquisition of `master` (it becomes the one frames are read from; a running
    /// stream ends) and summarises it. Missing data files are listed, not fatal.
    pub fn stem_info(&mut self, master: &str) -> Result<StemInfo, String> {
        self.storage(master, "stemInfo")?;
        self.cursor = None;
        self.acq = None;
        let acq = Acquisition::open(&self.files, master, &Hints::default()).map_err(|e| e.to_string())?;
        let info = StemInfo::of(&acq);
        self.acq = Some(acq);
        Ok(info)
    }

    /// The open acquisition and the files it was opened from (for products with provenance).
    pub fn opened(&self, op: &str) -> Result<(&Acquisition, &dyn FileSet), String> {
        Ok((self.acq(op)?, &self.files))
    }

    fn acq(&self, op: &str) -> Result<&Acquisition, String> {
        self.acq.as_ref().ok_or_else(|| format!("{op}: no acquisition open (call stemInfo(master) first)"))
    }

    /// Global frames `first .. first + n` of the open acquisition, mask policy applied.
    pub fn read_frames(&self, first: u64, n: usize, mask: MaskPolicy) -> Result<PixelData, String> {
        let acq = self.acq("readFrames")?;
        let bytes = n.saturating_mul(acq.frame_bytes());
        if bytes > MAX_READ_BYTES {
            return Err(format!("readFrames: {n} frames are {bytes} bytes, over the {MAX_READ_BYTES}-byte limit; stream them instead"));
        }
        let mut data = PixelData::zeros(acq.pixel_kind(), 0);
        acq.read_frames_into(first, n, mask, &mut data, &mut Vec::new()).map_err(|e| e.to_string())?;
        Ok(data)
    }

    /// Starts (or restarts) the stream of every frame of the open acquisition.
    pub fn stream_start(&mut self, mask: MaskPolicy) -> Result<u64, String> {
        let acq = self.acq("streamStart")?;
        let cursor = StreamCursor::new(acq, mask);
        let total = cursor.frames_total();
        self.cursor = Some(cursor);
        Ok(total)
    }

    /// The next batch of at most `max_frames` frames (0 = about 4 MiB). A failed batch (a
    /// missing data file) is an error naming the file and leaves the stream where it was.
    pub fn stream_next(&mut self, max_frames: usize) -> Result<StreamStep<'_>, String> {
        let (Some(acq), Some(cursor)) = (self.acq.as_ref(), self.cursor.as_mut()) else {
            return Err("streamNext: no stream running (call streamStart; stemInfo ends a running stream)".into());
        };
        let frames_total = cursor.frames_total();
        let batch = cursor.next_batch(acq, max_frames).map_err(|e| e.to_string())?;
        let frames_done = batch.as_ref().map_or(frames_total, |b| b.first_frame + b.n as u64);
        Ok(StreamStep { batch, frames_done, frames_total })
    }
}
