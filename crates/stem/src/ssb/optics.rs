//! The probe of the SSB convention (fixtures README § SSB convention):
//! `P(k) = A(k) exp(−i χ(k))`, `χ = π λ |k|² (C10 + C12 cos 2(φ_k − φ12))`,
//! `A = clip((k_α − |k|)/dk + 0.5, 0, 1)` — a soft aperture one detector pixel wide, so the disc's
//! edge pixels are weighted by how much of them lies inside.
//!
//! `k = (k_row, k_col)` in Å⁻¹ in the physical (untransposed detector) frame; `φ_k` is measured
//! from the row axis towards the column axis (`atan2(k_col, k_row)`), the `(qx, qy)` = (axis 0,
//! axis 1) convention of quantem and py4DSTEM.

use num_complex::Complex64;
use serde::Serialize;

/// Probe aberrations: defocus C10 and two-fold astigmatism C12 at angle φ12.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Aberrations {
    /// Defocus C10, nm.
    #[serde(rename = "C10_nm")]
    pub c10_nm: f64,
    /// Two-fold astigmatism magnitude C12, nm.
    #[serde(rename = "C12_nm")]
    pub c12_nm: f64,
    /// Astigmatism angle φ12, rad (from the row axis towards the column axis).
    #[serde(rename = "phi12_rad")]
    pub phi12_rad: f64,
}

/// The optics an SSB reconstruction needs, all in Å / Å⁻¹.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Optics {
    /// Electron wavelength λ, Å.
    pub wavelength_a: f64,
    /// Aperture radius in reciprocal space, `k_α = α / λ`, Å⁻¹.
    pub k_alpha_inv_a: f64,
    /// Detector sampling, Å⁻¹ per pixel (also the soft aperture's edge width).
    pub dk_inv_a_per_px: f64,
}

/// The probe function evaluated for one set of optics and aberrations (constants folded once:
/// it is called twice per BF pixel and scan frequency).
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    k_alpha: f64,
    inv_dk: f64,
    // χ = |k|² (c10 + c12c cos 2φ + c12s sin 2φ)·π λ with lengths in Å.
    pi_lambda: f64,
    c10: f64,
    c12_cos: f64,
    c12_sin: f64,
}

impl Probe {
    /// The probe of `optics` with `aberrations`.
    pub fn new(optics: &Optics, aberrations: &Aberrations) -> Self {
        // nm → Å; cos 2(φ − φ12) = cos 2φ cos 2φ12 + sin 2φ sin 2φ12.
        let c12 = 10.0 * aberrations.c12_nm;
        Probe {
            k_alpha: optics.k_alpha_inv_a,
            inv_dk: 1.0 / optics.dk_inv_a_per_px,
            pi_lambda: std::f64::consts::PI * optics.wavelength_a,
            c10: 10.0 * aberrations.c10_nm,
            c12_cos: c12 * (2.0 * aberrations.phi12_rad).cos(),
            c12_sin: c12 * (2.0 * aberrations.phi12_rad).sin(),
        }
    }

    /// The folded constants `[k_α, 1/dk, πλ, C10, C12 cos 2φ12, C12 sin 2φ12]` (Å, Å⁻¹): what the
    /// GPU twin (`shaders/stem/ssb_accumulate.wgsl`) evaluates the same probe from.
    pub(crate) fn constants(&self) -> [f64; 6] {
        [self.k_alpha, self.inv_dk, self.pi_lambda, self.c10, self.c12_cos, self.c12_sin]
    }

    /// Aperture weight `A(k)` at `(k_row, k_col)`.
    pub fn aperture(&self, kr: f64, kc: f64) -> f64 {
        ((self.k_alpha - kr.hypot(kc)) * self.inv_dk + 0.5).clamp(0.0, 1.0)
    }

    /// [`Probe::aperture`] with its flat parts decided on `|k|²` (the hot loops' form).
    pub(crate) fn soft_aperture(&self) -> SoftAperture {
        SoftAperture::new(self.k_alpha, self.inv_dk)
    }

    /// Aberration phase χ(k) in radians.
    pub fn chi(&self, kr: f64, kc: f64) -> f64 {
        // |k|² cos 2φ = kr² − kc², |k|² sin 2φ = 2 kr kc with φ = atan2(kc, kr): no atan2 needed.
        let k2 = kr * kr + kc * kc;
        self.pi_lambda * (self.c10 * k2 + self.c12_cos * (kr * kr - kc * kc) + self.c12_sin * 2.0 * kr * kc)
    }

    /// `P(k) = A(k) exp(−i χ(k))` (exactly zero outside the aperture).
    pub fn eval(&self, kr: f64, kc: f64) -> Complex64 {
        let a = self.aperture(kr, kc);
        if a == 0.0 {
            return Complex64::new(0.0, 0.0);
        }
        let (s, c) = self.chi(kr, kc).sin_cos();
        Complex64::new(a * c, -a * s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi_matches_the_angle_form() {
        let optics = Optics { wavelength_a: 0.0197, k_alpha_inv_a: 1.0, dk_inv_a_per_px: 0.1 };
        let ab = Aberrations { c10_nm: 3.0, c12_nm: 0.6, phi12_rad: 0.7 };
        let p = Probe::new(&optics, &ab);
        for (kr, kc) in [(0.3, -0.4), (-0.7, 0.1), (0.0, 0.5)] {
            let k2: f64 = kr * kr + kc * kc;
            let phi = f64::atan2(kc, kr);
            let want = std::f64::consts::PI * 0.0197 * k2 * (30.0 + 6.0 * (2.0 * (phi - 0.7)).cos());
            assert!((p.chi(kr, kc) - want).abs() < 1e-12, "{kr} {kc}");
        }
        assert_eq!(p.aperture(0.0, 0.0), 1.0);
        assert_eq!(p.aperture(1.2, 0.0), 0.0);
        assert!((p.aperture(1.0, 0.0) - 0.5).abs() < 1e-12);
        assert_eq!(p.eval(1.2, 0.0), Complex64::new(0.0, 0.0));
    }
}

/// The soft aperture of [`Probe::aperture`] with its flat parts decided on `|k|²`: 1 inside
/// `(k_α − dk/2)²`, 0 from `(k_α + dk/2)²` on, so most frequencies need no square root (the
/// spectrum's and the fit objective's inner loops).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SoftAperture {
    k_alpha: f64,
    inv_dk: f64,
    inner2: f64,
    outer2: f64,
}

impl SoftAperture {
    /// The aperture of semi-angle `k_alpha` (Å⁻¹) with a rim one detector pixel (`1 / inv_dk`) wide.
    pub(crate) fn new(k_alpha: f64, inv_dk: f64) -> Self {
        let half = 0.5 / inv_dk;
        let inner = (k_alpha - half).max(0.0);
        let outer = k_alpha + half;
        SoftAperture { k_alpha, inv_dk, inner2: inner * inner, outer2: outer * outer }
    }

    /// `A(k)` at `(k_row, k_col)`.
    #[inline]
    pub(crate) fn at(&self, kr: f64, kc: f64) -> f64 {
        let k2 = kr * kr + kc * kc;
        if k2 >= self.outer2 {
            0.0
        } else if k2 < self.inner2 {
            1.0
        } else {
            ((self.k_alpha - k2.sqrt()) * self.inv_dk + 0.5).clamp(0.0, 1.0)
        }
    }
}
