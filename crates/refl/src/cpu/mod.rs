//! The f64 CPU reference: Parratt recursion for uniaxial layers with Névot–Croce roughness.
//!
//! This is the twin of `shaders/refl/parratt.wgsl`; both follow the same steps:
//! * χ = ε − 1 = −2δ + 2iβ per axis; Q = q/2 (the vacuum kz).
//! * s: kz² = χ_o k0² + Q². p: kz² = (ε_o/ε_e)(χ_e k0² + Q²). Root with Im kz ≥ 0 ([`decaying_root`]).
//! * Interfaces in cancellation-free form: r = (k_a² − k_b²)/(k_a + k_b)², where for s
//!   k_a² − k_b² = (χ_oa − χ_ob) k0², and for p (u = kz/ε_o, u² = (χ_e k0² + Q²)/(ε_o ε_e))
//!   u_a² − u_b² = [k0²(χ_ea − χ_eb + χ_ea P_b − χ_eb P_a) + Q²(P_b − P_a)] / ((1+P_a)(1+P_b)),
//!   P = ε_o ε_e − 1 = χ_o + χ_e + χ_o χ_e. No difference of two near-equal large numbers is formed.
//! * Névot–Croce: r · exp(−2 k_a k_b σ_b²) with the same mode's kz.
//! * From the substrate up: X ← (r + X φ)/(1 + r X φ), φ = exp(2i k_b d_b); R = |X|².

mod lanes;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod simd128;
mod vmath;

use num_complex::Complex64 as C64;

use crate::{CurveRequest, Reflectivity};

/// The square root of `z` with Im ≥ 0 (Re ≥ 0 when the root is real): the wave that decays
/// downwards. Signed zeros are irrelevant: for z = −a − 0i this still returns +i√a, the decaying
/// root that refloxide 0.3.0 misses when β = 0 exactly.
#[inline]
pub fn decaying_root(z: C64) -> C64 {
    let (x, y) = (z.re, z.im);
    let mut m = (x * x + y * y).sqrt();
    if m == 0.0 && (x != 0.0 || y != 0.0) || m.is_infinite() {
        m = x.hypot(y); // squares under/overflowed
    }
    if m == 0.0 {
        return C64::new(0.0, 0.0);
    }
    let t = ((m + x.abs()) * 0.5).sqrt();
    let root = if x >= 0.0 { C64::new(t, y / (2.0 * t)) } else { C64::new(y.abs() / (2.0 * t), t.copysign(y)) };
    if root.im < 0.0 {
        -root
    } else {
        root
    }
}

/// Per-layer constants that do not depend on q.
#[derive(Clone, Copy, Debug)]
struct LayerTerms {
    /// χ_o k0².
    chi_o_k: C64,
    /// ε_o / ε_e.
    eps_ratio: C64,
    /// χ_e k0².
    chi_e_k: C64,
    /// 1/ε_o.
    inv_eps_o: C64,
    thickness: f64,
    sigma2: f64,
    /// Every phase argument 2 k_z d of this layer, s and p, over the curve's q is at most
    /// [`vmath::SMALL_PHASE`] in modulus (a thin slab of a finely sliced profile): the lanes
    /// take `exp_small`, a third of the full exp's work. Decided per layer and curve, so every
    /// lane of every path (plain, AVX, simd128) takes the same one.
    small_phase: bool,
}

/// Per-interface constants (interface above layer b = index + 1) that do not depend on q.
#[derive(Clone, Copy, Debug)]
struct InterfaceTerms {
    /// (χ_oa − χ_ob) k0²: numerator of r_s.
    ds: C64,
    /// k0²(χ_ea − χ_eb + χ_ea P_b − χ_eb P_a) / ((1+P_a)(1+P_b)).
    dp_const: C64,
    /// (P_b − P_a) / ((1+P_a)(1+P_b)).
    dp_q2: C64,
}

fn prepare(request: &CurveRequest<'_>) -> (Vec<LayerTerms>, Vec<InterfaceTerms>) {
    let (mut layers, mut interfaces) = (Vec::new(), Vec::new());
    prepare_into(request, &mut layers, &mut interfaces);
    (layers, interfaces)
}

