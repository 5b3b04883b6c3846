//! The u8/u16 kernels of [`FusedPass`]: the same products as the u64 path, accumulated in u32
//! where that is exact (the data dominate the cost; narrow accumulators let LLVM vectorise every
//! loop), with the AVX2 and AVX-512 builds of the same code chosen at run time on x86-64
//! (`scatterlab_core::simd`).

#[cfg(target_arch = "x86_64")]
use scatterlab_core::simd;
use scatterlab_core::x86_build;

use super::moments::frame_moments;
use super::FusedPass;

/// Narrow frames a u32 pattern sum holds exactly: 65,537 · 65,535 = u32::MAX.
const MAX_PENDING: usize = 65_537;
/// Pattern pixels per tile: 8 KiB of u32 sums and 4 KiB of u16 maxima, in L1.
const TILE: usize = 2048;

impl FusedPass {
    /// u8/u16 frames: the same products as [`Self::frame`], computed in u32 where that is exact
    /// (the data dominate the cost: narrow accumulators let LLVM vectorise every loop).
    pub(super) fn frames_narrow<T: Copy + Into<u16>>(&mut self, first: usize, frames: &[T]) {
        // Wider vectors than the SSE2 baseline: AVX2 measured 1.5× on dev_medium, AVX-512 a
        // further ≈ 1.2× (stem_reduce_bench).
        #[cfg(target_arch = "x86_64")]
        match self.simd {
            // SAFETY: `simd::level()` found every feature `x86_build!(avx512, …)` enables on this build.
            simd::Level::Avx512 => return unsafe { self.frames_narrow_avx512(first, frames) },
            // SAFETY: `simd::level()` found AVX2 and FMA, all `x86_build!(avx2, …)` enables on this build.
            simd::Level::Avx2 => return unsafe { self.frames_narrow_avx2(first, frames) },
            _ => {}
        }
        // The target's baseline: SSE2 on x86-64, simd128 in the browser (LLVM vectorises the loops).
        self.frames_narrow_body(first, frames);
    }

    x86_build!(
        avx2,
        /// [`Self::frames_narrow_body`] compiled with AVX2 (+ FMA, unused by integer code).
        fn frames_narrow_avx2<T: Copy + Into<u16>>(&mut self, first: usize, frames: &[T]) {
            self.frames_narrow_body(first, frames);
        }
    );

    x86_build!(
        avx512,
        /// [`Self::frames_narrow_body`] compiled with AVX-512.
        fn frames_narrow_avx512<T: Copy + Into<u16>>(&mut self, first: usize, frames: &[T]) {
            self.frames_narrow_body(first, frames);
        }
    );

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
        // in L1 instead of streaming the whole pattern through the cache once per frame; four
        // frames per visit of a tile, so the accumulators are loaded and stored a quarter as often
        // (they, not the arithmetic, bound that loop).
        for (t, (sums, maxes)) in self.sum32.chunks_mut(TILE).zip(self.max16.chunks_mut(TILE)).enumerate() {
            let range = t * TILE..t * TILE + sums.len();
            let mut quads = frames.chunks_exact(4 * px);
            for quad in &mut quads {
                let f = |k: usize| quad.get(k * px + range.start..k * px + range.end).unwrap_or(&[]);
                add_four(sums, maxes, [f(0), f(1), f(2), f(3)]);
            }
            for frame in quads.remainder().chunks_exact(px) {
                let Some(values) = frame.get(range.clone()) else { continue };
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
        let [rows, cols] = self.det;
        let (total, row_moment, col_moment) = frame_moments(frame, rows, cols);
        for mask in &self.masks {
            if let Some(d) = self.det_acc.get_mut(mask.detector) {
                *d = mask.sum(frame, cols);
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

/// Adds four frames' values (the same pixels of each) to a tile of the sum and max patterns.
#[inline(always)]
fn add_four<T: Copy + Into<u16>>(sums: &mut [u32], maxes: &mut [u16], f: [&[T]; 4]) {
    let values = f[0].iter().zip(f[1]).zip(f[2]).zip(f[3]);
    for ((s, m), (((&a, &b), &c), &d)) in sums.iter_mut().zip(maxes.iter_mut()).zip(values) {
        let (a, b, c, d): (u16, u16, u16, u16) = (a.into(), b.into(), c.into(), d.into());
        *s += u32::from(a) + u32::from(b) + u32::from(c) + u32::from(d);
        *m = (*m).max(a.max(b).max(c.max(d)));
    }
}
