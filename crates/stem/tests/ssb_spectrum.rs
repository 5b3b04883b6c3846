//! `grid_spectrum` (what `reconstruct` runs: half the frequencies by Hermitian symmetry, two scan
//! images per FFT, Γ factorised) against the direct `mean_spectrum` (two probe evaluations per
//! pixel and frequency) on random stacks, seeded (seed printed; `SCATTERLAB_SEED=N` replays):
//! even, odd, prime and 1-long scan axes (the Nyquist lines mirror onto themselves), odd and even
//! BF pixel counts (an unpaired last image), BF pixels beyond the aperture (A(k_b) = 0), any
//! rotation and aberrations of the fit's search box. Gate: relative L2 ≤ 1e-12 over the spectrum
//! and every frequency within 1e-12 of the spectrum's largest AC value (rounding only).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use num_complex::Complex64;
use rand::{Rng, SeedableRng};
use scatterlab_core::CancelToken;
use scatterlab_stem::ssb::{grid_spectrum, mean_spectrum, scan_frequencies, Aberrations, BfPixels, BfStack, Optics, Probe};

fn seeded(what: &str) -> rand::rngs::StdRng {
    let seed = std::env::var("SCATTERLAB_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64));
    println!("{what}: seed {seed} (SCATTERLAB_SEED={seed} replays)");
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// A random BF stack of a disc of `radius` px on a 24 × 26 detector, counts uniform in [0, 1000).
fn random_stack(rng: &mut impl Rng, scan: [usize; 2], dk: f64, radius: f64) -> BfStack {
    let det = [24, 26];
    let center = [11.0 + rng.gen_range(0.0..1.0), 12.0 + rng.gen_range(0.0..1.0)];
    let pixels = BfPixels::disc(det, center, radius, dk, rng.gen_bool(0.5)).unwrap();
    let mut stack = BfStack::new(pixels, scan, det[0] * det[1]);
    stack.images.iter_mut().for_each(|v| *v = rng.gen_range(0.0..1000.0f64).floor());
    stack
}

#[test]
fn grid_spectrum_equals_the_direct_sum() {
    let mut rng = seeded("SSB grid spectrum");
    let cancel = CancelToken::new();
    let mut worst: (f64, f64) = (0.0, 0.0);
    let scans = [[16, 16], [12, 10], [5, 4], [7, 9], [13, 11], [1, 8], [6, 1], [1, 1], [32, 24]];
    for (case, scan) in scans.into_iter().enumerate() {
        let dk = rng.gen_range(0.05..0.15);
        // Radius 7.3 px: disc pixels on the aperture's soft rim; 9.5 px: some beyond it (A = 0).
        let radius = if case % 3 == 2 { 9.5 } else { 7.3 };
        let stack = random_stack(&mut rng, scan, dk, radius);
        let optics = Optics { wavelength_a: rng.gen_range(0.0197..0.0418), k_alpha_inv_a: 7.0 * dk, dk_inv_a_per_px: dk };
        let ab = Aberrations { c10_nm: rng.gen_range(-50.0..50.0), c12_nm: rng.gen_range(0.0..20.0), phi12_rad: rng.gen_range(0.0..std::f64::consts::PI) };
        let (step, theta) = (rng.gen_range(0.3..1.5), rng.gen_range(-180.0..180.0));
        let probe = Probe::new(&optics, &ab);
        let want = mean_spectrum(&stack, &probe, &scan_frequencies(scan, step, theta), &cancel).unwrap();
        let got = grid_spectrum(&stack, &probe, step, theta, &cancel).unwrap();
        assert_eq!(got.len(), want.len());
        let diff2: f64 = got.iter().zip(&want).map(|(a, b)| (a - b).norm_sqr()).sum();
        let norm2: f64 = want.iter().map(Complex64::norm_sqr).sum();
        let rel = (diff2 / norm2).sqrt();
        let ac_max = want.iter().skip(1).map(|v| v.norm()).fold(0.0, f64::max);
        // A 1×1 scan has no AC frequency: only the DC term, compared by the L2 alone.
        let point = if scan[0] * scan[1] > 1 { got.iter().zip(&want).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max) / ac_max } else { 0.0 };
        println!(
            "{scan:?}, {} BF pixels, C10 {:.2} nm, C12 {:.2} nm, θ {theta:.1}°: relative L2 {rel:.2e}, worst point {point:.2e} of the largest AC value",
            stack.pixels.len(),
            ab.c10_nm,
            ab.c12_nm
        );
        assert!(rel <= 1e-12, "{scan:?}: relative L2 {rel:e}");
        assert!(point <= 1e-12, "{scan:?}: worst point {point:e}");
        worst = (worst.0.max(rel), worst.1.max(point));
    }
    println!("SSB grid spectrum: worst relative L2 {:.2e}, worst point {:.2e} (gates 1e-12)", worst.0, worst.1);
}

#[test]
fn grid_spectrum_names_a_malformed_stack_and_stops_on_cancel() {
    let mut rng = seeded("SSB grid spectrum errors");
    let optics = Optics { wavelength_a: 0.0197, k_alpha_inv_a: 0.7, dk_inv_a_per_px: 0.1 };
    let probe = Probe::new(&optics, &Aberrations::default());
    let mut stack = random_stack(&mut rng, [4, 6], 0.1, 7.3);
    let cancel = CancelToken::new();
    cancel.cancel();
    let err = grid_spectrum(&stack, &probe, 0.5, 0.0, &cancel).unwrap_err().to_string();
    assert!(err.contains("cancelled"), "{err}");
    stack.images.pop();
    let err = grid_spectrum(&stack, &probe, 0.5, 0.0, &CancelToken::new()).unwrap_err().to_string();
    assert!(err.contains("BF stack"), "{err}");
}
