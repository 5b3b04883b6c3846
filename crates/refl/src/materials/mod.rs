//! Optical constants of materials: δ, β from a chemical formula, a mass density and the photon
//! energy via the Henke/CXRO atomic scattering factors ([`Compound`]), or from a user-supplied table
//! of uniaxial constants vs energy ([`OpticalTable`], the PRSoXR workflow near absorption edges).
//!
//! Units: mass density in g/cm³, photon energy in eV. n = 1 − δ + iβ per axis (CONVENTIONS.md):
//! δ = (r_e λ²/2π) Σᵢ nᵢ f1ᵢ, β = (r_e λ²/2π) Σᵢ nᵢ f2ᵢ, with nᵢ = ρ N_A cᵢ / M atoms per Å³ and
//! λ = hc/E. The shipped data and how it was made: `crates/refl/data/henke/README.md`.

mod formula;
mod henke;
pub(crate) mod interp;
mod table;

pub use crate::profile::OpticalConstants;
pub use formula::Formula;
pub use table::{Interpolation, OpticalTable};

use crate::ReflError;
use scatterlab_core::units::HC_EV_ANGSTROM;

/// Classical electron radius in Å (CODATA 2022, the value periodictable 2.1.0 uses; the 2018
/// value 2.8179403262e-5 differs by 2e-9 relative).
pub const ELECTRON_RADIUS_ANGSTROM: f64 = 2.8179403205e-5;
/// Avogadro's number, mol⁻¹ (exact since SI 2019).
pub const AVOGADRO: f64 = 6.02214076e23;
/// Å³ per cm³.
const ANGSTROM3_PER_CM3: f64 = 1e24;

/// Henke atomic scattering factors (f1, f2) of one element (symbol, case-sensitive) at a photon
/// energy (eV): f1 linear and f2 log–log in energy between tabulated rows.
pub fn scattering_factors(symbol: &str, energy_ev: f64) -> Result<(f64, f64), ReflError> {
    let data = henke::data()?;
    let z = data.atomic_number(symbol).ok_or_else(|| ReflError::input(format!("element '{symbol}'"), "unknown element symbol (Henke data covers H..U)"))?;
    let table = &data.tables[z - 1];
    table.at(energy_ev).ok_or_else(|| {
        let (lo, hi) = table.range();
        ReflError::input(format!("element '{symbol}' energy"), format!("{energy_ev} eV is outside its Henke table ({lo}–{hi} eV)"))
    })
}

/// An isotropic material from formula + mass density (g/cm³).
#[derive(Clone, Debug, PartialEq)]
pub struct Compound {
    /// The chemical formula.
    pub formula: Formula,
    /// Mass density, g/cm³.
    pub density_g_cm3: f64,
}

impl Compound {
    /// Parses `formula` and checks that the density is a finite positive number of g/cm³.
    pub fn new(formula: &str, density_g_cm3: f64) -> Result<Compound, ReflError> {
        let compound = Compound { formula: Formula::parse(formula)?, density_g_cm3 };
        compound.check_density()?;
        Ok(compound)
    }

    fn check_density(&self) -> Result<(), ReflError> {
        if self.density_g_cm3.is_finite() && self.density_g_cm3 > 0.0 {
            Ok(())
        } else {
            Err(ReflError::input(format!("compound '{}' density", self.formula), format!("must be a finite positive number of g/cm³, got {}", self.density_g_cm3)))
        }
    }

    /// The energy range (eV) where every element of the formula has f1 and f2 tabulated.
    pub fn energy_range(&self) -> Result<(f64, f64), ReflError> {
        let data = henke::data()?;
        Ok(self.formula.atomic_numbers().fold((f64::NEG_INFINITY, f64::INFINITY), |(lo, hi), (z, _)| {
            let (l, h) = data.tables[z - 1].range();
            (lo.max(l), hi.min(h))
        }))
    }

    /// δ, β at a photon energy (eV) from Henke f1, f2 (isotropic: _o == _e). An energy outside an
    /// element's table (Henke: ~29–30000 eV with f1; a few updated elements start lower) is an
    /// error naming the formula and the energy.
    pub fn optical_constants(&self, energy_ev: f64) -> Result<OpticalConstants, ReflError> {
        self.check_density()?;
        let object = || format!("compound '{}' energy", self.formula);
        if !(energy_ev.is_finite() && energy_ev > 0.0) {
            return Err(ReflError::input(object(), format!("must be a finite positive number of eV, got {energy_ev}")));
        }
        let data = henke::data()?;
        let (mut sum_f1, mut sum_f2) = (0.0, 0.0);
        for (z, count) in self.formula.atomic_numbers() {
            let table = &data.tables[z - 1];
            let Some((f1, f2)) = table.at(energy_ev) else {
                let (lo, hi) = table.range();
                let symbol = &data.elements[z - 1].symbol;
                return Err(ReflError::input(object(), format!("{energy_ev} eV is outside the Henke table of {symbol} ({lo}–{hi} eV)")));
            };
            sum_f1 += count * f1;
            sum_f2 += count * f2;
        }
        // Formula units per Å³; with counts cᵢ, atoms of element i per Å³ = units · cᵢ.
        let units_per_a3 = self.density_g_cm3 * AVOGADRO / self.formula.molar_mass() / ANGSTROM3_PER_CM3;
        let lambda = HC_EV_ANGSTROM / energy_ev;
        let scale = ELECTRON_RADIUS_ANGSTROM * lambda * lambda / (2.0 * std::f64::consts::PI) * units_per_a3;
        let (delta, beta) = (scale * sum_f1, scale * sum_f2);
        Ok(OpticalConstants { delta_o: delta, beta_o: beta, delta_e: delta, beta_e: beta })
    }
}
