//! Physical validation of a crystal: the rules the CIF reader applies value by value (with the
//! tag and line) and [`Crystal::validate`] applies to crystals built in code.
//!
//! Why: a negative U_iso makes the Debye–Waller factor grow with |g| (flux 1.00008 was
//! reported for U_iso = −0.1), an occupancy outside [0, 1] is not an atom, and a cell of zero
//! volume leaves only the direct beam — each a wrong answer, never an error, before these checks.

use scatterlab_core::InputError;

use super::cell::{congruence, inverse, Mat3};
use super::{Atom, Cell, Crystal, Displacement};
use crate::BlochError;

/// Most negative eigenvalue (Å²) of a Cartesian U tensor still taken as positive semi-definite:
/// CIF U_ij are rounded to ~5 decimals, which can push a flat ellipsoid's smallest eigenvalue
/// just below 0; such a tensor changes exp(−2π²gᵀUg) by < 1e-3 at |g| = 2 Å⁻¹.
pub const ADP_EIGENVALUE_TOLERANCE: f64 = 1e-5;

/// 0 ≤ occupancy ≤ 1.
pub(crate) fn check_occupancy(occupancy: f64) -> Result<(), String> {
    if occupancy.is_finite() && (0.0..=1.0).contains(&occupancy) {
        Ok(())
    } else {
        Err(format!("occupancy {occupancy} outside [0, 1]"))
    }
}

/// U_iso finite and ≥ 0 (Å²).
pub(crate) fn check_u_iso(u: f64) -> Result<(), String> {
    if u.is_finite() && u >= 0.0 {
        Ok(())
    } else {
        Err(format!("U_iso = {u} Å² (must be finite and ≥ 0)"))
    }
}

/// Eigenvalues of a symmetric 3×3 matrix, ascending (the trigonometric closed form).
fn symmetric_eigenvalues(m: &Mat3) -> [f64; 3] {
    let off = m[0][1] * m[0][1] + m[0][2] * m[0][2] + m[1][2] * m[1][2];
    if off == 0.0 {
        let mut d = [m[0][0], m[1][1], m[2][2]];
        d.sort_by(f64::total_cmp);
        return d;
    }
    let q = (m[0][0] + m[1][1] + m[2][2]) / 3.0;
    let p2 = (m[0][0] - q).powi(2) + (m[1][1] - q).powi(2) + (m[2][2] - q).powi(2) + 2.0 * off;
    let p = (p2 / 6.0).sqrt();
    let b: Mat3 = std::array::from_fn(|i| std::array::from_fn(|j| (m[i][j] - if i == j { q } else { 0.0 }) / p));
    let det = b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) - b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0]) + b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]);
    let phi = (det / 2.0).clamp(-1.0, 1.0).acos() / 3.0;
    let largest = q + 2.0 * p * phi.cos();
    let smallest = q + 2.0 * p * (phi + 2.0 * std::f64::consts::PI / 3.0).cos();
    [smallest, 3.0 * q - largest - smallest, largest]
}

/// CIF U_ij (order U11, U22, U33, U12, U13, U23) finite and positive semi-definite as a
/// Cartesian tensor in `cell` (within [`ADP_EIGENVALUE_TOLERANCE`]).
pub(crate) fn check_aniso(u: [f64; 6], cell: &Cell) -> Result<(), String> {
    if u.iter().any(|x| !x.is_finite()) {
        return Err(format!("U tensor {u:?} is not finite"));
    }
    let u_star = Displacement::Aniso(u).u_star(cell);
    let Some(b_inv) = inverse(&cell.reciprocal_matrix()) else { return Err("the cell is degenerate".to_owned()) };
    let cartesian = congruence(&b_inv, &u_star, &b_inv);
    let eigenvalues = symmetric_eigenvalues(&cartesian);
    if eigenvalues.iter().all(|e| e.is_finite()) && eigenvalues[0] >= -ADP_EIGENVALUE_TOLERANCE {
        Ok(())
    } else {
        let shown: Vec<String> = eigenvalues.iter().map(|e| format!("{e:.3e}")).collect();
        Err(format!("U tensor {u:?} is not positive semi-definite (Cartesian eigenvalues {} Å², tolerance −{ADP_EIGENVALUE_TOLERANCE:e})", shown.join(", ")))
    }
}

