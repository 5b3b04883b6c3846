//! The per-BF-pixel accumulation of the SSB convention (fixtures README § SSB convention):
//! `G_b = FFT2_scan(I(R, k_b))`, `Γ_b(ν) = P(k_b − ν) P*(k_b) − P*(k_b + ν) P(k_b)`, and
//! `O = IFFT2(mean_b G_b conj(Γ_b) / max(|Γ_b|, ε))` with the `ν = 0` term `mean_b G_b(0)`.
//! The mean of the per-pixel objects `O_b` equals the inverse transform of the mean spectrum, so
//! one inverse transform serves all BF pixels.

use num_complex::Complex64;
use rustfft::FftDirection;
use scatterlab_core::CancelToken;

use super::fft::Fft2;
use super::optics::Probe;
use super::stack::BfStack;
use crate::reduce::ReduceError;

/// The floor of `|Γ_b|` in the phase-only correction (quantem's).
pub const GAMMA_FLOOR: f64 = 1e-8;

/// numpy's `fftfreq(n)`: cycles per sample, non-negative first.
pub fn fftfreq(n: usize) -> Vec<f64> {
    (0..n).map(|k| if 2 * k < n { k as f64 } else { k as f64 - n as f64 } / n as f64).collect()
}

/// The scan frequencies `ν = fftfreq(n)/step` of a `scan` grid (row-major, Å⁻¹), rotated into the
/// detector's physical frame by `Rot(θ) = [[cos θ, −sin θ], [sin θ, cos θ]]` on (row, col) vectors:
/// positions were `R = Rot(θ)(i·step, j·step)`, so `exp(2πi ν·(i, j)·step) = exp(2πi (Rot(θ)ν)·R)`.
pub fn scan_frequencies(scan: [usize; 2], step_a: f64, rotation_deg: f64) -> Vec<[f64; 2]> {
    let (s, c) = rotation_deg.to_radians().sin_cos();
    let (fr, fc) = (fftfreq(scan[0]), fftfreq(scan[1]));
    let mut out = Vec::with_capacity(scan[0] * scan[1]);
    for &r in &fr {
        for &q in &fc {
            let (nr, nc) = (r / step_a, q / step_a);
            out.push([c * nr - s * nc, s * nr + c * nc]);
        }
    }
    out
}

/// The mean over BF pixels of `G_b conj(Γ_b) / max(|Γ_b|, ε)` (the object's spectrum, ν = 0
/// included as `mean_b G_b(0)`), for scan frequencies `nu` from [`scan_frequencies`].
pub fn mean_spectrum(stack: &BfStack, probe: &Probe, nu: &[[f64; 2]], cancel: &CancelToken) -> Result<Vec<Complex64>, ReduceError> {
    let [rows, cols] = stack.scan;
    let n = rows * cols;
    if nu.len() != n {
        return Err(ReduceError::new("scan frequencies", format!("{} frequencies for a {rows}×{cols} scan", nu.len())));
    }
    let mut fft = Fft2::new(rows, cols, FftDirection::Forward);
    let mut g = vec![Complex64::default(); n];
    let mut sum = vec![Complex64::default(); n];
    let mut dc = Complex64::default();
    for (b, &[kr, kc]) in stack.pixels.k.iter().enumerate() {
        if b % 16 == 0 && cancel.is_cancelled() {
            return Err(ReduceError::new("SSB", "cancelled"));
        }
        for (x, &v) in g.iter_mut().zip(stack.image(b)) {
            *x = Complex64::new(v, 0.0);
        }
        fft.process(&mut g);
        dc += g[0];
        let p0 = probe.eval(kr, kc);
        // ν = 0 is replaced below; Γ there is |P|² − |P|² = 0 anyway.
        for ((s, gv), &[vr, vc]) in sum.iter_mut().zip(&g).zip(nu).skip(1) {
            let gamma = probe.eval(kr - vr, kc - vc) * p0.conj() - probe.eval(kr + vr, kc + vc).conj() * p0;
            let norm = gamma.norm();
            if norm > 0.0 {
                *s += gv * gamma.conj() / norm.max(GAMMA_FLOOR);
            }
        }
    }
    let nb = stack.pixels.len().max(1) as f64;
    sum.iter_mut().for_each(|s| *s /= nb);
    if let Some(s0) = sum.first_mut() {
        *s0 = dc / nb;
    }
    Ok(sum)
}

/// The object `O = IFFT2(spectrum)` (numpy's normalisation: ÷ rows·cols).
pub fn object_from_spectrum(mut spectrum: Vec<Complex64>, scan: [usize; 2]) -> Vec<Complex64> {
    Fft2::new(scan[0], scan[1], FftDirection::Inverse).process(&mut spectrum);
    let scale = 1.0 / (scan[0] * scan[1]).max(1) as f64;
    spectrum.iter_mut().for_each(|v| *v *= scale);
    spectrum
}
