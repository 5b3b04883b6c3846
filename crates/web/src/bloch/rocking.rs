//! `lab.blochRocking(cifText, options, onProgress, signal)`: a tilt series of `blochSimulate`'s
//! zone-axis case — each tilt the same `case_from_zone` case with the sweep's offset added to
//! `options.tilt` on one axis, solved as its own static case (its own beam set) on the CPU or
//! the GPU — gathered by [`scatterlab_bloch::tilt_series::TiltSeries`] onto the union of the
//! tilts' beams (0 where a beam is absent at a tilt).
//!
//! # Why one tilt per step
//! As `blochRefine` ([`super::refine`]): a Web Worker sees a cancel message only when the running
//! wasm call returns to its event loop. [`run_rocking`] awaits [`RockingHost::pause`] after the
//! structure factors and after every tilt (a 300-beam tilt takes tens to hundreds of
//! milliseconds, far more than a yield costs), so an abort lands between tilts. A cancelled run
//! resolves with the tilts done and `cancelled: true` (as `blochRefine` and `fit` do).

use std::future::Future;

use scatterlab_bloch::tilt_series::{TiltAxis, TiltSeries, TiltSweep};
use scatterlab_bloch::{BlochError, Limits};
use scatterlab_core::CancelToken;
use serde_json::{Map, Value};

use super::engine::{run_case, table, Engine, GpuKernel};
use super::simulate::{crystal, parse_map, zone_case, SimulateOptions, KNOWN as SIMULATE_KNOWN};
use crate::options::{choice, number, numbers, object, whole};

const OP: &str = "blochRocking";
const TILT_KEYS: [&str; 5] = ["axis", "fromDeg", "toDeg", "n", "anglesDeg"];

/// The options of one `blochRocking` call: `blochSimulate`'s and the sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct RockingOptions {
    /// The case at zero offset (its `tilt` is the sweep's base), the engine and the name.
    pub sim: SimulateOptions,
    /// The offsets.
    pub sweep: TiltSweep,
}

/// `options.tilts`: `{axis, fromDeg, toDeg, n}` or `{axis, anglesDeg}` (axis `"x"` default).
fn parse_sweep(v: Option<&Value>, max_tilts: usize) -> Result<TiltSweep, String> {
    let shape = "an object {axis, fromDeg, toDeg, n} or {axis, anglesDeg}";
    let m = match v {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => return Err(format!("{OP}: options.tilts is required ({shape})")),
        Some(other) => return Err(format!("{OP}: options.tilts must be {shape} (got {other})")),
    };
    if let Some(k) = m.keys().find(|k| !TILT_KEYS.contains(&k.as_str())) {
        return Err(format!("{OP}: unknown option options.tilts.{k} (known: {})", TILT_KEYS.join(", ")));
    }
    // Keys renamed `tilts.…` so that the shared readers name them `options.tilts.…`.
    let r: Map<String, Value> = m.iter().map(|(k, v)| (format!("tilts.{k}"), v.clone())).collect();
    let axis = match choice(&r, "tilts.axis", OP, &["x", "y"])? {
        Some("y") => TiltAxis::Y,
        _ => TiltAxis::X,
    };
    let explicit = numbers(&r, "tilts.anglesDeg", OP)?;
    let (from, to) = (number(&r, "tilts.fromDeg", OP)?, number(&r, "tilts.toDeg", OP)?);
    let n = whole(&r, "tilts.n", OP, 1, max_tilts as u64)?;
    let named = |e: scatterlab_core::InputError| format!("{OP}: options.{}: {}", e.object, e.problem);
    match (explicit, from, to, n) {
        (Some(angles), None, None, None) => {
            if angles.len() > max_tilts {
                return Err(format!("{OP}: options.tilts.anglesDeg: {} tilts exceed the limit of {max_tilts}", angles.len()));
            }
            TiltSweep::explicit(axis, angles).map_err(named)
        }
        (None, Some(from), Some(to), Some(n)) => TiltSweep::linspace(axis, from, to, n as usize).map_err(named),
        (Some(_), ..) => Err(format!("{OP}: options.tilts: give anglesDeg or fromDeg, toDeg and n, not both")),
        (None, ..) => Err(format!("{OP}: options.tilts needs fromDeg, toDeg and n (or anglesDeg)")),
    }
}

