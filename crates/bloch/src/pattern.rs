//! One Bloch-wave simulation, independent of any file format: a crystal's structure factors seen
//! at one orientation (static) or summed over a rocking curve ([`crate::rocking`]), giving
//! intensities per beam and thickness.

use crate::beams::{lab_reciprocal_basis, Cutoff, Hkl, Mat3, Selection};
use crate::geometry::Optics;
use crate::limits::{BeamSource, Limits};
use crate::matrix::{Conventions, MatrixSetup, StructureFactorTable, StructureMatrix};
use crate::rocking::{rocking_pattern, Rocking};
use crate::solve::{check_thicknesses, intensities, Solver};
use crate::BlochError;

/// What to simulate.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// Name used in errors (e.g. the case id).
    pub name: String,
    /// Direct cell matrix, rows a, b, c (Å; a along x, b in the xy plane).
    pub direct: Mat3,
    /// Orientation O: lab vector = O · crystal-Cartesian vector (beam along −z).
    pub orientation: Mat3,
    /// Beam energy (eV).
    pub energy_ev: f64,
    /// Beam radius g_solve (Å⁻¹).
    pub g_solve_inv_a: f64,
    /// Excitation-error radius sg_max (Å⁻¹).
    pub sg_max_inv_a: f64,
    /// Crystal thicknesses (Å).
    pub thicknesses_a: Vec<f64>,
    /// Absorptive model (the structure factors must have been computed with absorption too).
    pub absorption: bool,
    /// `None`: one orientation; `Some`: a rocking curve about lab x.
    pub rocking: Option<Rocking>,
}

/// How to solve it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Method {
    /// Eigen or expm (expm, the default, is required with absorption).
    pub solver: Solver,
    /// diffBloch's or abTEM's conventions for the matrix and the amplitudes.
    pub conventions: Conventions,
}

/// The result: intensities per thickness and beam.
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    /// Beams, sorted by (h, k, l); for rocking curves the union over tilts.
    pub hkl: Vec<Hkl>,
    /// `I[thickness][beam]`, fractions of the incident beam (rocking: summed over tilts).
    pub intensities: Vec<Vec<f64>>,
}

impl Simulation {
    /// The optics (λ, σ, prefactor, U0 from F(000), K_n) of this simulation.
    pub fn optics(&self, table: &dyn StructureFactorTable) -> Result<Optics, BlochError> {
        Optics::new(self.energy_ev, table.f000())
    }

    /// The beams at orientation `orientation` with cut-off kind `cutoff`. Selection always uses
    /// diffBloch's K_n (with U0), also under abTEM conventions, so both see the same beam set.
    pub fn select_beams(&self, table: &dyn StructureFactorTable, optics: &Optics, orientation: &Mat3, cutoff: Cutoff) -> Result<Vec<Hkl>, BlochError> {
        let basis = lab_reciprocal_basis(&self.direct, orientation)?;
        let selection = Selection { g_solve_inv_a: self.g_solve_inv_a, sg_max_inv_a: self.sg_max_inv_a, cutoff };
        selection.select(table.hkl_list(), &basis, optics.k_n_inv_a)
    }

    /// The structure matrix of `beams` at `orientation`.
    pub fn matrix(&self, table: &dyn StructureFactorTable, optics: &Optics, orientation: &Mat3, beams: &[Hkl], conventions: Conventions) -> Result<StructureMatrix, BlochError> {
        let basis = lab_reciprocal_basis(&self.direct, orientation)?;
        let setup = MatrixSetup { basis: &basis, optics, absorption: self.absorption, conventions };
        StructureMatrix::build(beams, table, &setup)
    }

    /// Runs the simulation on structure factors `table` (tabulated out to at least 2·g_solve),
    /// within the default [`Limits`].
    pub fn run(&self, table: &dyn StructureFactorTable, method: Method) -> Result<Pattern, BlochError> {
        self.run_within(table, method, &Limits::default())
    }

    /// [`Simulation::run`] with every input-derived size (beams per matrix, tilts, thicknesses,
    /// reported intensities) checked against `limits` before it is allocated.
    pub fn run_within(&self, table: &dyn StructureFactorTable, method: Method, limits: &Limits) -> Result<Pattern, BlochError> {
        check_thicknesses(&self.thicknesses_a)?;
        let object = format!("simulation {:?}", self.name);
        limits.check_series(&object, self.thicknesses_a.len(), self.rocking.as_ref().map_or(1, |r| r.tilt_angles_deg.len()))?;
        if self.absorption && method.solver == Solver::Eigen {
            return Err(BlochError::Numerical { object, message: "absorptive structure matrices are not Hermitian: use the expm solver".to_owned() });
        }
        let optics = self.optics(table)?;
        if let Some(rocking) = &self.rocking {
            return rocking_pattern(self, rocking, table, &optics, method, limits);
        }
        let hkl = self.select_beams(table, &optics, &self.orientation, Cutoff::Inclusive)?;
        limits.check_beams(hkl.len(), &self.beam_source(&object))?;
        limits.check_intensities(&object, self.thicknesses_a.len(), hkl.len())?;
        limits.check_work(&object, &[hkl.len()], self.thicknesses_a.len(), method.solver)?;
        let matrix = self.matrix(table, &optics, &self.orientation, &hkl, method.conventions)?;
        let intensities = intensities(&matrix, &self.thicknesses_a, method.solver, &object)?;
        Ok(Pattern { hkl, intensities })
    }

    /// What this simulation's beam sets are selected from, for size errors naming `object`.
    pub fn beam_source<'a>(&'a self, object: &'a str) -> BeamSource<'a> {
        BeamSource { object, direct: &self.direct, g_solve_inv_a: self.g_solve_inv_a, sg_max_inv_a: self.sg_max_inv_a }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::tests::toy_table;

    fn toy(absorption: bool, rocking: Option<Rocking>) -> Simulation {
        let tilt = crate::beams::rotation_x(0.02);
        Simulation {
            name: "toy".to_owned(),
            direct: [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]],
            orientation: tilt,
            energy_ev: 200e3,
            g_solve_inv_a: 0.8,
            sg_max_inv_a: 0.05,
            thicknesses_a: vec![100.0, 300.0],
            absorption,
            rocking,
        }
    }

    #[test]
    fn static_run_selects_sorted_beams_and_conserves_flux() {
        let table = toy_table(7, false);
        let pattern = toy(false, None).run(&table, Method { solver: Solver::Eigen, ..Method::default() }).unwrap();
        assert!(pattern.hkl.windows(2).all(|w| w[0] < w[1]) && pattern.hkl.contains(&[0, 0, 0]));
        assert!(pattern.hkl.len() > 5);
        for row in &pattern.intensities {
            assert_eq!(row.len(), pattern.hkl.len());
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        let expm = toy(false, None).run(&table, Method { solver: Solver::Expm, ..Method::default() }).unwrap();
        assert_eq!(expm.hkl, pattern.hkl);
    }

    #[test]
    fn absorption_with_eigen_is_a_typed_error() {
        let table = toy_table(7, true);
        let err = toy(true, None).run(&table, Method { solver: Solver::Eigen, ..Method::default() }).unwrap_err();
        assert!(matches!(err, BlochError::Numerical { .. }), "{err}");
        assert!(toy(true, None).run(&table, Method { solver: Solver::Expm, ..Method::default() }).is_ok());
    }

    #[test]
    fn a_too_small_grid_is_reported() {
        let table = toy_table(3, false);
        let err = toy(false, None).run(&table, Method::default()).unwrap_err();
        assert!(err.to_string().contains("outside the structure-factor grid"), "{err}");
    }
}
