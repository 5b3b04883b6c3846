//! The whole reduction of an acquisition, as `scatterlab stem reduce` (and later the app) runs
//! it: probe (given, or [`auto_probe`] from a first pass over the data), one fused pass with the
//! standard detectors (BF, ABF, ADF, DF), centre of mass, DPC rotation, iDPC and optional
//! binning, with the provenance of every product.
//!
//! With the centre and BF radius given the data are read once; `auto_probe` needs the mean
//! pattern first, so then they are read twice (the first pass only sums). The fused pass runs on
//! the device the caller picks ([`ReduceDevice`]); everything after it (CoM field, rotation, FFTs)
//! is small and runs on the CPU in f64. Async because GPU readback is (in the browser it must be).

use scatterlab_core::CancelToken;
use scatterlab_gpu::GpuContext;
use serde::Serialize;

use super::finish::{finish, needs_probe, resolve_geometry};
use super::{auto_probe, FusedPass, FusedResult, ReduceError, VirtualDetector};
use crate::gpu::FusedPassGpu;
use crate::load::{Acquisition, FileSet, LoadProvenance, LoadRecord, MaskPolicy, PixelSlice, StreamCursor};
use crate::sampling::DetectorSampling;

/// What to reduce and how.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReduceOptions {
    /// Beam centre (row, col) in pixels; `None` = [`auto_probe`].
    pub center: Option<[f64; 2]>,
    /// Bright-field radius in pixels; `None` = [`auto_probe`].
    pub bf_radius: Option<f64>,
    /// ADF inner/outer radii in pixels; `None` = `[1.2 R, 2.5 R]` for BF radius R.
    pub adf: Option<[f64; 2]>,
    /// Detector bin factor for `bin<K>_sum_dp` (`None` or 1 = none).
    pub bin: Option<usize>,
    /// Bad-pixel policy (default: masked pixels zeroed).
    pub mask: MaskPolicy,
    /// Unit of `bf_radius` and `adf` (the centre is always in pixels).
    pub radius_unit: RadiusUnit,
    /// Reduce the frames present when data files are missing (otherwise that is an error):
    /// real products are NaN at the positions without data, integer products 0, and
    /// [`Products::present`] says which positions were read.
    pub allow_missing: bool,
}

/// The unit of detector radii.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RadiusUnit {
    /// Detector pixels.
    #[default]
    Px,
    /// Scattering angle in mrad, converted with the sampling α / R: the convergence semi-angle α
    /// from the file over the BF disc radius R in pixels measured by [`auto_probe`] (the files'
    /// own detector sampling is often nominal; the measured disc is what the data show).
    Mrad,
}

/// The geometry and angles a reduction used (the manifest's numbers).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReduceRecord {
    /// Beam centre (row, col), pixels.
    pub center_row_col: [f64; 2],
    /// Whether centre and radius came from `auto_probe`.
    pub auto_probe: bool,
    /// BF radius, pixels.
    pub bf_radius_px: f64,
    /// ADF radii, pixels.
    pub adf_px: [f64; 2],
    /// Detector name → pixels covered.
    pub detector_pixels: Vec<(String, usize)>,
    /// DPC rotation (exact curl minimum, the half turn resolved), degrees in [0, 360).
    pub rotation_deg: Option<f64>,
    /// Whether the transposed component order won.
    pub use_transpose: Option<bool>,
    /// Detector sampling, mrad per pixel, by the one rule of [`crate::sampling`] (`None` when
    /// neither the semi-angle nor the file's geometry gives one).
    pub sampling_mrad_per_px: Option<f64>,
    /// The sampling's source, rule and any disagreement with the file's geometry.
    pub detector_sampling: Option<DetectorSampling>,
    /// Detector sampling used for iDPC, Å⁻¹ per pixel (the sampling above over the wavelength).
    pub dk_inv_a_per_px: Option<f64>,
    /// Frames the acquisition declares.
    pub frames_total: u64,
    /// Frames of missing data files, left out (their positions are NaN / 0).
    pub frames_missing: u64,
    /// The missing data files.
    pub missing_files: Vec<String>,
    /// Why a product is absent (e.g. iDPC without calibration).
    pub notes: Vec<String>,
    /// Accumulation types.
    pub accumulation: String,
    /// Device and backend.
    pub device: String,
    /// This crate's version.
    pub version: String,
}

/// Every product, row-major, with its shape.
#[derive(Clone, Debug, PartialEq)]
pub struct Products {
    /// `(name, shape, values)` for integer products (u64).
    pub integers: Vec<(String, Vec<usize>, Vec<u64>)>,
    /// `(name, shape, values)` for real products (f64).
    pub reals: Vec<(String, Vec<usize>, Vec<f64>)>,
    /// Which scan positions were read (false: frame in a missing data file), row-major.
    pub present: Vec<bool>,
    /// Geometry, angles, notes.
    pub record: ReduceRecord,
    /// Where the data came from and how they were read.
    pub provenance: LoadProvenance,
}

/// Where the fused pass runs. The caller chooses; nothing falls back.
#[derive(Clone, Copy, Debug)]
pub enum ReduceDevice<'g> {
    /// [`FusedPass`] on this thread (u64/u128 sums).
    Cpu,
    /// [`FusedPassGpu`] on this context (paired-u32 sums, identical results).
    Gpu(&'g GpuContext),
}

/// A fused pass on either device (one value per reduction: its size does not matter).
#[allow(clippy::large_enum_variant)]
enum Pass {
    Cpu(FusedPass),
    Gpu(Box<FusedPassGpu>),
}

