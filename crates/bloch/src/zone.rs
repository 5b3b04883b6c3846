//! One static zone-axis case from a CIF and a few numbers (voltage, zone `[uvw]`, reference
//! reflection, tilt, thicknesses, g_max, sg_max): the case `scatterlab bloch simulate --cif …
//! --kv … --zone … --thickness …` runs and the app's Bloch workspace simulates, built in one
//! place so the two can never disagree.
//!
//! Orientation, as the fixture's `('zone', uvw, ref_hkl, (tx, ty))`: the real-space zone axis
//! `[uvw]` goes to lab +z (towards the gun; the beam travels along −z), the reciprocal direction of
//! the reference reflection (hkl), made perpendicular to it, to lab +x, then O = R_x(tx) R_y(ty) O0.
//! Errors name the input as `zone`, `ref [h, k, l]`, `kv`, `thickness`, `g_max`, `sg_max`, `tilt`
//! (the CLI prefixes `--`).

use std::collections::BTreeMap;

use scatterlab_core::InputError;

use crate::beams::{rotation_x, Mat3};
use crate::rocking::Coupling;
use crate::simulate::{CaseInput, CasesFile, CrystalEntry, Kind};
use crate::{BlochError, Crystal};

/// Beam radius |g| ≤ g_max (Å⁻¹) when none is given: the fixture's most common value
/// (reference.json's static cases, and diffBloch's `g_max` in synthetic_quartz/experiment.yaml).
pub const DEFAULT_G_MAX: f64 = 1.6;
/// Excitation-error radius |Sg| ≤ sg_max (Å⁻¹) when none is given: the fixture's most common
/// static value (diffBloch's rocking/refinement setting is 0.01).
pub const DEFAULT_SG_MAX: f64 = 0.04;

/// The numbers of one static zone-axis case.
#[derive(Debug, Clone, PartialEq)]
pub struct ZoneCase {
    /// Accelerating voltage (kV).
    pub kv: f64,
    /// Zone axis `[uvw]` (real-space direction along the beam, towards the gun).
    pub zone: [i32; 3],
    /// Reflection (hkl) whose direction, made perpendicular to the zone axis, is lab +x; `None`:
    /// the first of (100), (010), (001) in the zone, else the least parallel to it.
    pub reference: Option<[i32; 3]>,
    /// Tilts (degrees) about lab x then y: O = R_x(tx) R_y(ty) O_zone.
    pub tilt_deg: [f64; 2],
    /// Crystal thicknesses (Å).
    pub thicknesses_a: Vec<f64>,
    /// Beam radius (Å⁻¹).
    pub g_max: f64,
    /// Excitation-error radius (Å⁻¹).
    pub sg_max: f64,
    /// Absorptive structure factors (expm only).
    pub absorption: bool,
}

impl Default for ZoneCase {
    fn default() -> Self {
        Self { kv: 200.0, zone: [0, 0, 1], reference: None, tilt_deg: [0.0, 0.0], thicknesses_a: vec![100.0], g_max: DEFAULT_G_MAX, sg_max: DEFAULT_SG_MAX, absorption: false }
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

pub(crate) fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

/// Orientation O (lab = O · crystal Cartesian) for zone `[uvw]`, reference (hkl) and tilts (degrees)
/// in a cell with direct rows `direct` and reciprocal rows `reciprocal`.
pub fn zone_orientation(direct: &Mat3, reciprocal: &Mat3, zone: [i32; 3], reference: Option<[i32; 3]>, tilt_deg: [f64; 2]) -> Result<Mat3, InputError> {
    let z = unit(combine(zone, direct)).ok_or_else(|| InputError::new("zone", "the zone axis must not be 0,0,0"))?;
    // Component of the reference's reciprocal direction perpendicular to the zone axis.
    let perpendicular = |hkl: [i32; 3]| {
        let r = combine(hkl, reciprocal);
        let along = dot(r, z);
        unit([0, 1, 2].map(|j| r[j] - along * z[j]))
    };
    let x = match reference {
        Some(hkl) => {
            perpendicular(hkl).ok_or_else(|| InputError::new(format!("ref {hkl:?}"), format!("parallel to the zone axis {zone:?} (or 0,0,0); pick a reflection off the axis")))?
        }
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
            perpendicular(hkl).ok_or_else(|| InputError::new("zone", "no reference direction off the zone axis"))?
        }
    };
    let y = cross(z, x);
    let o0 = [x, y, z];
    let [tx, ty] = tilt_deg.map(f64::to_radians);
    let (sin, cos) = ty.sin_cos();
    let ry = [[cos, 0.0, sin], [0.0, 1.0, 0.0], [-sin, 0.0, cos]];
    Ok(mat_mul(&mat_mul(&rotation_x(tx), &ry), &o0))
}

/// Checks `case`'s numbers; the error names the input.
pub fn check(case: &ZoneCase) -> Result<(), InputError> {
    if !(case.kv.is_finite() && case.kv > 0.0) {
        return Err(InputError::new("kv", format!("the accelerating voltage must be a positive number of kV (got {})", case.kv)));
    }
    if case.thicknesses_a.is_empty() {
        return Err(InputError::new("thickness", "give at least one thickness (Å)"));
    }
    if let Some(t) = case.thicknesses_a.iter().find(|t| !(t.is_finite() && **t > 0.0)) {
        return Err(InputError::new("thickness", format!("every thickness must be a positive number of Å (got {t})")));
    }
    for (name, value) in [("g_max", case.g_max), ("sg_max", case.sg_max)] {
        if !(value.is_finite() && value > 0.0) {
            return Err(InputError::new(name, format!("must be a positive number of Å⁻¹ (got {value})")));
        }
    }
    if !case.tilt_deg.iter().all(|t| t.is_finite()) {
        return Err(InputError::new("tilt", format!("expected two finite angles in degrees (got {:?})", case.tilt_deg)));
    }
    Ok(())
}

/// The cases file of one static case: `crystal` (parsed from `cif`, its text, under `name`) seen
/// along `case.zone`. The case id is `{name}-{kv}kV-[u,v,w]`.
pub fn case_from_zone(name: &str, cif: &str, crystal: &Crystal, case: &ZoneCase) -> Result<CasesFile, BlochError> {
    check(case)?;
    crystal.cell.validate().map_err(|e| InputError::new(format!("crystal {name:?}: cell"), e))?;
    let orientation = zone_orientation(&crystal.cell.direct_matrix(), &crystal.cell.reciprocal_matrix(), case.zone, case.reference, case.tilt_deg)?;
    let [u, v, w] = case.zone;
    Ok(case_at(name, cif, case, orientation, format!("{name}-{}kV-[{u},{v},{w}]", case.kv)))
}

/// The cases file of one static case of `case`'s numbers at `orientation`, with id `id` (the
/// orientation already validated).
pub(crate) fn case_at(name: &str, cif: &str, case: &ZoneCase, orientation: Mat3, id: String) -> CasesFile {
    let input = CaseInput {
        id,
        crystal: name.to_owned(),
        kind: Kind::Static,
        energy_ev: case.kv * 1e3,
        orientation,
        g_solve_inv_a: case.g_max,
        sg_max_inv_a: case.sg_max,
        thicknesses_a: case.thicknesses_a.clone(),
        absorption: case.absorption,
        grid_g_max_inv_a: None,
        tilt_angles_deg: None,
        tilt_semiangle_deg: None,
        n_tilts: None,
        coupling: Coupling::default(),
    };
    let crystals = BTreeMap::from([(name.to_owned(), CrystalEntry { cif: cif.to_owned() })]);
    CasesFile { crystals, cases: vec![input] }
}
