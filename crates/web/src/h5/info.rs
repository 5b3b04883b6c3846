//! `stemInfo`'s JSON: what an acquisition holds, in the terms of `scatterlab stem info`.

use scatterlab_hdf5::raw::Filter;
use scatterlab_hdf5::RawLayout;
use scatterlab_stem::load::{Acquisition, Calibration, MissingFile};
use serde::Serialize;

/// The summary of an opened acquisition (snake_case keys, like the file tree).
#[derive(Clone, Debug, Serialize)]
pub struct StemInfo {
    /// The master file's name.
    pub master: String,
    /// Whether the frames are in the master itself (no external links).
    pub single_file: bool,
    /// Total frames.
    pub frames: u64,
    /// Stored frames shape `[frames, det_rows, det_cols]`.
    pub shape: [u64; 3],
    /// Detector shape `[rows, cols]`.
    pub det_shape: [usize; 2],
    /// Stored pixel type: `"u8"`, `"u16"` or `"u32"`.
    pub dtype: &'static str,
    /// Scan shape `[rows, cols]`, `null` when neither the file nor a hint gives it.
    pub scan_shape: Option<[usize; 2]>,
    /// Where the scan shape came from, or why there is none.
    pub scan_source: String,
    /// Chunk shape of the frames dataset (`null` when contiguous or no data file is present).
    pub chunks: Option<Vec<u64>>,
    /// The frames dataset's filter pipeline by name, with support.
    pub filters: Vec<Filter>,
    /// Calibration; absent fields are `null` ("not in file").
    pub calibration: Calibration,
    /// Bad pixels in the mask (`null` without a mask); zeroed unless `mask: "keep"`.
    pub mask_bad_pixels: Option<usize>,
    /// Every data file the master links to, present or not, with its frame range.
    pub data_files: Vec<DataFileInfo>,
    /// Data files the opened set lacks.
    pub missing: Vec<MissingFile>,
    /// Whether every data file is present.
    pub complete: bool,
    /// Metadata that exists but could not be read (never fatal).
    pub warnings: Vec<String>,
}

/// One data file of [`StemInfo`].
#[derive(Clone, Debug, Serialize)]
pub struct DataFileInfo {
    /// The master's link name (`data_000001`).
    pub link: String,
    /// The file name.
    pub file: String,
    /// First global frame.
    pub first_frame: u64,
    /// Frames in it.
    pub n_frames: u64,
    /// Bytes, `null` when missing.
    pub size: Option<u64>,
}

impl StemInfo {
    /// Summarises `acq`.
    pub fn of(acq: &Acquisition) -> Self {
        let [dr, dc] = acq.det_shape();
        let (scan_shape, scan_source) = match acq.scan_shape() {
            Ok(s) => (Some([s.rows, s.cols]), s.source.clone()),
            Err(e) => (None, e.to_string()),
        };
        let ds = acq.parts().iter().find_map(|p| p.dataset());
        let chunks = ds.and_then(|d| match &d.layout {
            RawLayout::Chunked { dims, .. } => Some(dims.clone()),
            _ => None,
        });
        Self {
            master: acq.master().to_string(),
            single_file: acq.is_single_file(),
            frames: acq.n_frames(),
            shape: [acq.n_frames(), dr as u64, dc as u64],
            det_shape: [dr, dc],
            dtype: acq.pixel_kind().name(),
            scan_shape,
            scan_source,
            chunks,
            filters: ds.map(|d| d.filters.clone()).unwrap_or_default(),
            calibration: acq.calibration().clone(),
            mask_bad_pixels: acq.mask().map(|m| m.n_bad),
            data_files: acq
                .parts()
                .iter()
                .map(|p| DataFileInfo { link: p.link.clone(), file: p.file.clone(), first_frame: p.first_frame, n_frames: p.n_frames, size: p.size })
                .collect(),
            missing: acq.missing().to_vec(),
            complete: acq.is_complete(),
            warnings: acq.warnings().to_vec(),
        }
    }
}
