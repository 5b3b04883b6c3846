//! Acquisition metadata: calibration, scan shape and the detector's bad-pixel mask, read from
//! the Dectris (NeXus-like) paths where present and from the caller's [`Hints`] where not.
//! Nothing is guessed: a value the file lacks and no hint gives stays `None`
//! ("not in file").

use scatterlab_hdf5::values::{attribute_numbers, dataset_numbers, dataset_string};
use scatterlab_hdf5::{H5Error, H5File};
use serde::Serialize;

use super::error::{LoadError, Result};

/// Dectris detector group.
pub const DETECTOR: &str = "/entry/instrument/detector";
/// Dectris detector-specific group (mask, image counts).
pub const DETECTOR_SPECIFIC: &str = "/entry/instrument/detector/detectorSpecific";
/// The bad-pixel mask (non-zero = bad).
pub const PIXEL_MASK: &str = "/entry/instrument/detector/detectorSpecific/pixel_mask";
/// Scan-controller metadata of the fixtures (real ARINA masters lack it).
pub const STEM_GROUP: &str = "/entry/instrument/stem";

/// What the caller knows that the file may not say. Where given, a hint wins over the file
/// (the caller states it explicitly); [`Calibration::from_hints`] lists what was taken.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Hints {
    /// Scan shape (rows, cols).
    pub scan_shape: Option<[usize; 2]>,
    /// Accelerating voltage, kV.
    pub voltage_kv: Option<f64>,
    /// Probe convergence semi-angle, mrad.
    pub convergence_mrad: Option<f64>,
    /// Scan step, Å.
    pub scan_step_a: Option<f64>,
    /// Detector sampling (row, col), mrad per pixel.
    pub det_sampling_mrad: Option<[f64; 2]>,
    /// Beam centre (row, col) in pixels.
    pub beam_centre_rc: Option<[f64; 2]>,
}

/// Calibration as far as the file (and hints) give it. Lengths in Å except where named.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Calibration {
    /// Electron wavelength, Å (`/entry/instrument/beam/incident_wavelength`).
    pub wavelength_a: Option<f64>,
    /// Accelerating voltage, kV.
    pub voltage_kv: Option<f64>,
    /// Probe convergence semi-angle, mrad.
    pub convergence_mrad: Option<f64>,
    /// Detector sampling (row, col) in mrad per pixel: 1e3 · pixel size / detector distance.
    pub det_sampling_mrad: Option<[f64; 2]>,
    /// Scan step, Å.
    pub scan_step_a: Option<f64>,
    /// Beam centre (row, col) in pixels (`beam_center_y`, `beam_center_x`).
    pub beam_centre_rc: Option<[f64; 2]>,
    /// Pixel size (row, col) in metres (`y_pixel_size`, `x_pixel_size`).
    pub pixel_size_m: Option<[f64; 2]>,
    /// Detector distance, metres.
    pub detector_distance_m: Option<f64>,
    /// Exposure per frame, s.
    pub count_time_s: Option<f64>,
    /// Frame period, s.
    pub frame_time_s: Option<f64>,
    /// The detector's description string.
    pub description: Option<String>,
    /// Fields taken from [`Hints`] instead of the file.
    pub from_hints: Vec<&'static str>,
}

/// The scan grid and where it was found.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScanShape {
    /// Scan rows.
    pub rows: usize,
    /// Scan columns.
    pub cols: usize,
    /// Where it came from (`/entry/data@scan_shape`, `hint`, …).
    pub source: String,
}

/// The bad-pixel mask: `bad[row * det_cols + col]`, true where the file's mask is non-zero.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PixelMask {
    /// Detector shape (rows, cols).
    pub det: [usize; 2],
    /// One flag per pixel, row-major.
    pub bad: Vec<bool>,
    /// Number of bad pixels.
    pub n_bad: usize,
}

/// Reads a numeric dataset; `Ok(None)` when it does not exist, `Err` when it exists but cannot
/// be read (the caller turns that into a warning).
pub(super) fn optional_numbers(file: &H5File, path: &str) -> Result<Option<Vec<f64>>, H5Error> {
    if !exists(file, path) {
        return Ok(None);
    }
    dataset_numbers(file, path).map(Some)
}

fn exists(file: &H5File, path: &str) -> bool {
    file.reader().dataset(path).is_ok()
}

