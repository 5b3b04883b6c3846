//! Count-preserving detector binning: K × K pixels summed into one, with partial bins at the
//! bottom and right edges summing only the pixels that exist (output `ceil(det / K)`).
//! Sums widen (u8/u16 → u32 up to K = 256, else u64; u32 → u64) so no count is lost.

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use super::error::{LoadError, Result};
use super::pixels::{PixelData, PixelSlice};

/// What happens to pixels the mask flags as bad.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaskPolicy {
    /// Set to 0 before anything else (binning, sums); the fixtures' references do this.
    #[default]
    ZeroMasked,
    /// Left as stored (dead pixels keep their sentinel values).
    Keep,
}

/// Output shape of binning `det` by `k`: `ceil(det / k)`.
pub fn binned_shape(det: [usize; 2], k: usize) -> [usize; 2] {
    [det[0].div_ceil(k.max(1)), det[1].div_ceil(k.max(1))]
}

/// Sums `k × k` blocks of one frame `src` (`det` rows × cols, row-major) into `A`.
pub fn bin_frame<T: Copy, A: From<T> + AddAssign + Default + Copy>(src: &[T], det: [usize; 2], k: usize) -> Result<([usize; 2], Vec<A>)> {
    if k == 0 {
        return Err(LoadError::Request("bin factor must be at least 1".into()));
    }
    if src.len() != det[0] * det[1] {
        return Err(LoadError::Request(format!("frame of {} pixels for a {}×{} detector", src.len(), det[0], det[1])));
    }
    let out_shape = binned_shape(det, k);
    let mut out = vec![A::default(); out_shape[0] * out_shape[1]];
    for (r, row) in src.chunks_exact(det[1].max(1)).enumerate() {
        let orow = &mut out[(r / k) * out_shape[1]..][..out_shape[1]];
        for (o, block) in orow.iter_mut().zip(row.chunks(k)) {
            for &v in block {
                *o += A::from(v);
            }
        }
    }
    Ok((out_shape, out))
}

/// Bins every frame of `frames` (each `det`) by `k`, widening as the module docs say.
pub fn bin_frames(frames: PixelSlice<'_>, det: [usize; 2], k: usize) -> Result<([usize; 2], PixelData)> {
    let px = det[0] * det[1];
    let n = frames.len().checked_div(px).unwrap_or(0);
    let out_px = binned_shape(det, k)[0] * binned_shape(det, k)[1];
    macro_rules! each {
        ($v:expr, $acc:ty, $variant:ident) => {{
            let mut out: Vec<$acc> = Vec::with_capacity(n * out_px);
            for f in $v.chunks_exact(px.max(1)) {
                out.extend(bin_frame::<_, $acc>(f, det, k)?.1);
            }
            PixelData::$variant(out)
        }};
    }
    let small = k <= 256;
    let data = match frames {
        PixelSlice::U8(v) if small => each!(v, u32, U32),
        PixelSlice::U16(v) if small => each!(v, u32, U32),
        PixelSlice::U8(v) => each!(v, u64, U64),
        PixelSlice::U16(v) => each!(v, u64, U64),
        PixelSlice::U32(v) => each!(v, u64, U64),
        PixelSlice::U64(v) => each!(v, u64, U64),
    };
    Ok((binned_shape(det, k), data))
}
