//! `lab.blochSimulate(cifText, options)`: one static zone-axis case built by
//! [`scatterlab_bloch::zone::case_from_zone`] — the function behind `scatterlab bloch simulate
//! --cif … --kv … --zone … --thickness …` and the app's Bloch workspace — and run by
//! `CaseInput::run_within` with the default limits and diffBloch's conventions (the CLI's default),
//! so the numbers are the CLI's. CPU f64, whatever the handle's device.

use scatterlab_bloch::beams::{g_vector, lab_reciprocal_basis, Hkl};
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::zone::{case_from_zone, ZoneCase, DEFAULT_G_MAX, DEFAULT_SG_MAX};
use scatterlab_bloch::{parse_cif, BlochError, Limits};
use serde_json::Value;

use super::options::{boolean, choice, fixed, indices, numbers, object, positive, string};

const OP: &str = "blochSimulate";
const KNOWN: [&str; 10] = ["kv", "zone", "thicknesses", "gMax", "sgMax", "solver", "tilt", "reference", "absorption", "name"];

/// The case and solver of one `blochSimulate` call.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulateOptions {
    /// The zone-axis case (the CLI's flags).
    pub case: ZoneCase,
    /// Eigen (one decomposition for every thickness) or expm (the default, as the CLI's on the CPU).
    pub solver: Solver,
    /// The crystal's name in the case id (default `"crystal"`).
    pub name: String,
}

/// Reads the options: `kv`, `zone` and `thicknesses` are required; `gMax`, `sgMax` default to
/// the CLI's defaults, `solver` to `"expm"`, `tilt` to `[0, 0]`.
pub fn parse_options(v: &Value) -> Result<SimulateOptions, String> {
    let m = object(v, OP, &KNOWN)?.ok_or_else(|| format!("{OP}: options are required (kv, zone, thicknesses)"))?;
    let required = |key: &str| format!("{OP}: options.{key} is required");
    let thicknesses = numbers(m, "thicknesses", OP)?.ok_or_else(|| required("thicknesses"))?;
    if thicknesses.is_empty() {
        return Err(format!("{OP}: options.thicknesses must hold at least one thickness (Å)"));
    }
    if let Some((i, t)) = thicknesses.iter().enumerate().find(|(_, t)| **t <= 0.0) {
        return Err(format!("{OP}: options.thicknesses[{i}] must be a positive number of Å (got {t})"));
    }
    let case = ZoneCase {
        kv: positive(m, "kv", OP, "kV")?.ok_or_else(|| required("kv"))?,
        zone: indices(m, "zone", OP, "[u, v, w]")?.ok_or_else(|| required("zone"))?,
        reference: indices(m, "reference", OP, "[h, k, l]")?,
        tilt_deg: fixed::<2>(m, "tilt", OP, "[tx, ty] in degrees")?.unwrap_or([0.0, 0.0]),
        thicknesses_a: thicknesses,
        g_max: positive(m, "gMax", OP, "Å⁻¹")?.unwrap_or(DEFAULT_G_MAX),
        sg_max: positive(m, "sgMax", OP, "Å⁻¹")?.unwrap_or(DEFAULT_SG_MAX),
        absorption: boolean(m, "absorption", OP)?.unwrap_or(false),
    };
    let solver = match choice(m, "solver", OP, &["eigen", "expm"])? {
        Some("eigen") => Solver::Eigen,
        _ => Solver::Expm,
    };
    let name = string(m, "name", OP)?.unwrap_or_else(|| "crystal".to_owned());
    if solver == Solver::Eigen && case.absorption {
        return Err(format!("{OP}: options.absorption needs options.solver \"expm\" (an absorptive matrix is not Hermitian)"));
    }
    Ok(SimulateOptions { case, solver, name })
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
    /// I[thickness][beam], thickness-major: `thicknesses.len() × hkl.len()`.
    pub intensities: Vec<f64>,
    /// Lab-frame (g_x, g_y) of each beam (Å⁻¹), beam-major: where its spot is drawn.
    pub g_xy: Vec<f64>,
    /// The solver that ran.
    pub solver: Solver,
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

/// Simulates the case of `options` (the JS call's object) for the crystal of CIF text `cif`.
pub fn simulate(cif: &str, options: &Value) -> Result<BlochSimulation, String> {
    let o = parse_options(options)?;
    let crystal = parse_cif(&o.name, cif).map_err(|e| format!("{OP}: cif: {e}"))?;
    let file = case_from_zone(&o.name, cif, &crystal, &o.case).map_err(|e| match e {
        BlochError::Input(i) => format!("{OP}: {}: {}", option_name(&i.object), i.problem),
        other => format!("{OP}: {other}"),
    })?;
    let case = file.cases.first().ok_or_else(|| format!("{OP}: no case was built"))?;
    let method = Method { solver: o.solver, conventions: Conventions::DiffBloch };
    let (hkl, rows) = case.run_within(&crystal, method, &Limits::default()).map_err(|e| format!("{OP}: {e}"))?;
    let basis = lab_reciprocal_basis(&crystal.cell.direct_matrix(), &case.orientation).map_err(|e| format!("{OP}: {e}"))?;
    let g_xy = hkl.iter().flat_map(|&h| g_vector(h, &basis).into_iter().take(2)).collect();
    Ok(BlochSimulation { id: case.id.clone(), hkl, thicknesses: case.thicknesses_a.clone(), intensities: rows.concat(), g_xy, solver: o.solver })
}
