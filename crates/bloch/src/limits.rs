//! Size budgets checked before anything input-derived is allocated.
//!
//! A cell length, a radius or a list in the input decides how big the structure matrix (N²
//! complex numbers, and the solvers hold about ten such), the structure-factor grid, the tilt
//! series and the result become. A CIF with `_cell_length_a 1000` asks for ~22k beams (an 8 GB
//! matrix): that must be an error naming the input before the allocation, never an abort. The
//! defaults are generous for real data (N up to a few thousand beams, MicroED-size cells, 10⁴
//! tilts or thicknesses); a caller who legitimately needs more raises them ([`Limits`] fields,
//! `scatterlab bloch simulate --max-beams/--max-grid-points/--max-work`).
//!
//! Time is budgeted the same way: every size may be legal and the product still hours of solver
//! work (sg_max ≥ 100 Å⁻¹ keeps every beam of g_solve, ~2000 beams, at each of many thicknesses or
//! tilts). The solver work of a simulation is estimated from its beam counts before the first
//! matrix is built ([`Limits::check_work`]), so such a case is a named error at once, not an
//! unannounced wait.

use scatterlab_core::InputError;

use crate::beams::Mat3;
use crate::solve::Solver;
use crate::BlochError;

/// Complex multiply-adds of one Hermitian eigendecomposition of an N×N matrix, per N³
/// (tridiagonalisation 4/3, back-transformation 2, divide and conquer's products and the
/// eigenvector projections; rounded up).
const EIGEN_WORK_PER_CUBE: f64 = 10.0;

/// Complex multiply-adds of one Padé-13 scaling-and-squaring exponential, per N³: six products,
/// the LU solve (~1.3) and a typical ~5 squarings.
const EXPM_WORK_PER_CUBE: f64 = 12.0;

/// Bytes the solvers hold per matrix entry: ~10 complex f64 N×N work matrices (expm's Padé
/// powers, the LU, the squarings; the eigensolver's vectors and workspace).
const SOLVER_BYTES_PER_ENTRY: f64 = 10.0 * 16.0;

/// Upper bounds on the sizes a simulation derives from its input.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Most beams in one structure matrix (default 4096: ~2.7 GB of solver memory).
    pub max_beams: usize,
    /// Most points of the hkl box the structure-factor grid is cut from (default 2²⁷: ~3 GB).
    pub max_grid_points: u64,
    /// Most tilts of one rocking curve (default 10⁴).
    pub max_tilts: usize,
    /// Most thicknesses of one simulation (default 10⁴).
    pub max_thicknesses: usize,
    /// Most intensities one simulation reports, thicknesses × beams (default 10⁸: 0.8 GB).
    pub max_intensities: u64,
    /// Most estimated solver work of one simulation, in complex multiply-adds (default 2·10¹³:
    /// about an hour of one core at the ~5·10⁹ per second measured on the expm path; a 4096-beam
    /// case at ten thicknesses is 8·10¹²). See [`solver_work`].
    pub max_work: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Self { max_beams: 4096, max_grid_points: 1 << 27, max_tilts: 10_000, max_thicknesses: 10_000, max_intensities: 100_000_000, max_work: 2e13 }
    }
}

/// What a beam set was selected from, for the error that says why it is so large.
#[derive(Debug, Clone, Copy)]
pub struct BeamSource<'a> {
    /// The simulation (case id), with the tilt when there is one.
    pub object: &'a str,
    /// Direct cell rows a, b, c (Å).
    pub direct: &'a Mat3,
    /// Beam radius g_solve (Å⁻¹).
    pub g_solve_inv_a: f64,
    /// Excitation-error radius sg_max (Å⁻¹).
    pub sg_max_inv_a: f64,
}

fn too_large(object: impl Into<String>, problem: String) -> BlochError {
    InputError::new(object, problem).into()
}

impl Limits {
    /// Checks the size of a beam set before its structure matrix is allocated.
    pub fn check_beams(&self, beams: usize, source: &BeamSource<'_>) -> Result<(), BlochError> {
        if beams <= self.max_beams {
            return Ok(());
        }
        let lengths = source.direct.map(|row| (row[0] * row[0] + row[1] * row[1] + row[2] * row[2]).sqrt());
        let gigabytes = (beams as f64).powi(2) * SOLVER_BYTES_PER_ENTRY / 1e9;
        Err(too_large(
            source.object,
            format!(
                "{beams} beams (cell a, b, c = {:.4}, {:.4}, {:.4} Å with g_solve {} Å⁻¹ and sg_max {} Å⁻¹) exceed the limit of {} \
                 beams (the solvers would need ~{gigabytes:.1} GB); lower g_solve or sg_max, or raise the limit (Limits::max_beams; --max-beams in the CLI)",
                lengths[0], lengths[1], lengths[2], source.g_solve_inv_a, source.sg_max_inv_a, self.max_beams
            ),
        ))
    }

    /// Checks the hkl box of a structure-factor grid before it is allocated.
    pub fn check_grid(&self, sides: [i64; 3], object: &str, g_max_inv_a: f64) -> Result<(), BlochError> {
        let points = sides.iter().try_fold(1u64, |acc, &s| acc.checked_mul(u64::try_from(s).unwrap_or(u64::MAX)));
        match points {
            Some(p) if p <= self.max_grid_points => Ok(()),
            _ => Err(too_large(
                object,
                format!(
                    "g_max {g_max_inv_a} Å⁻¹ needs a {sides:?} hkl box, more than the limit of {} points; lower g_solve (the grid \
                     reaches 2·g_solve + 0.5) or raise the limit (Limits::max_grid_points; --max-grid-points in the CLI)",
                    self.max_grid_points
                ),
            )),
        }
    }