/// Collects calibration from `file`, then applies `hints`. Values that exist but cannot be
/// read are reported in `warnings`.
pub(super) fn read_calibration(file: &H5File, hints: &Hints, warnings: &mut Vec<String>) -> Calibration {
    let mut scalar = |path: &str| -> Option<f64> {
        match optional_numbers(file, path) {
            Ok(v) => v.and_then(|v| v.first().copied()),
            Err(e) => {
                warnings.push(e.to_string());
                None
            }
        }
    };
    let det = |n: &str| format!("{DETECTOR}/{n}");
    let pair = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| [a, b]);
    let wavelength_a = scalar("/entry/instrument/beam/incident_wavelength");
    let beam_centre_rc = pair(scalar(&det("beam_center_y")), scalar(&det("beam_center_x")));
    let pixel_size_m = pair(scalar(&det("y_pixel_size")), scalar(&det("x_pixel_size")));
    let detector_distance_m = scalar(&det("detector_distance")).filter(|d| *d > 0.0);
    let det_sampling_mrad = pixel_size_m.zip(detector_distance_m).map(|(p, d)| [1e3 * p[0] / d, 1e3 * p[1] / d]);
    let mut c = Calibration {
        wavelength_a,
        voltage_kv: scalar(&format!("{STEM_GROUP}/voltage")),
        convergence_mrad: scalar(&format!("{STEM_GROUP}/convergence_semiangle")),
        det_sampling_mrad,
        scan_step_a: scalar(&format!("{STEM_GROUP}/scan_step")),
        beam_centre_rc,
        pixel_size_m,
        detector_distance_m,
        count_time_s: scalar(&det("count_time")),
        frame_time_s: scalar(&det("frame_time")),
        description: exists(file, &det("description")).then(|| dataset_string(file, &det("description")).ok()).flatten(),
        from_hints: Vec::new(),
    };
    let mut take = |field: &'static str, given: bool| {
        if given {
            c.from_hints.push(field);
        }
        given
    };
    if take("voltage_kv", hints.voltage_kv.is_some()) {
        c.voltage_kv = hints.voltage_kv;
    }
    if take("convergence_mrad", hints.convergence_mrad.is_some()) {
        c.convergence_mrad = hints.convergence_mrad;
    }
    if take("scan_step_a", hints.scan_step_a.is_some()) {
        c.scan_step_a = hints.scan_step_a;
    }
    if take("det_sampling_mrad", hints.det_sampling_mrad.is_some()) {
        c.det_sampling_mrad = hints.det_sampling_mrad;
    }
    if take("beam_centre_rc", hints.beam_centre_rc.is_some()) {
        c.beam_centre_rc = hints.beam_centre_rc;
    }
    // Physical ranges: a value outside (from the file or a hint) is damage or a wrong unit, never used (a semi-angle of
    // 1e308 mrad once turned into an infinite iDPC, and one of 1e-300 mrad into a 1e-301 mrad/px sampling and an iDPC
    // scaled by 1e301). The lower ends are far below any instrument (10 MV electrons have λ = 1.2e-4 Å).
    let mut plausible = |v: &mut Option<f64>, name: &str, unit: &str, range: std::ops::RangeInclusive<f64>| {
        if let Some(x) = *v {
            if !(x.is_finite() && *range.start() < x && x <= *range.end()) {
                warnings.push(format!("{}: {name} = {x:e} {unit} is outside ({:e}, {:e}] {unit}; ignored", file.name(), range.start(), range.end()));
                *v = None;
            }
        }
    };
    plausible(&mut c.wavelength_a, "incident_wavelength", "Å", PLAUSIBLE_WAVELENGTH_A);
    plausible(&mut c.voltage_kv, "voltage", "kV", PLAUSIBLE_VOLTAGE_KV);
    plausible(&mut c.convergence_mrad, "convergence_semiangle", "mrad", PLAUSIBLE_CONVERGENCE_MRAD);
    plausible(&mut c.scan_step_a, "scan_step", "Å", PLAUSIBLE_SCAN_STEP_A);
    // The file's geometry (pixel size / detector distance, or the hint) the same way, both axes at once.
    if let Some(s) = c.det_sampling_mrad {
        let range = PLAUSIBLE_DET_SAMPLING_MRAD;
        if !s.iter().all(|x| x.is_finite() && *range.start() < *x && x <= range.end()) {
            let what = if c.from_hints.contains(&"det_sampling_mrad") { "the detector sampling hint" } else { "detector sampling (pixel size / detector distance)" };
            warnings.push(format!("{}: {what} = [{:e}, {:e}] mrad/px is outside ({:e}, {:e}] mrad/px; ignored", file.name(), s[0], s[1], range.start(), range.end()));
            c.det_sampling_mrad = None;
        }
    }
    c
}

