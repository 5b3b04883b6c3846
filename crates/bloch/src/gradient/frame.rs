//! One frame of a gradient model: its orientation, tilts, frozen per-tilt beam sets and
//! thicknesses, and the per-tilt solves (structure matrix, lab geometry, eigendecomposition).

use scatterlab_core::InputError;

use super::matrix::TiltGeometry;
use super::propagator::TiltPropagator;
use crate::beams::{g_vector, lab_reciprocal_basis, mat3_mul, rotation_x, tilted_orientations, Cutoff, Hkl, Mat3};
use crate::crystal::Cell;
use crate::geometry::Optics;
use crate::matrix::{Conventions, MatrixSetup, StructureFactorTable, StructureMatrix};
use crate::pattern::Simulation;
use crate::rocking::Coupling;
use crate::BlochError;

/// A frame with its beam sets frozen (selection is discontinuous, so gradients and finite
/// differences keep them fixed).
#[derive(Debug, Clone, PartialEq)]
pub struct FramePlan {
    /// Orientation O (lab = O · crystal Cartesian), before the tilts.
    pub orientation: Mat3,
    /// Tilt rotations T_i (lab), O_i = T_i·O: R_x(θ_i) for continuous rotation
    /// ([`FramePlan::tilts_about_x`]), any rotation for precession; `[I]` for a static frame.
    pub tilts: Vec<Mat3>,
    /// The beams of each tilt (each contains 000).
    pub beams: Vec<Vec<Hkl>>,
    /// Thicknesses (Å).
    pub thicknesses: Vec<f64>,
}

/// One solved tilt.
#[derive(Debug, Clone)]
pub struct TiltSolve {
    /// The structure matrix and its lab geometry.
    pub geometry: TiltGeometry,
    /// Its propagator (eigen or Taylor) with ψ(0) = e₀₀₀.
    pub propagator: TiltPropagator,
}

/// Rotation by `angle` (rad) about lab axis `axis` (0, 1, 2 = x, y, z), right-handed.
fn rotation_about(axis: usize, angle: f64) -> Result<Mat3, BlochError> {
    let (s, c) = angle.sin_cos();
    match axis {
        0 => Ok(rotation_x(angle)),
        1 => Ok([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]),
        2 => Ok([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]),
        _ => Err(InputError::new("orientation axis", format!("must be 0, 1 or 2 (got {axis})")).into()),
    }
}

impl FramePlan {
    /// The frame `simulation` describes, with beams selected as [`Simulation::run`] selects them
    /// on `table` (static: inclusive radii; rocking: strict per-tilt sets, or their union for
    /// union coupling).
    pub fn from_simulation(simulation: &Simulation, table: &dyn StructureFactorTable, optics: &Optics) -> Result<Self, BlochError> {
        let Some(rocking) = &simulation.rocking else {
            let beams = simulation.select_beams(table, optics, &simulation.orientation, Cutoff::Inclusive)?;
            return Ok(Self { orientation: simulation.orientation, tilts: Self::tilts_about_x(&[0.0]), beams: vec![beams], thicknesses: simulation.thicknesses_a.clone() });
        };
        let orientations = tilted_orientations(&simulation.orientation, &rocking.tilt_angles_deg);
        let mut beams: Vec<Vec<Hkl>> = orientations.iter().map(|o| simulation.select_beams(table, optics, o, Cutoff::Strict)).collect::<Result<_, _>>()?;
        if rocking.coupling == Coupling::Union {
            let union: Vec<Hkl> = union_of(&beams);
            beams = vec![union; orientations.len()];
        }
        Ok(Self { orientation: simulation.orientation, tilts: Self::tilts_about_x(&rocking.tilt_angles_deg), beams, thicknesses: simulation.thicknesses_a.clone() })
    }