    /// Checks the counts of thicknesses and tilts of a simulation before anything is solved.
    pub fn check_series(&self, object: &str, thicknesses: usize, tilts: usize) -> Result<(), BlochError> {
        if thicknesses > self.max_thicknesses {
            return Err(too_large(format!("{object}: thicknesses"), format!("{thicknesses} exceed the limit of {}", self.max_thicknesses)));
        }
        if tilts > self.max_tilts {
            return Err(too_large(format!("{object}: tilt angles"), format!("{tilts} exceed the limit of {}", self.max_tilts)));
        }
        Ok(())
    }

    /// Checks the size of the result (thicknesses × reported beams) before it is allocated.
    pub fn check_intensities(&self, object: &str, thicknesses: usize, beams: usize) -> Result<(), BlochError> {
        let values = (thicknesses as u64).saturating_mul(beams as u64);
        if values <= self.max_intensities {
            return Ok(());
        }
        Err(too_large(object, format!("{thicknesses} thicknesses × {beams} beams = {values} intensities exceed the limit of {}", self.max_intensities)))
    }
}

/// Estimated solver work (complex multiply-adds) of solving matrices of `beam_counts` beams each at
/// `thicknesses` thicknesses: eigen decomposes each matrix once (the thicknesses then cost N² each),
/// expm takes one exponential per matrix and thickness.
pub fn solver_work(beam_counts: &[usize], thicknesses: usize, solver: Solver) -> f64 {
    let t = thicknesses as f64;
    beam_counts
        .iter()
        .map(|&n| {
            let n = n as f64;
            match solver {
                Solver::Eigen => EIGEN_WORK_PER_CUBE * n.powi(3) + t * n * n,
                Solver::Expm => EXPM_WORK_PER_CUBE * n.powi(3) * t,
            }
        })
        .sum()
}

impl Limits {
    /// Checks the estimated solver work ([`solver_work`]) of `object`'s matrices against
    /// [`Limits::max_work`] before the first one is built; the error names the object, the
    /// matrices, the estimate and the limit, and how to lower or raise it.
    pub fn check_work(&self, object: &str, beam_counts: &[usize], thicknesses: usize, solver: Solver) -> Result<(), BlochError> {
        let work = solver_work(beam_counts, thicknesses, solver);
        if work <= self.max_work {
            return Ok(());
        }
        let largest = beam_counts.iter().copied().max().unwrap_or(0);
        let hint = match solver {
            Solver::Expm => "; the eigen solver decomposes once for all thicknesses (non-absorptive cases)",
            Solver::Eigen => "",
        };
        Err(too_large(
            object,
            format!(
                "~{work:.2e} complex multiply-adds of solver work ({} matri{} of up to {largest} beams, {thicknesses} thickness(es), {solver:?}) \
                 exceed the work budget of {:.2e}{hint}; lower g_solve, sg_max, the tilts or thicknesses, or raise the budget \
                 (Limits::max_work; --max-work in the CLI, in units of 10⁹)",
                beam_counts.len(),
                if beam_counts.len() == 1 { "x" } else { "ces" },
                self.max_work
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_input_the_size_and_the_limit() {
        let limits = Limits::default();
        let direct = [[1000.0, 0.0, 0.0], [0.0, 5.0, 0.0], [0.0, 0.0, 5.0]];
        let source = BeamSource { object: "case \"big\"", direct: &direct, g_solve_inv_a: 2.0, sg_max_inv_a: 0.05 };
        assert!(limits.check_beams(4096, &source).is_ok());
        let message = limits.check_beams(22_000, &source).unwrap_err().to_string();
        for part in ["case \"big\"", "22000 beams", "1000.0000", "g_solve 2", "4096", "GB"] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert!(limits.check_grid([9001, 45, 45], "grid", 4.5).is_ok());
        assert!(limits.check_grid([i64::MAX, 3, 3], "grid", 4.5).unwrap_err().to_string().contains("134217728"));
        assert!(limits.check_series("s", 10_001, 1).unwrap_err().to_string().contains("thicknesses"));
        assert!(limits.check_series("s", 1, 10_001).unwrap_err().to_string().contains("tilt"));
        assert!(limits.check_intensities("s", 100_000, 2000).is_err());
    }

    #[test]
    fn work_is_estimated_per_solver_and_budgeted() {
        // 1000³ = 1e9: eigen 10·N³ once + N² per thickness; expm 12·N³ per thickness.
        assert_eq!(solver_work(&[1000], 3, Solver::Eigen), 1e10 + 3e6);
        assert_eq!(solver_work(&[1000, 1000], 3, Solver::Expm), 7.2e10);
        let limits = Limits::default();
        assert!(limits.check_work("case \"ok\"", &[4096], 10, Solver::Expm).is_ok());
        let message = limits.check_work("case \"heavy\"", &[4096; 3], 10, Solver::Expm).unwrap_err().to_string();
        for part in ["case \"heavy\"", "2.47e13", "3 matrices of up to 4096 beams", "10 thickness(es)", "2.00e13", "eigen", "--max-work"] {
            assert!(message.contains(part), "{part}: {message}");
        }
    }
}
