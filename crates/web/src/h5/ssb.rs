//! `files.ssb(options)`: single-sideband ptychography of the acquisition opened by `stemInfo`
//! ([`scatterlab_stem::ssb::ssb`], CPU f64, or with `device: "gpu"` the last step on WebGPU in
//! f32, [`scatterlab_stem::gpu::ssb_gpu`]; frames streamed from the picked files), with the
//! options of the JS call read from a JSON value. Every option is checked by name: an unknown
//! key, a wrong type or a non-finite number (JS `NaN`, `Infinity`, which the handle turns into
//! the strings [`crate::options::NON_FINITE`]`+ "NaN"` before they reach here; [`crate::options`]) is an error naming the key —
//! never a silent default.

use scatterlab_core::CancelToken;
use scatterlab_gpu::GpuContext;
use scatterlab_stem::gpu::ssb_gpu;
use scatterlab_stem::load::LoadProvenance;
use scatterlab_stem::ssb::{ssb, Aberrations, FitOptions, SsbOptions, SsbRecord};
use serde_json::Value;

use super::session::{parse_mask, H5Core};
use crate::options::{boolean, fixed, number, object, whole, At};

/// The result of [`H5Core::ssb`]: the phase (f32 radians, row-major), its shape, the
/// aberrations used and the reconstruction's record (with provenance) as JSON text.
#[derive(Clone, Debug)]
pub struct SsbAnswer {
    /// `angle(ssb_object)`, radians, row-major.
    pub phase: Vec<f32>,
    /// Scan shape (rows, cols).
    pub shape: [usize; 2],
    /// The aberrations used (fitted when `fit` was asked).
    pub aberrations: Aberrations,
    /// [`scatterlab_stem::ssb::SsbRecord`] plus `provenance`, as JSON text.
    pub record_json: String,
}

const KNOWN: [&str; 12] = ["center", "bfRadius", "rotationDeg", "transposed", "aberrations", "wavelengthA", "convergenceMrad", "scanStepA", "dkInvAPerPx", "mask", "fit", "device"];

/// Where `files.ssb` reconstructs: `options.device`, `"cpu"` (default) or `"gpu"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsbDevice {
    /// [`scatterlab_stem::ssb::ssb`], f64.
    Cpu,
    /// [`scatterlab_stem::gpu::ssb_gpu`] on WebGPU, f32 (a fit's losses stay on the CPU: the
    /// fit waits on each loss, which a worker's event loop cannot do on its GPU; the record's
    /// notes say so).
    Gpu,
}

/// `options.device` of the JS call (absent or `null`: the CPU).
pub fn parse_device(v: &Value) -> Result<SsbDevice, String> {
    match v.get("device") {
        None | Some(Value::Null) => Ok(SsbDevice::Cpu),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("cpu") => Ok(SsbDevice::Cpu),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("gpu") => Ok(SsbDevice::Gpu),
        Some(other) => Err(format!("ssb: device must be \"cpu\" or \"gpu\" (got {other})")),
    }
}
const KNOWN_AB: [&str; 3] = ["C10_nm", "C12_nm", "phi12_rad"];
const KNOWN_FIT: [&str; 5] = ["c10RangeNm", "c12MaxNm", "global", "fitRotation", "maxFullEvaluations"];

/// Where the top-level options and the nested `aberrations` / `fit` objects are read.
const OPTIONS: At = At { op: "ssb", path: "options" };
const ABERRATIONS: At = At { op: "ssb", path: "options.aberrations" };
const FIT: At = At { op: "ssb", path: "options.fit" };

