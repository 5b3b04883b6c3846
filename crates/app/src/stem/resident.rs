//! The acquisition held in memory: every frame (filled batch by batch, in frame order) and the
//! fused pass over them without detectors (sum/max pattern, total, centre of mass), so that a
//! moved detector only needs its own sums ([`detector_images`]) and a scan region its mean
//! pattern. All sums are the STEM crate's exact integer ones.

use scatterlab_stem::load::{PixelData, PixelKind, PixelSlice};
use scatterlab_stem::reduce::{detector_images, DetectorImages, FusedPass, FusedResult, VirtualDetector};

/// Bytes of frames the workspace keeps in memory at most (phase 1 holds every frame).
#[cfg(not(target_arch = "wasm32"))]
pub const RESIDENT_LIMIT: u64 = 16 << 30;
/// Bytes of frames the workspace keeps in memory at most (wasm32 has a 4 GiB address space).
#[cfg(target_arch = "wasm32")]
pub const RESIDENT_LIMIT: u64 = 1536 << 20;

/// What the iDPC and scale bars need to know, as far as the file (or the example) says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StemCalibration {
    /// Probe convergence semi-angle, mrad.
    pub convergence_mrad: Option<f64>,
    /// Electron wavelength, Å.
    pub wavelength_a: Option<f64>,
    /// Scan step, Å.
    pub scan_step_a: Option<f64>,
}

impl StemCalibration {
    /// Detector sampling in Å⁻¹ per pixel: the BF disc edge is the convergence semi-angle, so
    /// `(α / λ) / R` for BF radius `R` pixels (CONVENTIONS.md → iDPC; the reduction's rule).
    pub fn dk_inv_a(&self, bf_radius_px: f64) -> Option<f64> {
        match (self.convergence_mrad, self.wavelength_a) {
            (Some(a), Some(l)) if bf_radius_px > 0.0 && l > 0.0 => Some(a * 1e-3 / l / bf_radius_px),
            _ => None,
        }
    }

    /// Detector sampling in mrad per pixel from the convergence semi-angle over the BF radius.
    pub fn mrad_per_px(&self, bf_radius_px: f64) -> Option<f64> {
        self.convergence_mrad.filter(|_| bf_radius_px > 0.0).map(|a| a / bf_radius_px)
    }
}

/// A scan region: rows `rows[0]..rows[1]`, columns `cols[0]..cols[1]` (half-open).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScanRegion {
    /// First and one-past-last scan row.
    pub rows: [usize; 2],
    /// First and one-past-last scan column.
    pub cols: [usize; 2],
}

/// Frames in memory and the detector-free products over those loaded so far.
#[derive(Clone, Debug)]
pub struct Resident {
    /// What was opened (file name or "built-in example").
    pub name: String,
    /// Scan shape (rows, cols).
    pub scan: [usize; 2],
    /// Detector shape (rows, cols).
    pub det: [usize; 2],
    /// Calibration for iDPC and scale bars.
    pub calibration: StemCalibration,
    /// Pixels zeroed per frame by the bad-pixel mask.
    pub n_masked: usize,
    frames: PixelData,
    loaded: usize,
    base: FusedPass,
}

impl Resident {
    /// Room for `scan` frames of a `det` detector of `kind` pixels, or why not.
    pub fn new(name: &str, scan: [usize; 2], det: [usize; 2], kind: PixelKind, calibration: StemCalibration) -> Result<Self, String> {
        let n = scan[0].checked_mul(scan[1]).ok_or_else(|| format!("{name}: scan {scan:?} is too large"))?;
        let px = det[0].checked_mul(det[1]).ok_or_else(|| format!("{name}: detector {det:?} is too large"))?;
        let bytes = (n as u64).saturating_mul(px as u64).saturating_mul(kind.size() as u64);
        if bytes > RESIDENT_LIMIT {
            return Err(format!(
                "{name}: {:.1} GiB of frames exceed the {:.1} GiB this workspace keeps in memory",
                bytes as f64 / f64::from(1u32 << 30),
                RESIDENT_LIMIT as f64 / f64::from(1u32 << 30)
            ));
        }
        let base = FusedPass::new(det, n, &[]).map_err(|e| format!("{name}: {e}"))?;
        Ok(Self { name: name.to_owned(), scan, det, calibration, n_masked: 0, frames: PixelData::zeros(kind, n * px), loaded: 0, base })
    }

    /// The pixel type of the frames.
    pub fn kind(&self) -> PixelKind {
        self.frames.kind()
    }

