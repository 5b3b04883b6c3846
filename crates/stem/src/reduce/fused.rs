//! The fused pass: every virtual detector, the total intensity, the centre of mass and the
//! sum/max diffraction patterns from one read of each frame (the data dominate the cost; reading
//! them once per product would multiply it). Integer products are exact (u64; the centre-of-mass
//! moments in u128), so any split of the frames into batches gives the same result.

mod masks;
mod moments;
mod narrow;

use super::{ReduceError, VirtualDetector};
use crate::load::PixelSlice;

/// A prepared pass over frames of one detector shape.
#[derive(Clone, Debug)]
pub struct FusedPass {
    det: [usize; 2],
    names: Vec<String>,
    n_pixels: Vec<usize>,
    /// Per detector row: (detector index, col start, col end).
    runs_by_row: Vec<Vec<(usize, usize, usize)>>,
    /// Detectors summed through their complement (`runs_by_row` holds the pixels they do *not*
    /// cover; the frame's sum is total − that): a dark-field detector covers most of the
    /// detector, its complement only the inner disc — measured 1.6 µs → 0.4 µs per 96² frame.
    complement: Vec<usize>,
    /// The same detectors (complements included) as masks, for the narrow kernel.
    masks: Vec<masks::BoxMask>,
    result: FusedResult,
    prefix: Vec<u64>,
    col_sums: Vec<u64>,
    /// Whether the sum/max patterns are accumulated (off for [`Self::without_patterns`]).
    patterns: bool,
    /// Narrow frames: one frame's detector sums.
    det_acc: Vec<u64>,
    /// Narrow (u8/u16) frames: the sum pattern of the last `pending` frames in u32 (exact while
    /// `pending ≤ narrow::MAX_PENDING`), folded into `result.sum_dp` before it could overflow and by `finish`.
    sum32: Vec<u32>,
    /// Narrow frames: the max pattern, folded into `result.max_dp` by `finish`.
    max16: Vec<u16>,
    pending: usize,
    /// Which build of the narrow kernel the CPU runs (`scatterlab_core::simd`, detected once).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // read by the x86-64 builds only
    simd: scatterlab_core::simd::Level,
}

/// Bytes of frames per batch: the batch is read once per frame and once per pattern tile, so it
/// should stay in the L2 cache (≥ 1 MiB on current x86 and Apple cores).
const BATCH_BYTES: usize = 512 << 10;
/// Frames per batch at most (also keeps one batch below `narrow::MAX_PENDING`).
const MAX_BATCH_FRAMES: usize = 4096;

/// What the fused pass accumulates. Per-frame vectors are indexed by frame
/// (`scan_row * scan_cols + scan_col`).
#[derive(Clone, Debug, PartialEq)]
pub struct FusedResult {
    /// Detector shape (rows, cols).
    pub det: [usize; 2],
    /// Frames in the acquisition.
    pub n_frames: usize,
    /// Frames accumulated so far.
    pub frames_done: usize,
    /// Sum over frames per detector pixel.
    pub sum_dp: Vec<u64>,
    /// Maximum over frames per detector pixel.
    pub max_dp: Vec<u64>,
    /// Sum over the detector per frame.
    pub total: Vec<u64>,
    /// Each virtual detector: name, pixels covered, sum per frame.
    pub detectors: Vec<(String, usize, Vec<u64>)>,
    /// Centre of mass per frame, absolute detector pixel indices: `[row, col]`; 0 for an empty frame.
    pub com_raw: [Vec<f64>; 2],
}

impl FusedResult {
    /// `sum_dp / n_frames` in f64.
    pub fn mean_dp(&self) -> Vec<f64> {
        let n = self.frames_done.max(1) as f64;
        self.sum_dp.iter().map(|&s| s as f64 / n).collect()
    }

    /// Marks the frames without data (`present[i]` false: a missing data file, not loaded yet):
    /// their centre of mass becomes NaN, so the CoM mean, the rotation fit and iDPC leave them out
    /// instead of reading the 0 of an empty frame.
    pub fn mark_absent(&mut self, present: &[bool]) {
        for (i, _) in present.iter().enumerate().filter(|(_, p)| !**p) {
            for c in &mut self.com_raw {
                if let Some(v) = c.get_mut(i) {
                    *v = f64::NAN;
                }
            }
        }
    }

    /// The per-frame sums of the detector named `name`.
    pub fn detector(&self, name: &str) -> Option<&[u64]> {
        self.detectors.iter().find(|d| d.0 == name).map(|d| d.2.as_slice())
    }
}

