//! Everything the user can set in the reflectivity panel, as one comparable value.
//!
//! The panel recomputes whenever the current inputs differ from those of the last computation,
//! so a change from any source (a widget, a test, a future file loader) triggers exactly one run.

use scatterlab_refl::{Layer, Stack};

use super::materials::LayerMaterial;

/// Which engine the user asked for. The panel never substitutes one for the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    /// `scatterlab_refl::cpu`: f64 recursion, run inline on the UI thread (it takes microseconds).
    #[default]
    Cpu,
    /// `scatterlab_refl::gpu`: the f32 WGSL kernel on eframe's wgpu device, run as a background job.
    Gpu,
}

impl Device {
    /// The label of the device selector.
    pub fn label(self) -> &'static str {
        match self {
            Device::Cpu => "CPU (f64)",
            Device::Gpu => "GPU (f32, WGSL)",
        }
    }
}

/// The reflectivity panel's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct ReflInputs {
    /// The layers: fronting medium first, substrate last.
    pub stack: Stack,
    /// Each layer's material: a formula and density that set its δ, β, or typed δ, β.
    pub materials: Vec<LayerMaterial>,
    /// Photon energy in eV.
    pub energy_ev: f64,
    /// First q of the grid, Å⁻¹.
    pub q_min: f64,
    /// Last q of the grid, Å⁻¹ (the engine rejects q ≥ 2 k0).
    pub q_max: f64,
    /// Number of q points, evenly spaced from `q_min` to `q_max`.
    pub n_points: usize,
    /// Instrument resolution dQ/Q as a FWHM in percent; 0 means no smearing.
    pub resolution_pct: f64,
    /// The engine to run on.
    pub device: Device,
}

impl ReflInputs {
    /// The built-in example a newcomer sees first: a 200 Å uniaxial organic film on a thin
    /// oxide on silicon at 250 eV (near the carbon K edge, where the film's anisotropy shows).
    pub fn example() -> Self {
        let film = Layer { thickness: 200.0, roughness: 4.0, delta_o: 1.8e-3, beta_o: 1.0e-4, delta_e: 2.2e-3, beta_e: 1.2e-4 };
        let oxide = Layer::isotropic(15.0, 3.0, 4.5e-3, 1.5e-3);
        let silicon = Layer::isotropic(0.0, 3.0, 5.97e-3, 4.25e-3);
        Self {
            stack: Stack { layers: vec![Layer::VACUUM, film, oxide, silicon] },
            materials: vec![LayerMaterial::MANUAL; 4],
            energy_ev: 250.0,
            q_min: 0.005,
            q_max: 0.25,
            n_points: 400,
            resolution_pct: 0.0,
            device: Device::Cpu,
        }
    }

    /// The q grid, Å⁻¹: `n_points` values evenly spaced from `q_min` to `q_max` inclusive.
    pub fn q_grid(&self) -> Vec<f64> {
        match self.n_points {
            0 => Vec::new(),
            1 => vec![self.q_min],
            n => {
                let step = (self.q_max - self.q_min) / (n - 1) as f64;
                // The last point is set exactly so that q_max itself is what the engine checks.
                (0..n).map(|i| if i + 1 == n { self.q_max } else { self.q_min + step * i as f64 }).collect()
            }
        }
    }

    /// The resolution the engine smears with: `None` at 0 %, else constant dQ/Q = pct / 100.
    pub fn resolution(&self) -> scatterlab_refl::Resolution {
        if self.resolution_pct > 0.0 {
            scatterlab_refl::Resolution::ConstantDqOverQ(self.resolution_pct / 100.0)
        } else {
            scatterlab_refl::Resolution::None
        }
    }

    /// 2 k0 in Å⁻¹ at the current energy: the largest q the engine accepts (exclusive).
    pub fn q_limit(&self) -> f64 {
        2.0 * scatterlab_core::units::photon_k0(self.energy_ev)
    }

    /// The largest q whose smearing window stays below 2k0: 2k0 itself without resolution,
    /// else 2k0 / (1 + 6σ/q) (the widest window the engine's smearing rules use is ±6σ).
    pub fn q_cutoff(&self) -> f64 {
        let sigma_over_q = self.resolution_pct / 100.0 / scatterlab_refl::resolution::FWHM_PER_SIGMA;
        self.q_limit() / (1.0 + SMEARING_WINDOW_SIGMA * sigma_over_q.max(0.0))
    }

    /// Whether the requested q max lies beyond [`Self::q_cutoff`] (the plot then stops there).
    pub fn is_clamped(&self) -> bool {
        self.q_max >= self.q_cutoff()
    }

    /// The points of [`Self::q_grid`] below [`Self::q_cutoff`]: what is computed and plotted.
    /// R does not exist at q ≥ 2k0 (the beam would leave at more than 90°), so the rest of the
    /// requested range is left out and the panel says so, rather than failing the whole curve.
    pub fn valid_q_grid(&self) -> Vec<f64> {
        let cutoff = self.q_cutoff();
        self.q_grid().into_iter().filter(|&q| q < cutoff).collect()
    }
}

/// Half-width in σ of the widest smearing window (the converged rule's; refnx's is 3.5σ).
const SMEARING_WINDOW_SIGMA: f64 = 6.0;

impl Default for ReflInputs {
    fn default() -> Self {
        Self::example()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_spans_the_range_exactly() {
        let inputs = ReflInputs::example();
        let q = inputs.q_grid();
        assert_eq!(q.len(), 400);
        assert_eq!(q[0], 0.005);
        assert_eq!(q[399], 0.25);
        assert!(q.windows(2).all(|w| w[1] > w[0]));
        assert!(inputs.q_max < inputs.q_limit());
    }
}
