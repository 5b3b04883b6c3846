//! The protocol of `H5Session` / `H5Files`: frames, 4D-STEM reductions, display and SSB
//! (`web/src/generated/h5.ts`).

use std::collections::HashMap;

use serde::Serialize;
use ts_rs::TS;

use super::{Float32Array, Float64Array, Uint8Array};

/// Bad-pixel policy: `"zero"` (default) sets pixels with a non-zero `pixel_mask` to 0, `"keep"` leaves them.
#[derive(Serialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum H5MaskPolicy {
    Zero,
    Keep,
}

/// Frames as stored, one element per pixel: frames × det_rows × det_cols, row-major.
#[derive(Serialize, TS)]
pub struct H5Pixels(#[ts(type = "Uint8Array | Uint16Array | Uint32Array")] Vec<u32>);

/// A JSON value of any shape (an open record's other keys).
#[derive(Serialize, TS)]
pub struct Unknown(#[ts(type = "unknown")] serde_json::Value);

/// One step of `H5Session.streamNext` (the raw handle's pull stream).
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct H5StreamStep {
    /// Global index of the batch's first frame.
    pub first: f64,
    /// Frames in the batch (0 once done).
    pub n: f64,
    /// The batch's pixels (a copy owned by JS).
    pub data: H5Pixels,
    /// Whether every frame has been delivered.
    pub done: bool,
    /// Frames delivered so far.
    pub frames_done: f64,
    /// Total frames.
    pub frames_total: f64,
}

/// Probe aberrations: defocus C10 and two-fold astigmatism C12 (nm) at angle φ12 (rad, from the row axis).
#[derive(Serialize, TS)]
pub struct SsbAberrations {
    /// Defocus, nm.
    #[serde(rename = "C10_nm")]
    pub c10_nm: f64,
    /// Two-fold astigmatism, nm.
    #[serde(rename = "C12_nm")]
    pub c12_nm: f64,
    /// Its angle, rad, from the row axis.
    pub phi12_rad: f64,
}

/// Options of the aberration fit (`SsbOptions.fit`); absent values take the library's defaults.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct SsbFitOptions {
    /// The grid's C10 range, nm (default [-50, 50]).
    pub c10_range_nm: Option<[f64; 2]>,
    /// The grid's largest C12, nm (default 20).
    pub c12_max_nm: Option<f64>,
    /// Run the global grid (default true); without it Nelder–Mead starts from `aberrations`.
    pub global: Option<bool>,
    /// Fit the scan rotation too (default false).
    pub fit_rotation: Option<bool>,
    /// Most loss evaluations of the final polish on the full data (default 60).
    pub max_full_evaluations: Option<f64>,
}

/// Options of `H5Files.ssb`; each absent value comes from the file (or is measured, as
/// `scatterlab stem ssb` does). A NaN or infinite number, an unknown key or a wrong type rejects
/// with an error naming the option.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct SsbOptions {
    /// Beam centre [row, col], px (default: auto probe of the mean pattern).
    pub center: Option<[f64; 2]>,
    /// BF radius, px (default: auto probe).
    pub bf_radius: Option<f64>,
    /// Scan rotation θ, degrees (default: from DPC, θ = −a).
    pub rotation_deg: Option<f64>,
    /// Transposed detector (default: DPC's choice when θ comes from DPC, else false).
    pub transposed: Option<bool>,
    /// C10, C12, φ12 (default 0; the fit's start with `fit`).
    #[ts(optional, type = "Partial<SsbAberrations>")]
    pub aberrations: Option<SsbAberrations>,
    /// Wavelength, Å (default: the file's, else from its voltage).
    pub wavelength_a: Option<f64>,
    /// Convergence semi-angle, mrad (default: the file's).
    pub convergence_mrad: Option<f64>,
    /// Scan step, Å (default: the file's).
    pub scan_step_a: Option<f64>,
    /// Detector sampling, Å⁻¹ per px (default: semi-angle over the BF radius, else the file geometry).
    pub dk_inv_a_per_px: Option<f64>,
    /// Bad-pixel policy (default `"zero"`).
    pub mask: Option<H5MaskPolicy>,
    /// Fit C10, C12, φ12 from the data first (`true`: the default search).
    #[ts(optional, type = "boolean | SsbFitOptions")]
    pub fit: Option<SsbFitOptions>,
    /// Where the reconstruction runs: `"cpu"` (default, f64) or `"gpu"` (the worker's WebGPU, f32;
    /// `record.device` names the adapter). No WebGPU rejects naming device "gpu" — never the CPU
    /// instead. A fit's losses stay on the CPU either way (`record.notes` says where they ran).
    #[ts(optional, type = r#""cpu" | "gpu""#)]
    pub device: Option<String>,
}

