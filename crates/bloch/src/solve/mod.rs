//! Propagation of the incident wave through a thickness series: intensities per beam.
//!
//! Two solvers on the same [`StructureMatrix`]: [`Solver::Eigen`] (one Hermitian
//! eigendecomposition, every thickness a phase multiply; non-absorptive only) and
//! [`Solver::Expm`] (a scaling-and-squaring Padé matrix exponential per thickness; any matrix,
//! mandatory with absorption). Both give |ψ|² in the conventions the matrix was built in:
//! diffBloch reads ψ directly, abTEM reads the physical amplitudes M·ψ′ with ψ′(0) = M⁻¹e₀.

pub mod divide_conquer;
pub mod eigen;
pub mod expm;
mod hermitian_small;
pub mod secular;
pub mod symmetric;
pub(crate) mod tridiagonal_ql;

use num_complex::Complex64;
use scatterlab_core::InputError;

pub use eigen::EigenPropagator;
pub use expm::{expm, norm1};

use crate::matrix::{Conventions, StructureMatrix};
use crate::BlochError;

/// Which propagator to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Solver {
    /// Hermitian eigendecomposition (non-absorptive only).
    Eigen,
    /// Padé-13 scaling-and-squaring matrix exponential (any matrix): the default, as in
    /// diffBloch, because it also handles absorption.
    #[default]
    Expm,
}

impl std::str::FromStr for Solver {
    type Err = BlochError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "eigen" => Ok(Solver::Eigen),
            "expm" => Ok(Solver::Expm),
            other => Err(InputError::new("solver", format!("must be eigen or expm (got {other:?})")).into()),
        }
    }
}

/// Checks a thickness list: finite and ≥ 0 each, naming the offending entry.
pub fn check_thicknesses(thicknesses: &[f64]) -> Result<(), BlochError> {
    for (i, &t) in thicknesses.iter().enumerate() {
        if !(t.is_finite() && t >= 0.0) {
            return Err(InputError::new(format!("thickness[{i}]"), format!("must be a finite non-negative number of Å (got {t})")).into());
        }
    }
    Ok(())
}

/// ψ(0) in the matrix's basis: e₀, or M⁻¹e₀ for abTEM's symmetrised amplitudes.
fn initial_wave(matrix: &StructureMatrix) -> Vec<Complex64> {
    let mut initial = vec![Complex64::new(0.0, 0.0); matrix.hkl.len()];
    initial[matrix.index_000] = Complex64::new(
        match matrix.conventions {
            Conventions::DiffBloch => 1.0,
            Conventions::Abtem => 1.0 / matrix.mii[matrix.index_000],
        },
        0.0,
    );
    initial
}

/// |amplitude|² per beam, read out in the matrix's conventions.
fn read_out(matrix: &StructureMatrix, amplitudes: &[Complex64]) -> Vec<f64> {
    match matrix.conventions {
        Conventions::DiffBloch => amplitudes.iter().map(|z| z.norm_sqr()).collect(),
        Conventions::Abtem => amplitudes.iter().zip(&matrix.mii).map(|(z, m)| (z * m).norm_sqr()).collect(),
    }
}

/// Intensities I[thickness][beam] of `matrix` at `thicknesses` (Å) with `solver`; `object`
/// names the simulation in errors. The eigen solver on an absorptive matrix is an error.
pub fn intensities(matrix: &StructureMatrix, thicknesses: &[f64], solver: Solver, object: &str) -> Result<Vec<Vec<f64>>, BlochError> {
    check_thicknesses(thicknesses)?;
    let initial = initial_wave(matrix);
    match solver {
        Solver::Eigen => {
            let propagator = EigenPropagator::new(matrix, &initial, object)?;
            Ok(thicknesses.iter().map(|&t| read_out(matrix, &propagator.amplitudes(t))).collect())
        }
        Solver::Expm => thicknesses
            .iter()
            .map(|&t| {
                let phase = Complex64::new(0.0, std::f64::consts::PI * t / matrix.k);
                let transfer = expm(&(&matrix.a * faer::Scale(phase)), object)?;
                let n = matrix.hkl.len();
                let psi: Vec<Complex64> = (0..n).map(|i| (0..n).map(|j| transfer[(i, j)] * initial[j]).sum()).collect();
                Ok(read_out(matrix, &psi))
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::beams::Hkl;
    use crate::geometry::Optics;
    use crate::matrix::tests::{toy_table, BASIS};
    use crate::matrix::{MatrixSetup, StructureFactorTable};

    fn toy_matrix(absorption: bool, conventions: Conventions) -> StructureMatrix {
        let table = toy_table(6, absorption);
        let optics = Optics::new(200e3, table.f000()).unwrap();
        // A zone-axis-like set: every hkl with |h|,|k| ≤ 3 and l ∈ {0, 1} (HOLZ beams have M ≠ 1).
        let beams: Vec<Hkl> = (-3..=3).flat_map(|h| (-3..=3).flat_map(move |k| (0..=1).map(move |l| [h, k, l]))).collect();
        let setup = MatrixSetup { basis: &BASIS, optics: &optics, absorption, conventions };
        StructureMatrix::build(&beams, &table, &setup).unwrap()
    }

    #[test]
    fn eigen_and_expm_agree_and_conserve_flux() {
        let thicknesses = [0.0, 50.0, 400.0, 1600.0];
        for conventions in [Conventions::DiffBloch, Conventions::Abtem] {
            let matrix = toy_matrix(false, conventions);
            let eigen = intensities(&matrix, &thicknesses, Solver::Eigen, "toy").unwrap();
            let expm = intensities(&matrix, &thicknesses, Solver::Expm, "toy").unwrap();
            assert!((eigen[0][matrix.index_000] - 1.0).abs() < 1e-13);
            for (row_e, row_x) in eigen.iter().zip(&expm) {
                let worst = row_e.iter().zip(row_x).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                assert!(worst < 1e-11, "{conventions:?}: eigen vs expm {worst}");
                if conventions == Conventions::DiffBloch {
                    // exp(iπt/K·A) is unitary for Hermitian A.
                    assert!((row_e.iter().sum::<f64>() - 1.0).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn absorption_needs_expm_and_loses_flux() {
        let matrix = toy_matrix(true, Conventions::DiffBloch);
        let err = intensities(&matrix, &[100.0], Solver::Eigen, "case X").unwrap_err();
        assert!(matches!(&err, BlochError::Numerical { object, .. } if object == "case X"), "{err}");
        let expm = intensities(&matrix, &[100.0, 800.0], Solver::Expm, "case X").unwrap();
        let flux: Vec<f64> = expm.iter().map(|row| row.iter().sum()).collect();
        assert!(flux[0] < 1.0 && flux[1] < flux[0], "{flux:?}");
        assert!(intensities(&matrix, &[-1.0], Solver::Expm, "case X").is_err());
        assert_eq!("expm".parse::<Solver>().unwrap(), Solver::Expm);
        assert!("lu".parse::<Solver>().is_err());
    }
}
