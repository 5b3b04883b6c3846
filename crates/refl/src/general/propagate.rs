//! Carrying the reflection matrix G (up amplitudes = G · down amplitudes, in a layer's graph
//! basis) from the bottom of a layer to its top: G_top = exp(−i k0 d Λ_up) · G_bot · exp(i k0 d Λ_dn).
//! Both exponentials only decay (Im ν_dn > 0, Im ν_up < 0), so thick or evanescent layers
//! cannot overflow — unlike a product of 4×4 transfer matrices.

use num_complex::Complex64 as C64;

use super::mat2::{self, M2};
use super::modes::Modes;
use crate::dual::Cx;

/// G through one layer of optical thickness `k0d` = k0 · d.
#[inline]
pub(crate) fn through_layer<T: Cx>(g: &M2<T>, m: &Modes<T>, k0d: T) -> M2<T> {
    let i_kd = k0d * C64::new(0.0, 1.0);
    if m.decoupled {
        // Diagonal Λ: one decaying exponential per entry.
        let phase = |i: usize, j: usize| (i_kd * (m.lam_dn[j][j] - m.lam_up[i][i])).exp();
        [[g[0][0] * phase(0, 0), g[0][1] * phase(0, 1)], [g[1][0] * phase(1, 0), g[1][1] * phase(1, 1)]]
    } else {
        let e_dn = expm(&m.lam_dn, i_kd);
        let e_up_inv = expm(&m.lam_up, -i_kd);
        mat2::mul(&mat2::mul(&e_up_inv, g), &e_dn)
    }
}

/// exp(s Λ) for a 2×2 Λ. With m = tr Λ/2 and w = m² − det Λ (the squared half-gap of the
/// eigenvalues): exp(s Λ) = e^{s m} [cosh(s√w) I + sinh(s√w)/√w (Λ − m I)], evaluated by its
/// power series in u = s² w when |u| < 1 (no division by a small gap), else from the eigenvalues
/// m ± √w, where each exponential is itself bounded.
pub(crate) fn expm<T: Cx>(lam: &M2<T>, s: T) -> M2<T> {
    let m = (lam[0][0] + lam[1][1]) * 0.5;
    let half = (lam[0][0] - lam[1][1]) * 0.5;
    let w = half * half + lam[0][1] * lam[1][0];
    let u = s * s * w;
    let shifted = mat2::add_identity(lam, T::real(0.0) - m);
    if C64::norm_sqr(&u.value()) < 1.0 {
        // cosh(√u) = Σ uⁿ/(2n)!, sinh(√u)/√u = Σ uⁿ/(2n+1)!, summed until the terms drop below
        // 1e-17 (at most 11 terms for |u| < 1; thin layers need two or three).
        let (mut ch, mut sh) = (T::real(1.0), T::real(1.0));
        let (mut tc, mut ts) = (T::real(1.0), T::real(1.0));
        for n in 1..=11 {
            let k = n as f64;
            tc = tc * u / ((2.0 * k) * (2.0 * k - 1.0));
            ts = ts * u / ((2.0 * k + 1.0) * (2.0 * k));
            ch = ch + tc;
            sh = sh + ts;
            if super::mat2::mag(tc.value()) < 1e-17 {
                break;
            }
        }
        let e = (s * m).exp();
        let diag = ch * e;
        let off = sh * s * e;
        mat2::add_identity(&mat2::scale(&shifted, off), diag)
    } else {
        // Either square root will do: the formula is even in r.
        let r = w.sqrt_decaying();
        let (e1, e2) = ((s * (m + r)).exp(), (s * (m - r)).exp());
        // [e1 (Λ − λ2) − e2 (Λ − λ1)] / (λ1 − λ2), Λ − λ_{1,2} = (Λ − m) ∓ r.
        let sum = (e1 + e2) * 0.5;
        let diff = (e1 - e2) * (r * 2.0).recip();
        mat2::add_identity(&mat2::scale(&shifted, diff), sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// exp by a long Taylor series with scaling and squaring: the reference.
    fn reference(lam: &M2<C64>, s: C64) -> M2<C64> {
        let a = mat2::scale(lam, s / 1024.0);
        let mut term = mat2::diag(C64::new(1.0, 0.0), C64::new(1.0, 0.0));
        let mut sum = term;
        for n in 1..30 {
            term = mat2::scale(&mat2::mul(&term, &a), C64::new(1.0 / n as f64, 0.0));
            sum = mat2::add(&sum, &term);
        }
        for _ in 0..10 {
            sum = mat2::mul(&sum, &sum);
        }
        sum
    }

    #[test]
    fn matches_series_near_and_far_from_degeneracy() {
        let lam = [[C64::new(0.05, 0.002), C64::new(1e-3, 2e-4)], [C64::new(-4e-4, 1e-4), C64::new(0.048, 0.003)]];
        for d in [1.0, 50.0, 400.0, 3000.0] {
            let s = C64::new(0.0, 0.127 * d);
            let (got, want) = (expm(&lam, s), reference(&lam, s));
            let err = mat2::max_abs(&mat2::sub(&got, &want));
            assert!(err <= 1e-12 * mat2::max_abs(&want), "d={d}: {err:e}");
        }
        // Exactly degenerate (scalar Λ).
        let k = C64::new(0.05, 0.002);
        let got = expm(&mat2::diag(k, k), C64::new(0.0, 100.0));
        assert!((got[0][0] - (C64::new(0.0, 100.0) * k).exp()).norm() < 1e-15 && got[0][1].norm() == 0.0);
    }
}