/// Every rule for one atom of `cell`: finite position, occupancy in [0, 1], U_iso ≥ 0 or a
/// positive semi-definite U tensor.
fn check_atom(atom: &Atom, cell: &Cell) -> Result<(), String> {
    if atom.frac.iter().any(|x| !x.is_finite()) {
        return Err(format!("position {:?} is not finite", atom.frac));
    }
    check_occupancy(atom.occupancy)?;
    match atom.displacement {
        Displacement::Iso(u) => check_u_iso(u),
        Displacement::Aniso(u) => check_aniso(u, cell),
    }
}

impl Crystal {
    /// Checks what the CIF reader checks, for crystals built in code: a non-degenerate cell
    /// ([`Cell::validate`]), at least one atom, and every atom physical (finite position,
    /// 0 ≤ occupancy ≤ 1, U_iso ≥ 0 or a positive semi-definite U tensor). Errors name the
    /// crystal and the atom.
    pub fn validate(&self) -> Result<(), BlochError> {
        let object = |what: &str| format!("crystal {:?}: {what}", self.name);
        self.cell.validate().map_err(|m| InputError::new(object("cell"), m))?;
        if self.atoms.is_empty() {
            return Err(InputError::new(object("atoms"), "the crystal has no atoms").into());
        }
        for (i, atom) in self.atoms.iter().enumerate() {
            check_atom(atom, &self.cell).map_err(|m| InputError::new(object(&format!("atom {i} ({:?})", atom.label)), m))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crystal::aniso_matrix as cif_tensor;

    #[test]
    fn eigenvalues_of_symmetric_3x3() {
        // A double eigenvalue costs the closed form ~sqrt(ε) of relative accuracy: ample for a sign test.
        let e = symmetric_eigenvalues(&cif_tensor([2.0, 2.0, 3.0, 1.0, 0.0, 0.0]));
        for (got, want) in e.iter().zip([1.0, 3.0, 3.0]) {
            assert!((got - want).abs() < 1e-7, "{e:?}");
        }
        assert_eq!(symmetric_eigenvalues(&cif_tensor([3.0, -1.0, 2.0, 0.0, 0.0, 0.0])), [-1.0, 2.0, 3.0]);
    }

    #[test]
    fn atoms_are_checked() {
        let cell = Cell { lengths: [4.9, 4.9, 5.4], angles_deg: [90.0, 90.0, 120.0] };
        assert!(check_aniso([0.012, 0.011, 0.005, 0.006, -0.001, -0.0005], &cell).is_ok());
        assert!(check_aniso([0.01, 0.01, 0.01, 0.02, 0.0, 0.0], &cell).unwrap_err().contains("positive semi-definite"));
        assert!(check_u_iso(0.0).is_ok() && check_u_iso(-0.1).is_err());
        assert!(check_occupancy(1.0).is_ok() && check_occupancy(1.2).is_err() && check_occupancy(-0.1).is_err());
        let atom = Atom { label: "Si1".into(), z: 14, frac: [0.0; 3], occupancy: 1.0, displacement: Displacement::Iso(0.005) };
        let mut crystal = Crystal { name: "c".into(), cell, atoms: vec![atom] };
        assert!(crystal.validate().is_ok());
        crystal.atoms[0].occupancy = 1.5;
        let message = crystal.validate().unwrap_err().to_string();
        assert!(message.contains("atom 0 (\"Si1\")") && message.contains("occupancy 1.5"), "{message}");
        crystal.atoms.clear();
        assert!(crystal.validate().unwrap_err().to_string().contains("no atoms"));
    }
}
