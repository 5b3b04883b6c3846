//! The characteristic quartic of a layer: roots (on the value) and the factorisation into the
//! down-going and up-going quadratic factors, refined by Newton steps on the factorisation.
//!
//! Why factors rather than roots: the modes of one direction can be (nearly) degenerate — an
//! isotropic or weakly anisotropic layer has a double root — where individual roots and their
//! derivatives are ill-conditioned, but the pair's sum S and product P are smooth. The Newton
//! step for `f = q·Q` (q = ν² − Sν + P, Q = ν² − S′ν + P′) is solved modulo q and modulo Q with
//! polynomial arithmetic only (no division by a root gap), so it converges quadratically at a
//! double root too. Run once in jet arithmetic from converged values it gives exact first
//! derivatives of (S, P) — the implicit-function theorem — as the brief's Newton-step tip does
//! for single roots.

use num_complex::Complex64 as C64;

use super::mat2::mag;
use crate::cpu::decaying_root as csqrt;
use crate::dual::Cx;

/// Monic quartic ν⁴ + c[0] ν³ + c[1] ν² + c[2] ν + c[3].
pub(crate) type Quartic<T> = [T; 4];

/// A quadratic factor ν² − s ν + p of a pair of roots with sum s and product p.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pair<T> {
    pub s: T,
    pub p: T,
}

/// f mod (ν² − Sν + P) = r1 ν + r0, for the monic quartic f.
#[inline]
fn reduce<T: Cx>(c: &Quartic<T>, s: T, p: T) -> (T, T) {
    // ν² ≡ Sν − P; ν³ ≡ (S² − P)ν − SP; ν⁴ ≡ (S³ − 2SP)ν − (S² − P)P.
    let s2p = s * s - p;
    let r1 = s * s2p - s * p + c[0] * s2p + c[1] * s + c[2];
    let r0 = c[3] - s2p * p - c[0] * s * p - c[1] * p;
    (r1, r0)
}

/// The Newton correction of factor `q` given the other factor `other`: δq ≡ f · other⁻¹ (mod q),
/// returned as the refined pair.
#[inline]
fn correct<T: Cx>(c: &Quartic<T>, q: Pair<T>, other: Pair<T>) -> Pair<T> {
    let (f1, f0) = reduce(c, q.s, q.p);
    // other mod q = g1 ν + g0; its inverse mod q is (x ν + y) with N = g(ν₁)·g(ν₂).
    let g1 = q.s - other.s;
    let g0 = other.p - q.p;
    let n = g0 * g0 + g0 * g1 * q.s + g1 * g1 * q.p;
    let inv_n = n.recip();
    let x = (T::real(0.0) - g1) * inv_n;
    let y = (g1 * q.s + g0) * inv_n;
    // (f1 ν + f0)(x ν + y) mod q = l1 ν + l0; δq = −δs ν + δp = l1 ν + l0.
    let l1 = f1 * x * q.s + f1 * y + f0 * x;
    let l0 = f0 * y - f1 * x * q.p;
    Pair { s: q.s - l1, p: q.p + l0 }
}

/// One simultaneous Newton step on the factorisation f = a · b.
#[inline]
pub(crate) fn newton_step<T: Cx>(c: &Quartic<T>, a: Pair<T>, b: Pair<T>) -> (Pair<T>, Pair<T>) {
    (correct(c, a, b), correct(c, b, a))
}

/// Refines a value factorisation by Newton steps until the change is below 1e-6 of the scale
/// (at most `max_steps`): the error is then ~1e-12 and the caller's final step (in T), quadratic,
/// lands at full precision.
pub(crate) fn refine(c: &Quartic<C64>, mut a: Pair<C64>, mut b: Pair<C64>, max_steps: usize) -> (Pair<C64>, Pair<C64>, bool) {
    for _ in 0..max_steps {
        let (na, nb) = newton_step(c, a, b);
        let ok = [na.s, na.p, nb.s, nb.p].iter().all(|z| z.re.is_finite() && z.im.is_finite());
        if !ok {
            return (a, b, false);
        }
        let change = mag(na.s - a.s) + mag(nb.s - b.s);
        let scale = mag(a.s) + mag(b.s) + (mag(a.p) + mag(b.p)).sqrt();
        (a, b) = (na, nb);
        if change <= 1e-6 * scale {
            return (a, b, true);
        }
    }
    (a, b, false)
}

/// The principal cube root.
#[inline]
fn cbrt(z: C64) -> C64 {
    if mag(z) == 0.0 {
        z
    } else {
        C64::from_polar(z.norm().cbrt(), z.arg() / 3.0)
    }
}

