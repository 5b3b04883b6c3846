//! [`ssb`]: the reconstruction of an opened acquisition — parameters resolved (given, else the
//! file's calibration, else measured) and checked, frames streamed into a [`BfStack`] (plus the
//! fused DPC pass when the rotation is not given), then [`super::reconstruct`].

use num_complex::Complex64;
use scatterlab_core::CancelToken;
use serde::Serialize;

use super::{fit_aberrations_on, reconstruct, rotation_from_dpc, Aberrations, BfPixels, BfStack, CpuLosses, FitOptions, FitReport, FitStart, LossBackend, Optics, GAMMA_FLOOR};
use crate::load::{Acquisition, FileSet, LoadProvenance, LoadRecord, MaskPolicy, PixelSlice, StreamCursor};
use crate::reduce::pipeline::wavelength_from_kv;
use crate::reduce::{auto_probe, FusedPass, ReduceError, VirtualDetector};
use crate::sampling::{detector_sampling, DetectorSampling};

/// What to reconstruct with; `None` = from the file (or measured), as each field says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SsbOptions {
    /// Beam centre (row, col), px; `None` = auto probe of the mean pattern.
    pub center: Option<[f64; 2]>,
    /// BF radius, px; `None` = auto probe.
    pub bf_radius: Option<f64>,
    /// Scan rotation θ, degrees (the fixtures' `rot_deg`); `None` = from DPC (θ = −a).
    pub rotation_deg: Option<f64>,
    /// Transposed detector; `None` = DPC's when the rotation comes from DPC, else false.
    pub transposed: Option<bool>,
    /// C10, C12, φ12 (default 0).
    pub aberrations: Aberrations,
    /// Wavelength, Å; `None` = the file's, else from its voltage.
    pub wavelength_a: Option<f64>,
    /// Convergence semi-angle α, mrad; `None` = the file's.
    pub convergence_mrad: Option<f64>,
    /// Scan step, Å; `None` = the file's.
    pub scan_step_a: Option<f64>,
    /// Detector sampling, Å⁻¹/px; `None` = [`detector_sampling`] over the wavelength.
    pub dk_inv_a_per_px: Option<f64>,
    /// Bad-pixel policy (default: masked pixels zeroed).
    pub mask: MaskPolicy,
    /// Fit the aberrations (from `aberrations` as the start) before reconstructing.
    pub fit: Option<FitOptions>,
}

/// What a reconstruction used (the manifest's numbers).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SsbRecord {
    /// Beam centre (row, col), px.
    pub center_row_col: [f64; 2],
    /// BF radius, px.
    pub bf_radius_px: f64,
    /// Whether centre or radius came from the auto probe.
    pub auto_probe: bool,
    /// BF pixels used (`d ≤ R`).
    pub bf_pixels: usize,
    /// Aberrations used.
    pub aberrations: Aberrations,
    /// Whether they were fitted.
    pub fitted: bool,
    /// The fit's report (loss curve, levels, evaluations) when fitted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fit: Option<FitReport>,
    /// Scan rotation θ, degrees.
    pub rotation_deg: f64,
    /// `given` or `dpc` (θ = −a, half turn by the physical iDPC).
    pub rotation_source: String,
    /// Transposed detector.
    pub transposed: bool,
    /// Wavelength λ (Å), `k_α` (Å⁻¹) and dk (Å⁻¹/px).
    pub optics: Optics,
    /// Convergence semi-angle, mrad.
    pub convergence_mrad: f64,
    /// Scan step, Å.
    pub scan_step_a: f64,
    /// The detector-sampling rule used, in words.
    pub sampling_rule: String,
    /// The rule's full result when dk was not given.
    pub detector_sampling: Option<DetectorSampling>,
    /// `|Γ_b|` floor.
    pub gamma_floor: f64,
    /// Warnings and remarks.
    pub notes: Vec<String>,
    /// Device and precision.
    pub device: String,
    /// This crate's version.
    pub version: String,
}

