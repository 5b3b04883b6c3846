//! The object spectrum of [`super::mean_spectrum`] on the scan grid, the form
//! [`super::reconstruct`] runs (issue 19: dev_medium, 467 BF pixels on a 128² scan, in ≤ 0.2 s on
//! one thread). The same sum, evaluated with three savings that change only the rounding:
//!
//! - **Hermitian symmetry.** The scan images are real, so `G_b(−ν) = conj G_b(ν)`, and
//!   `Γ_b(−ν) = −conj Γ_b(ν)`; the summand at −ν is minus the conjugate of the one at ν. Only the
//!   columns `0..=cols/2` are evaluated, plus the whole Nyquist row of an even grid (its index
//!   mirrors onto itself with the same frequency −½, not the negated one); the rest is mirrored.
//! - **Two images per transform.** `z = I_a + i I_b` gives `G_a = (Z(ν) + conj Z(−ν))/2` and
//!   `G_b = (Z(ν) − conj Z(−ν))/2i`: half the forward FFTs.
//! - **Factorised Γ** (as the fit's objective, `objective.rs`): χ is a quadratic form, so
//!   `Γ_b(ν) = A(k_b) e^{2iu} W_b(ν)` with `u = k_bᵀMν`, `W_b = A(k_b − ν) e^{−iχ(ν)} −
//!   A(k_b + ν) e^{iχ(ν)}`; `e^{iχ(ν)}` is shared by all pixels and `e^{−2iu}` is a row factor
//!   times a column factor. Per pixel and frequency: two apertures (a square root only on the
//!   aperture's one-pixel rim), a few multiply-adds, one square root and one division; no
//!   transcendental.

use num_complex::Complex64;
use rustfft::FftDirection;
use scatterlab_core::CancelToken;

use super::accumulate::{fftfreq, GAMMA_FLOOR};
use super::fft::Fft2;
use super::optics::{Probe, SoftAperture};
use super::stack::BfStack;
use crate::reduce::ReduceError;

/// One BF pixel's share of the sum: its `k_b`, `A(k_b)` and the plane wave `e^{−2iu}` as row
/// and column factors (buffers reused from pair to pair).
struct Pixel {
    k: [f64; 2],
    a: f64,
    row: Vec<Complex64>,
    col: Vec<Complex64>,
}

impl Pixel {
    fn new(rows: usize, cols: usize) -> Self {
        Pixel { k: [0.0; 2], a: 0.0, row: vec![Complex64::default(); rows], col: vec![Complex64::default(); cols] }
    }

    /// Sets the pixel to `k` for the quadratic form `m` (`[M00, M01, M11]`), rotation `(sin θ,
    /// cos θ)` and unrotated frequencies `fr`, `fc` (Å⁻¹).
    fn set(&mut self, k: [f64; 2], aperture: &SoftAperture, m: [f64; 3], (s, c): (f64, f64), fr: &[f64], fc: &[f64]) {
        self.k = k;
        self.a = aperture.at(k[0], k[1]);
        // u = (M k)·Rot(θ) f = (Rot(θ)ᵀ M k)·f.
        let mk = [m[0] * k[0] + m[1] * k[1], m[1] * k[0] + m[2] * k[1]];
        let p = [c * mk[0] + s * mk[1], -s * mk[0] + c * mk[1]];
        self.row.iter_mut().zip(fr).for_each(|(r, &f)| *r = Complex64::from_polar(1.0, -2.0 * p[0] * f));
        self.col.iter_mut().zip(fc).for_each(|(r, &f)| *r = Complex64::from_polar(1.0, -2.0 * p[1] * f));
    }

    /// `G conj(Γ_b)/max(|Γ_b|, ε)` at grid point `(i, j)` with rotated frequency `nu` and
    /// `e = e^{iχ(ν)}`; zero where `Γ_b` is.
    #[inline]
    fn term(&self, g: Complex64, i: usize, j: usize, nu: [f64; 2], e: Complex64, aperture: &SoftAperture) -> Complex64 {
        let am = aperture.at(self.k[0] - nu[0], self.k[1] - nu[1]);
        let ap = aperture.at(self.k[0] + nu[0], self.k[1] + nu[1]);
        if am == 0.0 && ap == 0.0 {
            return Complex64::default();
        }
        let w = e.conj() * am - e * ap;
        let norm = self.a * (w.re * w.re + w.im * w.im).sqrt();
        if norm > 0.0 {
            g * (self.row[i] * self.col[j]) * w.conj() * (self.a / norm.max(GAMMA_FLOOR))
        } else {
            Complex64::default()
        }
    }
}

/// Columns evaluated directly in row `i`: the non-negative half, or all on an even grid's
/// Nyquist row (see the module comment).
fn direct_cols(i: usize, rows: usize, cols: usize) -> usize {
    if rows.is_multiple_of(2) && 2 * i == rows {
        cols
    } else {
        cols / 2 + 1
    }
}