thread_local! {
    /// The per-layer and per-interface terms of the thread's last curve, kept so that a fit's
    /// thousands of curves (a DE generation, one after another on this thread, in the browser's
    /// worker too) reuse two allocations instead of making two per curve.
    static SCRATCH: std::cell::RefCell<(Vec<LayerTerms>, Vec<InterfaceTerms>)> = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// [`prepare`] into `layers_out` and `interfaces_out` (cleared first; their capacity is reused).
fn prepare_into(request: &CurveRequest<'_>, layers_out: &mut Vec<LayerTerms>, interfaces_out: &mut Vec<InterfaceTerms>) {
    layers_out.clear();
    interfaces_out.clear();
    let k0 = scatterlab_core::units::photon_k0(request.energy_ev);
    let k02 = k0 * k0;
    let q2_max = request.q.iter().fold(0.0f64, |m, &q| m.max(0.25 * q * q));
    let chi = |l: &crate::Layer| (C64::new(-2.0 * l.delta_o, 2.0 * l.beta_o), C64::new(-2.0 * l.delta_e, 2.0 * l.beta_e));
    layers_out.extend(request.stack.layers.iter().map(|l| {
        let (co, ce) = chi(l);
        let eps_ratio = (1.0 + co) / (1.0 + ce);
        // |k_z|² ≤ |χ k0²| + Q² for s, and |ε_o/ε_e| times that of χ_e for p; 1 % margin
        // over the roots' rounding.
        let k2_max = ((co * k02).norm() + q2_max).max(eps_ratio.norm() * ((ce * k02).norm() + q2_max));
        LayerTerms {
            chi_o_k: co * k02,
            eps_ratio,
            chi_e_k: ce * k02,
            inv_eps_o: 1.0 / (1.0 + co),
            thickness: l.thickness,
            sigma2: l.roughness * l.roughness,
            small_phase: 2.0 * l.thickness * k2_max.sqrt() * 1.01 <= vmath::SMALL_PHASE,
        }
    }));
    let p_of = |(co, ce): (C64, C64)| co + ce + co * ce;
    interfaces_out.extend(request.stack.layers.windows(2).map(|w| {
        let (a, b) = (chi(&w[0]), chi(&w[1]));
        let (pa, pb) = (p_of(a), p_of(b));
        let norm = 1.0 / ((1.0 + pa) * (1.0 + pb));
        InterfaceTerms { ds: (a.0 - b.0) * k02, dp_const: (a.1 - b.1 + a.1 * pb - b.1 * pa) * k02 * norm, dp_q2: (pb - pa) * norm }
    }));
}

/// The s and p kz of a layer at Q² = (q/2)².
#[inline]
fn kz_pair(layer: &LayerTerms, q2: f64) -> (C64, C64) {
    (decaying_root(layer.chi_o_k + q2), decaying_root(layer.eps_ratio * (layer.chi_e_k + q2)))
}

/// One Parratt step: X ← (r + X φ)/(1 + r X φ).
#[inline]
fn parratt_step(r: C64, x: C64, phase: C64) -> C64 {
    let xp = x * phase;
    (r + xp) / (1.0 + r * xp)
}

/// R_s and R_p at one q: the readable scalar reference the vectorised path is tested against.
fn point(layers: &[LayerTerms], interfaces: &[InterfaceTerms], q: f64) -> (f64, f64) {
    let q2 = 0.25 * q * q;
    let n = layers.len();
    let (mut ks_b, mut kp_b) = kz_pair(&layers[n - 1], q2);
    let (mut xs, mut xp) = (C64::new(0.0, 0.0), C64::new(0.0, 0.0));
    for b in (1..n).rev() {
        let (lb, la, itf) = (&layers[b], &layers[b - 1], &interfaces[b - 1]);
        let (ks_a, kp_a) = kz_pair(la, q2);
        let ss = ks_a + ks_b;
        let mut rs = itf.ds / (ss * ss);
        let (ua, ub) = (kp_a * la.inv_eps_o, kp_b * lb.inv_eps_o);
        let sp = ua + ub;
        let mut rp = (itf.dp_const + itf.dp_q2 * q2) / (sp * sp);
        if lb.sigma2 > 0.0 {
            rs *= (-2.0 * lb.sigma2 * ks_a * ks_b).exp();
            rp *= (-2.0 * lb.sigma2 * kp_a * kp_b).exp();
        }
        if lb.thickness > 0.0 && b < n - 1 {
            let phase_s = (C64::new(0.0, 2.0 * lb.thickness) * ks_b).exp();
            let phase_p = (C64::new(0.0, 2.0 * lb.thickness) * kp_b).exp();
            xs = parratt_step(rs, xs, phase_s);
            xp = parratt_step(rp, xp, phase_p);
        } else {
            xs = parratt_step(rs, xs, C64::new(1.0, 0.0));
            xp = parratt_step(rp, xp, C64::new(1.0, 0.0));
        }
        ks_b = ks_a;
        kp_b = kp_a;
    }
    (xs.norm_sqr(), xp.norm_sqr())
}

/// Computes one curve on the CPU in f64. The request must already be validated
/// (see [`CurveRequest::validate`]); [`crate::compute`] does that.
pub fn reflectivity_unchecked(request: &CurveRequest<'_>) -> Reflectivity {
    evaluate(request, lanes::curve)
}

/// A lanes entry point: fills R_s and R_p (the last two slices) for every q.
type LanesCurve = fn(&[LayerTerms], &[InterfaceTerms], &[f64], &mut [f64], &mut [f64]);

/// One curve through `curve`, or point by point for underflowing q.
fn evaluate(request: &CurveRequest<'_>, curve: LanesCurve) -> Reflectivity {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => {
            let (layers, interfaces) = &mut *scratch;
            prepare_into(request, layers, interfaces);
            evaluate_with(request, layers, interfaces, curve)
        }
        // Only if a curve were evaluated inside another on this thread: fresh buffers then.
        Err(_) => {
            let (layers, interfaces) = prepare(request);
            evaluate_with(request, &layers, &interfaces, curve)
        }
    })
}

