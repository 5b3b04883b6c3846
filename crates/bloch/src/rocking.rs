//! Rocking curves: intensities summed over tilts θ_i about lab x, O_i = R_x(θ_i) · O.
//!
//! Per-tilt coupling (diffBloch's, the fixture's): each tilt has its own beam set
//! {|g| < g_solve, |Sg| < sg_max} ∪ {000} (strict cut-offs) and its own structure matrix; the
//! reported beams are the union over tilts and I(hkl) = Σ_i I_i(hkl), a beam absent at tilt i
//! contributing 0 there. Union coupling instead solves every tilt on the union beam set.

use std::collections::BTreeMap;

use scatterlab_core::InputError;

use crate::beams::{tilted_orientations, Cutoff, Hkl};
use crate::geometry::Optics;
use crate::limits::Limits;
use crate::matrix::StructureFactorTable;
use crate::pattern::{Method, Pattern, Simulation};
use crate::solve::intensities;
use crate::BlochError;

/// How the beams of the tilts of one rocking curve are coupled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coupling {
    /// Each tilt solved on its own beam set (diffBloch's per-tilt coupling).
    #[default]
    PerTilt,
    /// Every tilt solved on the union of the per-tilt sets.
    Union,
}

/// A rocking curve: tilt angles about lab x (degrees) and the coupling.
#[derive(Debug, Clone, PartialEq)]
pub struct Rocking {
    /// θ_i in degrees (e.g. [`crate::beams::tilt_angles_deg`]).
    pub tilt_angles_deg: Vec<f64>,
    /// Per-tilt or union coupling.
    pub coupling: Coupling,
}

/// Runs the rocking curve of `simulation` (called by [`Simulation::run`]).
pub(crate) fn rocking_pattern(
    simulation: &Simulation,
    rocking: &Rocking,
    table: &dyn StructureFactorTable,
    optics: &Optics,
    method: Method,
    limits: &Limits,
) -> Result<Pattern, BlochError> {
    if rocking.tilt_angles_deg.is_empty() {
        return Err(InputError::new(format!("simulation {:?}: tilt angles", simulation.name), "a rocking curve needs at least one tilt").into());
    }
    if let Some(bad) = rocking.tilt_angles_deg.iter().find(|a| !a.is_finite()) {
        return Err(InputError::new(format!("simulation {:?}: tilt angles", simulation.name), format!("must be finite (got {bad})")).into());
    }
    let orientations = tilted_orientations(&simulation.orientation, &rocking.tilt_angles_deg);
    let mut per_tilt: Vec<Vec<Hkl>> = Vec::with_capacity(orientations.len());
    for (i, o) in orientations.iter().enumerate() {
        let beams = simulation.select_beams(table, optics, o, Cutoff::Strict)?;
        let object = format!("simulation {:?}, tilt {i} ({}°)", simulation.name, rocking.tilt_angles_deg[i]);
        limits.check_beams(beams.len(), &simulation.beam_source(&object))?;
        per_tilt.push(beams);
    }
    let mut union: Vec<Hkl> = per_tilt.iter().flatten().copied().collect();
    union.sort_unstable();
    union.dedup();
    let object = format!("simulation {:?}", simulation.name);
    if rocking.coupling == Coupling::Union {
        limits.check_beams(union.len(), &simulation.beam_source(&format!("{object}, union of the tilts' beams")))?;
    }
    limits.check_intensities(&object, simulation.thicknesses_a.len(), union.len())?;
    let solved: Vec<usize> = match rocking.coupling {
        Coupling::PerTilt => per_tilt.iter().map(Vec::len).collect(),
        Coupling::Union => vec![union.len(); per_tilt.len()],
    };
    limits.check_work(&object, &solved, simulation.thicknesses_a.len(), method.solver)?;

    let thicknesses = &simulation.thicknesses_a;
    let mut sums: BTreeMap<Hkl, Vec<f64>> = union.iter().map(|&h| (h, vec![0.0; thicknesses.len()])).collect();
    for (i, (orientation, own)) in orientations.iter().zip(&per_tilt).enumerate() {
        let beams = match rocking.coupling {
            Coupling::PerTilt => own,
            Coupling::Union => &union,
        };
        let matrix = simulation.matrix(table, optics, orientation, beams, method.conventions)?;
        let object = format!("simulation {:?}, tilt {i} ({}°)", simulation.name, rocking.tilt_angles_deg[i]);
        let tilt_intensities = intensities(&matrix, thicknesses, method.solver, &object)?;
        for (t, row) in tilt_intensities.iter().enumerate() {
            for (hkl, value) in beams.iter().zip(row) {
                if let Some(sum) = sums.get_mut(hkl) {
                    sum[t] += value;
                }
            }
        }
    }
    let intensities = (0..thicknesses.len()).map(|t| union.iter().map(|h| sums.get(h).map_or(0.0, |s| s[t])).collect()).collect();
    Ok(Pattern { hkl: union, intensities })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::beams::tilt_angles_deg;
    use crate::matrix::tests::toy_table;
    use crate::solve::Solver;

    fn toy(rocking: Rocking) -> Simulation {
        Simulation {
            name: "toy".to_owned(),
            direct: [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]],
            orientation: crate::beams::rotation_x(0.03),
            energy_ev: 200e3,
            g_solve_inv_a: 0.8,
            sg_max_inv_a: 0.01,
            thicknesses_a: vec![100.0, 400.0],
            absorption: false,
            rocking: Some(rocking),
        }
    }

    #[test]
    fn sums_over_tilts_on_the_union() {
        let table = toy_table(7, false);
        let angles = tilt_angles_deg(0.5, 5);
        let eigen = Method { solver: Solver::Eigen, ..Method::default() };
        let per_tilt = toy(Rocking { tilt_angles_deg: angles.clone(), coupling: Coupling::PerTilt }).run(&table, eigen).unwrap();
        // Σ over beams = number of tilts (each tilt conserves flux).
        for row in &per_tilt.intensities {
            assert!((row.iter().sum::<f64>() - 5.0).abs() < 1e-11);
        }
        // One tilt at 0° is the static pattern with strict cut-offs.
        let single = toy(Rocking { tilt_angles_deg: vec![0.0], coupling: Coupling::PerTilt }).run(&table, eigen).unwrap();
        assert!(single.hkl.len() < per_tilt.hkl.len());
        let union = toy(Rocking { tilt_angles_deg: angles, coupling: Coupling::Union }).run(&table, Method { solver: Solver::Expm, ..Method::default() }).unwrap();
        assert_eq!(union.hkl, per_tilt.hkl);
        for row in &union.intensities {
            assert!((row.iter().sum::<f64>() - 5.0).abs() < 1e-11);
        }
    }

    #[test]
    fn bad_tilts_are_errors() {
        let table = toy_table(7, false);
        assert!(toy(Rocking { tilt_angles_deg: vec![], coupling: Coupling::PerTilt }).run(&table, Method::default()).is_err());
        assert!(toy(Rocking { tilt_angles_deg: vec![f64::NAN], coupling: Coupling::PerTilt }).run(&table, Method::default()).is_err());
    }
}
