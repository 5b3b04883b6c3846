//! `files.reduce(options)`: the 4D-STEM reductions of `scatterlab stem reduce` on the acquisition
//! opened by `stemInfo` — virtual detectors (BF, ABF, ADF, DF), sums and maxima, centre of mass,
//! DPC rotation and iDPC — with the fused pass on the CPU (u64) or the worker's WebGPU (paired
//! u32, identical integers), frames streamed from the picked files. The products are keyed and
//! shaped exactly like the CLI's `.npy` files; `display` maps any of them to RGBA through the
//! fixtures' display pipeline. Options are read by name ([`crate::options`]): an unknown
//! key, a wrong type or a non-finite number is an error naming it.

use scatterlab_core::CancelToken;
use scatterlab_gpu::GpuContext;
use scatterlab_stem::reduce::colormap::{colorize, Colormap};
use scatterlab_stem::reduce::display::{percentile_limits, Scale};
use scatterlab_stem::reduce::{reduce_pausing, Pause, RadiusUnit, ReduceDevice, ReduceOptions};
use serde_json::Value;

use super::session::{parse_mask, H5Core};
use crate::options::{boolean, choice, fixed, object, positive, string, whole};

const OP: &str = "reduce";
const KNOWN: [&str; 8] = ["center", "bfRadius", "adf", "bin", "mask", "radiusUnit", "allowMissing", "device"];

/// Largest count a product may hold to cross into JS as a `Float64Array` exactly (2^53).
const EXACT_IN_F64: u64 = 1 << 53;

/// Where the fused pass runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// [`scatterlab_stem::reduce::FusedPass`], u64 sums.
    Cpu,
    /// `FusedPassGpu` on WebGPU (paired u32: the same integers).
    Gpu,
}

/// One product: name (the CLI's `.npy` stem), shape and values; integers are exact in f64.
#[derive(Clone, Debug)]
pub struct Product {
    /// `sum_dp`, `bf`, `com_row`, ….
    pub name: String,
    /// Row-major shape.
    pub shape: Vec<usize>,
    /// The values (integer products converted exactly: every count is below 2^53).
    pub values: Vec<f64>,
    /// Whether the CLI writes it as an integer (`<u8`) array.
    pub integer: bool,
}

/// The result of [`H5Core::reduce`].
#[derive(Clone, Debug)]
pub struct ReduceAnswer {
    /// Products in the CLI's order: integers first, then reals.
    pub products: Vec<Product>,
    /// Scan positions read (false: frames of a missing data file), row-major.
    pub present: Vec<bool>,
    /// The record (geometry, rotation, notes, device) with `provenance`, as JSON text.
    pub record_json: String,
}

/// The library's options and the device from the JS call's (`undefined`/`null` = defaults).
pub fn parse_options(v: &Value) -> Result<(ReduceOptions, Device), String> {
    let Some(m) = object(v, OP, &KNOWN)? else { return Ok((ReduceOptions::default(), Device::Cpu)) };
    let mask = match m.get("mask") {
        None | Some(Value::Null) => parse_mask(None)?,
        Some(Value::String(s)) => parse_mask(Some(s))?,
        Some(other) => return Err(format!("{OP}: options.mask must be \"zero\" or \"keep\" (got {other})")),
    };
    let radius_unit = match choice(m, "radiusUnit", OP, &["px", "mrad"])? {
        Some("mrad") => RadiusUnit::Mrad,
        _ => RadiusUnit::Px,
    };
    let adf = fixed::<2>(m, "adf", OP, "[inner, outer]")?;
    if let Some([inner, outer]) = adf {
        if !(inner >= 0.0 && outer > inner) {
            return Err(format!("{OP}: options.adf must be [inner, outer] with 0 ≤ inner < outer (got [{inner}, {outer}])"));
        }
    }
    let options = ReduceOptions {
        center: fixed::<2>(m, "center", OP, "[row, col] in pixels")?,
        bf_radius: positive(m, "bfRadius", OP, "pixels (or mrad)")?,
        adf,
        bin: whole(m, "bin", OP, 1, 64)?.map(|b| b as usize),
        mask,
        radius_unit,
        allow_missing: boolean(m, "allowMissing", OP)?.unwrap_or(false),
    };
    let device = match choice(m, "device", OP, &["cpu", "gpu"])? {
        Some("gpu") => Device::Gpu,
        _ => Device::Cpu,
    };
    Ok((options, device))
}