/// One loss evaluation of the aberration fit.
#[derive(Serialize, TS)]
pub struct SsbLossPoint {
    /// Its index in the fit's order.
    pub evaluation: f64,
    /// The search level that asked for it.
    pub level: String,
    /// The loss.
    pub loss: f64,
    /// C10 tried, nm.
    #[serde(rename = "C10_nm")]
    pub c10_nm: f64,
    /// C12 tried, nm.
    #[serde(rename = "C12_nm")]
    pub c12_nm: f64,
    /// φ12 tried, rad.
    pub phi12_rad: f64,
    /// Scan rotation tried, degrees.
    pub rotation_deg: f64,
}

/// The fit's report in an [`SsbRecord`].
#[derive(Serialize, TS)]
pub struct SsbFitReport {
    /// The final loss.
    pub loss: f64,
    /// Loss evaluations.
    pub evaluations: f64,
    /// Every evaluation in order.
    #[ts(inline)]
    pub loss_curve: Vec<SsbLossPoint>,
    /// Levels and other details.
    #[serde(flatten)]
    pub other: HashMap<String, Unknown>,
}

/// The optics of an [`SsbRecord`].
#[derive(Serialize, TS)]
pub struct SsbOptics {
    /// Wavelength, Å.
    pub wavelength_a: f64,
    /// Convergence semi-angle as a wavenumber, Å⁻¹.
    pub k_alpha_inv_a: f64,
    /// Detector sampling, Å⁻¹ per px.
    pub dk_inv_a_per_px: f64,
}

/// What a reconstruction used (`scatterlab stem ssb`'s manifest), with the sources' provenance.
#[derive(Serialize, TS)]
pub struct SsbRecord {
    /// Beam centre [row, col], px.
    pub center_row_col: [f64; 2],
    /// BF radius, px.
    pub bf_radius_px: f64,
    /// Whether centre or radius came from the auto probe.
    pub auto_probe: bool,
    /// BF pixels used (d ≤ R).
    pub bf_pixels: f64,
    /// The aberrations used.
    pub aberrations: SsbAberrations,
    /// Whether they were fitted.
    pub fitted: bool,
    /// The fit's report when fitted: loss, evaluations, levels and every evaluation in order.
    #[ts(optional, inline)]
    pub fit: Option<SsbFitReport>,
    /// Scan rotation θ, degrees.
    pub rotation_deg: f64,
    /// `given`, or how DPC found it.
    pub rotation_source: String,
    /// Whether the detector was transposed.
    pub transposed: bool,
    /// Wavelength and samplings.
    #[ts(inline)]
    pub optics: SsbOptics,
    /// Convergence semi-angle, mrad.
    pub convergence_mrad: f64,
    /// Scan step, Å.
    pub scan_step_a: f64,
    /// The detector-sampling rule used, in words.
    pub sampling_rule: String,
    /// The floor of the probe overlap below which frequencies are dropped.
    pub gamma_floor: f64,
    /// Findings worth knowing (where the fit's losses ran, …).
    pub notes: Vec<String>,
    /// Device and precision, e.g. `"cpu (f64, rustfft)"`.
    pub device: String,
    /// scatterlab's version.
    pub version: String,
    /// Sources (names, sizes, hashes), shape, dtype and read record.
    #[ts(type = "unknown")]
    pub provenance: serde_json::Value,
    /// Other manifest fields.
    #[serde(flatten)]
    pub other: HashMap<String, Unknown>,
}

/// Result of `H5Files.ssb`.
#[derive(Serialize, TS)]
pub struct SsbResult {
    /// angle(object), radians, row-major over the scan (transferred: yours to keep).
    pub phase: Float32Array,
    /// `[scan rows, scan cols]`.
    pub shape: [f64; 2],
    /// The aberrations used (fitted when asked).
    pub aberrations: SsbAberrations,
    /// What the reconstruction used.
    pub record: SsbRecord,
}

