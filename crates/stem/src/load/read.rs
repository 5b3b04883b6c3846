//! Frame and region reads with the bad-pixel policy and binning applied and recorded.

use std::ops::Range;

use super::access::Decoder;
use super::bin::{bin_frames, MaskPolicy};
use super::error::{LoadError, Result};
use super::pixels::PixelData;
use super::provenance::LoadRecord;
use super::Acquisition;

/// How frames are returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Bad-pixel policy, applied before binning.
    pub mask: MaskPolicy,
    /// Detector bin factor K (1 = none); output `ceil(det / K)`, counts preserved.
    pub bin: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self { mask: MaskPolicy::ZeroMasked, bin: 1 }
    }
}

/// One frame.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Output detector shape (binned if asked).
    pub det: [usize; 2],
    /// The pixels, row-major.
    pub data: PixelData,
    /// What was read and how.
    pub record: LoadRecord,
}

/// The frames of a scan region, `I[scan_row, scan_col, det_row, det_col]` row-major.
#[derive(Clone, Debug)]
pub struct Frames {
    /// Region shape (rows, cols).
    pub scan: [usize; 2],
    /// Output detector shape.
    pub det: [usize; 2],
    /// The pixels.
    pub data: PixelData,
    /// What was read and how.
    pub record: LoadRecord,
}

impl Acquisition {
    /// Global frames `first .. first + n` into `data` (resized; reused across calls), mask
    /// policy applied, not binned.
    pub fn read_frames_into(&self, first: u64, n: usize, policy: MaskPolicy, data: &mut PixelData, bytes: &mut Vec<u8>) -> Result<usize> {
        if first.checked_add(n as u64).is_none_or(|e| e > self.n_frames) {
            return Err(LoadError::Request(format!("frames {first}..+{n} outside 0..{} of {}", self.n_frames, self.master)));
        }
        let px = self.det[0] * self.det[1];
        let len = n.checked_mul(self.frame_bytes()).ok_or_else(|| LoadError::Request(format!("{n} frames of {} do not fit in memory", self.master)))?;
        bytes.resize(len, 0);
        self.read_bytes(first, n, bytes, &mut Decoder::default())?;
        if data.kind() != self.kind {
            *data = PixelData::zeros(self.kind, 0);
        }
        data.resize(n * px);
        data.fill_from_bytes(0, bytes, self.big_endian);
        let masked = self.masked(policy);
        data.zero_masked(&masked, px);
        Ok(masked.len())
    }

    /// The frame at scan position (row, col).
    pub fn frame(&self, row: usize, col: usize, opts: &ReadOptions) -> Result<Frame> {
        let f = self.frame_index(row, col)?;
        let mut fr = self.frame_at(f, opts)?;
        fr.record.region = Some([[row, row + 1], [col, col + 1]]);
        Ok(fr)
    }

    /// Global frame `index` (no scan shape needed).
    pub fn frame_at(&self, index: u64, opts: &ReadOptions) -> Result<Frame> {
        let mut data = PixelData::zeros(self.kind, 0);
        let n_masked = self.read_frames_into(index, 1, opts.mask, &mut data, &mut Vec::new())?;
        let (det, data) = self.binned(data, opts.bin)?;
        let record = LoadRecord { frames: [index, index + 1], region: None, bin: opts.bin, mask_policy: opts.mask, n_masked };
        Ok(Frame { det, data, record })
    }

    /// The frames of scan rows `rows` × cols `cols` (half-open).
    pub fn region(&self, rows: Range<usize>, cols: Range<usize>, opts: &ReadOptions) -> Result<Frames> {
        let s = self.scan_shape()?;
        if rows.start >= rows.end || cols.start >= cols.end || rows.end > s.rows || cols.end > s.cols {
            return Err(LoadError::Request(format!("region rows {rows:?} × cols {cols:?} outside the {}×{} scan (or empty)", s.rows, s.cols)));
        }
        let (nr, nc) = (rows.len(), cols.len());
        let px = self.det[0] * self.det[1];
        let mut all = PixelData::zeros(self.kind, 0);
        let (mut row_buf, mut bytes, mut n_masked) = (PixelData::zeros(self.kind, 0), Vec::new(), 0);
        for r in rows.clone() {
            let first = (r * s.cols + cols.start) as u64;
            n_masked = self.read_frames_into(first, nc, opts.mask, &mut row_buf, &mut bytes)?;
            append(&mut all, &row_buf, (r - rows.start) * nc * px);
        }
        let (det, data) = self.binned(all, opts.bin)?;
        let frames = [(rows.start * s.cols + cols.start) as u64, ((rows.end - 1) * s.cols + cols.end) as u64];
        let record = LoadRecord { frames, region: Some([[rows.start, rows.end], [cols.start, cols.end]]), bin: opts.bin, mask_policy: opts.mask, n_masked };
        Ok(Frames { scan: [nr, nc], det, data, record })
    }

    fn binned(&self, data: PixelData, k: usize) -> Result<([usize; 2], PixelData)> {
        match k {
            0 => Err(LoadError::Request("bin factor must be at least 1".into())),
            1 => Ok((self.det, data)),
            _ => bin_frames(data.as_slice(), self.det, k),
        }
    }
}

/// Appends `src` to `dst` (same kind) at element offset `at` (= current length).
fn append(dst: &mut PixelData, src: &PixelData, at: usize) {
    match (dst, src) {
        (PixelData::U8(d), PixelData::U8(s)) => {
            d.truncate(at);
            d.extend_from_slice(s)
        }
        (PixelData::U16(d), PixelData::U16(s)) => {
            d.truncate(at);
            d.extend_from_slice(s)
        }
        (PixelData::U32(d), PixelData::U32(s)) => {
            d.truncate(at);
            d.extend_from_slice(s)
        }
        (PixelData::U64(d), PixelData::U64(s)) => {
            d.truncate(at);
            d.extend_from_slice(s)
        }
        _ => {}
    }
}