/// The resolvent root m of m³ + a m² + b m + d = 0 with the largest |m| (Cardano).
fn resolvent_root(a: C64, b: C64, d: C64) -> C64 {
    let p = b - a * a / 3.0;
    let q = 2.0 * a * a * a / 27.0 - a * b / 3.0 + d;
    let disc = csqrt(q * q / 4.0 + p * p * p / 27.0);
    let (u1, u2) = (-q / 2.0 + disc, -q / 2.0 - disc);
    let u = cbrt(if C64::norm_sqr(&u1) >= C64::norm_sqr(&u2) { u1 } else { u2 });
    let omega = C64::new(-0.5, 0.75f64.sqrt());
    let mut best = -a / 3.0;
    let mut w = C64::new(1.0, 0.0);
    for _ in 0..3 {
        let uk = u * w;
        let t = if mag(uk) > 0.0 { uk - p / (3.0 * uk) } else { C64::new(0.0, 0.0) };
        let m = t - a / 3.0;
        if C64::norm_sqr(&m) > C64::norm_sqr(&best) {
            best = m;
        }
        w *= omega;
    }
    best
}

/// The four roots of a monic quartic (Ferrari). They only seed the sorting and the pair factors,
/// which [`refine`] and [`newton_step`] bring to full precision (no per-root polishing, which
/// misbehaves at double roots).
pub(crate) fn roots(c: &Quartic<C64>) -> [C64; 4] {
    let a = c[0];
    let a2 = a * a;
    let p = c[1] - 0.375 * a2;
    let q = c[2] - 0.5 * a * c[1] + 0.125 * a2 * a;
    let r = c[3] - 0.25 * a * c[2] + a2 * c[1] / 16.0 - 3.0 * a2 * a2 / 256.0;
    let scale = mag(p) + mag(r).sqrt() + mag(q).cbrt();
    let ys = if mag(q) <= 1e-14 * scale * scale * scale {
        let disc = csqrt(p * p - 4.0 * r);
        let (y1, y2) = (csqrt((-p + disc) * 0.5), csqrt((-p - disc) * 0.5));
        [y1, -y1, y2, -y2]
    } else {
        let m = resolvent_root(p, p * p / 4.0 - r, -q * q / 8.0);
        let s = csqrt(2.0 * m);
        let t = q / s;
        let d1 = csqrt(-2.0 * p - 2.0 * m - 2.0 * t);
        let d2 = csqrt(-2.0 * p - 2.0 * m + 2.0 * t);
        [(s + d1) * 0.5, (s - d1) * 0.5, (-s + d2) * 0.5, (-s - d2) * 0.5]
    };
    ys.map(|y| y - 0.25 * a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_roots(r: [C64; 4]) -> Quartic<C64> {
        // (x − r0)(x − r1)(x − r2)(x − r3)
        let mut c = [C64::new(1.0, 0.0), C64::new(0.0, 0.0), C64::new(0.0, 0.0), C64::new(0.0, 0.0), C64::new(0.0, 0.0)];
        for (k, &ri) in r.iter().enumerate() {
            for j in (1..=k + 1).rev() {
                let prev = c[j - 1];
                c[j] -= ri * prev;
            }
        }
        [c[1], c[2], c[3], c[4]]
    }

    #[test]
    fn roots_and_factors_of_x_ray_like_quartics() {
        let want = [C64::new(0.05, 2e-3), C64::new(0.049, 3e-3), C64::new(-0.051, -2.5e-3), C64::new(-0.048, -1e-3)];
        let c = from_roots(want);
        let got = roots(&c);
        for w in want {
            let best = got.iter().map(|g| (g - w).norm()).fold(f64::INFINITY, f64::min);
            assert!(best < 1e-14, "{w}: {best:e}");
        }
        // Start the factorisation off by 1e-4 and refine: exact sum and product of each pair.
        let a = Pair { s: want[0] + want[1] + 1e-4, p: want[0] * want[1] };
        let b = Pair { s: want[2] + want[3], p: want[2] * want[3] - 1e-6 };
        let (a, b, _) = refine(&c, a, b, 8);
        let (a, b) = newton_step(&c, a, b);
        let close = |x: C64, y: C64| (x - y).norm() <= 1e-14 * y.norm();
        assert!(close(a.s, want[0] + want[1]) && close(a.p, want[0] * want[1]), "{a:?}");
        assert!(close(b.s, want[2] + want[3]) && close(b.p, want[2] * want[3]), "{b:?}");
    }

    #[test]
    fn double_roots_converge_as_pairs() {
        let k = C64::new(0.07, 1e-3);
        let c = from_roots([k, k, -k, -k]);
        let got = roots(&c);
        assert!(got.iter().all(|g| (g * g - k * k).norm() < 1e-9), "{got:?}");
        let (a, b, _) = refine(&c, Pair { s: 2.0 * k * 1.001, p: k * k }, Pair { s: -2.0 * k, p: k * k * 0.999 }, 12);
        let (a, b) = newton_step(&c, a, b);
        let close = |x: C64, y: C64| (x - y).norm() <= 1e-14 * y.norm();
        assert!(close(a.s, 2.0 * k) && close(a.p, k * k), "{a:?}");
        assert!(close(b.s, -2.0 * k) && close(b.p, k * k), "{b:?}");
    }
}