/// The mean over BF pixels of `G_b conj(Γ_b)/max(|Γ_b|, ε)` on the scan grid of `stack` for scan
/// step `step_a` (Å) and rotation θ (degrees), `ν = 0` as `mean_b G_b(0)`: what
/// [`super::mean_spectrum`] gives for [`super::scan_frequencies`]`(scan, step_a, θ)`, to rounding.
pub fn grid_spectrum(stack: &BfStack, probe: &Probe, step_a: f64, rotation_deg: f64, cancel: &CancelToken) -> Result<Vec<Complex64>, ReduceError> {
    let [rows, cols] = stack.scan;
    let (n, nb) = (rows * cols, stack.pixels.len());
    if stack.images.len() != n * nb || stack.pixels.k.len() != nb {
        return Err(ReduceError::new("BF stack", format!("{} values and {} pixel vectors for {nb} pixels of a {rows}×{cols} scan", stack.images.len(), stack.pixels.k.len())));
    }
    if n == 0 {
        return Ok(Vec::new());
    }
    let (s, c) = rotation_deg.to_radians().sin_cos();
    let fr: Vec<f64> = fftfreq(rows).iter().map(|f| f / step_a).collect();
    let fc: Vec<f64> = fftfreq(cols).iter().map(|f| f / step_a).collect();
    // The rotated frequencies (as `scan_frequencies`) and e^{iχ(ν)} of the directly evaluated half.
    let (mut nu, mut e_chi) = (vec![[0.0; 2]; n], vec![Complex64::default(); n]);
    for (i, &r) in fr.iter().enumerate() {
        for (j, &q) in fc.iter().enumerate().take(direct_cols(i, rows, cols)) {
            let v = [c * r - s * q, s * r + c * q];
            nu[i * cols + j] = v;
            e_chi[i * cols + j] = Complex64::from_polar(1.0, probe.chi(v[0], v[1]));
        }
    }
    let aperture = probe.soft_aperture();
    let [_, _, pi_lambda, c10, c12c, c12s] = probe.constants();
    let m = [pi_lambda * (c10 + c12c), pi_lambda * c12s, pi_lambda * (c10 - c12c)];
    let mut fft = Fft2::new(rows, cols, FftDirection::Forward);
    let (mut z, mut sum) = (vec![Complex64::default(); n], vec![Complex64::default(); n]);
    let (mut pa, mut pb) = (Pixel::new(rows, cols), Pixel::new(rows, cols));
    let mut dc = 0.0;
    for (pair, first) in (0..nb).step_by(2).enumerate() {
        if pair % 8 == 0 && cancel.is_cancelled() {
            return Err(ReduceError::new("SSB", "cancelled"));
        }
        let has_b = first + 1 < nb;
        for (x, &v) in z.iter_mut().zip(stack.image(first)) {
            *x = Complex64::new(v, 0.0);
        }
        if has_b {
            z.iter_mut().zip(stack.image(first + 1)).for_each(|(x, &v)| x.im = v);
        }
        fft.process(&mut z);
        dc += z[0].re + z[0].im;
        pa.set(stack.pixels.k[first], &aperture, m, (s, c), &fr, &fc);
        if has_b {
            pb.set(stack.pixels.k[first + 1], &aperture, m, (s, c), &fr, &fc);
        }
        // A pixel outside the aperture (A(k_b) = 0) has Γ_b = 0 everywhere.
        let (use_a, use_b) = (pa.a > 0.0, has_b && pb.a > 0.0);
        for i in 0..rows {
            let im = (rows - i) % rows;
            for j in 0..direct_cols(i, rows, cols) {
                let idx = i * cols + j;
                if idx == 0 {
                    continue;
                }
                let zv = z[idx];
                let zm = z[im * cols + (cols - j) % cols].conj();
                let mut t = Complex64::default();
                if use_a {
                    t += pa.term((zv + zm) * 0.5, i, j, nu[idx], e_chi[idx], &aperture);
                }
                if use_b {
                    t += pb.term((zv - zm) * Complex64::new(0.0, -0.5), i, j, nu[idx], e_chi[idx], &aperture);
                }
                sum[idx] += t;
            }
        }
    }
    // The other half: the summand at −ν is −conj of the one at ν.
    for i in 0..rows {
        let im = (rows - i) % rows;
        for j in direct_cols(i, rows, cols)..cols {
            sum[i * cols + j] = -sum[im * cols + (cols - j) % cols].conj();
        }
    }
    let scale = 1.0 / nb.max(1) as f64;
    sum.iter_mut().for_each(|v| *v *= scale);
    sum[0] = Complex64::new(dc * scale, 0.0);
    Ok(sum)
}