/// Calibration values outside these (lower end excluded) are ignored with a warning: damage or a wrong unit.
pub const PLAUSIBLE_WAVELENGTH_A: std::ops::RangeInclusive<f64> = 1e-4..=1.0;
/// Accelerating voltage, kV.
pub const PLAUSIBLE_VOLTAGE_KV: std::ops::RangeInclusive<f64> = 0.01..=10_000.0;
/// Convergence semi-angle, mrad.
pub const PLAUSIBLE_CONVERGENCE_MRAD: std::ops::RangeInclusive<f64> = 1e-3..=1000.0;
/// Scan step, Å.
pub const PLAUSIBLE_SCAN_STEP_A: std::ops::RangeInclusive<f64> = 1e-4..=1e7;
/// Detector sampling from the file's geometry, mrad per pixel.
pub const PLAUSIBLE_DET_SAMPLING_MRAD: std::ops::RangeInclusive<f64> = 1e-6..=1000.0;

/// The places a scan shape is looked for, in order after the hint.
pub const SCAN_SHAPE_SOURCES: [&str; 2] = ["/entry/data@scan_shape", "/entry/instrument/stem/scan_shape"];

/// The scan shape from the hint, `/entry/data@scan_shape` or `/entry/instrument/stem/scan_shape`.
pub(super) fn read_scan_shape(file: &H5File, hints: &Hints, warnings: &mut Vec<String>) -> Option<ScanShape> {
    if let Some([rows, cols]) = hints.scan_shape {
        return Some(ScanShape { rows, cols, source: "hint".into() });
    }
    let from = |v: Vec<f64>, source: &str, warnings: &mut Vec<String>| match v.as_slice() {
        // At most u32::MAX positions, so `row * cols + col` fits a usize on wasm32 too.
        [r, c] if *r >= 1.0 && *c >= 1.0 && r.fract() == 0.0 && c.fract() == 0.0 && r * c <= f64::from(u32::MAX) => {
            // Integral, ≥ 1 and ≤ u32::MAX (checked above): exact conversions.
            #[allow(clippy::cast_possible_truncation)]
            let (rows, cols) = (*r as usize, *c as usize);
            Some(ScanShape { rows, cols, source: source.into() })
        }
        other => {
            warnings.push(format!("{}: {source} = {other:?} is not a scan shape (rows, cols)", file.name()));
            None
        }
    };
    let has_attr = file.reader().group("/entry/data").and_then(|g| g.attribute("scan_shape")).is_ok();
    if has_attr {
        match attribute_numbers(file, "/entry/data", "scan_shape") {
            Ok(v) => {
                if let Some(s) = from(v, SCAN_SHAPE_SOURCES[0], warnings) {
                    return Some(s);
                }
            }
            Err(e) => warnings.push(e.to_string()),
        }
    }
    match optional_numbers(file, SCAN_SHAPE_SOURCES[1]) {
        Ok(Some(v)) => from(v, SCAN_SHAPE_SOURCES[1], warnings),
        Ok(None) => None,
        Err(e) => {
            warnings.push(e.to_string());
            None
        }
    }
}

/// The pixel mask at [`PIXEL_MASK`], `None` when the file has none. Its shape must be the
/// detector's.
pub(super) fn read_mask(file: &H5File, det: [usize; 2]) -> Result<Option<PixelMask>> {
    let Some(values) = optional_numbers(file, PIXEL_MASK)? else { return Ok(None) };
    if values.len() != det[0] * det[1] {
        return Err(LoadError::Metadata { file: file.name().to_string(), detail: format!("{PIXEL_MASK} has {} pixels, the detector {}×{}", values.len(), det[0], det[1]) });
    }
    let bad: Vec<bool> = values.iter().map(|&v| v != 0.0).collect();
    let n_bad = bad.iter().filter(|&&b| b).count();
    Ok(Some(PixelMask { det, bad, n_bad }))
}
