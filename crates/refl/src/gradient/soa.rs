//! [`SoaJet`]: the same forward-mode numbers as [`crate::dual::Jet`], with the derivative slots
//! stored as separate real and imaginary arrays. Every slot operation is then a plain
//! element-wise loop over `[f64; N]`, which the compiler turns into full-width vector
//! instructions (one AVX-512 register per component for N = 8); the interleaved `[C64; N]` of
//! `Jet` needs shuffles for each complex product. The gradient blocks run on this type; the
//! results equal `Jet`'s to rounding (tested below).

use std::ops::{Add, Div, Mul, Neg, Sub};

use num_complex::Complex64 as C64;

use crate::cpu::decaying_root;
use crate::dual::Cx;

/// A complex value and its derivatives with respect to N real parameters (split storage).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoaJet<const N: usize> {
    /// The value.
    pub v: C64,
    /// Re ∂v/∂p_k.
    pub re: [f64; N],
    /// Im ∂v/∂p_k.
    pub im: [f64; N],
}

impl<const N: usize> SoaJet<N> {
    /// Derivatives times the complex factor `s`.
    #[inline(always)]
    fn scaled(&self, s: C64) -> ([f64; N], [f64; N]) {
        (std::array::from_fn(|k| self.re[k] * s.re - self.im[k] * s.im), std::array::from_fn(|k| self.re[k] * s.im + self.im[k] * s.re))
    }

    /// Chain rule for a holomorphic f: value f(v), derivative f'(v)·d.
    #[inline(always)]
    fn chain(self, value: C64, slope: C64) -> Self {
        let (re, im) = self.scaled(slope);
        SoaJet { v: value, re, im }
    }

    /// ∂v/∂p_k as a complex number.
    #[inline(always)]
    pub fn slot(&self, k: usize) -> C64 {
        C64::new(self.re[k], self.im[k])
    }
}

impl<const N: usize> Cx for SoaJet<N> {
    #[inline(always)]
    fn constant(value: C64) -> Self {
        SoaJet { v: value, re: [0.0; N], im: [0.0; N] }
    }
    #[inline(always)]
    fn value(&self) -> C64 {
        self.v
    }
    #[inline(always)]
    fn exp(self) -> Self {
        let e = self.v.exp();
        self.chain(e, e)
    }
    #[inline(always)]
    fn sqrt_decaying(self) -> Self {
        let s = decaying_root(self.v);
        self.chain(s, 0.5 / s)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        let s = self.v.sqrt();
        self.chain(s, 0.5 / s)
    }
    #[inline(always)]
    fn sin(self) -> Self {
        self.chain(self.v.sin(), self.v.cos())
    }
    #[inline(always)]
    fn cos(self) -> Self {
        self.chain(self.v.cos(), -self.v.sin())
    }
    #[inline(always)]
    fn recip(self) -> Self {
        let r = 1.0 / self.v;
        self.chain(r, -r * r)
    }
    #[inline(always)]
    fn conj(self) -> Self {
        SoaJet { v: C64::conj(&self.v), re: self.re, im: self.im.map(|x| -x) }
    }
    #[inline(always)]
    fn norm_sqr(self) -> Self {
        // d|v|² = 2 Re(conj(v) d).
        let (a, b) = (self.v.re, self.v.im);
        SoaJet { v: C64::new(C64::norm_sqr(&self.v), 0.0), re: std::array::from_fn(|k| 2.0 * (a * self.re[k] + b * self.im[k])), im: [0.0; N] }
    }
}

impl<const N: usize> Add for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        SoaJet { v: self.v + o.v, re: std::array::from_fn(|k| self.re[k] + o.re[k]), im: std::array::from_fn(|k| self.im[k] + o.im[k]) }
    }
}

impl<const N: usize> Sub for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        SoaJet { v: self.v - o.v, re: std::array::from_fn(|k| self.re[k] - o.re[k]), im: std::array::from_fn(|k| self.im[k] - o.im[k]) }
    }
}

impl<const N: usize> Mul for SoaJet<N> {
    type Output = Self;
    // The product rule: a product's derivative is a sum.
    #[allow(clippy::suspicious_arithmetic_impl)]
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        let (a, b) = (self.v, o.v);
        SoaJet {
            v: a * b,
            re: std::array::from_fn(|k| self.re[k] * b.re - self.im[k] * b.im + a.re * o.re[k] - a.im * o.im[k]),
            im: std::array::from_fn(|k| self.re[k] * b.im + self.im[k] * b.re + a.re * o.im[k] + a.im * o.re[k]),
        }
    }
}

