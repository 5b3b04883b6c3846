//! Electron optics of the Bloch-wave model: relativistic wavelength, interaction constant σ,
//! the Lobato → potential constant κ, the structure-matrix prefactor σ/(κλπ) and the corrected
//! wavevector K_n = sqrt(1/λ² + U0).
//!
//! The constants and every formula follow diffBloch 0.2.0rc1 (`core/dynamical/primitives.py`)
//! operation by operation, so the fixture's `wavelength_A`, `sigma_per_V_A`, `kappa`,
//! `prefactor`, `U0_A2` and `K_n_invA` come out bit for bit (the values are CODATA 2018).

use num_complex::Complex64;
use scatterlab_core::InputError;

use crate::BlochError;

// The CODATA 2018 constants live once in `scatterlab_core::units`; re-exported for this crate's users.
pub use scatterlab_core::units::{BOHR_RADIUS, ELECTRON_MASS, ELEMENTARY_CHARGE, PLANCK, SPEED_OF_LIGHT, VACUUM_PERMITTIVITY};

/// κ = 4πε0 / (2π a0 e) in Å·V units (≈ 0.020887): converts Lobato electron scattering factors
/// (Å) into potential. Written as diffBloch writes it, 2 ε0 / (a0 e) · 1e-20, for identical bits.
pub const KAPPA: f64 = 2.0 * VACUUM_PERMITTIVITY / (BOHR_RADIUS * ELEMENTARY_CHARGE) * 1e-20;

fn check_energy(energy_ev: f64) -> Result<f64, BlochError> {
    if energy_ev.is_finite() && energy_ev > 0.0 {
        Ok(energy_ev)
    } else {
        Err(InputError::new("beam energy (eV)", format!("must be a finite positive number (got {energy_ev})")).into())
    }
}

/// Relativistic electron wavelength λ (Å) for a beam energy in eV:
/// λ = h c / sqrt(E e (2 m_e c² + E e)).
pub fn wavelength_a(energy_ev: f64) -> Result<f64, BlochError> {
    Ok(scatterlab_core::units::electron_wavelength_a(check_energy(energy_ev)?))
}

/// Interaction constant σ = 2π m e λ / h² (1/(V Å)) with the relativistic mass
/// m = (1 + E e / (m_e c²)) m_e (Spence & Zuo 1992).
pub fn sigma_per_v_a(energy_ev: f64) -> Result<f64, BlochError> {
    let energy_ev = check_energy(energy_ev)?;
    let relativistic_mass = (1.0 + ELEMENTARY_CHARGE * energy_ev / (ELECTRON_MASS * (SPEED_OF_LIGHT * SPEED_OF_LIGHT))) * ELECTRON_MASS;
    let wavelength_metres = wavelength_a(energy_ev)? * 1e-10;
    let sigma_si = 2.0 * std::f64::consts::PI * relativistic_mass * ELEMENTARY_CHARGE * wavelength_metres / (PLANCK * PLANCK);
    Ok(sigma_si * 1e-10)
}

/// Structure-matrix prefactor σ / (κ λ π) (= γ/π): multiplies F(g) (Å⁻²) into the matrix.
pub fn prefactor(energy_ev: f64) -> Result<f64, BlochError> {
    Ok(sigma_per_v_a(energy_ev)? / (KAPPA * wavelength_a(energy_ev)? * std::f64::consts::PI))
}

/// The energy-derived constants of one simulation and its mean-inner-potential correction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Optics {
    /// Beam energy (eV).
    pub energy_ev: f64,
    /// Relativistic wavelength λ (Å).
    pub wavelength_a: f64,
    /// Interaction constant σ (1/(V Å)).
    pub sigma_per_v_a: f64,
    /// σ / (κ λ π).
    pub prefactor: f64,
    /// U0 = prefactor · |F(000)| (Å⁻²), the mean-inner-potential term.
    pub u0_a2: f64,
    /// K_n = sqrt(1/λ² + U0) (Å⁻¹), diffBloch's propagation wavevector.
    pub k_n_inv_a: f64,
}