/// The reconstruction: the complex object over the scan with its record and provenance.
#[derive(Clone, Debug)]
pub struct SsbProducts {
    /// Scan shape (rows, cols).
    pub scan: [usize; 2],
    /// `ssb_object`, row-major.
    pub object: Vec<Complex64>,
    /// Parameters used.
    pub record: SsbRecord,
    /// Sources and how they were read.
    pub provenance: LoadProvenance,
}

impl SsbProducts {
    /// `ssb_phase = angle(ssb_object)`, radians.
    pub fn phase(&self) -> Vec<f64> {
        self.object.iter().map(|z| z.arg()).collect()
    }

    /// `ssb_amplitude = |ssb_object|`.
    pub fn amplitude(&self) -> Vec<f64> {
        self.object.iter().map(|z| z.norm()).collect()
    }
}

/// A given value, checked finite (and positive when `positive`); the error names the parameter.
fn checked(v: Option<f64>, name: &str, positive: bool) -> Result<Option<f64>, ReduceError> {
    match v {
        Some(x) if !x.is_finite() => Err(ReduceError::new(name, format!("must be a finite number (got {x})"))),
        Some(x) if positive && x <= 0.0 => Err(ReduceError::new(name, format!("must be positive (got {x})"))),
        v => Ok(v),
    }
}

/// A value from the option or the file; neither is a missing-calibration error naming it.
fn required(given: Option<f64>, file: Option<f64>, name: &str, how: &str) -> Result<f64, ReduceError> {
    match checked(given, name, true)? {
        Some(v) => Ok(v),
        None => checked(file, name, true)?.ok_or_else(|| ReduceError::new(name, format!("not in the file's calibration; give it ({how})"))),
    }
}

