//! A reduction split over frame ranges: each range's fused pass can run anywhere (a thread, a
//! process, a Dask worker through the Python extension), [`merge`] combines the ranges exactly —
//! integer sums add, max patterns take the maximum, per-frame values are placed — and
//! [`finish`](mod@super::finish) computes the rest as for one pass. The fused pass is exact in
//! integers and its centre of mass is per frame, so any split gives the products of one pass.

use std::ops::Range;

use scatterlab_core::CancelToken;

use super::{FusedPass, FusedResult, ReduceError, VirtualDetector};
use crate::load::{Acquisition, MaskPolicy, PixelData};

/// Frames read per batch: enough to amortise a read, small enough to stay in cache.
const BATCH_FRAMES: u64 = 64;

/// The fused products of the frames `first .. first + result.n_frames`: per-frame vectors are
/// indexed from `first`.
#[derive(Clone, Debug, PartialEq)]
pub struct Partial {
    /// Global index of the range's first frame.
    pub first: u64,
    /// The range's products.
    pub result: FusedResult,
    /// Pixels per frame the bad-pixel policy zeroed.
    pub n_masked: usize,
}

/// Reads, decodes and reduces the frames `range` of `acq` with `detectors` (none: only the
/// patterns, totals and centre of mass, e.g. for the probe), the bad-pixel policy `mask` applied.
/// A range outside the acquisition or empty, or a frame in a missing data file, is an error
/// naming it.
pub fn reduce_range(acq: &Acquisition, range: Range<u64>, detectors: &[VirtualDetector], mask: MaskPolicy, cancel: &CancelToken) -> Result<Partial, ReduceError> {
    let total = acq.n_frames();
    if range.start >= range.end || range.end > total {
        return Err(ReduceError::new(format!("frames {}..{}", range.start, range.end), format!("not a non-empty range inside the {total} frames of {}", acq.master())));
    }
    let count = usize::try_from(range.end - range.start).map_err(|_| ReduceError::new("frame range", "does not fit in memory"))?;
    let mut pass = FusedPass::new(acq.det_shape(), count, detectors)?;
    let (mut data, mut bytes) = (PixelData::zeros(acq.pixel_kind(), 0), Vec::new());
    let (mut at, mut n_masked) = (range.start, 0);
    while at < range.end {
        if cancel.is_cancelled() {
            return Err(ReduceError::new("reduction", "cancelled"));
        }
        let n = (range.end - at).min(BATCH_FRAMES) as usize;
        n_masked = acq.read_frames_into(at, n, mask, &mut data, &mut bytes).map_err(|e| ReduceError::new(acq.master(), e.to_string()))?;
        pass.add(at - range.start, data.as_slice())?;
        at += n as u64;
    }
    Ok(Partial { first: range.start, result: pass.finish(), n_masked })
}

/// Combines `parts` (any order) that cover the frames `0 .. n_frames` exactly once, reduced with
/// the same detectors, into the products of one pass (a [`Partial`] from frame 0).
pub fn merge(mut parts: Vec<Partial>, n_frames: u64) -> Result<Partial, ReduceError> {
    parts.sort_by_key(|p| p.first);
    let Some(head) = parts.first() else {
        return Err(ReduceError::new("merge", "no partial products to merge"));
    };
    let n = usize::try_from(n_frames).map_err(|_| ReduceError::new("merge", "the frame count does not fit in memory"))?;
    let det = head.result.det;
    let px = det[0] * det[1];
    let layout: Vec<(String, usize)> = head.result.detectors.iter().map(|(name, pixels, _)| (name.clone(), *pixels)).collect();
    let mut out = FusedResult {
        det,
        n_frames: n,
        frames_done: 0,
        sum_dp: vec![0; px],
        max_dp: vec![0; px],
        total: vec![0; n],
        detectors: layout.iter().map(|(name, pixels)| (name.clone(), *pixels, vec![0; n])).collect(),
        com_raw: [vec![0.0; n], vec![0.0; n]],
    };
    let (mut next, n_masked) = (0u64, head.n_masked);
    for p in &parts {
        let r = &p.result;
        let end = p.first + r.n_frames as u64;
        let what = || format!("partial products of frames {}..{end}", p.first);
        if p.first != next {
            let problem = if p.first < next { format!("overlap frames already merged (up to {next})") } else { format!("leave frames {next}..{} uncovered", p.first) };
            return Err(ReduceError::new(what(), problem));
        }
        if end > n_frames {
            return Err(ReduceError::new(what(), format!("reach past the {n_frames} frames")));
        }
        let same_layout = r.detectors.len() == layout.len() && r.detectors.iter().zip(&layout).all(|(d, l)| d.0 == l.0 && d.1 == l.1);
        let lengths_ok = r.sum_dp.len() == px
            && r.max_dp.len() == px
            && r.total.len() == r.n_frames
            && r.com_raw.iter().all(|c| c.len() == r.n_frames)
            && r.detectors.iter().all(|d| d.2.len() == r.n_frames);
        if r.det != det || !same_layout || !lengths_ok || p.n_masked != n_masked {
            return Err(ReduceError::new(what(), "were reduced with another detector, detectors or mask than the first part, or their arrays have the wrong lengths"));
        }
        let span = p.first as usize..end as usize;
        out.sum_dp.iter_mut().zip(&r.sum_dp).for_each(|(a, b)| *a += b);
        out.max_dp.iter_mut().zip(&r.max_dp).for_each(|(a, b)| *a = (*a).max(*b));
        out.total[span.clone()].copy_from_slice(&r.total);
        for (o, d) in out.detectors.iter_mut().zip(&r.detectors) {
            o.2[span.clone()].copy_from_slice(&d.2);
        }
        for (o, c) in out.com_raw.iter_mut().zip(&r.com_raw) {
            o[span.clone()].copy_from_slice(c);
        }
        out.frames_done += r.frames_done;
        next = end;
    }
    if next != n_frames {
        return Err(ReduceError::new("merge", format!("frames {next}..{n_frames} are not covered by any partial products")));
    }
    Ok(Partial { first: 0, result: out, n_masked })
}