impl Pass {
    async fn new(device: ReduceDevice<'_>, det: [usize; 2], n: usize, detectors: &[VirtualDetector]) -> Result<Self, ReduceError> {
        Ok(match device {
            ReduceDevice::Cpu => Pass::Cpu(FusedPass::new(det, n, detectors)?),
            ReduceDevice::Gpu(ctx) => Pass::Gpu(Box::new(FusedPassGpu::new(ctx, det, n, detectors).await?)),
        })
    }

    async fn add(&mut self, first: u64, data: PixelSlice<'_>) -> Result<(), ReduceError> {
        match self {
            Pass::Cpu(p) => p.add(first, data),
            Pass::Gpu(p) => p.add(first, data).await,
        }
    }

    async fn finish(self) -> Result<FusedResult, ReduceError> {
        match self {
            Pass::Cpu(p) => Ok(p.finish()),
            Pass::Gpu(p) => (*p).finish().await,
        }
    }
}

/// A pause between batches: a future the reduction awaits after each batch, so that a caller on
/// a single-threaded event loop (a browser worker) can hand the loop its turn — a cancel message
/// is then seen between batches. [`reduce`] passes none.
pub type Pause<'a> = &'a mut dyn FnMut() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>;

/// Streams every frame through `pass` (batches from the cursor, cancel checked between them).
async fn run_pass(
    acq: &Acquisition,
    mask: MaskPolicy,
    pass: &mut Pass,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &CancelToken,
    pause: &mut Option<Pause<'_>>,
) -> Result<LoadRecord, ReduceError> {
    // Missing files were refused (or allowed) by the caller: step over their frames.
    let mut cursor = StreamCursor::new(acq, mask).skipping_missing();
    let load_err = |e: crate::load::LoadError| ReduceError::new(acq.master(), e.to_string());
    loop {
        if cancel.is_cancelled() {
            return Err(ReduceError::new("reduction", "cancelled"));
        }
        let Some(batch) = cursor.next_batch(acq, 64).map_err(load_err)? else { break };
        pass.add(batch.first_frame, batch.data).await?;
        progress(cursor.frames_done(), cursor.frames_total());
        if let Some(p) = pause.as_mut() {
            p().await;
        }
    }
    Ok(LoadRecord { frames: [0, acq.n_frames()], region: None, bin: 1, mask_policy: mask, n_masked: cursor.n_masked() })
}

/// Reduces the acquisition `acq` (its files in `files`, for provenance hashes) with the fused
/// pass on `device`; `progress` gets (frames done, total) per batch of each pass over the data.
pub async fn reduce(
    acq: &Acquisition,
    files: &dyn FileSet,
    options: &ReduceOptions,
    device: ReduceDevice<'_>,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &CancelToken,
) -> Result<Products, ReduceError> {
    reduce_pausing(acq, files, options, device, progress, cancel, None).await
}

/// [`reduce`] awaiting `pause` after every batch (see [`Pause`]); the products are the same.
pub async fn reduce_pausing(
    acq: &Acquisition,
    files: &dyn FileSet,
    options: &ReduceOptions,
    device: ReduceDevice<'_>,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &CancelToken,
    mut pause: Option<Pause<'_>>,
) -> Result<Products, ReduceError> {
    // No scan shape, no products: refused before any data is read.
    acq.scan_shape().map_err(|e| ReduceError::new("scan shape", e.to_string()))?;
    let det = acq.det_shape();
    let n = acq.n_frames() as usize;
    let mut notes = Vec::new();
    let missing_files: Vec<String> = acq.missing().iter().map(|m| m.file.clone()).collect();
    let frames_missing = acq.n_missing_frames();
    if frames_missing > 0 && !options.allow_missing {
        let files = if missing_files.is_empty() { "frames no data file holds".to_owned() } else { missing_files.join(", ") };
        return Err(ReduceError::new(
            acq.master(),
            format!("{frames_missing} of {} frames are missing ({files}); reduce the frames present with allow_missing (--allow-missing)", acq.n_frames()),
        ));
    }
    if frames_missing > 0 {
        notes.push(format!(
            "{frames_missing} of {} frames missing ({}): real products are NaN there, integer products 0; present.npy marks the positions read",
            acq.n_frames(),
            missing_files.join(", ")
        ));
    }
    let probe = if needs_probe(options) {
        let mut sum = Pass::new(device, det, n, &[]).await?;
        run_pass(acq, options.mask, &mut sum, progress, cancel, &mut pause).await?;
        Some(auto_probe(&sum.finish().await?.mean_dp(), det)?)
    } else {
        None
    };
    let geometry = resolve_geometry(acq, options, probe.as_ref())?;
    let mut pass = Pass::new(device, det, n, &geometry.detectors()).await?;
    let record = run_pass(acq, options.mask, &mut pass, progress, cancel, &mut pause).await?;
    let fused: FusedResult = pass.finish().await?;
    let device = match device {
        ReduceDevice::Cpu => "cpu (fused pass u64)".into(),
        ReduceDevice::Gpu(ctx) => format!("gpu {} (fused pass paired-u32, exact)", ctx.describe()),
    };
    let provenance = acq.provenance(files, &record, None).map_err(|e| ReduceError::new("provenance", e.to_string()))?;
    finish(acq, options, &geometry, fused, notes, device, provenance)
}

/// Relativistic electron wavelength in Å for an accelerating voltage in kV (the one definition,
/// in `scatterlab_core::units`, under the name this crate's callers use).
pub use scatterlab_core::units::electron_wavelength_from_kv as wavelength_from_kv;
