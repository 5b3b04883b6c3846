//! Lab-frame reciprocal vectors, excitation errors and beam selection.
//!
//! Frame (diffBloch's): lab vector = O · crystal-Cartesian vector; the beam travels along −z;
//! reciprocal vectors carry no 2π. The lab reciprocal basis is reciprocal(cell · Oᵀ) =
//! ((cell · Oᵀ)⁻¹)ᵀ with rows a*, b*, c*, and g = hkl · basis. It is not reciprocal(cell) · Oᵀ:
//! O need not be exactly orthonormal (diffBloch keeps PETS's fit residual in it).

use scatterlab_core::InputError;

use crate::BlochError;

/// Miller indices h, k, l.
pub type Hkl = [i32; 3];

/// A 3×3 matrix stored by rows.
pub type Mat3 = [[f64; 3]; 3];

/// a · b for 3×3 matrices.
pub fn mat3_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, value) in row.iter_mut().enumerate() {
            *value = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    out
}

/// aᵀ.
pub fn mat3_transpose(a: &Mat3) -> Mat3 {
    [[a[0][0], a[1][0], a[2][0]], [a[0][1], a[1][1], a[2][1]], [a[0][2], a[1][2], a[2][2]]]
}

/// (a⁻¹)ᵀ by cofactors, or an error naming `object` when a is singular or not finite.
fn inverse_transpose(a: &Mat3, object: &str) -> Result<Mat3, BlochError> {
    let cofactor = |i: usize, j: usize| {
        let (r0, r1) = ((i + 1) % 3, (i + 2) % 3);
        let (c0, c1) = ((j + 1) % 3, (j + 2) % 3);
        a[r0][c0] * a[r1][c1] - a[r0][c1] * a[r1][c0]
    };
    let det = a[0][0] * cofactor(0, 0) + a[0][1] * cofactor(0, 1) + a[0][2] * cofactor(0, 2);
    let scale = a.iter().flatten().fold(0.0_f64, |m, v| m.max(v.abs()));
    if !(det.is_finite() && scale.is_finite()) || det.abs() <= 1e-12 * scale * scale * scale {
        return Err(InputError::new(object, format!("singular or not finite (determinant {det})")).into());
    }
    // The inverse is cofactorᵀ / det, so its transpose is cofactor / det.
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, value) in row.iter_mut().enumerate() {
            *value = cofactor(i, j) / det;
        }
    }
    Ok(out)
}

/// Lab-frame reciprocal basis (rows a*, b*, c*, Å⁻¹, no 2π) of a cell with direct rows `direct`
/// (Å) seen in orientation `orientation`: reciprocal(direct · Oᵀ).
pub fn lab_reciprocal_basis(direct: &Mat3, orientation: &Mat3) -> Result<Mat3, BlochError> {
    if orientation.iter().flatten().any(|v| !v.is_finite()) {
        return Err(InputError::new("orientation matrix", "has a non-finite entry").into());
    }
    inverse_transpose(&mat3_mul(direct, &mat3_transpose(orientation)), "cell · orientationᵀ")
}

/// g = hkl · basis (Å⁻¹).
pub fn g_vector(hkl: Hkl, basis: &Mat3) -> [f64; 3] {
    let h = [f64::from(hkl[0]), f64::from(hkl[1]), f64::from(hkl[2])];
    [0, 1, 2].map(|j| h[0] * basis[0][j] + h[1] * basis[1][j] + h[2] * basis[2][j])
}

/// |g|.
pub fn norm(g: [f64; 3]) -> f64 {
    (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]).sqrt()
}

/// Excitation error Sg = (K² − |K + g|²) / (2K) with K = (0, 0, −k): = g_z − |g|²/(2k).
/// Evaluated in diffBloch's form (through |K + g|) so selection cut-offs fall on the same side.
pub fn excitation_error(g: [f64; 3], k: f64) -> f64 {
    let k_plus_g = norm([g[0], g[1], g[2] - k]);
    (k * k - k_plus_g * k_plus_g) / (2.0 * k)
}

