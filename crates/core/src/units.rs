//! Physical constants and unit conversions. Lengths are in Å, momentum transfer in Å⁻¹,
//! photon energies in eV (see CONVENTIONS.md).

/// h·c in eV·Å (the value the reflectivity fixtures use).
pub const HC_EV_ANGSTROM: f64 = 12398.4193;

/// Vacuum wavenumber k0 = 2π/λ = 2πE/(hc) in Å⁻¹ for a photon energy in eV.
pub fn photon_k0(energy_ev: f64) -> f64 {
    2.0 * std::f64::consts::PI * energy_ev / HC_EV_ANGSTROM
}

/// Photon wavelength λ = hc/E in Å for an energy in eV.
pub fn photon_wavelength(energy_ev: f64) -> f64 {
    HC_EV_ANGSTROM / energy_ev
}

/// Planck constant h (J s), CODATA 2018 (exact in the 2019 SI).
pub const PLANCK: f64 = 6.62607015e-34;
/// Electron rest mass m_e (kg), CODATA 2018.
pub const ELECTRON_MASS: f64 = 9.1093837015e-31;
/// Elementary charge e (C), CODATA 2018 (exact in the 2019 SI).
pub const ELEMENTARY_CHARGE: f64 = 1.602176634e-19;
/// Speed of light c (m/s).
pub const SPEED_OF_LIGHT: f64 = 299792458.0;
/// Vacuum permittivity ε0 (F/m), CODATA 2018.
pub const VACUUM_PERMITTIVITY: f64 = 8.8541878128e-12;
/// Bohr radius a0 (m), CODATA 2018.
pub const BOHR_RADIUS: f64 = 0.529177210903e-10;

/// h·c in keV·Å from the CODATA 2018 constants above (h c / e · 1e7, bit for bit; the electron
/// optics of 4D-STEM). Not [`HC_EV_ANGSTROM`]/1000: that one is the reflectivity fixtures' rounded value.
pub const HC_KEV_ANGSTROM: f64 = 12.398_419_843_320_026;
/// Electron rest energy m_e c² in keV as CODATA 2018 publishes it (510.998 950 00). It differs from
/// `ELECTRON_MASS · SPEED_OF_LIGHT² / ELEMENTARY_CHARGE` (510.998 949 996…) in the 11th digit, so
/// [`electron_wavelength_from_kv`] and [`electron_wavelength_a`] differ by ~4e-12 relative.
pub const ELECTRON_REST_ENERGY_KEV: f64 = 510.998_950_00;

/// Relativistic electron wavelength λ (Å) for a beam energy in eV, in SI units:
/// λ = h c / sqrt(E e (2 m_e c² + E e)). The operations are diffBloch 0.2.0rc1's
/// (`core/dynamical/primitives.py`), so the Bloch fixtures' `wavelength_A` comes out bit for bit.
/// No check of the energy: callers reject non-positive energies by name first.
pub fn electron_wavelength_a(energy_ev: f64) -> f64 {
    let charge_energy = energy_ev * ELEMENTARY_CHARGE;
    let rest = 2.0 * ELECTRON_MASS * (SPEED_OF_LIGHT * SPEED_OF_LIGHT);
    let metres = PLANCK * SPEED_OF_LIGHT / (charge_energy * (rest + charge_energy)).sqrt();
    metres * 1e10
}

/// Beam energy (eV) of a relativistic electron of wavelength `wavelength_a` (Å): the exact
/// inverse of [`electron_wavelength_a`], sqrt((m c²)² + (h c / λ)²) − m c².
pub fn electron_energy_ev(wavelength_a: f64) -> f64 {
    let rest = ELECTRON_MASS * SPEED_OF_LIGHT * SPEED_OF_LIGHT;
    let hc_over_lambda = PLANCK * SPEED_OF_LIGHT / (wavelength_a * 1e-10);
    ((rest * rest + hc_over_lambda * hc_over_lambda).sqrt() - rest) / ELEMENTARY_CHARGE
}

/// Relativistic electron wavelength in Å for an accelerating voltage in kV:
/// λ = h c / sqrt(V (2 m c² + V)) with [`HC_KEV_ANGSTROM`] and [`ELECTRON_REST_ENERGY_KEV`]
/// (the 4D-STEM calibration's wavelength when a file gives only the voltage).
pub fn electron_wavelength_from_kv(kv: f64) -> f64 {
    HC_KEV_ANGSTROM / (kv * (2.0 * ELECTRON_REST_ENERGY_KEV + kv)).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k0_at_250_ev_matches_fixture_limit() {
        // The fixture README: at 250 eV, 2 k0 = 0.2534 Å⁻¹.
        assert!((2.0 * photon_k0(250.0) - 0.2534).abs() < 1e-4);
        assert!((photon_wavelength(250.0) * photon_k0(250.0) - 2.0 * std::f64::consts::PI).abs() < 1e-12);
    }

    #[test]
    fn electron_constants_are_the_codata_2018_ones() {
        // The keV·Å product is h c / e to the last bit; the rest energy is CODATA's published one.
        assert_eq!(HC_KEV_ANGSTROM, PLANCK * SPEED_OF_LIGHT / ELEMENTARY_CHARGE * 1e10 / 1e3);
        assert!((ELECTRON_MASS * SPEED_OF_LIGHT * SPEED_OF_LIGHT / ELEMENTARY_CHARGE / 1e3 / ELECTRON_REST_ENERGY_KEV - 1.0).abs() < 1e-11);
    }

    #[test]
    fn electron_wavelengths_at_textbook_voltages() {
        // 200 kV: 0.025079 Å, 300 kV: 0.019687 Å (Williams & Carter); both forms within 1e-11.
        for (kv, want) in [(200.0, 0.025_079_34), (300.0, 0.019_687_49)] {
            let (si, kvf) = (electron_wavelength_a(kv * 1e3), electron_wavelength_from_kv(kv));
            assert!((si - want).abs() < 1e-8 && (si / kvf - 1.0).abs() < 1e-11, "{kv} kV: {si} {kvf}");
            assert!((electron_energy_ev(si) / (kv * 1e3) - 1.0).abs() < 1e-12);
        }
        // Pinned bits (the Bloch fixtures' and the 4D-STEM products' wavelengths must not move).
        assert_eq!(electron_wavelength_a(200e3), 0.025079340450548);
        assert_eq!(electron_wavelength_from_kv(300.0), 0.01968748900679167);
    }
}
