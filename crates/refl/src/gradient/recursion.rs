//! The Parratt recursion of [`crate::cpu`], written once over [`Cx`]: on [`C64`] it is the plain
//! value, on [`crate::dual::Jet`] it carries exact derivatives with respect to whichever inputs were
//! seeded as variables (layer constants, the photon energy, q).
//!
//! Every step mirrors `cpu::prepare` / `cpu::point` (same cancellation-free r_s/r_p numerators, same
//! decaying root, Névot–Croce with the mode's own kz, same phase), so the value equals the f64
//! reference to rounding. Two deliberate differences, both invisible in the value:
//! * the phase exp(2i k d) of an interior layer is formed also when d = 0 (it is exactly 1 there),
//!   so ∂/∂d at d = 0 is the one-sided derivative 2i k·X rather than 0;
//! * the Névot–Croce factor is skipped when σ = 0, as in `cpu`: its σ-derivative 4σ(…) vanishes there.

use num_complex::Complex64 as C64;

use crate::dual::Cx;

/// Per-layer constants that do not depend on q (the generic twin of `cpu::LayerTerms`).
#[derive(Clone, Copy, Debug)]
pub struct LayerTerms<T> {
    /// χ_o k0².
    pub chi_o_k: T,
    /// ε_o / ε_e.
    pub eps_ratio: T,
    /// χ_e k0².
    pub chi_e_k: T,
    /// 1/ε_o.
    pub inv_eps_o: T,
    /// Thickness d in Å.
    pub thickness: T,
    /// σ² in Å² of the interface above this layer.
    pub sigma2: T,
}

/// Per-interface constants (interface above layer b = index + 1), the twin of `cpu::InterfaceTerms`.
#[derive(Clone, Copy, Debug)]
pub struct InterfaceTerms<T> {
    /// (χ_oa − χ_ob) k0²: numerator of r_s.
    pub ds: T,
    /// k0²(χ_ea − χ_eb + χ_ea P_b − χ_eb P_a) / ((1+P_a)(1+P_b)).
    pub dp_const: T,
    /// (P_b − P_a) / ((1+P_a)(1+P_b)).
    pub dp_q2: T,
}

/// The inputs of one layer, each possibly a seeded variable.
#[derive(Clone, Copy, Debug)]
pub struct LayerInput<T> {
    /// Thickness in Å.
    pub thickness: T,
    /// Roughness σ in Å.
    pub roughness: T,
    /// Ordinary δ.
    pub delta_o: T,
    /// Ordinary β.
    pub beta_o: T,
    /// Extraordinary δ.
    pub delta_e: T,
    /// Extraordinary β.
    pub beta_e: T,
}

/// 2π/(hc) in Å⁻¹ per eV: k0 = E · this, as `scatterlab_core::units::photon_k0` computes it.
fn k0_per_ev() -> f64 {
    2.0 * std::f64::consts::PI / scatterlab_core::units::HC_EV_ANGSTROM
}

/// χ = −2δ + 2iβ from real δ and β.
#[inline]
fn chi<T: Cx>(delta: T, beta: T) -> T {
    delta * -2.0 + beta * C64::new(0.0, 2.0)
}

