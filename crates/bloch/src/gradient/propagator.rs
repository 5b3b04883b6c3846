//! One tilt's propagator for the gradients: the Hermitian eigen path (divided differences) or,
//! for absorptive matrices (or on request), the Taylor path (forward duals, discrete adjoint).

use faer::{Mat, MatRef};
use num_complex::Complex64;
use scatterlab_core::InputError;

use super::matrix::MatrixCotangent;
use super::real_eigen::RealEigenPropagator;
use super::taylor::{taylor_jvp, taylor_vjp};
use crate::matrix::StructureMatrix;
use crate::propagate::taylor::{norm1, TaylorPlan};
use crate::solve::EigenPropagator;
use crate::BlochError;

/// Taylor θ and terms: ‖h·A‖₁ ≤ 1 per substep, 18 terms reach f64 rounding (1/19! ≈ 8e-18).
const TAYLOR_THETA: f64 = 1.0;
const TAYLOR_TERMS: u32 = 18;

/// The Taylor path's data: A row-major, the start beam and the plan for the frame's thicknesses.
#[derive(Debug, Clone)]
pub struct TaylorTilt {
    n: usize,
    a: Vec<Complex64>,
    start: usize,
    plan: TaylorPlan,
    /// π/K: ∂ψ/∂t = i·(π/K)·A·ψ.
    scale: f64,
}

/// Eigen (Hermitian A; real symmetric A by the real solver) or Taylor (any A).
#[derive(Debug, Clone)]
pub enum TiltPropagator {
    /// Real symmetric eigendecomposition.
    RealEigen(RealEigenPropagator),
    /// Hermitian eigendecomposition.
    Eigen(EigenPropagator),
    /// Scaled Taylor steps planned for the frame's thicknesses.
    Taylor(TaylorTilt),
}

impl TiltPropagator {
    /// The eigen path for a Hermitian matrix unless `taylor`; the Taylor path otherwise.
    /// `thicknesses` must be those every later call passes (the Taylor plan is built for them).
    pub fn new(matrix: &StructureMatrix, thicknesses: &[f64], taylor: bool, object: &str) -> Result<Self, BlochError> {
        let n = matrix.hkl.len();
        if matrix.hermitian && !taylor {
            if let Some(real) = RealEigenPropagator::new(matrix, object)? {
                return Ok(Self::RealEigen(real));
            }
            let mut initial = vec![Complex64::new(0.0, 0.0); n];
            initial[matrix.index_000] = Complex64::new(1.0, 0.0);
            return Ok(Self::Eigen(EigenPropagator::new(matrix, &initial, object)?));
        }
        let a: Vec<Complex64> = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| matrix.a[(i, j)]).collect();
        let scale = std::f64::consts::PI / matrix.k;
        let plan = TaylorPlan::new(norm1(n, &a), scale, thicknesses, TAYLOR_THETA, TAYLOR_TERMS)?;
        Ok(Self::Taylor(TaylorTilt { n, a, start: matrix.index_000, plan, scale }))
    }

    /// The eigenvalues (eigen path only).
    pub fn eigenvalues(&self) -> Option<&[f64]> {
        match self {
            Self::RealEigen(p) => Some(p.eigenvalues()),
            Self::Eigen(p) => Some(p.eigenvalues()),
            Self::Taylor(_) => None,
        }
    }

    /// `ψ[t][beam]`.
    pub fn amplitudes(&self, thicknesses: &[f64]) -> Result<Vec<Vec<Complex64>>, BlochError> {
        match self {
            Self::RealEigen(p) => Ok(thicknesses.iter().map(|&t| p.amplitudes(t)).collect()),
            Self::Eigen(p) => Ok(thicknesses.iter().map(|&t| p.amplitudes(t)).collect()),
            Self::Taylor(p) => Ok(taylor_jvp(p.n, &p.a, p.start, &p.plan, &[])?.0),
        }
    }

    /// `dψ[direction][t][beam]` along each direction ∂A.
    pub fn jvp(&self, thicknesses: &[f64], directions: &[MatRef<'_, Complex64>]) -> Result<Vec<Vec<Vec<Complex64>>>, BlochError> {
        match self {
            Self::RealEigen(p) => p.jvp(thicknesses, directions),
            Self::Eigen(p) => p.jvp(thicknesses, directions),
            Self::Taylor(p) => {
                if let Some(bad) = directions.iter().find(|e| e.nrows() != p.n || e.ncols() != p.n) {
                    return Err(InputError::new("Taylor jvp direction", format!("{}×{} for {} beams", bad.nrows(), bad.ncols(), p.n)).into());
                }
                let flat: Vec<Vec<Complex64>> = directions.iter().map(|e| (0..p.n).flat_map(|i| (0..p.n).map(move |j| e[(i, j)])).collect()).collect();
                let refs: Vec<&[Complex64]> = flat.iter().map(Vec::as_slice).collect();
                Ok(taylor_jvp(p.n, &p.a, p.start, &p.plan, &refs)?.1)
            }
        }
    }

    /// ∂ψ/`∂t[t][beam]` given `ψ[t]` (= i·(π/K)·A·ψ; the eigen path evaluates it in its eigenbasis).
    pub fn thickness_derivatives(&self, thicknesses: &[f64], psi: &[Vec<Complex64>]) -> Vec<Vec<Complex64>> {
        match self {
            Self::RealEigen(p) => thicknesses.iter().map(|&t| p.thickness_derivative(t)).collect(),
            Self::Eigen(p) => thicknesses.iter().map(|&t| p.thickness_derivative(t)).collect(),
            Self::Taylor(p) => {
                psi.iter().map(|v| p.a.chunks_exact(p.n).map(|row| row.iter().zip(v).map(|(x, y)| x * y).sum::<Complex64>() * Complex64::new(0.0, p.scale)).collect()).collect()
            }
        }
    }

    /// (Ā, ∂L/∂t per thickness) for intensity `cotangents[t][beam]`. `imaginary`: whether Im Ā is
    /// needed where A is real symmetric (see [`RealEigenPropagator::vjp`]); always computed elsewhere.
    pub fn vjp(&self, thicknesses: &[f64], cotangents: &[Vec<f64>], imaginary: bool) -> Result<(MatrixCotangent, Vec<f64>), BlochError> {
        match self {
            Self::RealEigen(p) => p.vjp(thicknesses, cotangents, imaginary),
            Self::Eigen(p) => p.vjp(thicknesses, cotangents),
            Self::Taylor(p) => {
                if cotangents.len() != thicknesses.len() || cotangents.iter().any(|c| c.len() != p.n) {
                    return Err(InputError::new("Taylor vjp cotangents", format!("need {} thicknesses × {} beams", thicknesses.len(), p.n)).into());
                }
                let psi = self.amplitudes(thicknesses)?;
                let lambdas: Vec<Vec<Complex64>> = psi.iter().zip(cotangents).map(|(v, g)| v.iter().zip(g).map(|(x, y)| x * *y).collect()).collect();
                let a_bar = taylor_vjp(p.n, &p.a, p.start, &p.plan, &lambdas)?;
                let dpsi = self.thickness_derivatives(thicknesses, &psi);
                let d_thickness = psi.iter().zip(&dpsi).zip(cotangents).map(|((v, d), g)| v.iter().zip(d).zip(g).map(|((x, y), w)| 2.0 * w * (x.conj() * y).re).sum()).collect();
                Ok((MatrixCotangent::Complex(Mat::from_fn(p.n, p.n, |i, j| a_bar[i * p.n + j])), d_thickness))
            }
        }
    }
}
