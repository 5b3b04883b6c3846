//! Directions ∂A/∂θ of the structure matrix (diffBloch conventions, plan §3) and the reverse
//! pass from a matrix cotangent Ā back to structure factors and orientation angles.
//!
//! A_ab = p·M_a·M_b·F(h_b − h_a) (a ≠ b), A_aa = 2K·Sg_a·M_a (+ i·p·Im F(000)·M_a absorptive).
//! Orientation: a lab rotation O → R(ω)·O applied before the tilt R_x(θ_i) moves every beam by
//! ∂g_a/∂ω_k = u_k × g_a with u_k = R_x(θ_i)·e_k; |g| is invariant, so ∂Sg_a = (u_k × g_a)_z and
//! ∂M_a = M_a³·∂g_z,a/(2K). K, p and the beam sets are frozen.

use faer::{Mat, MatRef};
use num_complex::Complex64;

use crate::beams::{Hkl, Mat3};
use scatterlab_core::InputError;

use crate::matrix::{StructureFactorTable, StructureMatrix};
use crate::BlochError;

/// One tilt's structure matrix with the lab geometry the orientation derivatives need.
#[derive(Debug, Clone)]
pub struct TiltGeometry {
    /// The structure matrix (diffBloch conventions).
    pub matrix: StructureMatrix,
    /// Lab g of each beam (Å⁻¹), same order as the matrix.
    pub g_lab: Vec<[f64; 3]>,
    /// u_k = R_x(θ_i)·e_k: the lab axes of the frame's rotations ω_x, ω_y, ω_z seen at this tilt.
    pub rock_axes: Mat3,
    /// The structure-matrix prefactor p = σ/(κλπ).
    pub prefactor: f64,
}

/// What [`matrix_vjp`] returns besides the structure-factor cotangents.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MatrixVjp {
    /// ∂L/∂Im F(000) (through the absorptive diagonal only).
    pub im_f000: f64,
    /// ∂L/∂ω_k, k = x, y, z.
    pub orientation: [f64; 3],
}

fn difference(a: Hkl, b: Hkl) -> Hkl {
    [b[0] - a[0], b[1] - a[1], b[2] - a[2]]
}

/// ∂A along a structural parameter: E_ab = p·M_a·M_b·∂F(h_b − h_a) (a ≠ b) and, for an
/// absorptive matrix, E_aa = i·p·M_a·∂Im F(000). `df` gives ∂F(h) for every difference.
pub fn structural_direction(m: &StructureMatrix, prefactor: f64, df: &dyn Fn(Hkl) -> Complex64, d_im_f000: f64) -> Mat<Complex64> {
    let n = m.hkl.len();
    Mat::from_fn(n, n, |a, b| {
        if a == b {
            if m.hermitian {
                Complex64::new(0.0, 0.0)
            } else {
                Complex64::new(0.0, prefactor * m.mii[a] * d_im_f000)
            }
        } else {
            df(difference(m.hkl[a], m.hkl[b])) * (prefactor * m.mii[a] * m.mii[b])
        }
    })
}

/// (∂g_z,a, ∂M_a) per beam for rotation axis `axis`.
fn beam_motion(geom: &TiltGeometry, axis: usize) -> (Vec<f64>, Vec<f64>) {
    let u = geom.rock_axes[axis];
    let k = geom.matrix.k;
    let dgz: Vec<f64> = geom.g_lab.iter().map(|g| u[0] * g[1] - u[1] * g[0]).collect();
    let dm = geom.matrix.mii.iter().zip(&dgz).map(|(m, d)| m * m * m * d / (2.0 * k)).collect();
    (dgz, dm)
}

/// ∂A/∂ω_axis at this tilt; `im_f000` is Im F(000) (used only for an absorptive matrix).
pub fn orientation_direction(geom: &TiltGeometry, im_f000: f64, axis: usize) -> Mat<Complex64> {
    let m = &geom.matrix;
    let (dgz, dm) = beam_motion(geom, axis);
    let n = m.hkl.len();
    Mat::from_fn(n, n, |a, b| {
        if a == b {
            let real = 2.0 * m.k * (dgz[a] * m.mii[a] + m.sg[a] * dm[a]);
            let imaginary = if m.hermitian { 0.0 } else { geom.prefactor * im_f000 * dm[a] };
            Complex64::new(real, imaginary)
        } else {
            m.a[(a, b)] * (dm[a] / m.mii[a] + dm[b] / m.mii[b])
        }
    })
}

/// Reverse pass of one tilt: given Ā (dL = 2·Re Σ conj(Ā_ab)·dA_ab), adds p·M_a·M_b·Ā_ab to
/// `f_bar[table.index_of(h_b − h_a)]` (dL = 2·Re Σ_h conj(F̄_h)·dF_h; `f_bar` is dense over
/// the table's hkl list) and returns ∂L/∂Im F(000) and, with `orientation`, ∂L/∂ω (else 0).
/// A difference the table lacks is an error naming it.
pub fn matrix_vjp(
    geom: &TiltGeometry,
    a_bar: MatRef<'_, Complex64>,
    im_f000: f64,
    table: &dyn StructureFactorTable,
    f_bar: &mut [Complex64],
    orientation: bool,
) -> Result<MatrixVjp, BlochError> {
    let m = &geom.matrix;
    let n = m.hkl.len();
    let mut out = MatrixVjp::default();
    let missing = |h: Hkl| -> BlochError { InputError::new(format!("structure factor F{h:?}"), "not in the model's table").into() };
    let indices = table.difference_indices(&m.hkl).map_err(missing)?;
    for b in 0..n {
        let column = a_bar.col(b);
        for (a, bar) in column.iter().enumerate() {
            if a != b {
                let slot = f_bar.get_mut(indices[b * n + a] as usize).ok_or_else(|| missing(difference(m.hkl[a], m.hkl[b])))?;
                *slot += bar * (geom.prefactor * m.mii[a] * m.mii[b]);
            } else if !m.hermitian {
                out.im_f000 += 2.0 * geom.prefactor * m.mii[a] * bar.im;
            }
        }
    }
    if orientation {
        for axis in 0..3 {
            let e = orientation_direction(geom, im_f000, axis);
            out.orientation[axis] = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).map(|(a, b)| 2.0 * (a_bar[(a, b)].conj() * e[(a, b)]).re).sum();
        }
    }
    Ok(out)
}
