//! Virtual images from frames already in memory: the live path of the viewer, where a detector
//! moves and only its images are recomputed. CPU reference of [`ResidentGpu`](crate::gpu::ResidentGpu).

use super::{FusedPass, ReduceError, VirtualDetector};
use crate::load::PixelSlice;

/// Per-frame sums of a set of virtual detectors.
#[derive(Clone, Debug, PartialEq)]
pub struct DetectorImages {
    /// Sum over the whole detector per frame.
    pub total: Vec<u64>,
    /// Each detector: name, pixels covered, sum per frame (as [`FusedResult::detectors`](super::FusedResult)).
    pub detectors: Vec<(String, usize, Vec<u64>)>,
}

/// Every frame's total and `detectors`' sums over `frames` (whole frames of a `det` detector,
/// frame 0 first), exact in u64.
pub fn detector_images(det: [usize; 2], frames: PixelSlice<'_>, detectors: &[VirtualDetector]) -> Result<DetectorImages, ReduceError> {
    let px = det[0] * det[1];
    let n = frames.len().checked_div(px).unwrap_or(0);
    let mut pass = FusedPass::new(det, n, detectors)?.without_patterns();
    pass.add(0, frames)?;
    let r = pass.finish();
    Ok(DetectorImages { total: r.total, detectors: r.detectors })
}
