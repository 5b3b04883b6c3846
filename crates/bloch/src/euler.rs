//! Orientation from Euler angles, for a crystal seen off any zone axis: Ω = R_z(φ) R_x(θ) R_z(ψ)
//! (z–x′–z″, active right-handed rotations, degrees — the convention CONVENTIONS.md writes once
//! for the reflectivity layers), then the page's tilts about lab x and y: O = R_x(tx) R_y(ty) Ω,
//! lab vector = O · crystal-Cartesian vector (a along x, b in the xy plane). Ω = 1 looks down
//! the crystal-Cartesian z axis (the beam travels along −z).

use scatterlab_core::InputError;

use crate::beams::{rotation_x, Mat3};
use crate::simulate::CasesFile;
use crate::zone::{case_at, check, mat_mul, ZoneCase};
use crate::{BlochError, Crystal};

fn rotation_z(a: f64) -> Mat3 {
    let (s, c) = a.sin_cos();
    [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
}

fn rotation_y(a: f64) -> Mat3 {
    let (s, c) = a.sin_cos();
    [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
}

/// O = R_x(tx) R_y(ty) R_z(φ) R_x(θ) R_z(ψ) for `euler_deg = [φ, θ, ψ]` and `tilt_deg = [tx, ty]`;
/// the error names a non-finite angle.
pub fn euler_orientation(euler_deg: [f64; 3], tilt_deg: [f64; 2]) -> Result<Mat3, InputError> {
    if !euler_deg.iter().all(|a| a.is_finite()) {
        return Err(InputError::new("euler", format!("expected three finite angles φ, θ, ψ in degrees (got {euler_deg:?})")));
    }
    if !tilt_deg.iter().all(|a| a.is_finite()) {
        return Err(InputError::new("tilt", format!("expected two finite angles in degrees (got {tilt_deg:?})")));
    }
    let [phi, theta, psi] = euler_deg.map(f64::to_radians);
    let omega = mat_mul(&mat_mul(&rotation_z(phi), &rotation_x(theta)), &rotation_z(psi));
    let [tx, ty] = tilt_deg.map(f64::to_radians);
    Ok(mat_mul(&mat_mul(&rotation_x(tx), &rotation_y(ty)), &omega))
}

/// The cases file of one static case: `crystal` (parsed from `cif`, under `name`) at the Euler
/// orientation `euler_deg` (`case.zone` and `case.reference` are not used; `case.tilt_deg` is).
/// The case id is `{name}-{kv}kV-euler(φ,θ,ψ)`.
pub fn case_from_euler(name: &str, cif: &str, crystal: &Crystal, case: &ZoneCase, euler_deg: [f64; 3]) -> Result<CasesFile, BlochError> {
    check(case)?;
    crystal.cell.validate().map_err(|e| InputError::new(format!("crystal {name:?}: cell"), e))?;
    let orientation = euler_orientation(euler_deg, case.tilt_deg)?;
    let [a, b, c] = euler_deg;
    Ok(case_at(name, cif, case, orientation, format!("{name}-{}kV-euler({a},{b},{c})", case.kv)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zone::zone_orientation;

    fn close(a: &Mat3, b: &Mat3) -> f64 {
        (0..3).flat_map(|i| (0..3).map(move |j| (i, j))).map(|(i, j)| (a[i][j] - b[i][j]).abs()).fold(0.0, f64::max)
    }

    #[test]
    fn zero_angles_look_down_z_and_match_the_001_zone_of_a_cubic_cell() {
        let identity = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(close(&euler_orientation([0.0; 3], [0.0; 2]).expect("finite"), &identity) < 1e-15);
        // A cubic cell's [001] zone with (100) → +x is the identity too; tilts compose alike.
        let cubic = [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]];
        let reciprocal = [[0.25, 0.0, 0.0], [0.0, 0.25, 0.0], [0.0, 0.0, 0.25]];
        let zone = zone_orientation(&cubic, &reciprocal, [0, 0, 1], Some([1, 0, 0]), [0.7, -1.3]).expect("zone");
        assert!(close(&euler_orientation([0.0; 3], [0.7, -1.3]).expect("finite"), &zone) < 1e-15);
    }

    #[test]
    fn theta_90_brings_crystal_z_onto_lab_minus_y_and_bad_angles_are_named() {
        // Ω = R_x(90°): crystal z → lab (0, −1, 0); the material c axis of CONVENTIONS.md is
        // (sin φ sin θ, −cos φ sin θ, cos θ).
        let o = euler_orientation([30.0, 90.0, 0.0], [0.0; 2]).expect("finite");
        let c = [o[0][2], o[1][2], o[2][2]];
        let expected = [30f64.to_radians().sin(), -30f64.to_radians().cos(), 0.0];
        assert!(c.iter().zip(expected).all(|(a, b)| (a - b).abs() < 1e-15), "{c:?}");
        let err = euler_orientation([f64::NAN, 0.0, 0.0], [0.0; 2]).expect_err("NaN");
        assert!(err.to_string().contains("euler"), "{err}");
    }
}