/// The q-independent terms of a stack at photon energy `energy_ev` (the twin of `cpu::prepare`).
/// Fills `layers` and `interfaces` (cleared first) so a caller can reuse their storage.
pub fn prepare<T: Cx>(inputs: &[LayerInput<T>], energy_ev: T, layers: &mut Vec<LayerTerms<T>>, interfaces: &mut Vec<InterfaceTerms<T>>) {
    // photon_k0 is 2π·E/hc; the product order differs only in the last bit.
    let k0 = energy_ev * k0_per_ev();
    let k02 = k0 * k0;
    layers.clear();
    interfaces.clear();
    let chis = |l: &LayerInput<T>| (chi(l.delta_o, l.beta_o), chi(l.delta_e, l.beta_e));
    for l in inputs {
        let (co, ce) = chis(l);
        layers.push(LayerTerms {
            chi_o_k: co * k02,
            eps_ratio: (co + 1.0) / (ce + 1.0),
            chi_e_k: ce * k02,
            inv_eps_o: (co + 1.0).recip(),
            thickness: l.thickness,
            sigma2: l.roughness * l.roughness,
        });
    }
    let p_of = |(co, ce): (T, T)| co + ce + co * ce;
    for w in inputs.windows(2) {
        let (a, b) = (chis(&w[0]), chis(&w[1]));
        let (pa, pb) = (p_of(a), p_of(b));
        let norm = ((pa + 1.0) * (pb + 1.0)).recip();
        interfaces.push(InterfaceTerms { ds: (a.0 - b.0) * k02, dp_const: (a.1 - b.1 + a.1 * pb - b.1 * pa) * k02 * norm, dp_q2: (pb - pa) * norm });
    }
}

/// The s and p kz of a layer at Q² = (q/2)².
#[inline(always)]
fn kz_pair<T: Cx>(layer: &LayerTerms<T>, q2: T) -> (T, T) {
    ((layer.chi_o_k + q2).sqrt_decaying(), (layer.eps_ratio * (layer.chi_e_k + q2)).sqrt_decaying())
}

/// One Parratt step for r = N/D: X ← (N + D X φ)/(D + N X φ), one division instead of two.
#[inline(always)]
fn parratt_step<T: Cx>(num: T, den: T, x: T, phase: T) -> T {
    let xp = x * phase;
    (num + den * xp) / (den + num * xp)
}

/// The recursion's state below an interface: X of everything below it and the s, p kz of the
/// layer right below.
#[derive(Clone, Copy, Debug)]
pub struct Below<T> {
    /// X_s (r_s of the stack below).
    pub xs: T,
    /// X_p.
    pub xp: T,
    /// s kz of the layer below.
    pub ks: T,
    /// p kz of the layer below.
    pub kp: T,
}

impl Below<C64> {
    /// The same state as constants of another [`Cx`] type (no derivatives).
    #[inline(always)]
    pub fn lift<T: Cx>(self) -> Below<T> {
        Below { xs: T::constant(self.xs), xp: T::constant(self.xp), ks: T::constant(self.ks), kp: T::constant(self.kp) }
    }
}

/// The state in the substrate at Q² = `q2` = (q/2)²: nothing below it (X = 0).
#[inline(always)]
pub fn substrate<T: Cx>(layers: &[LayerTerms<T>], q2: T) -> Below<T> {
    let (ks, kp) = kz_pair(&layers[layers.len() - 1], q2);
    Below { xs: T::real(0.0), xp: T::real(0.0), ks, kp }
}

/// Climbs through the interfaces above layers `bottom`, `bottom − 1`, …, `top` (top ≥ 1), from
/// the state below layer `bottom`'s top interface; the step at interface b uses only the terms of
/// layers b − 1 and b (and q, k0), so a lower part free of seeded parameters can run on plain
/// numbers and be [`Below::lift`]ed.
#[inline(always)]
pub fn climb<T: Cx>(layers: &[LayerTerms<T>], interfaces: &[InterfaceTerms<T>], q2: T, below: Below<T>, top: usize, bottom: usize) -> Below<T> {
    let n = layers.len();
    let Below { mut xs, mut xp, ks: mut ks_b, kp: mut kp_b } = below;
    for b in (top..=bottom).rev() {
        let (lb, la, itf) = (&layers[b], &layers[b - 1], &interfaces[b - 1]);
        let (ks_a, kp_a) = kz_pair(la, q2);
        // r_s = ds/(k_a + k_b)², r_p = (dp_const + dp_q2 Q²)/(u_a + u_b)², u = kz_p/ε_o.
        let ss = ks_a + ks_b;
        let den_s = ss * ss;
        let sp = kp_a * la.inv_eps_o + kp_b * lb.inv_eps_o;
        let den_p = sp * sp;
        let mut num_s = itf.ds;
        let mut num_p = itf.dp_const + itf.dp_q2 * q2;
        if lb.sigma2.value().re > 0.0 {
            let f = lb.sigma2 * -2.0;
            num_s = num_s * (f * ks_a * ks_b).exp();
            num_p = num_p * (f * kp_a * kp_b).exp();
        }
        if b < n - 1 {
            let two_i_d = lb.thickness * C64::new(0.0, 2.0);
            xs = parratt_step(num_s, den_s, xs, (two_i_d * ks_b).exp());
            xp = parratt_step(num_p, den_p, xp, (two_i_d * kp_b).exp());
        } else {
            // The substrate interface: X below is 0, so X = r.
            xs = num_s / den_s;
            xp = num_p / den_p;
        }
        ks_b = ks_a;
        kp_b = kp_a;
    }
    Below { xs, xp, ks: ks_b, kp: kp_b }
}