    /// R_x(θ) for each tilt angle θ (degrees): a continuous-rotation rocking curve.
    pub fn tilts_about_x(angles_deg: &[f64]) -> Vec<Mat3> {
        angles_deg.iter().map(|a| rotation_x(a.to_radians())).collect()
    }

    /// The beams of all tilts, sorted, without duplicates.
    pub fn union(&self) -> Vec<Hkl> {
        union_of(&self.beams)
    }

    /// Adds `step` (Å) to every thickness.
    pub(crate) fn shift_thickness(&mut self, step: f64) {
        for t in &mut self.thicknesses {
            *t += step;
        }
    }

    /// O → R_axis(angle)·O.
    pub(crate) fn rotate(&mut self, axis: usize, angle: f64) -> Result<(), BlochError> {
        self.orientation = mat3_mul(&rotation_about(axis, angle)?, &self.orientation);
        Ok(())
    }

    /// Builds every tilt's structure matrix (diffBloch conventions; absorptive diagonal with
    /// `absorption`) for the crystal `cell` with structure factors `table` and frozen `optics`,
    /// and its propagator: eigen when A is Hermitian and `taylor` is false, Taylor otherwise.
    pub fn solve(&self, cell: &Cell, table: &dyn StructureFactorTable, optics: &Optics, absorption: bool, taylor: bool, object: &str) -> Result<Vec<TiltSolve>, BlochError> {
        (0..self.tilts.len()).map(|i| self.solve_tilt(i, cell, table, optics, absorption, taylor, object)).collect()
    }

    /// [`FramePlan::solve`] for tilt `index` alone.
    #[allow(clippy::too_many_arguments)]
    pub fn solve_tilt(
        &self,
        index: usize,
        cell: &Cell,
        table: &dyn StructureFactorTable,
        optics: &Optics,
        absorption: bool,
        taylor: bool,
        object: &str,
    ) -> Result<TiltSolve, BlochError> {
        let geometry = self.tilt_geometry(index, cell, table, optics, absorption, object)?;
        let propagator = TiltPropagator::new(&geometry.matrix, &self.thicknesses, taylor, &format!("{object}, tilt {index}"))?;
        Ok(TiltSolve { geometry, propagator })
    }

    /// The structure matrix and lab geometry of tilt `index` without a propagator (the GPU
    /// path propagates them itself).
    pub fn tilt_geometry(&self, index: usize, cell: &Cell, table: &dyn StructureFactorTable, optics: &Optics, absorption: bool, object: &str) -> Result<TiltGeometry, BlochError> {
        if self.tilts.len() != self.beams.len() {
            return Err(InputError::new(object, format!("{} tilts but {} beam sets", self.tilts.len(), self.beams.len())).into());
        }
        let (Some(&tilt), Some(beams)) = (self.tilts.get(index), self.beams.get(index)) else {
            return Err(InputError::new(object, format!("tilt {index} out of range ({} tilts)", self.tilts.len())).into());
        };
        let basis = lab_reciprocal_basis(&cell.direct_matrix(), &mat3_mul(&tilt, &self.orientation))?;
        let setup = MatrixSetup { basis: &basis, optics, absorption, conventions: Conventions::DiffBloch };
        let indices = table.difference_indices(beams).map_err(|d| InputError::new(format!("{object}: structure factor F{d:?}"), "not in the model's table"))?;
        let matrix = StructureMatrix::build_indexed(beams, table, &setup, &indices)?;
        let g_lab = beams.iter().map(|&h| g_vector(h, &basis)).collect();
        let rock_axes = std::array::from_fn(|k| [tilt[0][k], tilt[1][k], tilt[2][k]]);
        Ok(TiltGeometry { matrix, g_lab, rock_axes, prefactor: optics.prefactor, indices })
    }
}

fn union_of(sets: &[Vec<Hkl>]) -> Vec<Hkl> {
    let mut union: Vec<Hkl> = sets.iter().flatten().copied().collect();
    union.sort_unstable();
    union.dedup();
    union
}
