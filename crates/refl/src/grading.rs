//! Roughness and grading on top of the sharp-interface recursion: pure functions that build a new
//! [`Stack`] (inputs are never modified).
//!
//! * [`InterfaceShape`] per interface: Névot–Croce keeps the sharp interface with its damping factor
//!   (the recursion's own behaviour); `Erf`/`Tanh` replace it by microslices following the profile
//!   ([`microslice`], adaptive slab count, see [`SliceOptions`]).
//! * [`graded_film`]: a thick film split into sublayers whose density and orientational order vary
//!   with depth ([`DepthProfile`]: constant, linear, monotone PCHIP spline).
//! * [`depth_samples`]: the profile for plotting, through `profile::depth_grid`/`profile::profile_at`.
//!
//! Both interface shapes use σ as the **rms width** of the interface, i.e. the standard deviation
//! of the step's derivative dρ/dz (a probability density once normalised):
//! * erf: ½[1 + erf(z/(σ√2))], the cumulative normal — rms width σ by definition.
//! * tanh: ½[1 + tanh(z/w)] with w = 2√3 σ/π, i.e. tanh(z·π/(2√3 σ)). Its derivative is the
//!   logistic density with scale s = w/2, whose variance is π²s²/3 (e.g. Johnson, Kotz &
//!   Balakrishnan, *Continuous Univariate Distributions* vol. 2, ch. 23, logistic distribution),
//!   so σ² = π²w²/12 gives w = 2√3σ/π ≈ 1.10266 σ. (refnx's `Tanh` instead matches the erf's
//!   central slope, w = σ√(π/2); its rms width is 1.1369 σ, not σ.)

mod film;
mod pchip;
mod slice;

pub use film::{graded_film, DepthProfile, GradedFilm, OrientedMaterial, Sampling};
pub use slice::microslice;

use crate::profile::{depth_grid, profile_at, OpticalConstants};
use crate::{ReflError, Stack};

/// w/σ for the tanh interface: 2√3/π (see the module docs for why).
pub const TANH_WIDTH_PER_SIGMA: f64 = 1.102_657_790_843_584;

/// How one interface between two layers is modelled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InterfaceShape {
    /// Sharp interface with the Névot–Croce factor exp(−2 k_a k_b σ²) (the recursion's default).
    #[default]
    NevotCroce,
    /// Error-function profile of rms width σ, microsliced.
    Erf,
    /// Hyperbolic-tangent profile of rms width σ (tanh(z·π/(2√3 σ))), microsliced.
    Tanh,
}

impl InterfaceShape {
    /// The fraction (0 to 1) of the step reached at `x` Å below the interface centre, for rms
    /// width `sigma` > 0. Névot–Croce is reported as the erf profile it approximates.
    pub fn step(self, x: f64, sigma: f64) -> f64 {
        match self {
            // erfc keeps relative precision in the upper-side tail where 1 + erf would cancel.
            InterfaceShape::NevotCroce | InterfaceShape::Erf => 0.5 * libm::erfc(-x / (sigma * std::f64::consts::SQRT_2)),
            InterfaceShape::Tanh => 0.5 * (1.0 + (x / (TANH_WIDTH_PER_SIGMA * sigma)).tanh()),
        }
    }

    /// The largest slope of the unit step, per Å, times σ: 1/√(2π) for erf, 1/(2 w/σ) for tanh.
    fn max_slope_times_sigma(self) -> f64 {
        match self {
            InterfaceShape::NevotCroce | InterfaceShape::Erf => 1.0 / (2.0 * std::f64::consts::PI).sqrt(),
            InterfaceShape::Tanh => 0.5 / TANH_WIDTH_PER_SIGMA,
        }
    }

