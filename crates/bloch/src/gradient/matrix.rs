//! Directions ∂A/∂θ of the structure matrix (diffBloch conventions, plan §3) and the reverse
//! pass from a matrix cotangent Ā back to structure factors and orientation angles.
//!
//! A_ab = p·M_a·M_b·F(h_b − h_a) (a ≠ b), A_aa = 2K·Sg_a·M_a (+ i·p·Im F(000)·M_a absorptive).
//! Orientation: a lab rotation O → R(ω)·O applied before the tilt R_x(θ_i) moves every beam by
//! ∂g_a/∂ω_k = u_k × g_a with u_k = R_x(θ_i)·e_k; |g| is invariant, so ∂Sg_a = (u_k × g_a)_z and
//! ∂M_a = M_a³·∂g_z,a/(2K). K, p and the beam sets are frozen.

use faer::Mat;
use num_complex::Complex64;

use crate::beams::{Hkl, Mat3};
use scatterlab_core::InputError;

use crate::matrix::StructureMatrix;
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
    /// Position of F(h_b − h_a) in the model's table, column-major (entry b·N + a), as
    /// [`crate::matrix::StructureFactorTable::difference_indices`] gives them.
    pub indices: Vec<u32>,
}

/// Ā as a propagator's reverse pass produces it: complex, or real and imaginary parts of a
/// real-symmetric path (the imaginary part only when asked for; absent means 0).
#[derive(Debug, Clone)]
pub enum MatrixCotangent {
    /// Ā.
    Complex(Mat<Complex64>),
    /// Re Ā and, when computed, Im Ā.
    Split {
        /// Re Ā.
        re: Mat<f64>,
        /// Im Ā (`None`: not needed, taken as 0).
        im: Option<Mat<f64>>,
    },
    /// The symmetric part of a real Ā, its lower triangle stored (the upper one is not read):
    /// all that matters when every ∂A is real symmetric.
    SymmetricLower(Mat<f64>),
    /// The Hermitian part of Ā, its lower triangle stored (the upper one is not read): all that
    /// matters when every ∂A is Hermitian (any non-absorptive matrix).
    HermitianLower(Mat<Complex64>),
}

impl MatrixCotangent {
    /// Ā as one complex matrix.
    pub fn to_complex(&self) -> Mat<Complex64> {
        match self {
            Self::Complex(m) => m.clone(),
            Self::Split { re, im } => Mat::from_fn(re.nrows(), re.ncols(), |i, j| Complex64::new(re[(i, j)], im.as_ref().map_or(0.0, |m| m[(i, j)]))),
            Self::SymmetricLower(lower) => Mat::from_fn(lower.nrows(), lower.ncols(), |i, j| Complex64::new(lower[(i.max(j), i.min(j))], 0.0)),
            Self::HermitianLower(lower) => Mat::from_fn(lower.nrows(), lower.ncols(), |i, j| if i >= j { lower[(i, j)] } else { lower[(j, i)].conj() }),
        }
    }
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
/// `f_bar[geom.indices[b·N + a]]` (dL = 2·Re Σ_h conj(F̄_h)·dF_h; `f_bar` is dense over the
/// model table's hkl list) and returns ∂L/∂Im F(000) and, with `orientation`, ∂L/∂ω (else 0).
/// An index outside `f_bar` is an error.
pub fn matrix_vjp(geom: &TiltGeometry, a_bar: &MatrixCotangent, im_f000: f64, f_bar: &mut [Complex64], orientation: bool) -> Result<MatrixVjp, BlochError> {
    let mut out = match a_bar {
        MatrixCotangent::Complex(m) => scatter(geom, |a, b| m[(a, b)], f_bar)?,
        MatrixCotangent::Split { re, im: Some(im) } => scatter(geom, |a, b| Complex64::new(re[(a, b)], im[(a, b)]), f_bar)?,
        MatrixCotangent::Split { re, im: None } => scatter(geom, |a, b| Complex64::new(re[(a, b)], 0.0), f_bar)?,
        MatrixCotangent::SymmetricLower(lower) => scatter_lower(geom, lower, |x| Complex64::new(x, 0.0), f_bar)?,
        MatrixCotangent::HermitianLower(lower) => scatter_lower(geom, lower, |x| x, f_bar)?,
    };
    if orientation {
        let a_bar = a_bar.to_complex();
        let n = geom.matrix.hkl.len();
        for axis in 0..3 {
            let e = orientation_direction(geom, im_f000, axis);
            out.orientation[axis] = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).map(|(a, b)| 2.0 * (a_bar[(a, b)].conj() * e[(a, b)]).re).sum();
        }
    }
    Ok(out)
}

/// The structure-factor part of [`matrix_vjp`] for Ā given entry by entry (monomorphised per
/// storage: the N² loop is the hot one).
fn scatter(geom: &TiltGeometry, a_bar: impl Fn(usize, usize) -> Complex64, f_bar: &mut [Complex64]) -> Result<MatrixVjp, BlochError> {
    let m = &geom.matrix;
    let n = m.hkl.len();
    if geom.indices.len() != n * n {
        return Err(InputError::new("structure-factor indices", format!("{} for {n} beams", geom.indices.len())).into());
    }
    let mut out = MatrixVjp::default();
    for b in 0..n {
        let scale_b = geom.prefactor * m.mii[b];
        for a in 0..n {
            let bar = a_bar(a, b);
            if a != b {
                let index = geom.indices[b * n + a] as usize;
                let slot = f_bar.get_mut(index).ok_or_else(|| InputError::new(format!("structure factor F{:?}", difference(m.hkl[a], m.hkl[b])), "not in the model's table"))?;
                *slot += bar * (scale_b * m.mii[a]);
            } else if !m.hermitian {
                out.im_f000 += 2.0 * geom.prefactor * m.mii[a] * bar.im;
            }
        }
    }
    Ok(out)
}

/// [`scatter`] for Ā given by its lower triangle, the upper one being its conjugate transpose
/// (a real symmetric or a Hermitian Ā: `entry` turns a stored value into a complex one): each
/// pair a > b adds v = p·M_a·M_b·Ā_ab to F̄(h_b − h_a) and conj(v) (the (b, a) entry) to
/// F̄(h_a − h_b). Only non-absorptive matrices yield these forms, so there is no Im F(000) term.
fn scatter_lower<T: Copy>(geom: &TiltGeometry, lower: &Mat<T>, entry: impl Fn(T) -> Complex64, f_bar: &mut [Complex64]) -> Result<MatrixVjp, BlochError> {
    let m = &geom.matrix;
    let n = m.hkl.len();
    if geom.indices.len() != n * n || lower.nrows() != n || lower.ncols() != n {
        return Err(InputError::new("structure-factor indices", format!("{} indices, Ā {}×{} for {n} beams", geom.indices.len(), lower.nrows(), lower.ncols())).into());
    }
    let missing = |a: usize, b: usize| -> BlochError { InputError::new(format!("structure factor F{:?}", difference(m.hkl[a], m.hkl[b])), "not in the model's table").into() };
    for b in 0..n {
        let scale_b = geom.prefactor * m.mii[b];
        let column = lower.col_as_slice(b);
        for a in b + 1..n {
            let value = entry(column[a]) * (scale_b * m.mii[a]);
            *f_bar.get_mut(geom.indices[b * n + a] as usize).ok_or_else(|| missing(a, b))? += value;
            *f_bar.get_mut(geom.indices[a * n + b] as usize).ok_or_else(|| missing(b, a))? += value.conj();
        }
    }
    Ok(MatrixVjp::default())
}