/// r_s and r_p (complex amplitudes) at one q, from the substrate up (the twin of `cpu::point`, in
/// the numerator/denominator form of its vectorised path `cpu::lanes`). `layers` and
/// `interfaces` come from [`prepare`]; the stack has at least 2 layers.
#[inline(always)]
pub fn amplitudes<T: Cx>(layers: &[LayerTerms<T>], interfaces: &[InterfaceTerms<T>], q: T) -> (T, T) {
    let q2 = q * 0.25 * q;
    let top = climb(layers, interfaces, q2, substrate(layers, q2), 1, layers.len() - 1);
    (top.xs, top.xp)
}

/// R_s = |r_s|² and R_p = |r_p|² at one q, as real-valued `T` (imaginary parts zero).
#[inline(always)]
pub fn point<T: Cx>(layers: &[LayerTerms<T>], interfaces: &[InterfaceTerms<T>], q: T) -> (T, T) {
    let (xs, xp) = amplitudes(layers, interfaces, q);
    (xs.norm_sqr(), xp.norm_sqr())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CurveRequest, Layer, Stack};

    /// The plain (C64) instantiation equals the f64 reference recursion.
    #[test]
    fn plain_values_equal_the_cpu_reference() {
        let stack = Stack {
            layers: vec![
                Layer::VACUUM,
                Layer { thickness: 53.0, roughness: 3.0, delta_o: 1.2e-3, beta_o: 2e-4, delta_e: 0.8e-3, beta_e: 0.0 },
                Layer::isotropic(0.0, 1.0, 2e-3, 1e-4),
                Layer::isotropic(120.0, 0.0, 4e-4, 0.0),
                Layer::isotropic(0.0, 4.0, 3e-3, 5e-4),
            ],
        };
        let q: Vec<f64> = (1..200).map(|i| i as f64 * 1e-3).collect();
        let request = CurveRequest { stack: &stack, energy_ev: 500.0, q: &q };
        let want = crate::cpu::reflectivity_reference(&request).unwrap();
        let inputs: Vec<LayerInput<C64>> = stack
            .layers
            .iter()
            .map(|l| LayerInput {
                thickness: C64::real(l.thickness),
                roughness: C64::real(l.roughness),
                delta_o: C64::real(l.delta_o),
                beta_o: C64::real(l.beta_o),
                delta_e: C64::real(l.delta_e),
                beta_e: C64::real(l.beta_e),
            })
            .collect();
        let (mut layers, mut interfaces) = (Vec::new(), Vec::new());
        prepare(&inputs, C64::real(500.0), &mut layers, &mut interfaces);
        for (i, &qi) in q.iter().enumerate() {
            let (s, p) = point(&layers, &interfaces, C64::real(qi));
            assert!((s.re - want.r_s[i]).abs() <= 1e-13 * want.r_s[i], "q[{i}] R_s {} vs {}", s.re, want.r_s[i]);
            assert!((p.re - want.r_p[i]).abs() <= 1e-13 * want.r_p[i], "q[{i}] R_p {} vs {}", p.re, want.r_p[i]);
        }
    }
}
