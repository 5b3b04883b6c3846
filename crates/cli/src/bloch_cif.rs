//! `scatterlab bloch simulate --cif f.cif --kv 200 --zone 0,0,1 --thickness 100,200 …`: one
//! static zone-axis case built from flags as a cases file (the fixture's format) and run through
//! the same path as a file on disk, so the two can never disagree.
//!
//! Orientation, as the fixture's `('zone', uvw, ref_hkl, (tx, ty))`: the real-space zone axis
//! [uvw] goes to lab +z (towards the gun; the beam travels along −z), the reciprocal direction of
//! the reference reflection (hkl), made perpendicular to it, to lab +x, then O = R_x(tx) R_y(ty) O0.

use std::path::{Path, PathBuf};

use scatterlab_bloch::beams::{rotation_x, Mat3};
use scatterlab_bloch::parse_cif;
use scatterlab_bloch::simulate::{parse_cases, CasesFile};

/// Beam radius |g| ≤ g_max (Å⁻¹) when `--g-max` is not given: the fixture's most common value
/// (reference.json's static cases, and diffBloch's `g_max` in synthetic_quartz/experiment.yaml).
pub const DEFAULT_G_MAX: f64 = 1.6;
/// Excitation-error radius |Sg| ≤ sg_max (Å⁻¹) when `--sg-max` is not given: the fixture's most
/// common static value (diffBloch's rocking/refinement setting is 0.01).
pub const DEFAULT_SG_MAX: f64 = 0.04;

/// The flags that describe one case from a CIF (with `--cif`, in place of a cases file).
#[derive(clap::Args, Debug, Default)]
pub struct CifFlags {
    /// A CIF file: simulate one static zone-axis case from the flags below instead of a cases file.
    #[arg(long, value_name = "FILE")]
    pub cif: Option<PathBuf>,
    /// With --cif: accelerating voltage in kV (e.g. 200).
    #[arg(long, value_name = "KV", allow_hyphen_values = true)]
    pub kv: Option<f64>,
    /// With --cif: zone axis U,V,W (real-space direction along the beam, towards the gun).
    #[arg(long, value_name = "U,V,W", value_delimiter = ',', allow_hyphen_values = true)]
    pub zone: Vec<i32>,
    /// With --cif: reflection H,K,L whose direction (made perpendicular to the zone axis) is lab +x
    /// [default: the first of (100), (010), (001) in the zone, else the least parallel to it].
    /// Only matters with --tilt (a rotation about the beam changes no intensity).
    #[arg(long = "ref", value_name = "H,K,L", value_delimiter = ',', allow_hyphen_values = true)]
    pub reference: Vec<i32>,
    /// With --cif: tilt TX,TY in degrees about lab x then y, O = R_x(TX) R_y(TY) O_zone [default: 0,0].
    #[arg(long, value_name = "TX,TY", value_delimiter = ',', allow_hyphen_values = true)]
    pub tilt: Vec<f64>,
    /// With --cif: crystal thicknesses in Å, comma-separated (e.g. 100,200).
    #[arg(long, value_name = "T1,T2,…", value_delimiter = ',', allow_hyphen_values = true)]
    pub thickness: Vec<f64>,
    /// With --cif: beam radius |g| ≤ G_MAX in Å⁻¹ (the cases file's g_solve_invA) [default: 1.6,
    /// the Bloch fixture's usual value]. The structure factors are tabulated to 2·G_MAX + 0.5.
    #[arg(long, value_name = "G_MAX", allow_hyphen_values = true)]
    pub g_max: Option<f64>,
    /// With --cif: excitation-error radius |Sg| ≤ SG_MAX in Å⁻¹ [default: 0.04, the fixture's usual
    /// static value; diffBloch's rocking curves use 0.01].
    #[arg(long, value_name = "SG_MAX", allow_hyphen_values = true)]
    pub sg_max: Option<f64>,
    /// With --cif: absorptive structure factors (expm only).
    #[arg(long)]
    pub absorption: bool,
}

impl CifFlags {
    /// The case flags given (everything but `--cif`), by name: with a cases file each is an error.
    pub fn given(&self) -> Vec<&'static str> {
        let flags = [
            ("--kv", self.kv.is_some()),
            ("--zone", !self.zone.is_empty()),
            ("--ref", !self.reference.is_empty()),
            ("--tilt", !self.tilt.is_empty()),
            ("--thickness", !self.thickness.is_empty()),
            ("--g-max", self.g_max.is_some()),
            ("--sg-max", self.sg_max.is_some()),
            ("--absorption", self.absorption),
        ];
        flags.iter().filter(|(_, given)| *given).map(|(name, _)| *name).collect()
    }
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn combine(coefficients: [i32; 3], rows: &Mat3) -> [f64; 3] {
    [0, 1, 2].map(|j| (0..3).map(|i| f64::from(coefficients[i]) * rows[i][j]).sum())
}

fn unit(v: [f64; 3]) -> Option<[f64; 3]> {
    let n = dot(v, v).sqrt();
    (n.is_finite() && n > 1e-12).then(|| v.map(|x| x / n))
}

fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