/// Options of `H5Files.reduce`: the CLI's `stem reduce` flags; absent values as its defaults. NaN, ∞, an unknown key or a wrong type rejects naming the option.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(optional_fields)]
pub struct StemReduceOptions {
    /// Beam centre `[row, col]`, px (default: auto probe of the mean pattern).
    pub center: Option<[f64; 2]>,
    /// BF radius (px, or mrad with `radiusUnit: "mrad"`; default: auto probe).
    pub bf_radius: Option<f64>,
    /// ADF `[inner, outer]` (default `[1.2 R, 2.5 R]`).
    pub adf: Option<[f64; 2]>,
    /// Detector bin factor of `bin<K>_sum_dp` (1–64).
    pub bin: Option<f64>,
    /// Bad-pixel policy (default `"zero"`).
    pub mask: Option<H5MaskPolicy>,
    /// Unit of `bfRadius` and `adf` (default `"px"`).
    #[ts(optional, type = r#""px" | "mrad""#)]
    pub radius_unit: Option<String>,
    /// Reduce the frames present when data files are missing (reals NaN there, integers 0; `present` says which).
    pub allow_missing: Option<bool>,
    /// `"cpu"` (default, u64 sums) or `"gpu"` (the worker's WebGPU, paired-u32 sums: the same integers). No WebGPU rejects naming device "gpu".
    #[ts(optional, type = r#""cpu" | "gpu""#)]
    pub device: Option<String>,
}

/// One product of `H5Files.reduce`, as the CLI's `.npy` of the same name.
#[derive(Serialize, TS)]
pub struct StemProduct {
    /// Row-major shape.
    pub shape: Vec<f64>,
    /// The values (integer products are exact counts; transferred: yours to keep).
    pub data: Float64Array,
    /// Whether the CLI writes it as an integer array.
    pub integer: bool,
}

/// Result of `H5Files.reduce`.
#[derive(Serialize, TS)]
pub struct StemReduction {
    /// Keyed like the CLI's files: `sum_dp`, `max_dp`, `total`, `bf`, `abf`, `adf`, `df`, `com_row_raw`, …, `idpc`.
    #[ts(type = "Record<string, StemProduct>")]
    pub products: HashMap<String, StemProduct>,
    /// 1 where the scan position was read, 0 for frames of a missing data file.
    pub present: Uint8Array,
    /// Geometry, rotation, notes, device and provenance (the CLI's manifest).
    #[ts(type = "Record<string, unknown>")]
    pub record: serde_json::Value,
}

/// Options of `H5Files.display`.
#[derive(Serialize, TS)]
#[ts(optional_fields)]
pub struct StemDisplayOptions {
    /// A colormap of the shared table (`"gray"` default, `"viridis"`, `"inferno"`, …).
    pub colormap: Option<String>,
    /// `"linear"` (default), `"log"` (signed log1p), `"sqrt"`, `"gamma"` (with `gamma`).
    #[ts(optional, type = r#""linear" | "log" | "sqrt" | "gamma""#)]
    pub transform: Option<String>,
    /// Exponent of the gamma transform.
    pub gamma: Option<f64>,
    /// Limits at these percentiles of the finite values (default `[0, 100]`).
    pub percentiles: Option<[f64; 2]>,
    /// Fixed limits (data units), instead of percentiles.
    pub limits: Option<[f64; 2]>,
}

/// The declarations of `web/src/generated/h5.ts`, in order.
pub fn declarations(cfg: &ts_rs::Config) -> Vec<String> {
    use super::declaration as d;
    vec![
        d::<H5MaskPolicy>(cfg),
        d::<H5Pixels>(cfg),
        d::<H5StreamStep>(cfg),
        d::<SsbAberrations>(cfg),
        d::<SsbFitOptions>(cfg),
        d::<SsbOptions>(cfg),
        d::<SsbRecord>(cfg),
        d::<SsbResult>(cfg),
        d::<StemReduceOptions>(cfg),
        d::<StemProduct>(cfg),
        d::<StemReduction>(cfg),
        d::<StemDisplayOptions>(cfg),
    ]
}
