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
//!
//! Positions without data (NaN, frames of a missing data file) are not integrated over: the
//! phase is computed on the longest band of complete scan rows ([`complete_rows`]) and is NaN
//! elsewhere.

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
    let [r0, r1] = complete_rows(aligned)?;
    let cols = aligned.cols;
    let band = |v: &[f64]| v[r0 * cols..r1 * cols].iter().map(|x| k * x).collect();
    let g = VectorField { rows: r1 - r0, cols, r: band(&aligned.r), c: band(&aligned.c) };
    let phase = integrate(&g, 1.0 / (2.0 * std::f64::consts::PI));
    if phase.iter().any(|v| !v.is_finite()) {
        return Err(ReduceError::new("iDPC", format!("the phase is not finite (detector sampling {dk_inv_a} Å⁻¹/px, scan step {step_a} Å)")));
    }
    let mut out = vec![f64::NAN; aligned.rows * cols];
    out[r0 * cols..r1 * cols].copy_from_slice(&phase);
    Ok(out)
}

/// The scan rows `[first, end)` that Fourier integration may use: all of them when every
/// position has data, else the longest run of consecutive rows without a position that lacks
/// data (NaN). Integration needs a full periodic grid; filling the gaps with zeros would bend the
/// whole phase, so the other rows get no phase (NaN) instead.
pub fn complete_rows(field: &VectorField) -> Result<[usize; 2], ReduceError> {
    let (rows, cols) = (field.rows, field.cols);
    if field.r.len() != rows * cols || field.c.len() != rows * cols {
        return Err(ReduceError::new("iDPC", format!("{} / {} values for a {rows}×{cols} scan", field.r.len(), field.c.len())));
    }
    let complete = |i: usize| (i * cols..(i + 1) * cols).all(|k| field.r[k].is_finite() && field.c[k].is_finite());
    let (mut best, mut start) = ([0, 0], None);
    for i in 0..=rows {
        match (i < rows && complete(i), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                if i - s > best[1] - best[0] {
                    best = [s, i];
                }
                start = None;
            }
            _ => {}
        }
    }
    if best[1] - best[0] < 2 {
        return Err(ReduceError::new("iDPC", format!("needs at least 2 consecutive complete scan rows with data (the longest run has {})", best[1] - best[0])));
    }
    Ok(best)
}

/// quantem.gpu's iDPC: `φ̂ = −0.25 i (ν·ĝ)/|ν|²`, result `−(φ − mean φ)`, on the aligned field as
/// given (pass the swapped-back field to reproduce quantem.gpu's transposed case).
pub fn idpc_quantem(aligned: &VectorField) -> Vec<f64> {
    let phi = integrate(aligned, 0.25);
    let mean = phi.iter().sum::<f64>() / phi.len().max(1) as f64;
    phi.iter().map(|v| -(v - mean)).collect()
}

/// Pearson correlation of two equally long images over the positions where both are finite
/// (0 when either is constant there).
pub fn correlation(a: &[f64], b: &[f64]) -> f64 {
    let pairs = || a.iter().zip(b).filter(|(x, y)| x.is_finite() && y.is_finite());
    let n = pairs().count().max(1) as f64;
    let (ma, mb) = (pairs().map(|p| p.0).sum::<f64>() / n, pairs().map(|p| p.1).sum::<f64>() / n);
    let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
    for (x, y) in pairs() {
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
