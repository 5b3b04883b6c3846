//! `lab.blochSimulate(cifText, options)`: one static zone-axis case built by
//! [`scatterlab_bloch::zone::case_from_zone`] — the function behind `scatterlab bloch simulate
//! --cif … --kv … --zone … --thickness …` and the app's Bloch workspace — run with the default
//! limits and diffBloch's conventions (the CLI's default), so the numbers are the CLI's: on the
//! CPU in f64 (`CaseInput::run_within`), or with `device: "gpu"` on WebGPU in f32 (the CLI's
//! `--device gpu`, [`super::engine`]).

use scatterlab_bloch::beams::{g_vector, lab_reciprocal_basis, Hkl};
use scatterlab_bloch::simulate::CaseInput;
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::zone::{case_from_zone, ZoneCase, DEFAULT_G_MAX, DEFAULT_SG_MAX};
use scatterlab_bloch::{parse_cif, BlochError, Crystal, Limits};
use serde_json::{Map, Value};

use super::engine::{parse_engine, run_case, table, Engine, GpuKernel};
use crate::options::{boolean, fixed, indices, numbers, object, positive, string};

const OP: &str = "blochSimulate";
/// The options of `blochSimulate` (`blochRocking` adds `tilts`).
pub const KNOWN: [&str; 11] = ["kv", "zone", "thicknesses", "gMax", "sgMax", "solver", "tilt", "reference", "absorption", "name", "device"];

/// The case and solver of one `blochSimulate` call.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulateOptions {
    /// The zone-axis case (the CLI's flags).
    pub case: ZoneCase,
    /// CPU eigen / expm (the default, as the CLI's on the CPU), or the GPU.
    pub engine: Engine,
    /// The crystal's name in the case id (default `"crystal"`).
    pub name: String,
}

/// Reads the options: `kv`, `zone` and `thicknesses` are required; `gMax`, `sgMax` default to
/// the CLI's defaults, `device` to `"cpu"`, `solver` to the device's (`"expm"`, `"taylor"`),
/// `tilt` to `[0, 0]`.
pub fn parse_options(v: &Value) -> Result<SimulateOptions, String> {
    let m = object(v, OP, &KNOWN)?.ok_or_else(|| format!("{OP}: options are required (kv, zone, thicknesses)"))?;
    parse_map(m, OP)
}

/// [`parse_options`] on an object already checked for unknown keys, errors prefixed by `op`
/// (`blochRocking` reads the same keys).
pub fn parse_map(m: &Map<String, Value>, op: &str) -> Result<SimulateOptions, String> {
    let required = |key: &str| format!("{op}: options.{key} is required");
    let thicknesses = numbers(m, "thicknesses", op)?.ok_or_else(|| required("thicknesses"))?;
    if thicknesses.is_empty() {
        return Err(format!("{op}: options.thicknesses must hold at least one thickness (Å)"));
    }
    if let Some((i, t)) = thicknesses.iter().enumerate().find(|(_, t)| **t <= 0.0) {
        return Err(format!("{op}: options.thicknesses[{i}] must be a positive number of Å (got {t})"));
    }
    let case = ZoneCase {
        kv: positive(m, "kv", op, "kV")?.ok_or_else(|| required("kv"))?,
        zone: indices(m, "zone", op, "[u, v, w]")?.ok_or_else(|| required("zone"))?,
        reference: indices(m, "reference", op, "[h, k, l]")?,
        tilt_deg: fixed::<2>(m, "tilt", op, "[tx, ty] in degrees")?.unwrap_or([0.0, 0.0]),
        thicknesses_a: thicknesses,
        g_max: positive(m, "gMax", op, "Å⁻¹")?.unwrap_or(DEFAULT_G_MAX),
        sg_max: positive(m, "sgMax", op, "Å⁻¹")?.unwrap_or(DEFAULT_SG_MAX),
        absorption: boolean(m, "absorption", op)?.unwrap_or(false),
    };
    let engine = parse_engine(m, op)?;
    let name = string(m, "name", op)?.unwrap_or_else(|| "crystal".to_owned());
    if engine == Engine::Cpu(Solver::Eigen) && case.absorption {
        return Err(format!("{op}: options.absorption needs options.solver \"expm\" (an absorptive matrix is not Hermitian)"));
    }
    Ok(SimulateOptions { case, engine, name })
}

/// The result of [`simulate`].
#[derive(Clone, Debug, PartialEq)]
pub struct BlochSimulation {
    /// The case id (`{name}-{kv}kV-[u,v,w]`).
    pub id: String,
    /// Beams, sorted by (h, k, l).
    pub hkl: Vec<Hkl>,
    /// The thicknesses (Å), the rows of `intensities`.
    pub thicknesses: Vec<f64>,
    /// `I[thickness][beam]`, thickness-major: `thicknesses.len() × hkl.len()`.
    pub intensities: Vec<f64>,
    /// Lab-frame (g_x, g_y) of each beam (Å⁻¹), beam-major: where its spot is drawn.
    pub g_xy: Vec<f64>,
    /// What ran.
    pub engine: Engine,
}

/// The option a library input name stands for (the library names them as the CLI's flags).
fn option_name(object: &str) -> String {
    let name = match object {
        "kv" | "zone" | "tilt" => object,
        "thickness" => "thicknesses",
        "g_max" => "gMax",
        "sg_max" => "sgMax",
        o if o.starts_with("ref") => "reference",
        other => return other.to_owned(),
    };
    format!("options.{name}")
}

/// The crystal of CIF text `cif` under the options' name (an error names `cif`).
pub fn crystal(cif: &str, o: &SimulateOptions, op: &str) -> Result<Crystal, String> {
    parse_cif(&o.name, cif).map_err(|e| format!("{op}: cif: {e}"))
}

/// The static case of `o` at tilt `tilt_deg` (the options' own, or a sweep's): the CLI's
/// `--cif` case; an input error names the option it came from.
pub fn zone_case(cif: &str, crystal: &Crystal, o: &SimulateOptions, tilt_deg: [f64; 2], op: &str) -> Result<CaseInput, String> {
    let case = ZoneCase { tilt_deg, ..o.case.clone() };
    let mut file = case_from_zone(&o.name, cif, crystal, &case).map_err(|e| match e {
        BlochError::Input(i) => format!("{op}: {}: {}", option_name(&i.object), i.problem),
        other => format!("{op}: {other}"),
    })?;
    file.cases.pop().ok_or_else(|| format!("{op}: no case was built"))
}

/// Simulates the case of options `o` for the crystal of CIF text `cif`; `gpu` is the kernel for
/// `device: "gpu"` (the caller acquires it, [`super::engine::acquire`]).
pub async fn simulate(cif: &str, o: &SimulateOptions, gpu: Option<&GpuKernel>) -> Result<BlochSimulation, String> {
    let crystal = crystal(cif, o, OP)?;
    let case = zone_case(cif, &crystal, o, o.case.tilt_deg, OP)?;
    let limits = Limits::default();
    let err = |e: BlochError| format!("{OP}: {e}");
    let table = table(&case, &crystal, &limits).map_err(err)?;
    let (hkl, rows) = run_case(&case, &crystal, &table, o.engine, gpu, &limits).await.map_err(err)?;
    let basis = lab_reciprocal_basis(&crystal.cell.direct_matrix(), &case.orientation).map_err(err)?;
    let g_xy = hkl.iter().flat_map(|&h| g_vector(h, &basis).into_iter().take(2)).collect();
    Ok(BlochSimulation { id: case.id.clone(), hkl, thicknesses: case.thicknesses_a.clone(), intensities: rows.concat(), g_xy, engine: o.engine })
}
