//! Quality numbers of an SSB phase image for `ssb_bench`: Pearson r band-passed as the fixtures'
//! `quality_vs_truth` defines it, and the worst wrapped phase difference to a reference (the
//! fixtures README's SSB gate: < 1e-3 rad).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use num_complex::Complex64;
use rustfft::FftDirection;
use scatterlab_stem::ssb::{fftfreq, Fft2};

/// Pearson r of two equally long images (NaN when either is constant or they differ in length).
pub fn pearson(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return f64::NAN;
    }
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

/// `x` (a row-major `scan` image) with every frequency outside `lo < |ν| < hi` (Å⁻¹, ν =
/// fftfreq/step) removed.
pub fn bandpass(x: &[f64], scan: [usize; 2], step_a: f64, lo: f64, hi: f64) -> Vec<f64> {
    let (fr, fc) = (fftfreq(scan[0]), fftfreq(scan[1]));
    let mut z: Vec<Complex64> = x.iter().map(|&v| Complex64::new(v, 0.0)).collect();
    Fft2::new(scan[0], scan[1], FftDirection::Forward).process(&mut z);
    for (i, v) in z.iter_mut().enumerate() {
        let nu = (fr[i / scan[1]] / step_a).hypot(fc[i % scan[1]] / step_a);
        if !(nu > lo && nu < hi) {
            *v = Complex64::default();
        }
    }
    // rustfft's inverse is unnormalised: ÷ rows·cols as numpy's ifft2.
    Fft2::new(scan[0], scan[1], FftDirection::Inverse).process(&mut z);
    let n = z.len().max(1) as f64;
    z.iter().map(|v| v.re / n).collect()
}

/// Pearson r of `a` and `b` band-passed to `lo < |ν| < hi`.
pub fn bandpass_corr(a: &[f64], b: &[f64], scan: [usize; 2], step_a: f64, lo: f64, hi: f64) -> f64 {
    pearson(&bandpass(a, scan, step_a, lo, hi), &bandpass(b, scan, step_a, lo, hi))
}

/// The largest `|a − b|` of two phase images, wrapped into (−π, π] (a phase near ±π may flip).
pub fn max_phase_difference(a: &[f64], b: &[f64]) -> f64 {
    use std::f64::consts::{PI, TAU};
    a.iter().zip(b).map(|(x, y)| ((x - y + PI).rem_euclid(TAU) - PI).abs()).fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pearson_and_phase_difference_on_known_numbers() {
        // y = 2x + 1 correlates perfectly; y = −x anti-correlates.
        let x = [1.0, 2.0, 4.0, 7.0];
        assert!((pearson(&x, &x.map(|v| 2.0 * v + 1.0)) - 1.0).abs() < 1e-12);
        assert!((pearson(&x, &x.map(|v| -v)) + 1.0).abs() < 1e-12);
        assert!(pearson(&x, &[1.0; 3]).is_nan());
        // 3.1 and −3.1 rad are 0.083 rad apart across the branch cut, not 6.2.
        let d = max_phase_difference(&[3.1, 0.5], &[-3.1, 0.47]);
        assert!((d - (std::f64::consts::TAU - 6.2)).abs() < 1e-12, "{d}");
    }

    #[test]
    fn bandpass_keeps_only_the_band() {
        // A 16×16 image of two cosines at |ν| = 2/16 and 6/16 cycles per step (step 1 Å):
        // the band 0.2 < |ν| < 0.5 keeps only the second, to rounding.
        let scan = [16, 16];
        let tau = std::f64::consts::TAU;
        let img: Vec<f64> = (0..256).map(|i| ((tau * 2.0 * (i / 16) as f64) / 16.0).cos() + ((tau * 6.0 * (i % 16) as f64) / 16.0).cos()).collect();
        let want: Vec<f64> = (0..256).map(|i| ((tau * 6.0 * (i % 16) as f64) / 16.0).cos()).collect();
        let got = bandpass(&img, scan, 1.0, 0.2, 0.5);
        let worst = got.iter().zip(&want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max);
        assert!(worst < 1e-12, "{worst}");
        assert!((bandpass_corr(&img, &want, scan, 1.0, 0.2, 0.5) - 1.0).abs() < 1e-12);
    }
}
