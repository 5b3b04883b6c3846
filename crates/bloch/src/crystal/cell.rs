//! Cell geometry: direct and reciprocal bases, volume, and the displacement-tensor frames.
//!
//! The formulas are diffBloch's (`core/crystal.py`, `core/adp.py`) so that numbers agree to
//! float64 rounding: a along x, b in the xy plane, reciprocal rows = inverse(direct)ᵀ (no 2π).

use super::{Atom, Cell, Displacement};

/// Smallest V/(abc) of an accepted cell. Real cells have ≥ ~0.3; below 1e-6 the reciprocal
/// vectors are ~1e6 times longer than the cell's, a numerically degenerate cell.
pub const MIN_VOLUME_FRACTION: f64 = 1e-6;

/// A 3×3 matrix stored as rows.
pub type Mat3 = [[f64; 3]; 3];

fn cross(u: [f64; 3], v: [f64; 3]) -> [f64; 3] {
    [u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]]
}

fn dot(u: [f64; 3], v: [f64; 3]) -> f64 {
    u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
}

/// `m · x · nᵀ` for 3×3 matrices (the congruence used for every displacement-frame change).
pub(crate) fn congruence(m: &Mat3, x: &Mat3, n: &Mat3) -> Mat3 {
    let mut mx = [[0.0; 3]; 3];
    for i in 0..3 {
        for k in 0..3 {
            mx[i][k] = (0..3).map(|j| m[i][j] * x[j][k]).sum();
        }
    }
    let mut out = [[0.0; 3]; 3];
    for i in 0..3 {
        for l in 0..3 {
            out[i][l] = (0..3).map(|k| mx[i][k] * n[l][k]).sum();
        }
    }
    out
}

/// The inverse of a 3×3 matrix by cofactors (`None` when singular or not finite).
pub(crate) fn inverse(m: &Mat3) -> Option<Mat3> {
    // Rows of inverse(m)ᵀ are (r1×r2, r2×r0, r0×r1) / det, with rows r0, r1, r2 of m.
    let (r0, r1, r2) = (m[0], m[1], m[2]);
    let det = dot(r0, cross(r1, r2));
    if !det.is_finite() || det == 0.0 {
        return None;
    }
    let rows_t = [cross(r1, r2), cross(r2, r0), cross(r0, r1)];
    let mut inv = [[0.0; 3]; 3];
    for (j, row) in rows_t.iter().enumerate() {
        for i in 0..3 {
            inv[i][j] = row[i] / det;
        }
    }
    Some(inv)
}

impl Cell {
    /// Direct basis as rows a, b, c (Å): a along x, b in the xy plane, c completing a
    /// right-handed set (diffBloch `cell_matrix_from_parameters`).
    pub fn direct_matrix(&self) -> Mat3 {
        let [a, b, c] = self.lengths;
        let [alpha, beta, gamma] = self.angles_deg.map(f64::to_radians);
        let (cos_alpha, cos_beta, cos_gamma) = (alpha.cos(), beta.cos(), gamma.cos());
        let sin_gamma = gamma.sin();
        let volume_factor = (1.0 - cos_alpha * cos_alpha - cos_beta * cos_beta - cos_gamma * cos_gamma + 2.0 * cos_alpha * cos_beta * cos_gamma).sqrt();
        [[a, 0.0, 0.0], [b * cos_gamma, b * sin_gamma, 0.0], [c * cos_beta, c * (cos_alpha - cos_beta * cos_gamma) / sin_gamma, c * volume_factor / sin_gamma]]
    }

    /// Reciprocal basis as rows a*, b*, c* (Å⁻¹, no 2π) = inverse(direct)ᵀ; NaN when the cell
    /// is degenerate (check [`Cell::validate`] first).
    pub fn reciprocal_matrix(&self) -> Mat3 {
        let direct = self.direct_matrix();
        match inverse(&direct) {
            Some(inv) => {
                let mut out = [[0.0; 3]; 3];
                for (i, row) in out.iter_mut().enumerate() {
                    for (j, v) in row.iter_mut().enumerate() {
                        *v = inv[j][i];
                    }
                }
                out
            }
            None => [[f64::NAN; 3]; 3],
        }
    }

    /// Cell volume |det(direct)| in Å³.
    pub fn volume(&self) -> f64 {
        let m = self.direct_matrix();
        dot(m[0], cross(m[1], m[2])).abs()
    }