    /// The half-width k (in units of σ) of the window outside which at most `tail` of the step
    /// remains on each side: erf k = √2·erfc⁻¹(2·tail) (4.75 at 1e-6), tanh k = (w/σ)·½ln((1 − tail)/tail)
    /// (7.62 at 1e-6; tanh tails are exponential, so it needs a wider window than erf).
    pub fn extent_sigmas(self, tail: f64) -> f64 {
        match self {
            InterfaceShape::NevotCroce | InterfaceShape::Erf => {
                // Bisection on erfc(k/√2) = 2·tail: monotone, 200 halvings reach f64 resolution.
                let (mut lo, mut hi) = (0.0_f64, 40.0_f64);
                for _ in 0..200 {
                    let mid = 0.5 * (lo + hi);
                    if libm::erfc(mid / std::f64::consts::SQRT_2) > 2.0 * tail {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                0.5 * (lo + hi)
            }
            InterfaceShape::Tanh => TANH_WIDTH_PER_SIGMA * 0.5 * ((1.0 - tail) / tail).ln(),
        }
    }

    fn is_graded(self) -> bool {
        !matches!(self, InterfaceShape::NevotCroce)
    }
}

/// How finely [`microslice`] cuts a graded interface.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SliceOptions {
    /// Largest change of the optical constants between adjacent microslices, as a fraction of the
    /// graded region's contrast (the largest over δ_o, β_o, δ_e, β_e of the summed step sizes in
    /// the region). It sets the slab thickness h = contrast_step × (contrast / steepest slope):
    /// 0.05 σ for an isolated erf interface at the default 0.02, about 190 slabs over its window.
    pub contrast_step: f64,
    /// Largest microslice thickness in Å, so wide, shallow grades are still followed. Default 1 Å:
    /// well below 1/q (≥ 4 Å for the refloxide shape's q ≤ 0.25 Å⁻¹); it binds only when
    /// σ ≳ 20 Å at the default contrast_step.
    pub max_thickness: f64,
    /// Fraction of each step left outside the sliced window on either side; it sets the window
    /// half-width k σ through [`InterfaceShape::extent_sigmas`]. Default 1e-6: erf k = 4.753,
    /// tanh k = 7.617. The cut-off is a jump of tail × contrast at ±kσ, which in R weighs about
    /// 2·tail·exp(q²σ²/2) relative to the interface's own term (more at fringe minima): against
    /// refnx, tail 1e-4 gave 1e-3 errors at qσ ≈ 1.2; 1e-6 gives 2e-6 (erf) and 3e-5 (tanh,
    /// whose exponential tails carry more weight far out) (tests/grading.rs).
    pub tail: f64,
}

impl Default for SliceOptions {
    fn default() -> Self {
        Self { contrast_step: 0.02, max_thickness: 1.0, tail: 1e-6 }
    }
}

impl SliceOptions {
    /// Checks 0 < contrast_step ≤ 1, max_thickness > 0, 0 < tail < 0.5, all finite.
    pub fn validate(&self) -> Result<(), ReflError> {
        let checks = [
            ("slice options contrast_step", self.contrast_step, self.contrast_step > 0.0 && self.contrast_step <= 1.0, "in (0, 1]"),
            ("slice options max_thickness", self.max_thickness, self.max_thickness > 0.0, "> 0 Å"),
            ("slice options tail", self.tail, self.tail > 0.0 && self.tail < 0.5, "in (0, 0.5)"),
        ];
        for (name, value, ok, range) in checks {
            if !(value.is_finite() && ok) {
                return Err(ReflError::input(name, format!("must be finite and {range}, got {value}")));
            }
        }
        Ok(())
    }
}

/// A depth profile sampled for plotting: depths (Å, z = 0 at the top interface) and constants.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DepthSamples {
    /// Depths in Å.
    pub z: Vec<f64>,
    /// δ_o, β_o, δ_e, β_e at each depth.
    pub constants: Vec<OpticalConstants>,
}

/// The stack's profile as the recursion sees it (`profile::depth_grid` + `profile::profile_at`:
/// staircase for microslices and sublayers, erf for Névot–Croce interfaces), at `points` depths.
pub fn depth_samples(stack: &Stack, points: usize) -> Result<DepthSamples, ReflError> {
    stack.validate()?;
    if points < 2 {
        return Err(ReflError::input("depth profile points", format!("needs at least 2, got {points}")));
    }
    let z = depth_grid(stack, points);
    let constants = profile_at(stack, &z);
    Ok(DepthSamples { z, constants })
}
