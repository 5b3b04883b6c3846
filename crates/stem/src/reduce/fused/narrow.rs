//! The u8/u16 kernels of [`FusedPass`]: the same products as the u64 path, accumulated in u32
//! where that is exact (the data dominate the cost; narrow accumulators let LLVM vectorise every
//! loop), with the AVX2 build of the same code chosen at run time on x86-64.

use super::FusedPass;

/// Narrow frames a u32 pattern sum holds exactly: 65,537 · 65,535 = u32::MAX.
const MAX_PENDING: usize = 65_537;
/// Pattern pixels per tile: 8 KiB of u32 sums and 4 KiB of u16 maxima, in L1.
const TILE: usize = 2048;
/// Columns per block of the row kernel: the in-block moment Σ j·v (j < 64) stays below 2^32.
const BLOCK: usize = 64;
/// In-block column indices (u16: every product j·v fits u32).
const IDX: [u16; BLOCK] = {
    let mut idx = [0u16; BLOCK];
    let mut j = 0;
    while j < BLOCK {
        idx[j] = j as u16;
        j += 1;
    }
    idx
};

impl FusedPass {
    /// u8/u16 frames: the same products as [`Self::frame`], computed in u32 where that is exact
    /// (the data dominate the cost: narrow accumulators let LLVM vectorise every loop).
    pub(super) fn frames_narrow<T: Copy + Into<u16>>(&mut self, first: usize, frames: &[T]) {
        #[cfg(target_arch = "x86_64")]
        if self.avx2 {
            // SAFETY: the CPU has AVX2 (`is_x86_feature_detected!` in `new`), all that
            // `frames_narrow_avx2` requires beyond safe Rust. The same code compiled for 256-bit
            // vectors instead of the SSE2 baseline: measured 1.5× on dev_medium (stem_reduce_bench).
            unsafe { self.frames_narrow_avx2(first, frames) };
            return;
        }
        self.frames_narrow_body(first, frames);
    }

    /// [`Self::frames_narrow_body`] compiled with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn frames_narrow_avx2<T: Copy + Into<u16>>(&mut self, first: usize, frames: &[T]) {
        self.frames_narrow_body(first, frames);
    }

    #[inline(always)]
    fn frames_narrow_body<T: Copy + Into<u16>>(&mut self, first: usize, frames: &[T]) {
        let px = self.det[0] * self.det[1];
        let n = frames.len() / px;
        if self.pending + n > MAX_PENDING {
            self.fold_narrow();
        }
        self.pending += n;
        for (i, frame) in frames.chunks_exact(px).enumerate() {
            self.frame_products(first + i, frame);
        }
        if !self.patterns {
            return;
        }
        // The patterns tile by tile across the batch (now in L2), so each tile's accumulators stay
        // in L1 instead of streaming the whole pattern through the cache once per frame.
        for (t, (sums, maxes)) in self.sum32.chunks_mut(TILE).zip(self.max16.chunks_mut(TILE)).enumerate() {
            for frame in frames.chunks_exact(px) {
                let Some(values) = frame.get(t * TILE..t * TILE + sums.len()) else { continue };
                for ((s, m), &v) in sums.iter_mut().zip(maxes.iter_mut()).zip(values) {
                    let v: u16 = v.into();
                    *s += u32::from(v);
                    *m = (*m).max(v);
                }
            }
        }
    }

    /// One narrow frame's total, centre of mass and detector sums.
    #[inline(always)]
    fn frame_products<T: Copy + Into<u16>>(&mut self, index: usize, frame: &[T]) {
        let cols = self.det[1];
        // Runs of ≤ 65,537 values sum exactly in plain u32 (one vectorised loop, no blocking).
        let short = cols <= MAX_PENDING;
        let (mut total, mut row_moment, mut col_moment) = (0u64, 0u128, 0u128);
        for (row, values) in frame.chunks_exact(cols).enumerate() {
            let (acc, moment) = row_sums(values);
            total += acc;
            row_moment += row as u128 * u128::from(acc);
            col_moment += u128::from(moment);
            for &(k, c0, c1) in &self.runs_by_row[row] {
                if let (Some(d), Some(run)) = (self.det_acc.get_mut(k), values.get(c0..c1)) {
                    *d += if short { short_run_sum(run) } else { run_sum(run) };
                }
            }
        }
        for (k, acc) in self.det_acc.iter_mut().enumerate() {
            if let Some(d) = self.result.detectors[k].2.get_mut(index) {
                *d = std::mem::take(acc);
            }
        }
        for &k in &self.complement {
            if let Some(d) = self.result.detectors[k].2.get_mut(index) {
                *d = total - *d;
            }
        }
        self.result.total[index] = total;
        if total > 0 {
            self.result.com_raw[0][index] = row_moment as f64 / total as f64;
            self.result.com_raw[1][index] = col_moment as f64 / total as f64;
        }
    }

    /// Folds the narrow sum pattern into the u64 one (before it could overflow, and at the end).
    pub(super) fn fold_narrow(&mut self) {
        for (d, s) in self.result.sum_dp.iter_mut().zip(self.sum32.iter_mut()) {
            *d += u64::from(std::mem::take(s));
        }
        self.pending = 0;
    }
}

/// A row's sum and column moment Σ c·v, exact: blocks of 64 columns sum v and j·v (j < 64) in
/// u32 (≤ 64 · 65,535 and ≤ 2016 · 65,535), then Σ c·v = Σ_blocks (c0 · Σv + Σ j·v) in u64.
#[inline(always)]
fn row_sums<T: Copy + Into<u16>>(values: &[T]) -> (u64, u64) {
    let (mut sum, mut moment) = (0u64, 0u64);
    for (b, block) in values.chunks(BLOCK).enumerate() {
        let (mut s, mut m) = (0u32, 0u32);
        for (&v, &j) in block.iter().zip(&IDX) {
            let v: u16 = v.into();
            s += u32::from(v);
            m += u32::from(j) * u32::from(v);
        }
        sum += u64::from(s);
        moment += (b * BLOCK) as u64 * u64::from(s) + u64::from(m);
    }
    (sum, moment)
}

/// The sum of a run of at most 65,537 narrow values (exact in u32).
#[inline(always)]
fn short_run_sum<T: Copy + Into<u16>>(run: &[T]) -> u64 {
    u64::from(run.iter().map(|&v| u32::from(v.into())).sum::<u32>())
}

/// The sum of a run of narrow values, exact: eight u32 lanes (LLVM keeps them in one vector) per
/// 65,536 values (≤ 65,536 · 65,535 < 2^32), then u64.
#[inline(always)]
fn run_sum<T: Copy + Into<u16>>(run: &[T]) -> u64 {
    run.chunks(1 << 16)
        .map(|part| {
            let mut lanes = [0u32; 8];
            let mut eights = part.chunks_exact(8);
            for e in &mut eights {
                for (l, &v) in lanes.iter_mut().zip(e) {
                    *l += u32::from(v.into());
                }
            }
            let tail: u32 = eights.remainder().iter().map(|&v| u32::from(v.into())).sum();
            u64::from(lanes.iter().sum::<u32>() + tail)
        })
        .sum()
}
