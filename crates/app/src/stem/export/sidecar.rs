//! The sidecar JSON of an export: the STEM crate's provenance types ([`LoadProvenance`] for the
//! sources, [`ReduceRecord`] for geometry, rotation, device, accumulation and version) plus what
//! only the workspace knows (its free-form detectors, the scan region, the display mapping).

use std::path::Path;

use scatterlab_stem::load::{LoadProvenance, LoadRecord, MaskPolicy, PixelSlice};
use scatterlab_stem::reduce::pipeline::ReduceRecord;
use serde::Serialize;

use crate::stem::detectors::{Shape, ADF_DEFAULT};
use crate::stem::resident::{Resident, StemCalibration};
use crate::stem::view::Display;
use crate::stem::{example, StemPanel};

/// One virtual detector as exported.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DetectorRecord {
    /// Its name in the workspace.
    pub name: String,
    /// `disc`, `annulus` or `rect`.
    pub kind: &'static str,
    /// Centre (row, col), pixels (discs and annuli).
    pub center_row_col: Option<[f64; 2]>,
    /// Inner and outer radius, pixels (closed interval; a disc's inner is 0; `null` outer = ∞).
    pub radii_px: Option<[Option<f64>; 2]>,
    /// Rows and columns, half-open (rectangles).
    pub rows_cols: Option<[[usize; 2]; 2]>,
    /// Detector pixels it sums.
    pub pixels: usize,
}

/// How the PNG mapped the numbers to colours.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DisplayRecord {
    /// Colormap name.
    pub colormap: String,
    /// `linear`, `log`, `sqrt` or `gamma`.
    pub transform: String,
    /// γ (gamma transform only).
    pub gamma: Option<f64>,
    /// The limits in data units (black and white ends).
    pub limits: [f64; 2],
    /// The percentiles the limits came from (`null` = manual limits).
    pub percentiles: Option<[f64; 2]>,
    /// Limits symmetric about 0 (signed data on a diverging colormap).
    pub centred_at_zero: bool,
}

impl DisplayRecord {
    /// The record of `display` with the `limits` it used.
    pub fn new(display: &Display, limits: [f64; 2]) -> Self {
        Self {
            colormap: display.colormap.name().to_owned(),
            transform: display.transform.name().to_owned(),
            gamma: (display.transform == crate::stem::view::Transform::Gamma).then_some(display.gamma),
            limits,
            percentiles: display.auto.then_some(display.percentiles),
            centred_at_zero: display.centred,
        }
    }
}

/// The calibration as exported.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CalibrationRecord {
    /// Convergence semi-angle, mrad.
    pub convergence_mrad: Option<f64>,
    /// Electron wavelength, Å.
    pub wavelength_a: Option<f64>,
    /// Scan step, Å.
    pub scan_step_a: Option<f64>,
}

/// The sidecar JSON of one exported image.
#[derive(Clone, Debug, Serialize)]
pub struct Sidecar {
    /// The product's file-name part (`virtual_BF`, `dp_mean`, …).
    pub product: String,
    /// What it is, in words.
    pub description: String,
    /// The files written with this sidecar.
    pub files: Vec<String>,
    /// Array shape (rows, cols).
    pub shape: [usize; 2],
    /// The `.npy` element type (`uint64` or `float64`); the TIFF holds float32.
    pub dtype: String,
    /// The PNG's display mapping.
    pub display: DisplayRecord,
    /// The workspace's detectors (the one exported is named in `description`).
    pub detectors: Vec<DetectorRecord>,
    /// The scan region `[[row0, row1), [col0, col1)]` a selection pattern is the mean of.
    pub scan_region: Option<[[usize; 2]; 2]>,
    /// Centre, radii, rotation, device, accumulation and version (the STEM crate's record).
    pub record: ReduceRecord,
    /// Which code computed the sums.
    pub backend: String,
    /// The calibration used for iDPC and scale bars.
    pub calibration: CalibrationRecord,
    /// Frames summed / frames in the scan.
    pub frames: [usize; 2],
    /// Source files, hashes, shape, type and read record (the STEM crate's provenance).
    pub provenance: Option<LoadProvenance>,
    /// Why `provenance` is missing, if it is.
    pub provenance_error: Option<String>,
    /// The application's version.
    pub app_version: String,
    /// The PNG's scale bar (length, unit, enlargement), when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_bar: Option<super::scalebar::ScaleBarRecord>,
    /// The SSB reconstruction's record (SSB phase exports only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssb: Option<serde_json::Value>,
}

