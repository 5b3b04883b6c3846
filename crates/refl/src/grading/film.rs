//! Thick films whose density and orientational order vary with depth, as N uniaxial sublayers.
//!
//! Orientation: a molecule with a uniaxial polarisability, Δ along its axis u, averaged over
//! orientations with order parameter S = ⟨P₂(cos θ)⟩ (θ between u and the surface normal z) has
//! ⟨u_z²⟩ = (1 + 2S)/3 and ⟨u_x²⟩ = (1 − S)/3. Since δ and β are linear in the susceptibility
//! (χ = −2δ + 2iβ, the engine's convention), the same averaging holds for them exactly:
//!
//! δ_e = δ̄ + (2/3) S Δδ,  δ_o = δ̄ − (1/3) S Δδ,  β_e = β̄ + (2/3) S Δβ,  β_o = β̄ − (1/3) S Δβ,
//!
//! where δ̄, β̄ are the isotropic values (S = 0) and Δδ = δ_∥ − δ_⊥, Δβ = β_∥ − β_⊥ are the
//! molecular birefringence and dichroism (δ, β along the molecular axis minus across it; the
//! complex Δ = Δδ + iΔβ). The trace (2δ_o + δ_e)/3 = δ̄ is kept for every S. Density then scales
//! all four: the layer has ρ(z) × (δ_o, β_o, δ_e, β_e).

use super::pchip::Pchip;
use crate::{Layer, ReflError};

/// A parameter as a function of the depth fraction f (0 at the film's top, 1 at its bottom).
#[derive(Clone, Debug, PartialEq)]
pub enum DepthProfile {
    /// The same value throughout.
    Constant(f64),
    /// (1 − f)·top + f·bottom: exactly `top` at f = 0 and `bottom` at f = 1.
    Linear {
        /// Value at the top of the film.
        top: f64,
        /// Value at the bottom of the film.
        bottom: f64,
    },
    /// Monotone PCHIP through the knots (depth fraction, value): fractions in [0, 1], strictly
    /// increasing, at least 2; the end knots' values hold outside their range.
    Spline {
        /// (depth fraction, value) pairs.
        knots: Vec<(f64, f64)>,
    },
}

impl DepthProfile {
    /// Checks the profile; `what` names it in the error (e.g. "graded film density").
    pub fn validate(&self, what: &str) -> Result<(), ReflError> {
        let finite = |name: String, v: f64| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(ReflError::input(name, format!("not a finite number ({v})")))
            }
        };
        match self {
            DepthProfile::Constant(v) => finite(what.to_owned(), *v),
            DepthProfile::Linear { top, bottom } => finite(format!("{what} top"), *top).and(finite(format!("{what} bottom"), *bottom)),
            DepthProfile::Spline { knots } => {
                if knots.len() < 2 {
                    return Err(ReflError::input(format!("{what} knots"), format!("needs at least 2 knots, got {}", knots.len())));
                }
                for (k, &(f, v)) in knots.iter().enumerate() {
                    finite(format!("{what} knot {k} value"), v)?;
                    if !(0.0..=1.0).contains(&f) {
                        return Err(ReflError::input(format!("{what} knot {k} depth fraction"), format!("must be in [0, 1], got {f}")));
                    }
                    if k > 0 && f <= knots[k - 1].0 {
                        return Err(ReflError::input(format!("{what} knot {k} depth fraction"), format!("must exceed the previous knot's {}, got {f}", knots[k - 1].0)));
                    }
                }
                Ok(())
            }
        }
    }

    /// The values at the given depth fractions. Validates first (`what` names the profile).
    pub fn sample(&self, fractions: &[f64], what: &str) -> Result<Vec<f64>, ReflError> {
        self.validate(what)?;
        Ok(match self {
            DepthProfile::Constant(v) => vec![*v; fractions.len()],
            DepthProfile::Linear { top, bottom } => fractions.iter().map(|&f| (1.0 - f) * top + f * bottom).collect(),
            DepthProfile::Spline { knots } => {
                let spline = Pchip::new(knots);
                fractions.iter().map(|&f| spline.at(f)).collect()
            }
        })
    }
}

/// Where each sublayer samples the profiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sampling {
    /// At sublayer centres f = (k + ½)/N: the midpoint rule, so for a linear profile each
    /// sublayer holds the exact average over its depth range.
    #[default]
    Centres,
    /// At f = k/(N − 1) (f = 0 when N = 1): the first sublayer has exactly the top value and the
    /// last exactly the bottom value (refloxide's benchmark shape is built this way).
    Ends,
}