/// The library's options from the JS call's (`undefined`/`null` = all defaults).
pub fn parse_options(v: &Value) -> Result<SsbOptions, String> {
    let Some(m) = object(v, OPTIONS, &KNOWN)? else { return Ok(SsbOptions::default()) };
    let mut o = SsbOptions {
        center: fixed::<2>(m, "center", OPTIONS, "[row, col] in pixels")?,
        bf_radius: number(m, "bfRadius", OPTIONS)?,
        rotation_deg: number(m, "rotationDeg", OPTIONS)?,
        transposed: boolean(m, "transposed", OPTIONS)?,
        wavelength_a: number(m, "wavelengthA", OPTIONS)?,
        convergence_mrad: number(m, "convergenceMrad", OPTIONS)?,
        scan_step_a: number(m, "scanStepA", OPTIONS)?,
        dk_inv_a_per_px: number(m, "dkInvAPerPx", OPTIONS)?,
        ..SsbOptions::default()
    };
    o.mask = match m.get("mask") {
        None | Some(Value::Null) => parse_mask(None)?,
        Some(Value::String(s)) => parse_mask(Some(s))?,
        Some(other) => return Err(format!("ssb: options.mask must be \"zero\" or \"keep\" (got {other})")),
    };
    if let Some(a) = object(m.get("aberrations").unwrap_or(&Value::Null), ABERRATIONS, &KNOWN_AB)? {
        let get = |k: &str| number(a, k, ABERRATIONS).map(|v| v.unwrap_or(0.0));
        o.aberrations = Aberrations { c10_nm: get("C10_nm")?, c12_nm: get("C12_nm")?, phi12_rad: get("phi12_rad")? };
    }
    o.fit = match m.get("fit") {
        None | Some(Value::Null) | Some(Value::Bool(false)) => None,
        Some(Value::Bool(true)) => Some(FitOptions::default()),
        Some(f @ Value::Object(_)) => {
            let Some(f) = object(f, FIT, &KNOWN_FIT)? else { return Err("ssb: options.fit must be an object".to_owned()) };
            let d = FitOptions::default();
            Some(FitOptions {
                c10_range_nm: fixed::<2>(f, "c10RangeNm", FIT, "[low, high] in nm")?.unwrap_or(d.c10_range_nm),
                c12_max_nm: number(f, "c12MaxNm", FIT)?.unwrap_or(d.c12_max_nm),
                global: boolean(f, "global", FIT)?.unwrap_or(d.global),
                fit_rotation: boolean(f, "fitRotation", FIT)?.unwrap_or(d.fit_rotation),
                max_full_evaluations: whole(f, "maxFullEvaluations", FIT, 1, 1_000_000)?.map_or(d.max_full_evaluations, |n| n as usize),
                // One thread: wasm32 has no threads here (the library uses 1 there anyway).
                threads: Some(1),
            })
        }
        Some(other) => return Err(format!("ssb: options.fit must be true, false or an object of fit options (got {other})")),
    };
    Ok(o)
}

/// The record with `provenance` inside, as JSON text.
fn record_json(record: &SsbRecord, provenance: &LoadProvenance) -> Result<String, String> {
    let mut v = serde_json::to_value(record).map_err(|e| format!("ssb record: {e}"))?;
    if let Some(r) = v.as_object_mut() {
        r.insert("provenance".into(), serde_json::to_value(provenance).map_err(|e| format!("ssb provenance: {e}"))?);
    }
    Ok(v.to_string())
}

impl H5Core {
    /// SSB of the acquisition opened by `stemInfo` with the JS call's `options` (see
    /// [`parse_options`]) on the CPU; `progress` gets (frames done, total) per batch of each
    /// pass, then (loss evaluations done, planned) during a fit; `cancel` stops it between
    /// batches. `options.device` must be absent or `"cpu"` here ([`H5Core::ssb_gpu`] runs `"gpu"`).
    pub fn ssb(&self, options: &Value, progress: &mut dyn FnMut(u64, u64), cancel: &CancelToken) -> Result<SsbAnswer, String> {
        if parse_device(options)? != SsbDevice::Cpu {
            return Err("ssb: device \"gpu\" needs the GPU path (H5Session.ssb with a WebGPU device)".into());
        }
        let o = parse_options(options)?;
        let (acq, files) = self.opened("ssb")?;
        let p = ssb(acq, files, &o, progress, cancel).map_err(|e| e.to_string())?;
        let record_json = record_json(&p.record, &p.provenance)?;
        Ok(SsbAnswer { phase: p.object.iter().map(|z| z.arg() as f32).collect(), shape: p.scan, aberrations: p.record.aberrations, record_json })
    }

    /// [`H5Core::ssb`] with the reconstruction on `ctx`'s GPU in f32 (the record's `device`
    /// names the adapter; nothing falls back to the CPU).
    pub async fn ssb_gpu(&self, ctx: &GpuContext, options: &Value, progress: &mut dyn FnMut(u64, u64), cancel: &CancelToken) -> Result<SsbAnswer, String> {
        let o = parse_options(options)?;
        let (acq, files) = self.opened("ssb")?;
        let p = ssb_gpu(ctx, acq, files, &o, progress, cancel).await.map_err(|e| e.to_string())?;
        let record_json = record_json(&p.record, &p.provenance)?;
        Ok(SsbAnswer { phase: p.phase(), shape: p.scan, aberrations: p.record.aberrations, record_json })
    }
}