/// Symmetrisation factor Mii = 1 / sqrt(1 − g_z / k); an error when g_z ≥ k.
pub fn mii(g: [f64; 3], k: f64) -> Result<f64, BlochError> {
    let radicand = 1.0 - g[2] / k;
    if radicand > 0.0 && radicand.is_finite() {
        Ok(1.0 / radicand.sqrt())
    } else {
        Err(InputError::new(format!("beam with g_z = {} Å⁻¹", g[2]), format!("needs g_z < K = {k} Å⁻¹ (1 − g_z/K > 0)")).into())
    }
}

/// Whether the selection radii are inclusive (static beam sets, `≤`) or strict (the per-tilt sets
/// of rocking curves, `<`), as diffBloch does in each case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cutoff {
    /// |g| ≤ g_solve and |Sg| ≤ sg_max.
    Inclusive,
    /// |g| < g_solve and |Sg| < sg_max.
    Strict,
}

/// Beam-selection radii (Å⁻¹).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Selection {
    /// Largest |g| of a beam.
    pub g_solve_inv_a: f64,
    /// Largest |Sg| of a beam.
    pub sg_max_inv_a: f64,
    /// Inclusive or strict comparisons.
    pub cutoff: Cutoff,
}

impl Selection {
    /// Checks that both radii are finite and positive, naming the offending one.
    pub fn validate(&self) -> Result<(), BlochError> {
        for (name, v) in [("g_solve (Å⁻¹)", self.g_solve_inv_a), ("sg_max (Å⁻¹)", self.sg_max_inv_a)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(InputError::new(name, format!("must be a finite positive number (got {v})")).into());
            }
        }
        Ok(())
    }

    /// The beams among `candidates` that pass the radii in lab basis `basis` with wavevector `k`,
    /// plus 000 (always), sorted lexicographically by (h, k, l) and without duplicates.
    pub fn select(&self, candidates: &[Hkl], basis: &Mat3, k: f64) -> Result<Vec<Hkl>, BlochError> {
        self.validate()?;
        let passes = |limit: f64, value: f64| match self.cutoff {
            Cutoff::Inclusive => value <= limit,
            Cutoff::Strict => value < limit,
        };
        let mut beams: Vec<Hkl> = candidates
            .iter()
            .copied()
            .filter(|&hkl| {
                let g = g_vector(hkl, basis);
                hkl == [0, 0, 0] || (passes(self.g_solve_inv_a, norm(g)) && passes(self.sg_max_inv_a, excitation_error(g, k).abs()))
            })
            .collect();
        beams.push([0, 0, 0]);
        beams.sort_unstable();
        beams.dedup();
        Ok(beams)
    }
}

/// Rotation by `theta` (radians) about lab x: the rocking-curve tilt axis.
pub fn rotation_x(theta: f64) -> Mat3 {
    let (sin, cos) = theta.sin_cos();
    [[1.0, 0.0, 0.0], [0.0, cos, -sin], [0.0, sin, cos]]
}

/// numpy's `linspace(-semi, +semi, n)` (degrees), bit for bit: start + i·step with the last point
/// set to the end; one point is the nominal orientation (0).
pub fn tilt_angles_deg(semi_angle_deg: f64, n: usize) -> Vec<f64> {
    if n <= 1 {
        return vec![0.0; n];
    }
    let (start, stop) = (-semi_angle_deg, semi_angle_deg);
    let step = (stop - start) / (n - 1) as f64;
    let mut angles: Vec<f64> = (0..n).map(|i| i as f64 * step + start).collect();
    angles[n - 1] = stop;
    angles
}