/// Reads the options: `blochSimulate`'s and `tilts` (required).
pub fn parse_options(v: &Value) -> Result<RockingOptions, String> {
    let mut known = SIMULATE_KNOWN.to_vec();
    known.push("tilts");
    let m = object(v, OP, &known)?.ok_or_else(|| format!("{OP}: options are required (kv, zone, thicknesses, tilts)"))?;
    let sim = parse_map(m, OP)?;
    Ok(RockingOptions { sweep: parse_sweep(m.get("tilts"), Limits::default().max_tilts)?, sim })
}

/// A progress report after each tilt.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RockingProgress {
    /// Tilts solved so far.
    pub done: usize,
    /// Tilts in the sweep.
    pub total: usize,
    /// Seconds since the call started.
    pub seconds: f64,
}

/// What the driver needs from where it runs (as `RefineHost`).
pub trait RockingHost {
    /// Receives every report.
    fn progress(&mut self, report: &RockingProgress);
    /// Awaited after the structure factors and after each tilt: where a cancel lands.
    fn pause(&mut self) -> impl Future<Output = ()>;
    /// A clock in milliseconds (any origin).
    fn now_ms(&self) -> f64;
}

/// The series and what ran.
#[derive(Clone, Debug, PartialEq)]
pub struct RockingAnswer {
    /// The case id at zero offset.
    pub id: String,
    /// One pattern per tilt done, in sweep order, labelled by its offset (degrees).
    pub series: TiltSeries,
    /// The thicknesses (Å).
    pub thicknesses: Vec<f64>,
    /// What ran.
    pub engine: Engine,
    /// The sweep's axis.
    pub axis: TiltAxis,
    /// Whether a cancel stopped the sweep early (the series then holds the tilts done).
    pub cancelled: bool,
}

/// Solves every tilt of `o` for the crystal of CIF text `cif`, one per step; `gpu` is the kernel
/// for `device: "gpu"`.
pub async fn run_rocking<H: RockingHost>(cif: &str, o: &RockingOptions, gpu: Option<&GpuKernel>, host: &mut H, cancel: &CancelToken) -> Result<RockingAnswer, String> {
    let start = host.now_ms();
    let limits = Limits::default();
    let err = |e: BlochError| format!("{OP}: {e}");
    let crystal = crystal(cif, &o.sim, OP)?;
    let base = o.sim.case.tilt_deg;
    let tilt = |i: usize| o.sweep.tilt(base, i).ok_or_else(|| format!("{OP}: tilt {i} is not in the sweep"));
    let first = zone_case(cif, &crystal, &o.sim, tilt(0)?, OP)?;
    limits.check_series(&first.id, first.thicknesses_a.len(), o.sweep.len()).map_err(err)?;
    // The grid radius, energy and absorption do not change with the tilt: one table for all.
    let table = table(&first, &crystal, &limits).map_err(err)?;
    let n_thicknesses = first.thicknesses_a.len();
    let mut series = TiltSeries::new(n_thicknesses);
    host.pause().await;
    for (i, &offset) in o.sweep.angles_deg.iter().enumerate() {
        if cancel.is_cancelled() {
            break;
        }
        let case = if i == 0 { first.clone() } else { zone_case(cif, &crystal, &o.sim, tilt(i)?, OP)? };
        let at = |e: BlochError| format!("{OP}: tilt {i} ({offset}°): {e}");
        let (hkl, rows) = run_case(&case, &crystal, &table, o.sim.engine, gpu, &limits).await.map_err(at)?;
        series.push(offset, &hkl, &rows).map_err(err)?;
        // The dense result grows with the union: held to the limit before it is ever allocated.
        limits.check_intensities(&format!("{} tilt series", first.id), (i + 1) * n_thicknesses, series.n_beams()).map_err(err)?;
        host.progress(&RockingProgress { done: i + 1, total: o.sweep.len(), seconds: (host.now_ms() - start) / 1e3 });
        host.pause().await;
    }
    let cancelled = series.len() < o.sweep.len();
    Ok(RockingAnswer { id: first.id, series, thicknesses: first.thicknesses_a, engine: o.sim.engine, axis: o.sweep.axis, cancelled })
}
