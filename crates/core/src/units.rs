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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k0_at_250_ev_matches_fixture_limit() {
        // The fixture README: at 250 eV, 2 k0 = 0.2534 Å⁻¹.
        assert!((2.0 * photon_k0(250.0) - 0.2534).abs() < 1e-4);
        assert!((photon_wavelength(250.0) * photon_k0(250.0) - 2.0 * std::f64::consts::PI).abs() < 1e-12);
    }
}