    /// |a*|, |b*|, |c*| (Å⁻¹): the scaling between CIF U_ij and the fractional frame.
    pub fn reciprocal_lengths(&self) -> [f64; 3] {
        self.reciprocal_matrix().map(|row| dot(row, row).sqrt())
    }

    /// Checks that lengths are positive and finite, angles lie in (0°, 180°) and the three
    /// angles span a non-degenerate cell (V/(abc) ≥ [`MIN_VOLUME_FRACTION`]); the message
    /// names the offending parameter.
    pub fn validate(&self) -> Result<(), String> {
        for (name, v) in ["a", "b", "c"].iter().zip(self.lengths) {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("cell length {name} = {v} (must be positive)"));
            }
        }
        for (name, v) in ["alpha", "beta", "gamma"].iter().zip(self.angles_deg) {
            if !(v.is_finite() && v > 0.0 && v < 180.0) {
                return Err(format!("cell angle {name} = {v} (must lie in (0, 180) degrees)"));
            }
        }
        // V/(abc) is the volume of the unit-edge cell: 1 for right angles, 0 when the three
        // angles are coplanar (120°/120°/120°, where rounding leaves ~1e-8 instead of 0).
        let volume = self.volume();
        let fraction = volume / (self.lengths[0] * self.lengths[1] * self.lengths[2]);
        if !(volume.is_finite() && fraction.is_finite() && fraction >= MIN_VOLUME_FRACTION) {
            return Err(format!("cell angles {:?} give a degenerate cell (volume {volume:.3e} Å³, V/(abc) = {fraction:.3e} < {MIN_VOLUME_FRACTION:e})", self.angles_deg));
        }
        Ok(())
    }
}

impl Displacement {
    /// U* = ⟨Δx Δxᵀ⟩ in fractional coordinates (Å⁰), as used by exp(−2π² hᵀU*h):
    /// U_iso·B·Bᵀ for isotropic, D·U_cif·D (D = diag|a*|,|b*|,|c*|) for CIF U_ij.
    pub fn u_star(&self, cell: &Cell) -> Mat3 {
        match *self {
            Displacement::Iso(u) => {
                let b = cell.reciprocal_matrix();
                let iso = [[u, 0.0, 0.0], [0.0, u, 0.0], [0.0, 0.0, u]];
                congruence(&b, &iso, &b)
            }
            Displacement::Aniso(u) => {
                let d = cell.reciprocal_lengths();
                let m = aniso_matrix(u);
                let mut out = [[0.0; 3]; 3];
                for i in 0..3 {
                    for j in 0..3 {
                        out[i][j] = m[i][j] * (d[i] * d[j]);
                    }
                }
                out
            }
        }
    }
}

impl Atom {
    /// Equivalent isotropic B = 8π²·⟨diag U_cart⟩ (Å²), U_cart = B⁻¹ U* B⁻ᵀ (diffBloch
    /// `equivalent_isotropic_b`, the key of the absorptive form factors).
    pub fn b_iso_equivalent(&self, cell: &Cell) -> f64 {
        cell.b_iso_of_u_star(&self.displacement.u_star(cell))
    }
}

impl Cell {
    /// 8π²·⟨diag U_cart⟩ of a fractional-frame tensor U* (linear in U*, so it also maps a
    /// tensor direction to the derivative of B_iso along it).
    pub(crate) fn b_iso_of_u_star(&self, u_star: &Mat3) -> f64 {
        let Some(b_inv) = inverse(&self.reciprocal_matrix()) else { return f64::NAN };
        let u_cart = congruence(&b_inv, u_star, &b_inv);
        8.0 * std::f64::consts::PI.powi(2) * ((u_cart[0][0] + u_cart[1][1] + u_cart[2][2]) / 3.0)
    }
}

/// Symmetric 3×3 from CIF order U11, U22, U33, U12, U13, U23.
pub(crate) fn aniso_matrix(u: [f64; 6]) -> Mat3 {
    [[u[0], u[3], u[4]], [u[3], u[1], u[5]], [u[4], u[5], u[2]]]
}

/// CIF order U11, U22, U33, U12, U13, U23 from a (symmetrised) 3×3.
pub(crate) fn aniso_components(m: &Mat3) -> [f64; 6] {
    let sym = |i: usize, j: usize| 0.5 * (m[i][j] + m[j][i]);
    [m[0][0], m[1][1], m[2][2], sym(0, 1), sym(0, 2), sym(1, 2)]
}