/// The element type's name of `frames`.
fn kind_name(frames: &PixelSlice<'_>) -> &'static str {
    match frames {
        PixelSlice::U8(_) => "u8",
        PixelSlice::U16(_) => "u16",
        PixelSlice::U32(_) => "u32",
        PixelSlice::U64(_) => "u64",
    }
}

/// The provenance of the frames in `data`: the example is described as generated; a file set is
/// reopened from `path` and hashed (STEM crate's [`scatterlab_stem::Acquisition::provenance`]).
pub fn provenance(data: &Resident, path: Option<&Path>) -> Result<LoadProvenance, String> {
    let record = LoadRecord { frames: [0, data.loaded() as u64], region: None, bin: 1, mask_policy: MaskPolicy::ZeroMasked, n_masked: data.n_masked };
    if data.name == example::NAME {
        let [sr, sc] = data.scan;
        let [dr, dc] = data.det;
        return Ok(LoadProvenance {
            sources: Vec::new(),
            missing: Vec::new(),
            source_shape: [sr as u64, sc as u64, dr as u64, dc as u64],
            dtype: kind_name(&data.frames()).to_owned(),
            record,
            reader: "scatterlab-app built-in example (generated in code: crates/app/src/stem/example.rs)".to_owned(),
        });
    }
    file_provenance(path, &record)
}

#[cfg(not(target_arch = "wasm32"))]
fn file_provenance(path: Option<&Path>, record: &LoadRecord) -> Result<LoadProvenance, String> {
    use scatterlab_stem::load::{Acquisition, DirFileSet, Hints};
    let path = path.ok_or("the opened file's path is not known")?;
    let (files, master) = DirFileSet::for_file(path).map_err(|e| e.to_string())?;
    let acq = Acquisition::open(&files, &master, &Hints::default()).map_err(|e| format!("cannot reopen {}: {e}", path.display()))?;
    acq.provenance(&files, record, None).map_err(|e| e.to_string())
}

#[cfg(target_arch = "wasm32")]
fn file_provenance(_path: Option<&Path>, _record: &LoadRecord) -> Result<LoadProvenance, String> {
    Err("source hashes of files opened in the browser are not recorded yet".to_owned())
}

impl StemPanel {
    /// The workspace's detectors as exported.
    pub fn detector_records(&self) -> Vec<DetectorRecord> {
        let det = self.data().map_or([0, 0], |d| d.det);
        self.detectors
            .iter()
            .map(|d| {
                let pixels = d.to_virtual(det).runs(det).map(|r| r.n_pixels()).unwrap_or(0);
                let (kind, center, radii, rows_cols) = match d.shape {
                    Shape::Disc { center, radius } => ("disc", Some(center), Some([Some(0.0), Some(radius)]), None),
                    Shape::Annulus { center, inner, outer } => ("annulus", Some(center), Some([Some(inner), outer.is_finite().then_some(outer)]), None),
                    Shape::Rect { rows, cols } => ("rect", None, None, Some([rows, cols])),
                };
                DetectorRecord { name: d.name.clone(), kind, center_row_col: center, radii_px: radii, rows_cols, pixels }
            })
            .collect()
    }

    /// The sidecar of the current state (product fields are filled by [`super::ExportArray::files`]),
    /// or why there is none. `provenance` is the source record (computed once per acquisition).
    pub fn sidecar(&self, description: String, provenance: Result<LoadProvenance, String>) -> Result<Sidecar, String> {
        let data = self.data().ok_or("no acquisition open")?;
        let probe = self.probe().ok_or("no beam centre found yet")?;
        let r = probe.radius;
        let rotation = self.dpc().map(|d| d.rotation);
        let records = self.detector_records();
        let StemCalibration { convergence_mrad, wavelength_a, scan_step_a, .. } = data.calibration.clone();
        let record = ReduceRecord {
            center_row_col: probe.center,
            auto_probe: true,
            bf_radius_px: r,
            // The ADF image the rotation's half turn is resolved against (the preset's radii).
            adf_px: [ADF_DEFAULT[0] * r, ADF_DEFAULT[1] * r],
            detector_pixels: records.iter().map(|d| (d.name.clone(), d.pixels)).collect(),
            rotation_deg: rotation.map(|r| r.degrees),
            use_transpose: rotation.map(|r| r.transpose),
            sampling_mrad_per_px: data.calibration.mrad_per_px(r),
            detector_sampling: data.calibration.sampling(r),
            dk_inv_a_per_px: data.calibration.dk_inv_a(r),
            frames_total: data.n_frames() as u64,
            frames_missing: (0..data.n_frames()).filter(|&i| !data.is_present(i)).count() as u64,
            missing_files: Vec::new(),
            notes: self.notes().to_vec(),
            accumulation: "u64 integer sums (exact), u128 centre-of-mass moments, f64 means and phases".to_owned(),
            device: self.device().to_owned(),
            version: format!("scatterlab-stem {0} (scatterlab-app {0}: one workspace version)", env!("CARGO_PKG_VERSION")),
        };
        let (provenance, provenance_error) = match provenance {
            Ok(p) => (Some(p), None),
            Err(e) => (None, Some(e)),
        };
        Ok(Sidecar {
            product: String::new(),
            description,
            files: Vec::new(),
            shape: [0, 0],
            dtype: String::new(),
            display: DisplayRecord::default(),
            detectors: records,
            scan_region: self.selection.map(|s| [s.rows, s.cols]),
            record,
            backend: "CPU: scatterlab_stem::reduce::detector_images and FusedPass (exact integer sums)".to_owned(),
            calibration: CalibrationRecord { convergence_mrad, wavelength_a, scan_step_a },
            frames: [data.loaded(), data.n_frames()],
            provenance,
            provenance_error,
            app_version: env!("CARGO_PKG_VERSION").to_owned(),
            scale_bar: None,
            ssb: None,
        })
    }
}
