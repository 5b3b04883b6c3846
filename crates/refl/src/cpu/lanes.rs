//! The production CPU path: the same recursion as [`super::point`], evaluated on blocks of
//! [`L`] q values at once so the compiler can vectorise it (AVX-512 or AVX2+FMA selected at run
//! time on x86-64; f64x2 intrinsics in wasm built with simd128 (`cpu/simd128/`, chosen at compile
//! time: wasm has no run-time feature detection); plain code elsewhere; all by
//! `scatterlab_core::simd`). Tests hold it to the scalar reference.

use scatterlab_core::simd;
use scatterlab_core::x86_build;

use super::vmath::{lanes, Cv, L, V};
use super::{InterfaceTerms, LayerTerms};

/// Fills `r_s`, `r_p` for every q; all three slices have the same length.
pub(super) fn curve(layers: &[LayerTerms], interfaces: &[InterfaceTerms], q: &[f64], r_s: &mut [f64], r_p: &mut [f64]) {
    // The workspace's one dispatch idiom (scatterlab_core::simd): run-time level on x86-64, compile time in wasm.
    match simd::level() {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` found every feature `x86_build!(avx512, …)` enables on `curve_avx512`.
        simd::Level::Avx512 => unsafe { curve_avx512(layers, interfaces, q, r_s, r_p) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `level()` found AVX2 and FMA, all `x86_build!(avx2, …)` enables on `curve_avx2`.
        simd::Level::Avx2 => unsafe { curve_avx2(layers, interfaces, q, r_s, r_p) },
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        simd::Level::Simd128 => super::simd128::curve(layers, interfaces, q, r_s, r_p),
        _ => curve_portable(layers, interfaces, q, r_s, r_p),
    }
}

/// The plain lanes whatever the target offers: the baseline every SIMD path must equal bit for bit.
pub(super) fn curve_plain(layers: &[LayerTerms], interfaces: &[InterfaceTerms], q: &[f64], r_s: &mut [f64], r_p: &mut [f64]) {
    curve_portable(layers, interfaces, q, r_s, r_p);
}

x86_build!(
    avx2,
    unsafe fn curve_avx2(layers: &[LayerTerms], interfaces: &[InterfaceTerms], q: &[f64], r_s: &mut [f64], r_p: &mut [f64]) {
        curve_portable(layers, interfaces, q, r_s, r_p);
    }
);

x86_build!(
    avx512,
    unsafe fn curve_avx512(layers: &[LayerTerms], interfaces: &[InterfaceTerms], q: &[f64], r_s: &mut [f64], r_p: &mut [f64]) {
        curve_portable(layers, interfaces, q, r_s, r_p);
    }
);

#[inline(always)]
fn curve_portable(layers: &[LayerTerms], interfaces: &[InterfaceTerms], q: &[f64], r_s: &mut [f64], r_p: &mut [f64]) {
    for start in (0..q.len()).step_by(L) {
        let n = L.min(q.len() - start);
        // A short tail block repeats its last q; only the first n lanes are written back.
        let qb: V = lanes!(|i| q[start + i.min(n - 1)]);
        let (s, p) = block(layers, interfaces, &qb);
        r_s[start..start + n].copy_from_slice(&s[..n]);
        r_p[start..start + n].copy_from_slice(&p[..n]);
    }
}

#[inline(always)]
fn kz_pair(layer: &LayerTerms, q2: &V) -> (Cv, Cv) {
    let ks = Cv { re: lanes!(|i| layer.chi_o_k.re + q2[i]), im: [layer.chi_o_k.im; L] };
    let e = Cv { re: lanes!(|i| layer.chi_e_k.re + q2[i]), im: [layer.chi_e_k.im; L] };
    let kp = e.mul(Cv::splat(layer.eps_ratio.re, layer.eps_ratio.im));
    (ks.decaying_root(), kp.decaying_root())
}

/// X ← (N + D X φ)/(D + N X φ) for r = N/D: one division instead of two.
#[inline(always)]
fn parratt_step(num: Cv, den: Cv, x: Cv, phase: Cv) -> Cv {
    let xp = x.mul(phase);
    num.add(den.mul(xp)).div(den.add(num.mul(xp)))
}

#[inline(always)]
fn block(layers: &[LayerTerms], interfaces: &[InterfaceTerms], q: &V) -> (V, V) {
    let q2: V = lanes!(|i| 0.25 * q[i] * q[i]);
    let n = layers.len();
    let (mut ks_b, mut kp_b) = kz_pair(&layers[n - 1], &q2);
    let mut xs = Cv::splat(0.0, 0.0);
    let mut xp = Cv::splat(0.0, 0.0);
    for b in (1..n).rev() {
        let (lb, la, itf) = (&layers[b], &layers[b - 1], &interfaces[b - 1]);
        let (ks_a, kp_a) = kz_pair(la, &q2);
        let ss = ks_a.add(ks_b);
        let mut num_s = Cv::splat(itf.ds.re, itf.ds.im);
        let den_s = ss.mul(ss);
        let ua = kp_a.mul(Cv::splat(la.inv_eps_o.re, la.inv_eps_o.im));
        let ub = kp_b.mul(Cv::splat(lb.inv_eps_o.re, lb.inv_eps_o.im));
        let sp = ua.add(ub);
        let mut num_p = Cv { re: lanes!(|i| itf.dp_const.re + itf.dp_q2.re * q2[i]), im: lanes!(|i| itf.dp_const.im + itf.dp_q2.im * q2[i]) };
        let den_p = sp.mul(sp);
        if lb.sigma2 > 0.0 {
            let f = [-2.0 * lb.sigma2; L];
            num_s = num_s.mul(ks_a.mul(ks_b).scale(f).exp());
            num_p = num_p.mul(kp_a.mul(kp_b).scale(f).exp());
        }
        if lb.thickness > 0.0 && b < n - 1 {
            let two_d = 2.0 * lb.thickness;
            // exp(2i k d) = exp(−2 d Im k) · (cos, sin)(2 d Re k)
            let arg_s = Cv { re: lanes!(|i| -two_d * ks_b.im[i]), im: lanes!(|i| two_d * ks_b.re[i]) };
            let arg_p = Cv { re: lanes!(|i| -two_d * kp_b.im[i]), im: lanes!(|i| two_d * kp_b.re[i]) };
            let (phase_s, phase_p) = if lb.small_phase { (arg_s.exp_small(), arg_p.exp_small()) } else { (arg_s.exp(), arg_p.exp()) };
            xs = parratt_step(num_s, den_s, xs, phase_s);
            xp = parratt_step(num_p, den_p, xp, phase_p);
        } else {
            let one = Cv::splat(1.0, 0.0);
            xs = parratt_step(num_s, den_s, xs, one);
            xp = parratt_step(num_p, den_p, xp, one);
        }
        ks_b = ks_a;
        kp_b = kp_a;
    }
    (xs.norm_sqr(), xp.norm_sqr())
}