/// Tilted orientations O_i = R_x(θ_i) · O for tilt angles in degrees.
pub fn tilted_orientations(orientation: &Mat3, angles_deg: &[f64]) -> Vec<Mat3> {
    angles_deg.iter().map(|a| mat3_mul(&rotation_x(a.to_radians()), orientation)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CUBIC: Mat3 = [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]];
    const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

    #[test]
    fn reciprocal_basis_is_inverse_transpose() {
        let direct = [[3.0, 0.0, 0.0], [1.0, 4.0, 0.0], [0.5, 0.7, 5.0]];
        let rot = rotation_x(0.3);
        let basis = lab_reciprocal_basis(&direct, &rot).unwrap();
        let lab = mat3_mul(&direct, &mat3_transpose(&rot));
        // a_i · b*_j = δ_ij
        for (i, a) in lab.iter().enumerate() {
            for (j, b_star) in basis.iter().enumerate() {
                let dot: f64 = (0..3).map(|k| a[k] * b_star[k]).sum();
                assert!((dot - f64::from(u8::from(i == j))).abs() < 1e-14);
            }
        }
        assert!(lab_reciprocal_basis(&[[1.0, 0.0, 0.0], [2.0, 0.0, 0.0], [0.0, 0.0, 1.0]], &IDENTITY).is_err());
    }

    #[test]
    fn excitation_error_matches_the_closed_form() {
        let k = 39.875;
        for g in [[0.3, -0.2, 0.01], [1.2, 0.4, -0.03], [0.0, 0.0, 0.0]] {
            let closed = g[2] - (g[0] * g[0] + g[1] * g[1] + g[2] * g[2]) / (2.0 * k);
            assert!((excitation_error(g, k) - closed).abs() < 1e-13);
        }
        assert!((mii([0.0, 0.0, 0.4], 40.0).unwrap() - 1.0 / 0.99_f64.sqrt()).abs() < 1e-15);
        assert!(mii([0.0, 0.0, 40.0], 40.0).is_err());
    }

    #[test]
    fn selection_keeps_000_sorts_and_respects_the_cutoff_kind() {
        let basis = lab_reciprocal_basis(&CUBIC, &IDENTITY).unwrap();
        let candidates: Vec<Hkl> = vec![[1, 0, 0], [0, 0, 0], [-1, 0, 0], [2, 0, 0], [0, 0, 1]];
        let k = 40.0;
        // |g(100)| = 0.25 exactly; Sg(100) = −0.25²/80.
        let sg = (0.25_f64 * 0.25 / 80.0).abs();
        let inclusive = Selection { g_solve_inv_a: 0.25, sg_max_inv_a: 0.01, cutoff: Cutoff::Inclusive };
        assert_eq!(inclusive.select(&candidates, &basis, k).unwrap(), vec![[-1, 0, 0], [0, 0, 0], [1, 0, 0]]);
        let strict = Selection { cutoff: Cutoff::Strict, ..inclusive };
        assert_eq!(strict.select(&candidates, &basis, k).unwrap(), vec![[0, 0, 0]]);
        let tight = Selection { g_solve_inv_a: 1.0, sg_max_inv_a: sg * 0.999, cutoff: Cutoff::Inclusive };
        assert_eq!(tight.select(&candidates, &basis, k).unwrap(), vec![[0, 0, 0]]);
        let bad = Selection { g_solve_inv_a: f64::NAN, ..inclusive };
        assert!(bad.select(&candidates, &basis, k).is_err());
    }

    #[test]
    fn tilts_follow_numpy_linspace() {
        assert_eq!(tilt_angles_deg(0.5, 11)[5], 0.0);
        assert_eq!(tilt_angles_deg(0.5, 11)[10], 0.5);
        assert_eq!(tilt_angles_deg(0.5, 11)[0], -0.5);
        assert_eq!(tilt_angles_deg(1.0, 1), vec![0.0]);
        let o = tilted_orientations(&IDENTITY, &[90.0]);
        assert!((o[0][2][1] - 1.0).abs() < 1e-15 && (o[0][1][2] + 1.0).abs() < 1e-15);
    }
}