/// Streams every frame of `acq` into `on_batch` (cancel checked between batches).
fn pass(
    acq: &Acquisition,
    mask: MaskPolicy,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &CancelToken,
    on_batch: &mut dyn FnMut(u64, PixelSlice<'_>) -> Result<(), ReduceError>,
) -> Result<usize, ReduceError> {
    let mut cursor = StreamCursor::new(acq, mask);
    loop {
        if cancel.is_cancelled() {
            return Err(ReduceError::new("SSB", "cancelled"));
        }
        let Some(batch) = cursor.next_batch(acq, 64).map_err(|e| ReduceError::new(acq.master(), e.to_string()))? else { break };
        on_batch(batch.first_frame, batch.data)?;
        progress(cursor.frames_done(), cursor.frames_total());
    }
    Ok(cursor.n_masked())
}

/// Reconstructs `acq` (opened from `files`, for provenance) by SSB on the CPU in f64, fitting
/// the aberrations first when `options.fit` asks; `progress` gets (frames done, total) per batch
/// of each pass over the data (two when the centre or radius is measured), then (loss
/// evaluations done, planned) during a fit.
pub fn ssb(acq: &Acquisition, files: &dyn FileSet, options: &SsbOptions, progress: &mut dyn FnMut(u64, u64), cancel: &CancelToken) -> Result<SsbProducts, ReduceError> {
    let p = prepare(acq, files, options, progress, cancel)?;
    let r = &p.record;
    let object = reconstruct(&p.stack, &p.optics, &r.aberrations, r.scan_step_a, r.rotation_deg, cancel)?;
    Ok(SsbProducts { scan: p.stack.scan, object, record: p.record, provenance: p.provenance })
}

/// Everything [`ssb`] does before the final reconstruction: the filled BF stack, the optics, and
/// the record (aberrations given or fitted, rotation, step; `device` says the CPU's, a GPU caller
/// overwrites it) — shared by the CPU path and the GPU's (`crate::gpu::ssb_gpu`).
#[derive(Debug)]
pub struct SsbPrepared {
    /// One scan image per BF pixel.
    pub stack: BfStack,
    /// λ, k_α, dk.
    pub optics: Optics,
    /// Parameters used.
    pub record: SsbRecord,
    /// Sources and how they were read.
    pub provenance: LoadProvenance,
}

/// [`ssb`] up to the reconstruction: parameters resolved and checked, frames streamed into the
/// BF stack, rotation from DPC and the fit when asked; same `progress` and `cancel` contract.
pub fn prepare(acq: &Acquisition, files: &dyn FileSet, options: &SsbOptions, progress: &mut dyn FnMut(u64, u64), cancel: &CancelToken) -> Result<SsbPrepared, ReduceError> {
    prepare_with(acq, files, options, &mut CpuLosses, progress, cancel)
}

/// [`prepare`] with a fit's losses evaluated by `backend`.
pub fn prepare_with(
    acq: &Acquisition,
    files: &dyn FileSet,
    options: &SsbOptions,
    backend: &mut dyn LossBackend,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &CancelToken,
) -> Result<SsbPrepared, ReduceError> {
    let o = options;
    if let Some(c) = o.center {
        checked(Some(c[0]), "beam centre row", false)?;
        checked(Some(c[1]), "beam centre col", false)?;
    }
    checked(o.bf_radius, "BF radius", true)?;
    checked(o.rotation_deg, "scan rotation", false)?;
    checked(Some(o.aberrations.c10_nm), "C10", false)?;
    checked(Some(o.aberrations.c12_nm), "C12", false)?;
    checked(Some(o.aberrations.phi12_rad), "phi12", false)?;
    let scan = acq.scan_shape().map_err(|e| ReduceError::new("scan shape", e.to_string()))?;
    let scan = [scan.rows, scan.cols];
    if scan[0] < 2 || scan[1] < 2 {
        return Err(ReduceError::new("scan shape", format!("SSB needs a 2-D scan of at least 2 × 2 positions (got {} × {})", scan[0], scan[1])));
    }
    let n_scan = scan[0] * scan[1];
    if !acq.is_complete() || (acq.n_frames() as usize) < n_scan {
        let files: Vec<&str> = acq.missing().iter().map(|m| m.file.as_str()).collect();
        return Err(ReduceError::new(
            acq.master(),
            format!("SSB needs every scan position's frame: {} frames for {n_scan} positions, missing files: [{}]", acq.n_frames() - acq.n_missing_frames(), files.join(", ")),
        ));
    }
    let cal = acq.calibration();
    let wavelength = required(o.wavelength_a, cal.wavelength_a.or(cal.voltage_kv.map(wavelength_from_kv)), "wavelength", "the voltage or wavelength")?;
    let alpha = required(o.convergence_mrad, cal.convergence_mrad, "convergence semi-angle", "in mrad")?;
    let step = required(o.scan_step_a, cal.scan_step_a, "scan step", "in Å")?;
    let dk_given = checked(o.dk_inv_a_per_px, "detector sampling", true)?;
    let det = acq.det_shape();
    let n_frames = acq.n_frames() as usize;
    let (center, radius, auto) = match (o.center, o.bf_radius) {
        (Some(c), Some(r)) => (c, r, false),
        (c, r) => {
            let mut sum = FusedPass::new(det, n_frames, &[])?;
            pass(acq, o.mask, progress, cancel, &mut |first, data| sum.add(first, data))?;
            let probe = auto_probe(&sum.finish().mean_dp(), det)?;
            (c.unwrap_or(probe.center), r.unwrap_or(probe.radius), true)
        }
    };
    let mut notes = Vec::new();
    let (dk, sampling_rule, sampling) = match dk_given {
        Some(dk) => (dk, format!("given: {dk} Å⁻¹/px"), None),
        None => {
            // The semi-angle in use (given or the file's) over the BF radius in use.
            let cal = crate::load::Calibration { convergence_mrad: Some(alpha), ..cal.clone() };
            let s = detector_sampling(&cal, Some(radius)).ok_or_else(|| ReduceError::new("detector sampling", "neither given nor derivable"))?;
            let dk = s.inv_a_per_px(wavelength).ok_or_else(|| ReduceError::new("wavelength", format!("{wavelength} Å is not usable")))?;
            notes.extend(s.warning.clone());
            (dk, format!("{:?}: {} → {dk:.6} Å⁻¹/px", s.source, s.rule), Some(s))
        }
    };
    let optics = Optics { wavelength_a: wavelength, k_alpha_inv_a: alpha * 1e-3 / wavelength, dk_inv_a_per_px: dk };
    let given_rotation = o.rotation_deg;
    let pixels = BfPixels::disc(det, center, radius, dk, o.transposed.unwrap_or(false))?;
    let mut stack = BfStack::new(pixels, scan, det[0] * det[1]);
    // Without a rotation, the same pass feeds the DPC (CoM and an ADF image for the half turn).
    let mut fused = match given_rotation {
        Some(_) => None,
        None => Some(FusedPass::new(det, n_frames, &VirtualDetector::standard(center, radius, [1.2 * radius, 2.5 * radius]))?),
    };
    let n_masked = pass(acq, o.mask, progress, cancel, &mut |first, data| {
        if let Some(f) = fused.as_mut() {
            f.add(first, data)?;
        }
        stack.add(first, data)
    })?;
    let (rotation_deg, transposed, rotation_source) = match (given_rotation, fused) {
        (Some(r), _) => (r, o.transposed.unwrap_or(false), "given".to_owned()),
        (None, Some(f)) => {
            let d = rotation_from_dpc(&f.finish(), scan, dk, step)?;
            let transposed = o.transposed.unwrap_or(d.transposed);
            if transposed != o.transposed.unwrap_or(false) {
                // The disc was built untransposed before DPC spoke: rebuild the k vectors.
                stack.pixels = BfPixels::disc(det, center, radius, dk, transposed)?;
            }
            if o.transposed.is_some_and(|t| t != d.transposed) {
                notes.push(format!("transposed = {transposed} given; DPC preferred {}", d.transposed));
            }
            (d.theta_deg, transposed, format!("dpc: θ = −a, a = {:.3}° (curl minimum, half turn by the physical iDPC)", d.dpc_deg))
        }
        (None, None) => return Err(ReduceError::new("scan rotation", "neither given nor measured")),
    };
    let (aberrations, rotation_deg, rotation_source, fit) = match &o.fit {
        None => (o.aberrations, rotation_deg, rotation_source, None),
        Some(fo) => {
            let r = fit_aberrations_on(&stack, &optics, step, &FitStart { aberrations: o.aberrations, rotation_deg }, fo, backend, progress, cancel)?;
            let source = if fo.fit_rotation { format!("fitted from {rotation_deg:.3}° ({rotation_source})") } else { rotation_source };
            (r.aberrations, r.rotation_deg, source, Some(r))
        }
    };
    let record = LoadRecord { frames: [0, acq.n_frames()], region: None, bin: 1, mask_policy: o.mask, n_masked };
    let provenance = acq.provenance(files, &record, None).map_err(|e| ReduceError::new("provenance", e.to_string()))?;
    Ok(SsbPrepared {
        optics,
        record: SsbRecord {
            center_row_col: center,
            bf_radius_px: radius,
            auto_probe: auto,
            bf_pixels: stack.pixels.len(),
            aberrations,
            fitted: fit.is_some(),
            fit,
            rotation_deg,
            rotation_source,
            transposed,
            optics,
            convergence_mrad: alpha,
            scan_step_a: step,
            sampling_rule,
            detector_sampling: sampling,
            gamma_floor: GAMMA_FLOOR,
            notes,
            device: "cpu (f64, rustfft)".into(),
            version: format!("scatterlab-stem {}", crate::VERSION),
        },
        provenance,
        stack,
    })
}
