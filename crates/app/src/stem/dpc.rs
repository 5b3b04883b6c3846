//! Differential phase contrast in the workspace, all by the STEM crate's rules: the centre-of-mass
//! field ([`center_of_mass`]), the curl-minimising rotation ([`find_rotation`]) with its half
//! turn resolved against the ADF image ([`resolve_half_turn`]), the aligned field as a colour
//! wheel ([`color_wheel`]) and iDPC ([`idpc_physical`]) when the calibration allows.

use scatterlab_stem::reduce::colormap::color_wheel;
use scatterlab_stem::reduce::display::percentile_limits;
use scatterlab_stem::reduce::idpc::resolve_half_turn;
use scatterlab_stem::reduce::{center_of_mass, find_rotation, idpc_physical, RotationOptions, VectorField};

use super::resident::StemCalibration;

/// The rotation in use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DpcRotation {
    /// Degrees, applied as in CONVENTIONS.md (`r' = cos a·r − sin a·c`, `c' = sin a·r + cos a·c`).
    pub degrees: f64,
    /// Swap the (row, col) components before rotating.
    pub transpose: bool,
}

/// The DPC products for one rotation.
#[derive(Clone, Debug)]
pub struct DpcProducts {
    /// The rotation they were made with.
    pub rotation: DpcRotation,
    /// The aligned centre-of-mass field, detector pixels.
    pub aligned: VectorField,
    /// The magnitude shown at full brightness (99th percentile of |CoM|), pixels.
    pub magnitude_max: f64,
    /// The colour wheel image (hue = direction, value = magnitude), RGBA.
    pub wheel: Vec<[u8; 4]>,
    /// The iDPC phase in radians, or why there is none.
    pub idpc: Result<Vec<f64>, String>,
}

/// The mean-subtracted centre-of-mass field of a `scan` from the fused pass's absolute CoM.
pub fn com_field(com_raw: &[Vec<f64>; 2], scan: [usize; 2]) -> Result<VectorField, String> {
    center_of_mass(com_raw, scan).map_err(|e| e.to_string())
}

/// The automatic rotation: the exact curl minimum over both component orders, turned by 180°
/// when the phase would correlate negatively with `adf` (positive phase = atom), as the
/// reduction pipeline does. The sign test needs no calibration (the scale is positive).
pub fn auto_rotation(com: &VectorField, adf: &[f64]) -> Result<DpcRotation, String> {
    let rot = find_rotation(com, &RotationOptions::default()).map_err(|e| e.to_string())?;
    let mut degrees = rot.fine_deg;
    let phase = idpc_physical(&com.rotated(degrees, rot.transpose), 1.0, 1.0).map_err(|e| e.to_string())?;
    if resolve_half_turn(&phase, adf) {
        degrees += 180.0;
    }
    Ok(DpcRotation { degrees, transpose: rot.transpose })
}

/// The products of `com` under `rotation`; iDPC needs the detector sampling (from the
/// calibration and the BF radius `bf_radius_px`) and the scan step.
pub fn products(com: &VectorField, rotation: DpcRotation, calibration: &StemCalibration, bf_radius_px: f64) -> DpcProducts {
    let aligned = com.rotated(rotation.degrees, rotation.transpose);
    let magnitudes: Vec<f64> = aligned.r.iter().zip(&aligned.c).map(|(r, c)| r.hypot(*c)).collect();
    let magnitude_max = percentile_limits(&magnitudes, 0.0, 99.0).map(|(_, hi)| hi).unwrap_or(0.0);
    let magnitude_max = if magnitude_max > 0.0 { magnitude_max } else { 1.0 };
    let wheel = color_wheel(&aligned.r, &aligned.c, magnitude_max).unwrap_or_default();
    let idpc = match (calibration.dk_inv_a(bf_radius_px), calibration.scan_step_a) {
        (Some(dk), Some(step)) => idpc_physical(&aligned, dk, step).map_err(|e| e.to_string()),
        _ => Err("iDPC needs the convergence semi-angle, the wavelength (or voltage) and the scan step; the file does not give them".to_owned()),
    };
    DpcProducts { rotation, aligned, magnitude_max, wheel, idpc }
}

/// The colour wheel legend: `n × n` pixels, direction as hue, magnitude growing to the rim.
pub fn legend(n: usize) -> Vec<[u8; 4]> {
    let half = (n as f64 - 1.0) / 2.0;
    let (mut r, mut c) = (Vec::with_capacity(n * n), Vec::with_capacity(n * n));
    for i in 0..n {
        for j in 0..n {
            r.push((i as f64 - half) / half);
            c.push((j as f64 - half) / half);
        }
    }
    let mut rgba = color_wheel(&r, &c, 1.0).unwrap_or_default();
    for (px, (y, x)) in rgba.iter_mut().zip(r.iter().zip(&c)) {
        if x.hypot(*y) > 1.0 {
            px[3] = 0;
        }
    }
    rgba
}
