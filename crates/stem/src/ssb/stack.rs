//! The bright-field pixels and their scan images: SSB needs `I(R, k_b)` only for the pixels of the
//! BF disc, so a stream of frames is reduced to one scan image per BF pixel as it arrives and the
//! full 4-D array is never held (467 BF pixels × 128² positions = 61 MB in f64 for `dev_medium`,
//! against 1.2 GB for the whole acquisition).

use crate::load::PixelSlice;
use crate::reduce::ReduceError;

/// The BF pixels of a detector: `d ≤ R` around the beam centre (closed disc, pixel centres at
/// integer indices), each with its scattering vector in the physical frame.
#[derive(Clone, Debug, PartialEq)]
pub struct BfPixels {
    /// Flat detector indices `row * det_cols + col`, row-major order.
    pub index: Vec<usize>,
    /// `(k_row, k_col)` in Å⁻¹ of each pixel in the physical frame.
    pub k: Vec<[f64; 2]>,
}

impl BfPixels {
    /// The pixels of a `det` detector within `radius` px of `center` (row, col); `dk` Å⁻¹ per
    /// pixel. With `transposed` the stored detector's rows are the physical columns, so a pixel's
    /// physical vector is its stored offset with the components swapped (as if the frames were
    /// transposed back before the reconstruction). An empty disc is an error naming the radius.
    pub fn disc(det: [usize; 2], center: [f64; 2], radius: f64, dk: f64, transposed: bool) -> Result<Self, ReduceError> {
        let (mut index, mut k) = (Vec::new(), Vec::new());
        for r in 0..det[0] {
            for c in 0..det[1] {
                let (dr, dc) = (r as f64 - center[0], c as f64 - center[1]);
                if dr.hypot(dc) <= radius {
                    index.push(r * det[1] + c);
                    k.push(if transposed { [dc * dk, dr * dk] } else { [dr * dk, dc * dk] });
                }
            }
        }
        if index.is_empty() {
            return Err(ReduceError::new(
                "BF radius",
                format!("no detector pixel lies within {radius} px of the centre ({}, {}) on the {}×{} detector", center[0], center[1], det[0], det[1]),
            ));
        }
        Ok(BfPixels { index, k })
    }

    /// Number of BF pixels.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether there are none (never, for a disc built by [`BfPixels::disc`]).
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

/// One scan image per BF pixel, filled batch by batch from a frame stream.
#[derive(Clone, Debug)]
pub struct BfStack {
    /// The BF pixels (in the order of the images).
    pub pixels: BfPixels,
    /// Scan shape (rows, cols).
    pub scan: [usize; 2],
    det_px: usize,
    /// `images[b * n_scan + frame]`: the counts of BF pixel `b` over the scan, row-major.
    pub images: Vec<f64>,
}

impl BfStack {
    /// Empty images for `pixels` over a `scan` of frames with `det_px` pixels each.
    pub fn new(pixels: BfPixels, scan: [usize; 2], det_px: usize) -> Self {
        let n = scan[0] * scan[1] * pixels.len();
        BfStack { pixels, scan, det_px, images: vec![0.0; n] }
    }

    /// Adds the frames `first, first + 1, …` of `data` (whole frames, row-major).
    pub fn add(&mut self, first: u64, data: PixelSlice<'_>) -> Result<(), ReduceError> {
        let n_scan = self.scan[0] * self.scan[1];
        let frames = data.len() / self.det_px.max(1);
        if data.len() != frames * self.det_px || self.det_px == 0 {
            return Err(ReduceError::new("frame batch", format!("{} pixels from frame {first} are not whole frames of {} pixels", data.len(), self.det_px)));
        }
        // Frames past the scan (a detector that recorded extra triggers) are not positions.
        let frames = frames.min(n_scan.saturating_sub(first as usize));
        macro_rules! gather {
            ($v:expr) => {
                for (f, frame) in $v.chunks_exact(self.det_px).take(frames).enumerate() {
                    let at = first as usize + f;
                    for (b, &i) in self.pixels.index.iter().enumerate() {
                        self.images[b * n_scan + at] = frame.get(i).map_or(0.0, |&v| v as f64);
                    }
                }
            };
        }
        match data {
            PixelSlice::U8(v) => gather!(v),
            PixelSlice::U16(v) => gather!(v),
            PixelSlice::U32(v) => gather!(v),
            PixelSlice::U64(v) => gather!(v),
        }
        Ok(())
    }

    /// The scan image of BF pixel `b` (empty past the last pixel).
    pub fn image(&self, b: usize) -> &[f64] {
        let n = self.scan[0] * self.scan[1];
        self.images.get(b * n..(b + 1) * n).unwrap_or(&[])
    }
}