/// Orientation O (lab = O · crystal Cartesian) for zone [uvw], reference (hkl) and tilts (degrees)
/// in a cell with direct rows `direct` and reciprocal rows `reciprocal`.
pub fn zone_orientation(direct: &Mat3, reciprocal: &Mat3, zone: [i32; 3], reference: Option<[i32; 3]>, tilt_deg: [f64; 2]) -> Result<Mat3, String> {
    let z = unit(combine(zone, direct)).ok_or("--zone: the zone axis must not be 0,0,0")?;
    // Component of the reference's reciprocal direction perpendicular to the zone axis.
    let perpendicular = |hkl: [i32; 3]| {
        let r = combine(hkl, reciprocal);
        let along = dot(r, z);
        unit([0, 1, 2].map(|j| r[j] - along * z[j]))
    };
    let x = match reference {
        Some(hkl) => perpendicular(hkl).ok_or_else(|| format!("--ref {hkl:?}: parallel to the zone axis {zone:?} (or 0,0,0); pick a reflection off the axis"))?,
        None => {
            let axes = [[1, 0, 0], [0, 1, 0], [0, 0, 1]];
            let in_zone = axes.iter().find(|h| h.iter().zip(&zone).map(|(a, b)| a * b).sum::<i32>() == 0);
            // Least parallel: the largest perpendicular part relative to its length.
            let least_parallel = || {
                axes.iter().copied().max_by(|a, b| {
                    let off = |h: [i32; 3]| {
                        let r = combine(h, reciprocal);
                        1.0 - (dot(r, z) / dot(r, r).sqrt()).abs()
                    };
                    off(*a).total_cmp(&off(*b))
                })
            };
            let hkl = in_zone.copied().or_else(least_parallel).unwrap_or([1, 0, 0]);
            perpendicular(hkl).ok_or("--zone: no reference direction off the zone axis")?
        }
    };
    let y = cross(z, x);
    let o0 = [x, y, z];
    let [tx, ty] = tilt_deg.map(f64::to_radians);
    let (sin, cos) = ty.sin_cos();
    let ry = [[cos, 0.0, sin], [0.0, 1.0, 0.0], [-sin, 0.0, cos]];
    Ok(mat_mul(&mat_mul(&rotation_x(tx), &ry), &o0))
}

fn triple<T: Copy>(values: &[T], flag: &str, what: &str) -> Result<Option<[T; 3]>, String> {
    match values {
        [] => Ok(None),
        [a, b, c] => Ok(Some([*a, *b, *c])),
        _ => Err(format!("{flag}: expected three integers {what} (got {} values)", values.len())),
    }
}

/// The cases file for the flags: one crystal (named after the CIF file) and one static case.
pub fn cases_from_flags(cif_path: &Path, flags: &CifFlags) -> Result<CasesFile, String> {
    let missing: Vec<&str> = [("--kv", flags.kv.is_none()), ("--zone", flags.zone.is_empty()), ("--thickness", flags.thickness.is_empty())]
        .iter()
        .filter(|(_, absent)| *absent)
        .map(|(name, _)| *name)
        .collect();
    if !missing.is_empty() {
        return Err(format!("--cif needs {} (e.g. --kv 200 --zone 0,0,1 --thickness 100,200)", missing.join(", ")));
    }
    let kv = flags.kv.unwrap_or_default();
    if !(kv.is_finite() && kv > 0.0) {
        return Err(format!("--kv: the accelerating voltage must be a positive number of kV (got {kv})"));
    }
    if let Some(t) = flags.thickness.iter().find(|t| !(t.is_finite() && **t > 0.0)) {
        return Err(format!("--thickness: every thickness must be a positive number of Å (got {t})"));
    }
    for (flag, value) in [("--g-max", flags.g_max), ("--sg-max", flags.sg_max)] {
        if value.is_some_and(|v| !(v.is_finite() && v > 0.0)) {
            return Err(format!("{flag}: must be a positive number of Å⁻¹ (got {})", value.unwrap_or_default()));
        }
    }
    let zone = triple(&flags.zone, "--zone", "U,V,W")?.unwrap_or_default();
    let reference = triple(&flags.reference, "--ref", "H,K,L")?;
    let tilt = match flags.tilt.as_slice() {
        [] => [0.0, 0.0],
        [tx, ty] if tx.is_finite() && ty.is_finite() => [*tx, *ty],
        _ => return Err(format!("--tilt: expected two finite angles TX,TY in degrees (got {:?})", flags.tilt)),
    };
    let cif = std::fs::read_to_string(cif_path).map_err(|e| format!("cannot read {}: {e}", cif_path.display()))?;
    let name = cif_path.file_stem().map_or_else(|| "crystal".to_owned(), |s| s.to_string_lossy().into_owned());
    let crystal = parse_cif(&name, &cif).map_err(|e| format!("{}: {e}", cif_path.display()))?;
    crystal.cell.validate().map_err(|e| format!("{}: cell: {e}", cif_path.display()))?;
    let orientation = zone_orientation(&crystal.cell.direct_matrix(), &crystal.cell.reciprocal_matrix(), zone, reference, tilt)?;
    let g_max = flags.g_max.unwrap_or(DEFAULT_G_MAX);
    let case = serde_json::json!({
        "id": format!("{name}-{kv}kV-[{},{},{}]", zone[0], zone[1], zone[2]),
        "crystal": name,
        "kind": "static",
        "energy_eV": kv * 1e3,
        "orientation": orientation,
        "g_solve_invA": g_max,
        "sg_max_invA": flags.sg_max.unwrap_or(DEFAULT_SG_MAX),
        "thicknesses_A": flags.thickness,
        "absorption": flags.absorption,
    });
    let file = serde_json::json!({ "crystals": { name: { "cif": cif } }, "cases": [case] });
    // Through the cases-file parser: the flags make exactly the case a file with these values would.
    parse_cases(&file.to_string()).map_err(|e| format!("--cif {}: {e}", cif_path.display()))
}