    /// Frames in the scan.
    pub fn n_frames(&self) -> usize {
        self.scan[0] * self.scan[1]
    }

    /// Frames loaded so far (frames `0..loaded`).
    pub fn loaded(&self) -> usize {
        self.loaded
    }

    /// Whether every frame is in memory.
    pub fn is_complete(&self) -> bool {
        self.loaded == self.n_frames()
    }

    /// Stores the next frames (`first` must be [`Self::loaded`]); frames beyond the scan are
    /// dropped. Returns how many were stored.
    pub fn push(&mut self, first: u64, data: PixelSlice<'_>) -> Result<usize, String> {
        let px = self.det[0] * self.det[1];
        if first != self.loaded as u64 || px == 0 || !data.len().is_multiple_of(px) {
            return Err(format!("{}: batch at frame {first} of {} pixels does not follow frame {}", self.name, data.len(), self.loaded));
        }
        let n = (data.len() / px).min(self.n_frames() - self.loaded);
        let (at, end) = (self.loaded * px, (self.loaded + n) * px);
        let stored = match (&mut self.frames, data) {
            (PixelData::U8(d), PixelSlice::U8(s)) => copy(d, at, end, s),
            (PixelData::U16(d), PixelSlice::U16(s)) => copy(d, at, end, s),
            (PixelData::U32(d), PixelSlice::U32(s)) => copy(d, at, end, s),
            (PixelData::U64(d), PixelSlice::U64(s)) => copy(d, at, end, s),
            _ => None,
        };
        stored.ok_or_else(|| format!("{}: batch pixels are not {}", self.name, self.frames.kind().name()))?;
        self.base.add(first, slice(&self.frames, at, end)).map_err(|e| format!("{}: {e}", self.name))?;
        self.loaded += n;
        Ok(n)
    }

    /// The loaded frames.
    pub fn frames(&self) -> PixelSlice<'_> {
        let px = self.det[0] * self.det[1];
        slice(&self.frames, 0, self.loaded * px)
    }

    /// The detector-free products of the frames loaded so far (frames not yet loaded count 0).
    pub fn products(&self) -> FusedResult {
        self.base.clone().finish()
    }

    /// Each detector's sum per loaded frame (frame order), exact.
    pub fn virtual_images(&self, detectors: &[VirtualDetector]) -> Result<DetectorImages, String> {
        if self.loaded == 0 {
            return Err(format!("{}: no frame loaded yet", self.name));
        }
        detector_images(self.det, self.frames(), detectors).map_err(|e| e.to_string())
    }

    /// The mean pattern of the loaded frames in `region` (the STEM crate's fused pass over them).
    pub fn region_mean_dp(&self, region: ScanRegion) -> Result<Vec<f64>, String> {
        let [rows, cols] = self.scan;
        let (r1, c1) = (region.rows[1].min(rows), region.cols[1].min(cols));
        let px = self.det[0] * self.det[1];
        let mut pass = FusedPass::new(self.det, self.n_frames(), &[]).map_err(|e| e.to_string())?;
        let mut any = false;
        for r in region.rows[0]..r1 {
            // One scan row of the region is consecutive frames.
            let first = r * cols + region.cols[0];
            let end = (r * cols + c1).min(self.loaded);
            if first < end {
                pass.add(first as u64, slice(&self.frames, first * px, end * px)).map_err(|e| e.to_string())?;
                any = true;
            }
        }
        if !any {
            return Err(format!("scan region rows {:?} cols {:?} holds no loaded frame", region.rows, region.cols));
        }
        Ok(pass.finish().mean_dp())
    }
}

/// Pixels `at..end` of `frames` (callers keep them within the loaded frames).
fn slice(frames: &PixelData, at: usize, end: usize) -> PixelSlice<'_> {
    match frames {
        PixelData::U8(v) => PixelSlice::U8(v.get(at..end).unwrap_or_default()),
        PixelData::U16(v) => PixelSlice::U16(v.get(at..end).unwrap_or_default()),
        PixelData::U32(v) => PixelSlice::U32(v.get(at..end).unwrap_or_default()),
        PixelData::U64(v) => PixelSlice::U64(v.get(at..end).unwrap_or_default()),
    }
}

/// Copies the start of `src` into `dst[at..end]` (`None` when either is too short).
fn copy<T: Copy>(dst: &mut [T], at: usize, end: usize, src: &[T]) -> Option<()> {
    let dst = dst.get_mut(at..end)?;
    dst.copy_from_slice(src.get(..dst.len())?);
    Some(())
}
