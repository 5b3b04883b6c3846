//! Loading 4D-STEM acquisitions (docs/plans/hdf5-loading.md §3–4).
//!
//! ```no_run
//! use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, ReadOptions};
//! # fn main() -> scatterlab_stem::load::Result<()> {
//! let (files, master) = DirFileSet::for_file("scan_master.h5".as_ref())?;
//! let acq = Acquisition::open(&files, &master, &Hints::default())?;
//! let frame = acq.frame(3, 7, &ReadOptions::default())?; // masked pixels zeroed
//! # Ok(()) }
//! ```

// Frame counts, chunk shapes and sizes read from the user's files flow through loading into
// allocations and slices, and wasm32's usize is 32 bits: narrowing conversions are checked.
#![warn(clippy::cast_possible_truncation)]

mod access;
pub mod bin;
mod cursor;
mod dectris;
mod error;
mod fileset;
pub mod meta;
pub mod pixels;
mod provenance;
mod read;
mod stream;

use std::sync::OnceLock;

pub use bin::{bin_frame, bin_frames, binned_shape, MaskPolicy};
pub use cursor::StreamCursor;
pub use dectris::{DataPart, MissingFile, DATA_PATH, MAX_FRAMES, MAX_FRAME_BYTES};
pub use error::{LoadError, Result};
pub use fileset::{DirFileSet, FileSet, MapFileSet};
pub use meta::{Calibration, Hints, PixelMask, ScanShape};
pub use pixels::{PixelData, PixelKind, PixelSlice};
pub use provenance::{LoadProvenance, LoadRecord, SourceRecord};
pub use read::{Frame, Frames, ReadOptions};
pub use stream::{FrameBatch, StreamOptions, StreamSummary, DEFAULT_BATCH_BYTES};

/// An opened acquisition: where every frame is, the detector geometry, metadata and mask.
/// Frames are read on demand; nothing but the chunk tables is held.
pub struct Acquisition {
    master: String,
    master_size: u64,
    single: bool,
    parts: Vec<DataPart>,
    missing: Vec<MissingFile>,
    det: [usize; 2],
    kind: PixelKind,
    big_endian: bool,
    n_frames: u64,
    scan: Option<ScanShape>,
    calibration: Calibration,
    mask: Option<PixelMask>,
    warnings: Vec<String>,
    /// Source hashes, computed on the first provenance request.
    hashes: OnceLock<Vec<SourceRecord>>,
}

impl Acquisition {
    /// Opens `master` from `files`: a Dectris master (external links to data files in the same
    /// set) or a single file with `/entry/data/data`. Missing data files are listed, not fatal.
    pub fn open(files: &dyn FileSet, master: &str, hints: &Hints) -> Result<Self> {
        dectris::open(files, master, hints)
    }

    /// The master file's name.
    pub fn master(&self) -> &str {
        &self.master
    }

    /// Whether the frames are in the master itself (no external links).
    pub fn is_single_file(&self) -> bool {
        self.single
    }

    /// The data parts in link order, present or missing, with their frame ranges.
    pub fn parts(&self) -> &[DataPart] {
        &self.parts
    }

    /// Data files the master links to that the file set lacks.
    pub fn missing(&self) -> &[MissingFile] {
        &self.missing
    }

    /// Whether every linked data file is available.
    pub fn is_complete(&self) -> bool {
        self.missing.is_empty()
    }

    /// Which frames the present data files hold: `present[f]` for `f` in `0..n_frames`. Frames
    /// of missing data files (and frames no file holds) are `false`.
    pub fn present_frames(&self) -> Vec<bool> {
        // n_frames ≤ MAX_FRAMES (checked when opened), so this fits in memory and in a usize.
        let n = usize::try_from(self.n_frames).unwrap_or(0);
        let mut present = vec![false; n];
        for p in self.parts.iter().filter(|p| p.is_present()) {
            let clamp = |f: u64| usize::try_from(f.min(self.n_frames)).unwrap_or(n).min(n);
            if let Some(frames) = present.get_mut(clamp(p.first_frame)..clamp(p.first_frame + p.n_frames)) {
                frames.iter_mut().for_each(|v| *v = true);
            }
        }
        present
    }

    /// Frames that no present data file holds (0 for a complete acquisition).
    pub fn n_missing_frames(&self) -> u64 {
        let held: u64 = self.parts.iter().filter(|p| p.is_present()).map(|p| p.n_frames.min(self.n_frames.saturating_sub(p.first_frame))).sum();
        self.n_frames.saturating_sub(held)
    }

    /// The first frame at or after `f` that a present data file holds, if any.
    pub fn next_present_frame(&self, f: u64) -> Option<u64> {
        self.parts.iter().filter(|p| p.is_present() && p.first_frame + p.n_frames > f).map(|p| p.first_frame.max(f)).min().filter(|&g| g < self.n_frames)
    }

    /// Detector shape (rows, cols).
    pub fn det_shape(&self) -> [usize; 2] {
        self.det
    }

    /// Stored pixel type.
    pub fn pixel_kind(&self) -> PixelKind {
        self.kind
    }

    /// Total frames (declared by `nimages × ntrigger`, else the scan shape, else the data files).
    pub fn n_frames(&self) -> u64 {
        self.n_frames
    }

    /// Bytes of one stored frame.
    pub fn frame_bytes(&self) -> usize {
        self.det[0] * self.det[1] * self.kind.size()
    }

    /// The scan shape, or an error saying where it was looked for.
    pub fn scan_shape(&self) -> Result<&ScanShape> {
        self.scan.as_ref().ok_or_else(|| LoadError::Metadata {
            file: self.master.clone(),
            detail: format!("scan shape not found: no hint given and neither {} nor {} is in the file", meta::SCAN_SHAPE_SOURCES[0], meta::SCAN_SHAPE_SOURCES[1]),
        })
    }

    /// Calibration (fields the file lacks are `None`).
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// The bad-pixel mask, if the file has one.
    pub fn mask(&self) -> Option<&PixelMask> {
        self.mask.as_ref()
    }

    /// Metadata that exists but could not be read or does not fit (never fatal).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Global frame index of scan position (row, col): `row * cols + col`.
    pub fn frame_index(&self, row: usize, col: usize) -> Result<u64> {
        let s = self.scan_shape()?;
        if row >= s.rows || col >= s.cols {
            return Err(LoadError::Request(format!("scan position ({row}, {col}) outside the {}×{} scan", s.rows, s.cols)));
        }
        Ok((row * s.cols + col) as u64)
    }

    /// Flat indices of the masked pixels (empty without a mask or with [`MaskPolicy::Keep`]).
    fn masked(&self, policy: MaskPolicy) -> Vec<usize> {
        match (policy, &self.mask) {
            (MaskPolicy::ZeroMasked, Some(m)) => m.bad.iter().enumerate().filter(|(_, &b)| b).map(|(i, _)| i).collect(),
            _ => Vec::new(),
        }
    }
}