impl H5Core {
    /// Reduces the acquisition opened by `stemInfo` with the JS call's `options` ([`parse_options`])
    /// on the CPU, or on `gpu` when the options ask for `"gpu"` (the caller supplies the device);
    /// `progress` gets (frames done, total) per batch of each pass over the data, `pause` is
    /// awaited after each batch (a cancel arrives in between) and `cancel` stops it there.
    pub async fn reduce(
        &self,
        options: &Value,
        gpu: Option<&GpuContext>,
        progress: &mut dyn FnMut(u64, u64),
        cancel: &CancelToken,
        pause: Option<Pause<'_>>,
    ) -> Result<ReduceAnswer, String> {
        let (o, device) = parse_options(options)?;
        let device = match (device, gpu) {
            (Device::Cpu, _) => ReduceDevice::Cpu,
            (Device::Gpu, Some(ctx)) => ReduceDevice::Gpu(ctx),
            (Device::Gpu, None) => return Err(format!("{OP}: device \"gpu\" needs a GPU (none was given)")),
        };
        let (acq, files) = self.opened(OP)?;
        let p = reduce_pausing(acq, files, &o, device, progress, cancel, pause).await.map_err(|e| e.to_string())?;
        let mut products = Vec::with_capacity(p.integers.len() + p.reals.len());
        for (name, shape, values) in p.integers {
            if let Some(big) = values.iter().find(|&&v| v >= EXACT_IN_F64) {
                return Err(format!("{OP}: {name} holds a count ({big}) too large for a Float64Array to keep exactly"));
            }
            products.push(Product { name, shape, values: values.into_iter().map(|v| v as f64).collect(), integer: true });
        }
        products.extend(p.reals.into_iter().map(|(name, shape, values)| Product { name, shape, values, integer: false }));
        let mut record = serde_json::to_value(&p.record).map_err(|e| format!("{OP} record: {e}"))?;
        if let Some(r) = record.as_object_mut() {
            r.insert("provenance".into(), serde_json::to_value(&p.provenance).map_err(|e| format!("{OP} provenance: {e}"))?);
        }
        Ok(ReduceAnswer { products, present: p.present, record_json: record.to_string() })
    }
}

const DISPLAY: &str = "display";
const KNOWN_DISPLAY: [&str; 5] = ["colormap", "transform", "gamma", "percentiles", "limits"];

/// RGBA8 (row-major, 4 bytes per value) of an image `values` with the JS call's display options:
/// `colormap` (the shared table's names, default `"gray"`), `transform` (`"linear"`, `"log"`,
/// `"sqrt"`, `"gamma"` with `gamma`), limits from `percentiles` `[lo, hi]` (default `[0, 100]`)
/// or given `limits`; the fixtures' display pipeline, NaN (no data) transparent.
pub fn display_rgba(values: &[f64], options: &Value) -> Result<Vec<u8>, String> {
    let m = object(options, DISPLAY, &KNOWN_DISPLAY)?;
    let get = |f: &dyn Fn(&serde_json::Map<String, Value>) -> Result<Option<[f64; 2]>, String>| m.map_or(Ok(None), f);
    let map = match m.map(|m| string(m, "colormap", DISPLAY)).transpose()?.flatten() {
        Some(name) => Colormap::from_name(&name).map_err(|e| format!("{DISPLAY}: {e}"))?,
        None => Colormap::Gray,
    };
    let gamma = m.map(|m| positive(m, "gamma", DISPLAY, "(an exponent)")).transpose()?.flatten();
    let scale = match m.map(|m| choice(m, "transform", DISPLAY, &["linear", "log", "sqrt", "gamma"])).transpose()?.flatten() {
        None | Some("linear") => Scale::Linear,
        Some("log") => Scale::Log1pSigned,
        Some("sqrt") => Scale::Sqrt,
        Some(_) => Scale::Gamma(gamma.ok_or_else(|| format!("{DISPLAY}: options.transform \"gamma\" needs options.gamma"))?),
    };
    let (low, high) = match (get(&|m| fixed::<2>(m, "limits", DISPLAY, "[low, high]"))?, get(&|m| fixed::<2>(m, "percentiles", DISPLAY, "[lower, upper]"))?) {
        (Some([lo, hi]), _) => (lo, hi),
        (None, p) => {
            let [lo, hi] = p.unwrap_or([0.0, 100.0]);
            if !(0.0..=100.0).contains(&lo) || !(0.0..=100.0).contains(&hi) || lo >= hi {
                return Err(format!("{DISPLAY}: options.percentiles must be [lower, upper] with 0 ≤ lower < upper ≤ 100 (got [{lo}, {hi}])"));
            }
            percentile_limits(values, lo, hi).map_err(|e| e.to_string())?
        }
    };
    // A constant image still shows (one colour) rather than failing on empty limits.
    let (low, high) = if high > low { (low, high) } else { (low, low + 1.0) };
    let rgba = colorize(values, low, high, scale, map).map_err(|e| format!("{DISPLAY}: {e}"))?;
    Ok(rgba.into_iter().flatten().collect())
}

#[cfg(test)]
#[path = "reduce_tests.rs"]
mod tests;
