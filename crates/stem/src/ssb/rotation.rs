//! The scan rotation θ of the SSB convention from the DPC result, when the caller gives none.
//!
//! DPC aligns the CoM field as `Rot(a) · com` (or `Rot(a) · S · com` with `S` the component swap
//! when the transposed order wins) so that it is the phase gradient on the scan grid. Positions are
//! `R = Rot(θ)(i, j)·step`, so a physical gradient `g` is `Rot(−θ) g` on the grid; the physical
//! frame is the stored detector frame, or `S` of it on a transposed detector (the convention of
//! [`super::BfPixels::disc`]). Either way `Rot(a) = Rot(−θ)`: θ = −a. Curl cannot tell `a` from
//! `a + 180°`; as the physical iDPC does, the half turn that makes the phase correlate positively
//! with the ADF image (atoms bright) is kept.

use crate::reduce::idpc::{idpc_physical, resolve_half_turn};
use crate::reduce::{center_of_mass, find_rotation, FusedResult, ReduceError, RotationOptions};

/// θ from DPC: degrees in (−180°, 180°], whether the detector is transposed, and how it was found.
#[derive(Clone, Debug, PartialEq)]
pub struct DpcRotation {
    /// θ, degrees.
    pub theta_deg: f64,
    /// Whether the transposed component order won.
    pub transposed: bool,
    /// The DPC angle `a` (curl minimum, half turn resolved), degrees in [0, 360).
    pub dpc_deg: f64,
}

/// θ of a `scan` from a fused pass that had an `adf` detector, for detector sampling `dk`
/// (Å⁻¹/px) and scan step `step` (Å).
pub fn rotation_from_dpc(fused: &FusedResult, scan: [usize; 2], dk: f64, step: f64) -> Result<DpcRotation, ReduceError> {
    let n = scan[0] * scan[1];
    let com_raw = [fused.com_raw[0].iter().take(n).copied().collect(), fused.com_raw[1].iter().take(n).copied().collect()];
    let com = center_of_mass(&com_raw, scan)?;
    let rot = find_rotation(&com, &RotationOptions::default())?;
    let adf = fused.detector("adf").ok_or_else(|| ReduceError::new("scan rotation", "the DPC pass had no ADF image to resolve the half turn"))?;
    let adf: Vec<f64> = adf.iter().take(n).map(|&v| v as f64).collect();
    let phase = idpc_physical(&com.rotated(rot.fine_deg, rot.transpose), dk, step)?;
    let a = (rot.fine_deg + if resolve_half_turn(&phase, &adf) { 180.0 } else { 0.0 }).rem_euclid(360.0);
    let mut theta = -a;
    if theta <= -180.0 {
        theta += 360.0;
    }
    Ok(DpcRotation { theta_deg: theta, transposed: rot.transpose, dpc_deg: a })
}