impl FusedPass {
    /// A pass over `n_frames` frames of a `det` detector summing `detectors`.
    pub fn new(det: [usize; 2], n_frames: usize, detectors: &[VirtualDetector]) -> Result<Self, ReduceError> {
        if det[0] == 0 || det[1] == 0 || n_frames == 0 {
            return Err(ReduceError::new("fused pass", format!("needs a non-empty detector and scan (got {det:?}, {n_frames} frames)")));
        }
        let mut runs_by_row = vec![Vec::new(); det[0]];
        let (mut n_pixels, mut complement, mut masks) = (Vec::new(), Vec::new(), Vec::new());
        for (k, d) in detectors.iter().enumerate() {
            let mut runs = d.runs(det)?;
            n_pixels.push(runs.n_pixels());
            let outside = runs.complement(det);
            if outside.n_pixels() < runs.n_pixels() {
                runs = outside;
                complement.push(k);
            }
            masks.extend(masks::BoxMask::new(k, &runs, det[1]));
            for (r, cols) in runs.runs {
                if let Some(row) = runs_by_row.get_mut(r) {
                    row.push((k, cols.start, cols.end));
                }
            }
        }
        let px = det[0] * det[1];
        let result = FusedResult {
            det,
            n_frames,
            frames_done: 0,
            sum_dp: vec![0; px],
            max_dp: vec![0; px],
            total: vec![0; n_frames],
            detectors: detectors.iter().zip(&n_pixels).map(|(d, &n)| (d.name.clone(), n, vec![0; n_frames])).collect(),
            com_raw: [vec![0.0; n_frames], vec![0.0; n_frames]],
        };
        Ok(FusedPass {
            det,
            names: detectors.iter().map(|d| d.name.clone()).collect(),
            n_pixels,
            runs_by_row,
            complement,
            masks,
            result,
            prefix: vec![0; det[1] + 1],
            col_sums: vec![0; det[1]],
            det_acc: vec![0; detectors.len()],
            patterns: true,
            sum32: vec![0; px],
            max16: vec![0; px],
            pending: 0,
            simd: scatterlab_core::simd::level(),
        })
    }

    /// The same pass without the sum and max patterns (left zero): the live path of the viewer,
    /// where only the detector images change when a detector moves.
    pub fn without_patterns(mut self) -> Self {
        self.patterns = false;
        self
    }

    /// Detector names, in the order of [`FusedResult::detectors`].
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Pixels each detector covers.
    pub fn n_pixels(&self) -> &[usize] {
        &self.n_pixels
    }

    /// Accumulates `data`: whole frames starting at frame `first`.
    pub fn add(&mut self, first: u64, data: PixelSlice<'_>) -> Result<(), ReduceError> {
        match data {
            PixelSlice::U8(d) => self.add_frames(first, d, Self::frames_narrow),
            PixelSlice::U16(d) => self.add_frames(first, d, Self::frames_narrow),
            PixelSlice::U32(d) => self.add_frames(first, d, Self::frames_wide),
            PixelSlice::U64(d) => self.add_frames(first, d, Self::frames_wide),
        }
    }

    /// Checks `data` and hands it on in batches of whole frames (`batch(self, first, frames)`)
    /// small enough to stay in the L2 cache between the per-frame and the pattern loops.
    fn add_frames<T>(&mut self, first: u64, data: &[T], mut batch: impl FnMut(&mut Self, usize, &[T])) -> Result<(), ReduceError> {
        let px = self.det[0] * self.det[1];
        if !data.len().is_multiple_of(px) {
            return Err(ReduceError::new("fused pass", format!("{} values are not whole {}×{} frames", data.len(), self.det[0], self.det[1])));
        }
        let n = data.len() / px;
        let first = usize::try_from(first).unwrap_or(usize::MAX);
        if first.checked_add(n).is_none_or(|end| end > self.result.n_frames) {
            return Err(ReduceError::new("fused pass", format!("frames {first}..{} lie outside the scan's {} frames", first.saturating_add(n), self.result.n_frames)));
        }
        let per_batch = (BATCH_BYTES / (px * std::mem::size_of::<T>())).clamp(1, MAX_BATCH_FRAMES);
        for (i, frames) in data.chunks(per_batch * px).enumerate() {
            batch(self, first + i * per_batch, frames);
        }
        self.result.frames_done += n;
        Ok(())
    }

    fn frames_wide<T: Copy + Into<u64>>(&mut self, first: usize, frames: &[T]) {
        let px = self.det[0] * self.det[1];
        for (i, f) in frames.chunks_exact(px).enumerate() {
            self.frame(first + i, f);
        }
    }

    fn frame<T: Copy + Into<u64>>(&mut self, index: usize, frame: &[T]) {
        let [rows, cols] = self.det;
        let r = &mut self.result;
        self.col_sums.iter_mut().for_each(|v| *v = 0);
        let (mut total, mut row_moment) = (0u64, 0u128);
        for (row, values) in frame.chunks_exact(cols).enumerate().take(rows) {
            let base = row * cols;
            let mut acc = 0u64;
            let sums = &mut r.sum_dp[base..base + cols];
            let maxes = &mut r.max_dp[base..base + cols];
            for (c, &v) in values.iter().enumerate() {
                let v: u64 = v.into();
                acc += v;
                self.prefix[c + 1] = acc;
                self.col_sums[c] += v;
                if self.patterns {
                    sums[c] += v;
                    maxes[c] = maxes[c].max(v);
                }
            }
            total += acc;
            row_moment += row as u128 * acc as u128;
            for &(k, c0, c1) in &self.runs_by_row[row] {
                r.detectors[k].2[index] += self.prefix[c1] - self.prefix[c0];
            }
        }
        let col_moment: u128 = self.col_sums.iter().enumerate().map(|(c, &s)| c as u128 * s as u128).sum();
        for &k in &self.complement {
            r.detectors[k].2[index] = total - r.detectors[k].2[index];
        }
        r.total[index] = total;
        if total > 0 {
            r.com_raw[0][index] = row_moment as f64 / total as f64;
            r.com_raw[1][index] = col_moment as f64 / total as f64;
        }
    }

    /// The accumulated products (call after every frame was added).
    pub fn finish(mut self) -> FusedResult {
        self.fold_narrow();
        for (d, &m) in self.result.max_dp.iter_mut().zip(&self.max16) {
            *d = (*d).max(u64::from(m));
        }
        self.result
    }
}
