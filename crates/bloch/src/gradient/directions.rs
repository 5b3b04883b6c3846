//! The matrix directions ∂A/∂θ of a parameter list at one tilt, shared by the CPU forward mode
//! ([`super::GradientModel::intensities_and_jacobian`]) and the GPU's
//! ([`crate::gpu::GradientGpu`]) so that both differentiate the same matrices.

use std::collections::HashMap;

use faer::Mat;
use num_complex::Complex64;

use super::matrix::{orientation_direction, structural_direction, TiltGeometry};
use super::params::Param;
use crate::beams::Hkl;

/// The directions of one tilt of frame `frame`.
#[derive(Debug, Clone)]
pub struct TiltDirections {
    /// ∂A along each parameter that moves A at this tilt (N×N, the tilt's beam order).
    pub directions: Vec<Mat<Complex64>>,
    /// The parameter index (in the caller's list) of each direction.
    pub which: Vec<usize>,
    /// Parameters that are this frame's thickness: ∂ψ/∂t needs ψ only, no direction.
    pub thickness: Vec<usize>,
}

/// ∂A at `geometry` (tilt of frame `frame`) for every parameter of `params`: structural ones
/// from `df` (∂F per hkl difference and parameter index), this frame's orientation angles;
/// another frame's thickness or orientation leaves this tilt alone and is skipped.
pub fn tilt_directions(frame: usize, geometry: &TiltGeometry, params: &[Param], df: &HashMap<Hkl, Vec<Complex64>>, im_f000: f64) -> TiltDirections {
    let zero = Complex64::new(0.0, 0.0);
    let mut out = TiltDirections { directions: Vec::new(), which: Vec::new(), thickness: Vec::new() };
    for (p, param) in params.iter().enumerate() {
        match *param {
            Param::Thickness { frame: f } if f == frame => out.thickness.push(p),
            Param::Thickness { frame: f } | Param::Orientation { frame: f, .. } if f != frame => {}
            Param::Orientation { axis, .. } => {
                out.directions.push(orientation_direction(geometry, im_f000, axis));
                out.which.push(p);
            }
            _ => {
                let lookup = |h: Hkl| df.get(&h).map_or(zero, |row| row[p]);
                let d_im_f000 = df.get(&[0, 0, 0]).map_or(0.0, |row| row[p].im);
                out.directions.push(structural_direction(&geometry.matrix, geometry.prefactor, &lookup, d_im_f000));
                out.which.push(p);
            }
        }
    }
    out
}