impl<const N: usize> Div for SoaJet<N> {
    type Output = Self;
    // The quotient rule: products and differences of the operands' parts.
    #[allow(clippy::suspicious_arithmetic_impl)]
    #[inline(always)]
    fn div(self, o: Self) -> Self {
        // As `Jet`: q = a/b, dq = (da − q db)/b, with one reciprocal.
        let inv = 1.0 / o.v;
        let q = self.v * inv;
        let re: [f64; N] = std::array::from_fn(|k| self.re[k] - (q.re * o.re[k] - q.im * o.im[k]));
        let im: [f64; N] = std::array::from_fn(|k| self.im[k] - (q.re * o.im[k] + q.im * o.re[k]));
        SoaJet { v: q, re: std::array::from_fn(|k| re[k] * inv.re - im[k] * inv.im), im: std::array::from_fn(|k| re[k] * inv.im + im[k] * inv.re) }
    }
}

impl<const N: usize> Neg for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn neg(self) -> Self {
        SoaJet { v: -self.v, re: self.re.map(|x| -x), im: self.im.map(|x| -x) }
    }
}

impl<const N: usize> Add<C64> for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn add(self, c: C64) -> Self {
        SoaJet { v: self.v + c, ..self }
    }
}

impl<const N: usize> Sub<C64> for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, c: C64) -> Self {
        SoaJet { v: self.v - c, ..self }
    }
}

impl<const N: usize> Mul<C64> for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, c: C64) -> Self {
        let (re, im) = self.scaled(c);
        SoaJet { v: self.v * c, re, im }
    }
}

impl<const N: usize> Div<C64> for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn div(self, c: C64) -> Self {
        let inv = 1.0 / c;
        let (re, im) = self.scaled(inv);
        SoaJet { v: self.v * inv, re, im }
    }
}

impl<const N: usize> Add<f64> for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn add(self, c: f64) -> Self {
        SoaJet { v: self.v + c, ..self }
    }
}

impl<const N: usize> Sub<f64> for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn sub(self, c: f64) -> Self {
        SoaJet { v: self.v - c, ..self }
    }
}

impl<const N: usize> Mul<f64> for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn mul(self, c: f64) -> Self {
        SoaJet { v: self.v * c, re: self.re.map(|x| x * c), im: self.im.map(|x| x * c) }
    }
}

impl<const N: usize> Div<f64> for SoaJet<N> {
    type Output = Self;
    #[inline(always)]
    fn div(self, c: f64) -> Self {
        let inv = 1.0 / c;
        SoaJet { v: self.v * inv, re: self.re.map(|x| x * inv), im: self.im.map(|x| x * inv) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dual::Jet;

    /// A composite of every operation, written once over Cx.
    fn f<T: Cx>(x: T, y: T) -> T {
        let a = (x * y + 2.0).sqrt_decaying() / (x - C64::new(0.3, 0.1));
        let b = (a * x.sin() + y.cos().recip() * a.exp()).norm_sqr() + a.conj() * y - x.sqrt() / 3.0;
        (b * C64::new(0.2, -0.7) + C64::new(1.0, 0.5)) / C64::new(0.4, 0.3) - (-y) * 0.5 + 1.5 - C64::new(0.1, 0.0) - 0.25
    }

    #[test]
    fn equals_interleaved_jet() {
        let (x0, y0) = (C64::new(0.7, 0.2), C64::new(-1.3, 0.05));
        let seed = |v: C64, k: usize| {
            let mut j = SoaJet::<3>::constant(v);
            j.re[k] = 1.0;
            j
        };
        let a = f(seed(x0, 0), seed(y0, 2));
        let b = f(Jet::<3>::variable(x0, 0), Jet::<3>::variable(y0, 2));
        assert!((a.v - b.v).norm() <= 1e-15 * b.v.norm(), "{} vs {}", a.v, b.v);
        for k in 0..3 {
            assert!((a.slot(k) - b.d[k]).norm() <= 1e-14 * b.d[k].norm().max(1.0), "slot {k}: {} vs {}", a.slot(k), b.d[k]);
        }
        assert_eq!((a.re[1], a.im[1]), (0.0, 0.0));
    }
}