/// An oriented material: isotropic δ̄, β̄ and the molecular birefringence Δδ, dichroism Δβ.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrientedMaterial {
    /// Isotropic δ̄ (orientation average at full density).
    pub delta: f64,
    /// Isotropic β̄.
    pub beta: f64,
    /// Δδ = δ along the molecular axis − δ across it.
    pub delta_birefringence: f64,
    /// Δβ = β along the molecular axis − β across it.
    pub beta_birefringence: f64,
}

impl OrientedMaterial {
    /// (δ_o, β_o, δ_e, β_e) at order parameter `order` and relative density `density`.
    pub fn constants(&self, order: f64, density: f64) -> [f64; 4] {
        let (third, two_thirds) = (order / 3.0, 2.0 * order / 3.0);
        [
            density * (self.delta - third * self.delta_birefringence),
            density * (self.beta - third * self.beta_birefringence),
            density * (self.delta + two_thirds * self.delta_birefringence),
            density * (self.beta + two_thirds * self.beta_birefringence),
        ]
    }
}

/// A film of `thickness` Å split into `sublayers` equal uniaxial sublayers.
#[derive(Clone, Debug, PartialEq)]
pub struct GradedFilm {
    /// Total thickness in Å.
    pub thickness: f64,
    /// Roughness (Å) of the film's top interface, given to the first sublayer; the others get 0.
    pub roughness: f64,
    /// Number of sublayers N ≥ 1.
    pub sublayers: usize,
    /// The material at full density.
    pub material: OrientedMaterial,
    /// Relative density ρ (≥ 0; 1 = the material's nominal density) versus depth.
    pub density: DepthProfile,
    /// Order parameter S (−0.5 ≤ S ≤ 1; 0 isotropic, 1 axes along z, −0.5 in-plane) versus depth.
    pub order: DepthProfile,
    /// Where each sublayer samples the profiles.
    pub sampling: Sampling,
}

/// The film's sublayers, top first, to be placed into a [`crate::Stack`] between other layers.
/// Every sublayer is checked: density ≥ 0, S in [−0.5, 1], β_o, β_e ≥ 0 (no gain), all finite.
pub fn graded_film(film: &GradedFilm) -> Result<Vec<Layer>, ReflError> {
    let n = film.sublayers;
    if n == 0 {
        return Err(ReflError::input("graded film sublayers", "must be at least 1, got 0"));
    }
    for (name, v) in [("graded film thickness", film.thickness), ("graded film roughness", film.roughness)] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(ReflError::input(name, format!("must be finite and ≥ 0 Å, got {v}")));
        }
    }
    let m = &film.material;
    for (name, v) in [("delta", m.delta), ("beta", m.beta), ("delta_birefringence", m.delta_birefringence), ("beta_birefringence", m.beta_birefringence)] {
        if !v.is_finite() {
            return Err(ReflError::input(format!("graded film material {name}"), format!("not a finite number ({v})")));
        }
    }
    let fractions: Vec<f64> = match film.sampling {
        Sampling::Centres => (0..n).map(|k| (k as f64 + 0.5) / n as f64).collect(),
        Sampling::Ends if n == 1 => vec![0.0],
        Sampling::Ends => (0..n).map(|k| k as f64 / (n - 1) as f64).collect(),
    };
    let density = film.density.sample(&fractions, "graded film density")?;
    let order = film.order.sample(&fractions, "graded film order parameter")?;
    let dz = film.thickness / n as f64;
    let mut layers = Vec::with_capacity(n);
    for k in 0..n {
        let (rho, s) = (density[k], order[k]);
        if rho < 0.0 {
            return Err(ReflError::input(format!("graded film density at sublayer {k}"), format!("must be ≥ 0, got {rho}")));
        }
        if !(-0.5..=1.0).contains(&s) {
            return Err(ReflError::input(format!("graded film order parameter at sublayer {k}"), format!("must be in [−0.5, 1], got {s}")));
        }
        let [delta_o, beta_o, delta_e, beta_e] = m.constants(s, rho);
        if beta_o < 0.0 || beta_e < 0.0 {
            return Err(ReflError::input(
                format!("graded film absorption at sublayer {k}"),
                format!("β_o = {beta_o:e}, β_e = {beta_e:e} at S = {s}: the dichroism Δβ exceeds what β̄ allows"),
            ));
        }
        let roughness = if k == 0 { film.roughness } else { 0.0 };
        layers.push(Layer { thickness: dz, roughness, delta_o, beta_o, delta_e, beta_e });
    }
    Ok(layers)
}
