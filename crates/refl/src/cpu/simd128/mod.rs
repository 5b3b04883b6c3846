//! The wasm simd128 path: [`super::lanes`]' block recursion written with `core::arch::wasm32`
//! f64x2 intrinsics, selected at compile time when the wasm is built with `+simd128`
//! (scripts/env.sh). Why not the plain lanes: LLVM's auto-vectoriser gets much less out of them
//! for wasm; in Chromium this path takes 0.028 µs per q·layer step where the plain lanes took
//! 0.042 (docs/benchmarks.md, 2026-12-05).
//!
//! Every operation is the plain path's, in the same order, with no fused multiply-add (wasm
//! simd128 has none), so R is **bit-identical** to the plain lanes (`crates/web/tests/browser_cpu_simd.rs`
//! checks it in Chromium, and the scalar reference within 1e-12 relative).

mod vmath;

use core::arch::wasm32::{f64x2, f64x2_extract_lane};

use num_complex::Complex64 as C64;

use self::vmath::{each, Consts, Cx, CONSTS, F, W};
use super::{InterfaceTerms, LayerTerms};

/// q values per block.
const B: usize = 2 * W;

/// Fills `r_s`, `r_p` for every q (`lanes::curve`'s contract; tail blocks repeat their last q).
pub(super) fn curve(layers: &[LayerTerms], interfaces: &[InterfaceTerms], q: &[f64], r_s: &mut [f64], r_p: &mut [f64]) {
    // Read the constants through an opaque reference: V8 builds every `v128.const` from
    // immediates at each use (about three instructions), where a loaded value costs one.
    let k = core::hint::black_box(&CONSTS);
    for start in (0..q.len()).step_by(B) {
        let n = B.min(q.len() - start);
        let at = |j: usize| q[start + j.min(n - 1)];
        let qb = each!(|i| f64x2(at(2 * i), at(2 * i + 1)));
        let (s, p) = block(layers, interfaces, qb, k);
        for j in 0..n {
            r_s[start + j] = lane(s, j);
            r_p[start + j] = lane(p, j);
        }
    }
}

/// Lane `k` of a block.
#[inline(always)]
fn lane(v: F, k: usize) -> f64 {
    let pair = v.0[k / 2];
    if k.is_multiple_of(2) {
        f64x2_extract_lane::<0>(pair)
    } else {
        f64x2_extract_lane::<1>(pair)
    }
}

#[inline(always)]
fn kz_pair(layer: &LayerTerms, q2: F, k: &Consts) -> (Cx, Cx) {
    let ks = Cx { re: F::splat(layer.chi_o_k.re) + q2, im: F::splat(layer.chi_o_k.im) };
    let e = Cx { re: F::splat(layer.chi_e_k.re) + q2, im: F::splat(layer.chi_e_k.im) };
    let kp = e.mul(Cx::splat(layer.eps_ratio));
    (ks.decaying_root(k), kp.decaying_root(k))
}

/// X ← (N + D X φ)/(D + N X φ) for r = N/D (`lanes::parratt_step`).
#[inline(always)]
fn parratt_step(num: Cx, den: Cx, x: Cx, phase: Cx, k: &Consts) -> Cx {
    let xp = x.mul(phase);
    num.add(den.mul(xp)).div(den.add(num.mul(xp)), k)
}

/// `lanes::block` on one block of B q values.
#[inline(always)]
fn block(layers: &[LayerTerms], interfaces: &[InterfaceTerms], q: F, k: &Consts) -> (F, F) {
    let q2 = F::splat(0.25) * q * q;
    let n = layers.len();
    let (mut ks_b, mut kp_b) = kz_pair(&layers[n - 1], q2, k);
    let mut xs = Cx::splat(C64::new(0.0, 0.0));
    let mut xp = Cx::splat(C64::new(0.0, 0.0));
    // u = kz_p/ε_o of the layer below, carried from the previous step (the plain path recomputes
    // the same product: the same bits).
    let mut ub = kp_b.mul(Cx::splat(layers[n - 1].inv_eps_o));
    for b in (1..n).rev() {
        let (lb, la, itf) = (&layers[b], &layers[b - 1], &interfaces[b - 1]);
        let (ks_a, kp_a) = kz_pair(la, q2, k);
        let ss = ks_a.add(ks_b);
        let mut num_s = Cx::splat(itf.ds);
        let den_s = ss.mul(ss);
        let ua = kp_a.mul(Cx::splat(la.inv_eps_o));
        let sp = ua.add(ub);
        let mut num_p = Cx { re: F::splat(itf.dp_const.re) + F::splat(itf.dp_q2.re) * q2, im: F::splat(itf.dp_const.im) + F::splat(itf.dp_q2.im) * q2 };
        let den_p = sp.mul(sp);
        if lb.sigma2 > 0.0 {
            let f = F::splat(-2.0 * lb.sigma2);
            num_s = num_s.mul(ks_a.mul(ks_b).scale(f).exp(k));
            num_p = num_p.mul(kp_a.mul(kp_b).scale(f).exp(k));
        }
        if lb.thickness > 0.0 && b < n - 1 {
            let two_d = 2.0 * lb.thickness;
            let arg_s = Cx { re: F::splat(-two_d) * ks_b.im, im: F::splat(two_d) * ks_b.re };
            let arg_p = Cx { re: F::splat(-two_d) * kp_b.im, im: F::splat(two_d) * kp_b.re };
            let (phase_s, phase_p) = if lb.small_phase { (arg_s.exp_small(k), arg_p.exp_small(k)) } else { (arg_s.exp(k), arg_p.exp(k)) };
            xs = parratt_step(num_s, den_s, xs, phase_s, k);
            xp = parratt_step(num_p, den_p, xp, phase_p, k);
        } else {
            let one = Cx::splat(C64::new(1.0, 0.0));
            xs = parratt_step(num_s, den_s, xs, one, k);
            xp = parratt_step(num_p, den_p, xp, one, k);
        }
        ks_b = ks_a;
        kp_b = kp_a;
        ub = ua;
    }
    (xs.norm_sqr(), xp.norm_sqr())
}