fn evaluate_with(request: &CurveRequest<'_>, layers: &[LayerTerms], interfaces: &[InterfaceTerms], curve: LanesCurve) -> Reflectivity {
    let n = request.q.len();
    let mut out = Reflectivity { r_s: vec![0.0; n], r_p: vec![0.0; n] };
    // The vectorised path squares kz²; keep absurdly small q (valid, but underflowing) on the
    // scalar path, which guards with hypot.
    if request.q.iter().all(|&q| q > 1e-60) {
        curve(layers, interfaces, request.q, &mut out.r_s, &mut out.r_p);
    } else {
        for (i, &q) in request.q.iter().enumerate() {
            (out.r_s[i], out.r_p[i]) = point(layers, interfaces, q);
        }
    }
    out
}

/// Validates and computes one curve with the plain-code lanes, bypassing the SIMD-specific paths
/// (the AVX2/AVX-512 builds of the same code, the wasm simd128 intrinsics): the baseline those
/// paths are tested against bit for bit (`crates/web/tests/browser_cpu_simd.rs` in the browser).
pub fn reflectivity_plain_lanes(request: &CurveRequest<'_>) -> Result<Reflectivity, crate::ReflError> {
    request.validate()?;
    Ok(evaluate(request, lanes::curve_plain))
}

/// The scalar reference recursion, point by point (slow; for tests of the vectorised path).
pub fn reflectivity_reference(request: &CurveRequest<'_>) -> Result<Reflectivity, crate::ReflError> {
    request.validate()?;
    let (layers, interfaces) = prepare(request);
    let (r_s, r_p) = request.q.iter().map(|&q| point(&layers, &interfaces, q)).unzip();
    Ok(Reflectivity { r_s, r_p })
}

/// Validates and computes one curve on the CPU in f64 (the synchronous entry point).
pub fn reflectivity(request: &CurveRequest<'_>) -> Result<Reflectivity, crate::ReflError> {
    request.validate()?;
    Ok(reflectivity_unchecked(request))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decaying_root_picks_positive_imaginary_part() {
        for z in [C64::new(-4.0, 0.0), C64::new(-4.0, -0.0), C64::new(-4.0, 1e-30), C64::new(-4.0, -1e-30)] {
            let r = decaying_root(z);
            assert!(r.im > 0.0, "{z} -> {r}");
            assert!((r * r - z).norm() < 1e-12);
        }
        let r = decaying_root(C64::new(9.0, -0.0));
        assert_eq!((r.re, r.im >= 0.0), (3.0, true));
        let r = decaying_root(C64::new(1.0, -1e-3));
        assert!(r.im >= 0.0 && (r * r - C64::new(1.0, -1e-3)).norm() < 1e-15);
        assert_eq!(decaying_root(C64::new(0.0, 0.0)), C64::new(0.0, 0.0));
    }
}
