//! Forward-mode derivatives of complex computations: a complex value carrying N directional derivatives.
//!
//! Reflectivity code is written once, generic over [`Cx`], and runs either on plain [`C64`] (the
//! value only) or on [`Jet<N>`] (the value and its derivatives with respect to N real parameters,
//! exact to rounding). Why our own type: `num-dual` and similar crates differentiate real functions;
//! here every intermediate is complex while the parameters are real, so a derivative slot is itself
//! complex (∂z/∂p for real p), and the decaying square root needs the project's branch rule.
//!
//! A real parameter p enters as `Jet::variable(C64::new(p, 0.0), slot)`; a real result such as
//! R = |r|² comes out of [`Cx::norm_sqr`] with zero imaginary parts.

use std::ops::{Add, Div, Mul, Neg, Sub};

use num_complex::Complex64 as C64;

use crate::cpu::decaying_root;

/// Complex arithmetic that generic reflectivity code needs; implemented by [`C64`] and [`Jet`].
pub trait Cx:
    Copy
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Add<C64, Output = Self>
    + Sub<C64, Output = Self>
    + Mul<C64, Output = Self>
    + Div<C64, Output = Self>
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + Div<f64, Output = Self>
{
    /// A constant (all derivatives zero).
    fn constant(value: C64) -> Self;
    /// A real constant.
    fn real(value: f64) -> Self {
        Self::constant(C64::new(value, 0.0))
    }
    /// The value, without derivatives.
    fn value(&self) -> C64;
    /// e^z.
    fn exp(self) -> Self;
    /// The square root with Im ≥ 0 (Re ≥ 0 when real): [`decaying_root`].
    fn sqrt_decaying(self) -> Self;
    /// The principal square root.
    fn sqrt(self) -> Self;
    /// sin z.
    fn sin(self) -> Self;
    /// cos z.
    fn cos(self) -> Self;
    /// 1/z.
    fn recip(self) -> Self;
    /// The complex conjugate (of the value and of each derivative: the parameters are real).
    fn conj(self) -> Self;
    /// |z|² as a real-valued quantity (imaginary parts zero), with its derivatives.
    fn norm_sqr(self) -> Self;
}

impl Cx for C64 {
    #[inline]
    fn constant(value: C64) -> Self {
        value
    }
    #[inline]
    fn value(&self) -> C64 {
        *self
    }
    #[inline]
    fn exp(self) -> Self {
        C64::exp(self)
    }
    #[inline]
    fn sqrt_decaying(self) -> Self {
        decaying_root(self)
    }
    #[inline]
    fn sqrt(self) -> Self {
        C64::sqrt(self)
    }
    #[inline]
    fn sin(self) -> Self {
        C64::sin(self)
    }
    #[inline]
    fn cos(self) -> Self {
        C64::cos(self)
    }
    #[inline]
    fn recip(self) -> Self {
        C64::new(1.0, 0.0) / self
    }
    #[inline]
    fn conj(self) -> Self {
        C64::conj(&self)
    }
    #[inline]
    fn norm_sqr(self) -> Self {
        C64::new(C64::norm_sqr(&self), 0.0)
    }
}

/// A complex value and its derivatives with respect to N real parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jet<const N: usize> {
    /// The value.
    pub v: C64,
    /// ∂v/∂p_k for each parameter slot k.
    pub d: [C64; N],
}

impl<const N: usize> Jet<N> {
    /// The independent variable of slot `slot` (derivative 1 there, 0 elsewhere). A slot ≥ N gives
    /// a constant, so callers can seed only the parameters of the current block.
    pub fn variable(value: C64, slot: usize) -> Self {
        let mut d = [C64::new(0.0, 0.0); N];
        if let Some(x) = d.get_mut(slot) {
            *x = C64::new(1.0, 0.0);
        }
        Jet { v: value, d }
    }

    /// A real independent variable in slot `slot`.
    pub fn real_variable(value: f64, slot: usize) -> Self {
        Self::variable(C64::new(value, 0.0), slot)
    }

    /// Chain rule for a holomorphic f: value f(v), derivative f'(v)·d.
    #[inline]
    fn chain(self, value: C64, slope: C64) -> Self {
        Jet { v: value, d: self.d.map(|x| x * slope) }
    }
}

