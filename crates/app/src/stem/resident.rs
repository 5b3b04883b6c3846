//! The acquisition held in memory: every frame (filled batch by batch, in frame order) and the
//! fused pass over them without detectors (sum/max pattern, total, centre of mass), so that a
//! moved detector only needs its own sums ([`detector_images`]) and a scan region its mean
//! pattern. All sums are the STEM crate's exact integer ones.

use scatterlab_stem::load::{Calibration, PixelData, PixelKind, PixelSlice};
use scatterlab_stem::reduce::{detector_images, DetectorImages, FusedPass, FusedResult, VirtualDetector};
use scatterlab_stem::sampling::{detector_sampling, DetectorSampling};

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
    /// Detector pixel size (row, col), m, from the file.
    pub pixel_size_m: Option<[f64; 2]>,
    /// Detector distance, m, from the file.
    pub detector_distance_m: Option<f64>,
}

impl StemCalibration {
    /// The detector sampling by the STEM crate's one rule ([`detector_sampling`]: the
    /// convergence semi-angle over the BF radius, else the file's geometry), as `stem info` and
    /// `stem reduce` compute it.
    pub fn sampling(&self, bf_radius_px: f64) -> Option<DetectorSampling> {
        let cal = Calibration {
            convergence_mrad: self.convergence_mrad,
            wavelength_a: self.wavelength_a,
            pixel_size_m: self.pixel_size_m,
            detector_distance_m: self.detector_distance_m,
            ..Default::default()
        };
        detector_sampling(&cal, Some(bf_radius_px))
    }

    /// Detector sampling in Å⁻¹ per pixel ([`Self::sampling`] over the wavelength).
    pub fn dk_inv_a(&self, bf_radius_px: f64) -> Option<f64> {
        self.sampling(bf_radius_px).zip(self.wavelength_a).and_then(|(s, l)| s.inv_a_per_px(l))
    }

    /// Detector sampling in mrad per pixel ([`Self::sampling`]).
    pub fn mrad_per_px(&self, bf_radius_px: f64) -> Option<f64> {
        self.sampling(bf_radius_px).map(|s| s.mrad_per_px)
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
    /// Which frames hold data: false for frames not loaded yet and for frames of missing data
    /// files (skipped by the source), which no product may count as zeros.
    present: Vec<bool>,
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
        Ok(Self { name: name.to_owned(), scan, det, calibration, n_masked: 0, frames: PixelData::zeros(kind, n * px), loaded: 0, present: vec![false; n], base })
    }

    /// The pixel type of the frames.
    pub fn kind(&self) -> PixelKind {
        self.frames.kind()
    }

    /// Frames in the scan.
    pub fn n_frames(&self) -> usize {
        self.scan[0] * self.scan[1]
    }

    /// Frames read up to (frames `0..loaded`, less those of missing data files).
    pub fn loaded(&self) -> usize {
        self.loaded
    }

    /// Whether scan position `frame` (row-major) holds data.
    pub fn is_present(&self, frame: usize) -> bool {
        self.present.get(frame).copied().unwrap_or(false)
    }

    /// Frames before [`Self::loaded`] that hold no data (their data file is missing).
    pub fn skipped(&self) -> usize {
        self.present[..self.loaded.min(self.present.len())].iter().filter(|p| !**p).count()
    }

    /// Whether every frame is in memory.
    pub fn is_complete(&self) -> bool {
        self.loaded == self.n_frames()
    }

    /// Stores the next frames (`first` at or after [`Self::loaded`]: frames in between belong
    /// to missing data files and stay absent); frames beyond the scan are dropped. Returns how
    /// many were stored.
    pub fn push(&mut self, first: u64, data: PixelSlice<'_>) -> Result<usize, String> {
        let px = self.det[0] * self.det[1];
        let start = usize::try_from(first).unwrap_or(usize::MAX);
        if start < self.loaded || start > self.n_frames() || px == 0 || !data.len().is_multiple_of(px) {
            return Err(format!("{}: batch at frame {first} of {} pixels does not follow frame {}", self.name, data.len(), self.loaded));
        }
        let n = (data.len() / px).min(self.n_frames() - start);
        let (at, end) = (start * px, (start + n) * px);
        let stored = match (&mut self.frames, data) {
            (PixelData::U8(d), PixelSlice::U8(s)) => copy(d, at, end, s),
            (PixelData::U16(d), PixelSlice::U16(s)) => copy(d, at, end, s),
            (PixelData::U32(d), PixelSlice::U32(s)) => copy(d, at, end, s),
            (PixelData::U64(d), PixelSlice::U64(s)) => copy(d, at, end, s),
            _ => None,
        };
        stored.ok_or_else(|| format!("{}: batch pixels are not {}", self.name, self.frames.kind().name()))?;
        self.base.add(first, slice(&self.frames, at, end)).map_err(|e| format!("{}: {e}", self.name))?;
        self.present[start..start + n].iter_mut().for_each(|p| *p = true);
        self.loaded = start + n;
        Ok(n)
    }

    /// The source has no more frames: the rest of the scan has no data (missing data files at
    /// the end), and loading is over.
    pub fn end_of_source(&mut self) {
        self.loaded = self.n_frames();
    }

    /// The loaded frames.
    pub fn frames(&self) -> PixelSlice<'_> {
        let px = self.det[0] * self.det[1];
        slice(&self.frames, 0, self.loaded * px)
    }

    /// The detector-free products of the frames loaded so far. Positions without data (not
    /// loaded yet, or in a missing data file) have a NaN centre of mass, so the DPC field, its
    /// rotation and iDPC leave them out; their integer sums are 0 (show them via
    /// [`Self::is_present`]).
    pub fn products(&self) -> FusedResult {
        let mut r = self.base.clone().finish();
        r.mark_absent(&self.present);
        r
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
            // Runs of present frames only: a frame without data is not a frame of zeros.
            let mut f = r * cols + region.cols[0];
            let end = (r * cols + c1).min(self.loaded);
            while f < end {
                let run = (f..end).take_while(|&i| self.is_present(i)).count();
                if run > 0 {
                    pass.add(f as u64, slice(&self.frames, f * px, (f + run) * px)).map_err(|e| e.to_string())?;
                    any = true;
                }
                f += run.max(1);
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