impl Optics {
    /// The constants for `energy_ev` with the mean inner potential of `f000` (F(000), Å⁻²;
    /// its modulus, so an absorptive F(000) counts its imaginary part as diffBloch does).
    pub fn new(energy_ev: f64, f000: Complex64) -> Result<Self, BlochError> {
        let wavelength_a = wavelength_a(energy_ev)?;
        let sigma_per_v_a = sigma_per_v_a(energy_ev)?;
        let prefactor = prefactor(energy_ev)?;
        let modulus = f000.norm();
        if !modulus.is_finite() {
            return Err(InputError::new("F(000)", format!("must be finite (got {f000})")).into());
        }
        Self::from_parts(energy_ev, wavelength_a, sigma_per_v_a, prefactor, modulus * prefactor)
    }

    /// The constants for `energy_ev` with a given mean-inner-potential term U0 (Å⁻²), e.g. the
    /// `u0` a diffBloch plan froze from its start model (`_mean_inner_potential`), so that K_n and
    /// the excitation errors are those of that plan rather than of the current structure.
    pub fn with_u0(energy_ev: f64, u0_a2: f64) -> Result<Self, BlochError> {
        if !u0_a2.is_finite() {
            return Err(InputError::new("mean inner potential U0", format!("must be finite (got {u0_a2})")).into());
        }
        Self::from_parts(energy_ev, wavelength_a(energy_ev)?, sigma_per_v_a(energy_ev)?, prefactor(energy_ev)?, u0_a2)
    }

    /// K_n = sqrt(1/λ² + U0) from the energy-derived constants (checked by the callers).
    fn from_parts(energy_ev: f64, wavelength_a: f64, sigma_per_v_a: f64, prefactor: f64, u0_a2: f64) -> Result<Self, BlochError> {
        let k0 = 1.0 / wavelength_a;
        let radicand = k0 * k0 + u0_a2;
        if radicand <= 0.0 {
            return Err(InputError::new("mean inner potential U0", "1/λ² + U0 must be positive").into());
        }
        Ok(Self { energy_ev, wavelength_a, sigma_per_v_a, prefactor, u0_a2, k_n_inv_a: radicand.sqrt() })
    }

    /// The vacuum wavevector 1/λ (Å⁻¹): abTEM's K (no U0).
    pub fn k_vacuum_inv_a(&self) -> f64 {
        1.0 / self.wavelength_a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_wavelengths_and_sigmas() {
        // diffBloch's docstrings: 0.03701 / 0.02508 / 0.01969 Å and 9.2440e-4 / 7.2884e-4 / 6.5262e-4.
        for (e, lambda, sigma) in [(100e3, 0.03701, 9.2440e-4), (200e3, 0.02508, 7.2884e-4), (300e3, 0.01969, 6.5262e-4)] {
            assert!((wavelength_a(e).unwrap() - lambda).abs() < 1e-5, "λ at {e}");
            assert!((sigma_per_v_a(e).unwrap() - sigma).abs() < 1e-8, "σ at {e}");
        }
        assert!((KAPPA - 0.020887).abs() < 1e-6);
    }

    #[test]
    fn rejects_bad_energy() {
        for e in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(matches!(wavelength_a(e), Err(BlochError::Input(_))));
            assert!(Optics::new(e, Complex64::new(0.1, 0.0)).is_err());
        }
    }

    #[test]
    fn u0_uses_the_modulus_of_f000() {
        let plain = Optics::new(200e3, Complex64::new(0.3, 0.0)).unwrap();
        let absorptive = Optics::new(200e3, Complex64::new(0.3, 0.4)).unwrap();
        assert!((absorptive.u0_a2 / plain.u0_a2 - 0.5 / 0.3).abs() < 1e-14);
        let k0 = plain.k_vacuum_inv_a();
        assert!((plain.k_n_inv_a - (k0 * k0 + plain.u0_a2).sqrt()).abs() == 0.0);
    }

    #[test]
    fn with_u0_equals_new_bit_for_bit_and_checks_u0() {
        let from_f000 = Optics::new(200e3, Complex64::new(0.3, 0.4)).unwrap();
        assert_eq!(Optics::with_u0(200e3, from_f000.u0_a2).unwrap(), from_f000);
        let frozen = Optics::with_u0(200e3, 0.116).unwrap();
        assert_eq!(frozen.u0_a2, 0.116);
        assert_eq!(frozen.prefactor, from_f000.prefactor);
        assert!(Optics::with_u0(200e3, f64::NAN).is_err());
        assert!(Optics::with_u0(-1.0, 0.1).is_err());
        assert!(Optics::with_u0(200e3, -1e6).is_err(), "1/λ² + U0 ≤ 0");
    }
}
