//! Integrated DPC: the phase whose gradient is the aligned centre-of-mass field, by Fourier
//! integration (periodic boundaries, DC = 0).
//!
//! Physical form ([`idpc_physical`]): with `g` the aligned field converted to radians per scan
//! step (`2π · dk · step · CoM_px`, dk in Å⁻¹ per detector pixel, step in Å) and ν the scan
//! frequencies in cycles per scan step, `φ̂ = −i (ν·ĝ) / (2π|ν|²)`, so `∇φ = g`.
//! The rotation search leaves `a` and `a + 180°` equally good; [`resolve_half_turn`] picks the
//! one whose phase correlates positively with an image where atoms are bright (ADF): positive
//! phase = atom. quantem.gpu's published form ([`idpc_quantem`]) is kept for parity with it;
//! unlike it, nothing here swaps components back after a transposed rotation (that integrates a
//! mirrored field).

use num_complex::Complex64;
use rustfft::FftDirection;

use super::dpc::VectorField;
use super::fft2::{fft2, fftfreq};
use super::ReduceError;

/// Fourier integration of `g` with `φ̂ = scale · (−i) (ν·ĝ) / |ν|²`; returns Re φ.
fn integrate(g: &VectorField, scale: f64) -> Vec<f64> {
    let (rows, cols) = (g.rows, g.cols);
    let to_c = |v: &[f64]| v.iter().map(|&x| Complex64::new(x, 0.0)).collect::<Vec<_>>();
    let (mut gr, mut gc) = (to_c(&g.r), to_c(&g.c));
    fft2(&mut gr, rows, cols, FftDirection::Forward);
    fft2(&mut gc, rows, cols, FftDirection::Forward);
    let (nr, nc) = (fftfreq(rows), fftfreq(cols));
    let mut phi = vec![Complex64::new(0.0, 0.0); rows * cols];
    for (i, &vr) in nr.iter().enumerate() {
        for (j, &vc) in nc.iter().enumerate() {
            let k = i * cols + j;
            let q2 = vr * vr + vc * vc;
            if q2 > 0.0 {
                phi[k] = Complex64::new(0.0, -scale) * (gr[k] * vr + gc[k] * vc) / q2;
            }
        }
    }
    fft2(&mut phi, rows, cols, FftDirection::Inverse);
    let n = (rows * cols) as f64;
    phi.iter().map(|z| z.re / n).collect()
}

/// Phase in radians from the aligned CoM field (detector pixels) for detector sampling
/// `dk_inv_a` (Å⁻¹ per pixel) and scan step `step_a` (Å).
pub fn idpc_physical(aligned: &VectorField, dk_inv_a: f64, step_a: f64) -> Result<Vec<f64>, ReduceError> {
    if !(dk_inv_a.is_finite() && dk_inv_a > 0.0 && step_a.is_finite() && step_a > 0.0) {
        return Err(ReduceError::new("iDPC", format!("physical units need the detector sampling (Å⁻¹/px) and the scan step (Å); got {dk_inv_a}, {step_a}")));
    }
    let k = 2.0 * std::f64::consts::PI * dk_inv_a * step_a;
    let g = VectorField { rows: aligned.rows, cols: aligned.cols, r: aligned.r.iter().map(|v| k * v).collect(), c: aligned.c.iter().map(|v| k * v).collect() };
    Ok(integrate(&g, 1.0 / (2.0 * std::f64::consts::PI)))
}

/// quantem.gpu's iDPC: `φ̂ = −0.25 i (ν·ĝ)/|ν|²`, result `−(φ − mean φ)`, on the aligned field as
/// given (pass the swapped-back field to reproduce quantem.gpu's transposed case).
pub fn idpc_quantem(aligned: &VectorField) -> Vec<f64> {
    let phi = integrate(aligned, 0.25);
    let mean = phi.iter().sum::<f64>() / phi.len().max(1) as f64;
    phi.iter().map(|v| -(v - mean)).collect()
}

/// Pearson correlation of two equally long images (0 when either is constant).
pub fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len()).max(1) as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        ab += (x - ma) * (y - mb);
        aa += (x - ma) * (x - ma);
        bb += (y - mb) * (y - mb);
    }
    if aa > 0.0 && bb > 0.0 {
        ab / (aa * bb).sqrt()
    } else {
        0.0
    }
}

/// Whether to turn the rotation by 180° (negating the phase): true when `phase` correlates
/// negatively with `atoms_bright` (e.g. the ADF image), so that positive phase = atom.
pub fn resolve_half_turn(phase: &[f64], atoms_bright: &[f64]) -> bool {
    correlation(phase, atoms_bright) < 0.0
}