impl<const N: usize> Cx for Jet<N> {
    #[inline]
    fn constant(value: C64) -> Self {
        Jet { v: value, d: [C64::new(0.0, 0.0); N] }
    }
    #[inline]
    fn value(&self) -> C64 {
        self.v
    }
    #[inline]
    fn exp(self) -> Self {
        let e = self.v.exp();
        self.chain(e, e)
    }
    #[inline]
    fn sqrt_decaying(self) -> Self {
        let s = decaying_root(self.v);
        self.chain(s, 0.5 / s)
    }
    #[inline]
    fn sqrt(self) -> Self {
        let s = self.v.sqrt();
        self.chain(s, 0.5 / s)
    }
    #[inline]
    fn sin(self) -> Self {
        self.chain(self.v.sin(), self.v.cos())
    }
    #[inline]
    fn cos(self) -> Self {
        self.chain(self.v.cos(), -self.v.sin())
    }
    #[inline]
    fn recip(self) -> Self {
        let r = 1.0 / self.v;
        self.chain(r, -r * r)
    }
    #[inline]
    fn conj(self) -> Self {
        Jet { v: C64::conj(&self.v), d: self.d.map(|x| C64::conj(&x)) }
    }
    #[inline]
    fn norm_sqr(self) -> Self {
        let cv = C64::conj(&self.v);
        Jet { v: C64::new(C64::norm_sqr(&self.v), 0.0), d: self.d.map(|x| C64::new(2.0 * (cv * x).re, 0.0)) }
    }
}

impl<const N: usize> Add for Jet<N> {
    type Output = Self;
    #[inline]
    fn add(self, o: Self) -> Self {
        Jet { v: self.v + o.v, d: std::array::from_fn(|k| self.d[k] + o.d[k]) }
    }
}

impl<const N: usize> Sub for Jet<N> {
    type Output = Self;
    #[inline]
    fn sub(self, o: Self) -> Self {
        Jet { v: self.v - o.v, d: std::array::from_fn(|k| self.d[k] - o.d[k]) }
    }
}

impl<const N: usize> Mul for Jet<N> {
    type Output = Self;
    #[inline]
    #[allow(clippy::suspicious_arithmetic_impl)] // the product rule: (uv)' = u'v + uv'
    fn mul(self, o: Self) -> Self {
        Jet { v: self.v * o.v, d: std::array::from_fn(|k| self.d[k] * o.v + self.v * o.d[k]) }
    }
}

impl<const N: usize> Div for Jet<N> {
    type Output = Self;
    #[inline]
    fn div(self, o: Self) -> Self {
        let inv = 1.0 / o.v;
        let q = self.v * inv;
        Jet { v: q, d: std::array::from_fn(|k| (self.d[k] - q * o.d[k]) * inv) }
    }
}

impl<const N: usize> Neg for Jet<N> {
    type Output = Self;
    #[inline]
    fn neg(self) -> Self {
        Jet { v: -self.v, d: self.d.map(|x| -x) }
    }
}

/// Operators with a constant on the right: C64 and f64 (no derivative).
macro_rules! constant_rhs {
    ($t:ty) => {
        impl<const N: usize> Add<$t> for Jet<N> {
            type Output = Self;
            #[inline]
            fn add(self, c: $t) -> Self {
                Jet { v: self.v + c, d: self.d }
            }
        }
        impl<const N: usize> Sub<$t> for Jet<N> {
            type Output = Self;
            #[inline]
            fn sub(self, c: $t) -> Self {
                Jet { v: self.v - c, d: self.d }
            }
        }
        impl<const N: usize> Mul<$t> for Jet<N> {
            type Output = Self;
            #[inline]
            fn mul(self, c: $t) -> Self {
                Jet { v: self.v * c, d: self.d.map(|x| x * c) }
            }
        }
        impl<const N: usize> Div<$t> for Jet<N> {
            type Output = Self;
            #[inline]
            fn div(self, c: $t) -> Self {
                let inv = 1.0 / c;
                Jet { v: self.v * inv, d: self.d.map(|x| x * inv) }
            }
        }
    };
}
constant_rhs!(C64);
constant_rhs!(f64);

#[cfg(test)]
mod tests {
    use super::*;

    /// A composite function written once, generic over Cx.
    fn f<T: Cx>(x: T, y: T) -> T {
        let a = (x * y + 2.0).sqrt_decaying() / (x - C64::new(0.3, 0.1));
        (a * x.sin() + y.cos().recip() * a.exp()).norm_sqr() + a.conj() * y
    }

    #[test]
    fn jet_matches_central_differences() {
        let (x0, y0) = (C64::new(0.7, 0.2), C64::new(-1.3, 0.05));
        let j = f(Jet::<2>::variable(x0, 0), Jet::<2>::variable(y0, 1));
        assert!((j.v - f(x0, y0)).norm() < 1e-14);
        // Parameters are real: perturb the real parts.
        let h = 1e-6;
        let dx = (f(x0 + h, y0) - f(x0 - h, y0)) / (2.0 * h);
        let dy = (f(x0, y0 + h) - f(x0, y0 - h)) / (2.0 * h);
        assert!((j.d[0] - dx).norm() < 1e-7 * dx.norm().max(1.0), "{} vs {}", j.d[0], dx);
        assert!((j.d[1] - dy).norm() < 1e-7 * dy.norm().max(1.0), "{} vs {}", j.d[1], dy);
    }

    #[test]
    fn slots_outside_the_block_are_constants() {
        let j = Jet::<2>::variable(C64::new(1.0, 0.0), 5);
        assert_eq!(j.d, [C64::new(0.0, 0.0); 2]);
    }
}
