//! Propagation of the incident wave through a thickness series: intensities per beam.
//!
//! Two solvers on the same [`StructureMatrix`]: [`Solver::Eigen`] (one Hermitian
//! eigendecomposition, every thickness a phase multiply; non-absorptive only) and
//! [`Solver::Expm`] (a scaling-and-squaring Padé matrix exponential per thickness; any matrix,
//! mandatory with absorption). Both give |ψ|² in the conventions the matrix was built in:
//! diffBloch reads ψ directly, abTEM reads the physical amplitudes M·ψ′ with ψ′(0) = M⁻¹e₀.

pub mod checks;
pub mod divide_conquer;
pub mod eigen;
pub mod expm;
mod hermitian_small;
pub mod secular;
pub mod symmetric;
pub(crate) mod tridiagonal_ql;

use num_complex::Complex64;
use scatterlab_core::InputError;

pub use checks::{check_expm_range, check_propagated, check_thicknesses, EXPM_MAX_NORM, FLUX_TOLERANCE, MAX_THICKNESS_A};
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

/// Intensities `I[thickness][beam]` of `matrix` at `thicknesses` (Å) with `solver`; `object`
/// names the simulation in errors. The eigen solver on an absorptive matrix is an error; so is
/// expm beyond its accurate range ([`check_expm_range`]) and any row that is not finite or, for a
/// Hermitian matrix, carries more flux than the incident wave ([`check_propagated`]).
pub fn intensities(matrix: &StructureMatrix, thicknesses: &[f64], solver: Solver, object: &str) -> Result<Vec<Vec<f64>>, BlochError> {
    check_thicknesses(thicknesses)?;
    let initial = initial_wave(matrix);
    let incident: f64 = initial.iter().map(|z| z.norm_sqr()).sum();
    // Σ|ψ|² in the matrix's basis is conserved exactly when A is Hermitian (both conventions).
    let checked = |t: f64, psi: &[Complex64]| -> Result<Vec<f64>, BlochError> {
        let row = read_out(matrix, psi);
        let flux = matrix.hermitian.then(|| psi.iter().map(|z| z.norm_sqr()).sum::<f64>());
        check_propagated(&row, flux, incident, FLUX_TOLERANCE, object, t)?;
        Ok(row)
    };
    match solver {
        Solver::Eigen => {
            let propagator = EigenPropagator::new(matrix, &initial, object)?;
            thicknesses.iter().map(|&t| checked(t, &propagator.amplitudes(t))).collect()
        }
        Solver::Expm => {
            let norm_a = norm1(&matrix.a);
            let phase_per_a = std::f64::consts::PI / matrix.k;
            // Every thickness is checked before the first exponential is computed.
            for &t in thicknesses {
                check_expm_range(norm_a, phase_per_a, t, object)?;
            }
            thicknesses
                .iter()
                .map(|&t| {
                    let phase = Complex64::new(0.0, std::f64::consts::PI * t / matrix.k);
                    let transfer = expm(&(&matrix.a * faer::Scale(phase)), object)?;
                    let n = matrix.hkl.len();
                    let psi: Vec<Complex64> = (0..n).map(|i| (0..n).map(|j| transfer[(i, j)] * initial[j]).sum()).collect();
                    checked(t, &psi)
                })
                .collect()
        }
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
    fn expm_out_of_range_is_an_error_where_eigen_stays_exact() {
        // A structure matrix 1e4 times stronger than the toy's puts ‖(πt/K)·A‖₁ beyond the bound at
        // 1e5 Å: expm refuses (naming the case and thickness) and the eigen solver stays unitary.
        let mut matrix = toy_matrix(false, Conventions::DiffBloch);
        matrix.a = &matrix.a * faer::Scale(Complex64::new(1e4, 0.0));
        let t = 1e5;
        assert!(norm1(&matrix.a) * std::f64::consts::PI / matrix.k * t > EXPM_MAX_NORM);
        let err = intensities(&matrix, &[100.0, t], Solver::Expm, "case X").unwrap_err();
        assert!(matches!(&err, BlochError::Numerical { object, message } if object == "case X, thickness 100000 Å" && message.contains("eigen")), "{err}");
        let eigen = intensities(&matrix, &[t], Solver::Eigen, "case X").unwrap();
        assert!((eigen[0].iter().sum::<f64>() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn growing_or_non_finite_results_never_leave_unannounced() {
        // A matrix marked Hermitian that is not (a gain on the diagonal): the flux grows, so every
        // thickness past the first is an error naming it rather than Σ I > 1 in the results.
        let mut matrix = toy_matrix(false, Conventions::DiffBloch);
        for i in 0..matrix.hkl.len() {
            matrix.a[(i, i)] -= Complex64::new(0.0, 1e-3);
        }
        let err = intensities(&matrix, &[0.0, 400.0], Solver::Expm, "case G").unwrap_err();
        assert!(err.to_string().contains("case G, thickness 400 Å") && err.to_string().contains("exceeds the incident flux"), "{err}");
        // Non-finite entries never reach the results (the eigen solver reads one triangle: use the diagonal).
        matrix.a[(1, 1)] = Complex64::new(f64::NAN, 0.0);
        for solver in [Solver::Expm, Solver::Eigen] {
            assert!(intensities(&matrix, &[100.0], solver, "case N").is_err(), "{solver:?}");
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
