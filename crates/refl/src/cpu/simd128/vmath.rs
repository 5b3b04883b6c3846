//! f64x2 math for the simd128 path: `W` registers per value, IEEE operations in the order of
//! `cpu::vmath` (exp, sin/cos with the same reduction and polynomials), complex arithmetic.

// The constants are Cephes' published values, kept digit for digit (as in `cpu::vmath`).
#![allow(clippy::excessive_precision)]

use core::arch::wasm32::{
    f64x2_abs, f64x2_add, f64x2_div, f64x2_eq, f64x2_ge, f64x2_lt, f64x2_mul, f64x2_pmax, f64x2_pmin, f64x2_splat, f64x2_sqrt, f64x2_sub, f64x2_trunc, i64x2_add, i64x2_eq,
    i64x2_shl, i64x2_splat, v128, v128_and, v128_bitselect, v128_xor,
};
use std::ops::{Add, Div, Mul, Sub};

use num_complex::Complex64 as C64;

/// f64x2 registers per block (2·W q values). Eight measured fastest in Chromium (W = 1, 2, 4, 8:
/// 0.082, 0.045, 0.036, 0.031 µs per q·layer step): the independent lanes keep the sqrt/division
/// chains overlapped, which pays for spilling the complex state out of the 16 SIMD registers.
pub(super) const W: usize = 8;
/// W f64x2 registers: one value (or lane mask) per q of the block.
#[derive(Clone, Copy)]
pub(super) struct F(pub(super) [v128; W]);

macro_rules! each {
    (|$i:ident| $e:expr) => {{
        let mut out = [core::arch::wasm32::f64x2_splat(0.0); W];
        for $i in 0..W {
            out[$i] = $e;
        }
        F(out)
    }};
}
pub(super) use each;

macro_rules! binary {
    ($trait:ident, $method:ident, $op:ident) => {
        impl $trait for F {
            type Output = F;
            #[inline(always)]
            fn $method(self, o: F) -> F {
                each!(|i| $op(self.0[i], o.0[i]))
            }
        }
    };
}
binary!(Add, add, f64x2_add);
binary!(Sub, sub, f64x2_sub);
binary!(Mul, mul, f64x2_mul);
binary!(Div, div, f64x2_div);

impl F {
    #[inline(always)]
    pub(super) fn splat(x: f64) -> F {
        F([f64x2_splat(x); W])
    }
    #[inline(always)]
    pub(super) fn sqrt(self) -> F {
        each!(|i| f64x2_sqrt(self.0[i]))
    }
    #[inline(always)]
    pub(super) fn abs(self) -> F {
        each!(|i| f64x2_abs(self.0[i]))
    }
    /// Lane mask self ≥ o.
    #[inline(always)]
    pub(super) fn ge(self, o: F) -> F {
        each!(|i| f64x2_ge(self.0[i], o.0[i]))
    }
    /// Lane mask self < o.
    #[inline(always)]
    pub(super) fn lt(self, o: F) -> F {
        each!(|i| f64x2_lt(self.0[i], o.0[i]))
    }
    /// Lane mask self == o.
    #[inline(always)]
    pub(super) fn eq(self, o: F) -> F {
        each!(|i| f64x2_eq(self.0[i], o.0[i]))
    }
    /// `if mask { a } else { b }` per lane.
    #[inline(always)]
    pub(super) fn select(mask: F, a: F, b: F) -> F {
        each!(|i| v128_bitselect(a.0[i], b.0[i], mask.0[i]))
    }
    /// |self| with the sign of `sign` (f64::copysign).
    #[inline(always)]
    pub(super) fn copysign(self, sign: F) -> F {
        let sign_bit = F([i64x2_splat(i64::MIN); W]);
        F::select(sign_bit, sign, self)
    }
    /// f64::round (half away from zero), exactly: trunc(x ± (½ − 2⁻⁵⁴)), LLVM's own lowering of
    /// `llvm.round` (½ − 2⁻⁵⁴ keeps x just below a half from rounding up in the addition).
    #[inline(always)]
    pub(super) fn round(self, k: &Consts) -> F {
        let shifted = self + k.f(&k.half_down).copysign(self);
        each!(|i| f64x2_trunc(shifted.0[i]))
    }
    /// −self in the lanes where `mask` is set (the plain path's multiplication by ±1: the same bits).
    #[inline(always)]
    pub(super) fn negate_where(self, mask: F) -> F {
        each!(|i| v128_xor(self.0[i], v128_and(mask.0[i], i64x2_splat(i64::MIN))))
    }
    /// The IEEE bits of `self + 1.5·2^52` (the integer in the low mantissa bits), as i64 lanes.
    #[inline(always)]
    pub(super) fn magic_bits(self, k: &Consts) -> F {
        self + k.f(&k.round_magic)
    }
}

/// Every constant of the recursion's exp and sin/cos (`vmath`'s, digit for digit).
pub(super) struct Consts {
    /// e^r: Taylor to degree 12 on |r| ≤ ln2/2.
    exp: [f64; 13],
    log2e: f64,
    ln2_hi: f64,
    ln2_lo: f64,
    /// exp's clamp range; below `exp_low` the result is 0.
    exp_low: f64,
    exp_high: f64,
    /// sin and cos minimax polynomials in r² (Cephes).
    sin: [f64; 6],
    cos: [f64; 6],
    two_over_pi: f64,
    /// π/2 in three parts (Cody–Waite).
    pio2: [f64; 3],
    /// 1.5·2^52: the integer of an integer-valued f64 in the low mantissa bits.
    round_magic: f64,
    /// ½ − 2⁻⁵⁴ (see [`F::round`]).
    half_down: f64,
    one: f64,
    half: f64,
    /// `vmath::EXP_SMALL`, `SIN_SMALL`, `COS_SMALL` (the thin-slab phase's series).
    exp_small: [f64; 11],
    sin_small: [f64; 4],
    cos_small: [f64; 3],
}

pub(super) static CONSTS: Consts = Consts {
    exp: [1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0],
    log2e: std::f64::consts::LOG2_E,
    ln2_hi: 6.931_457_519_531_25e-1,
    ln2_lo: 1.428_606_820_309_417_232_12e-6,
    exp_low: -708.0,
    exp_high: 709.0,
    sin: [
        1.589_623_015_765_465_680_60e-10,
        -2.505_074_776_285_780_728_66e-8,
        2.755_731_362_138_572_452_13e-6,
        -1.984_126_982_958_953_859_96e-4,
        8.333_333_333_322_118_588_78e-3,
        -1.666_666_666_666_663_072_95e-1,
    ],
    cos: [
        -1.135_853_652_138_768_173_00e-11,
        2.087_570_084_197_473_167_78e-9,
        -2.755_731_417_929_673_881_12e-7,
        2.480_158_728_885_170_453_48e-5,
        -1.388_888_888_887_305_641_16e-3,
        4.166_666_666_666_659_292_18e-2,
    ],
    two_over_pi: std::f64::consts::FRAC_2_PI,
    pio2: [1.570_796_251_296_997_070_31, 7.549_789_415_861_596_353_36e-8, 5.390_302_858_158_119_052_90e-15],
    round_magic: 6_755_399_441_055_744.0,
    half_down: 0.499_999_999_999_999_94,
    one: 1.0,
    half: 0.5,
    exp_small: crate::cpu::vmath::EXP_SMALL,
    sin_small: crate::cpu::vmath::SIN_SMALL,
    cos_small: crate::cpu::vmath::COS_SMALL,
};

impl Consts {
    /// The constant at `x` (a field of `self`) in every lane.
    #[inline(always)]
    pub(super) fn f(&self, x: &f64) -> F {
        F::splat(*x)
    }
}

/// The plain path's Horner fold `acc·x + c`; it starts at acc = 0, whose first step 0·x + c₀ is
/// exactly c₀ for finite x, so this one starts at c₀.
#[inline(always)]
fn horner(x: F, coefficients: &[f64], k: &Consts) -> F {
    coefficients[1..].iter().fold(k.f(&coefficients[0]), |acc, c| acc * x + k.f(c))
}

/// `vmath::exp`, lane for lane.
#[inline(always)]
fn exp(x: F, k: &Consts) -> F {
    // f64::clamp(−708, 709): pmax/pmin are `a < b ? b : a` / `b < a ? b : a`, NaN passing through.
    let xi = each!(|i| f64x2_pmin(f64x2_pmax(x.0[i], f64x2_splat(k.exp_low)), f64x2_splat(k.exp_high)));
    let n = (xi * k.f(&k.log2e)).round(k);
    let r = (xi - n * k.f(&k.ln2_hi)) - n * k.f(&k.ln2_lo);
    let bits = n.magic_bits(k);
    let scale = each!(|i| i64x2_shl(i64x2_add(bits.0[i], i64x2_splat(1023)), 52));
    let value = horner(r, &k.exp, k) * scale;
    F::select(x.lt(k.f(&k.exp_low)), F::splat(0.0), value)
}

/// `vmath::sin_cos`, lane for lane: (sin x, cos x).
#[inline(always)]
fn sin_cos(x: F, k: &Consts) -> (F, F) {
    let j = (x * k.f(&k.two_over_pi)).round(k);
    let r = ((x - j * k.f(&k.pio2[0])) - j * k.f(&k.pio2[1])) - j * k.f(&k.pio2[2]);
    let z = r * r;
    let s = r + r * z * horner(z, &k.sin, k);
    let c = k.f(&k.one) - k.f(&k.half) * z + z * z * horner(z, &k.cos, k);
    // Quadrant bits of j: bit 0 swaps sin and cos; bit 1 of j (sin) and of j + 1 (cos) is the
    // sign, moved to bit 63 (the plain path multiplies by ±1: the same bits).
    let quadrant = j.magic_bits(k);
    let swap = each!(|i| i64x2_eq(v128_and(quadrant.0[i], i64x2_splat(1)), i64x2_splat(1)));
    let sin_sign = each!(|i| i64x2_shl(v128_and(quadrant.0[i], i64x2_splat(2)), 62));
    let cos_sign = each!(|i| i64x2_shl(v128_and(i64x2_add(quadrant.0[i], i64x2_splat(1)), i64x2_splat(2)), 62));
    let sin = F::select(swap, c, s);
    let cos = F::select(swap, s, c);
    (each!(|i| v128_xor(sin.0[i], sin_sign.0[i])), each!(|i| v128_xor(cos.0[i], cos_sign.0[i])))
}

/// A block of complex numbers (`vmath::Cv` on f64x2 registers).
#[derive(Clone, Copy)]
pub(super) struct Cx {
    pub(super) re: F,
    pub(super) im: F,
}

impl Cx {
    #[inline(always)]
    pub(super) fn splat(z: C64) -> Cx {
        Cx { re: F::splat(z.re), im: F::splat(z.im) }
    }
    #[inline(always)]
    pub(super) fn add(self, o: Cx) -> Cx {
        Cx { re: self.re + o.re, im: self.im + o.im }
    }
    #[inline(always)]
    pub(super) fn mul(self, o: Cx) -> Cx {
        Cx { re: self.re * o.re - self.im * o.im, im: self.re * o.im + self.im * o.re }
    }
    #[inline(always)]
    pub(super) fn scale(self, s: F) -> Cx {
        Cx { re: self.re * s, im: self.im * s }
    }
    #[inline(always)]
    pub(super) fn div(self, b: Cx, k: &Consts) -> Cx {
        let inv = k.f(&k.one) / (b.re * b.re + b.im * b.im);
        Cx { re: (self.re * b.re + self.im * b.im) * inv, im: (self.im * b.re - self.re * b.im) * inv }
    }
    #[inline(always)]
    pub(super) fn norm_sqr(self) -> F {
        self.re * self.re + self.im * self.im
    }
    #[inline(always)]
    pub(super) fn exp(self, k: &Consts) -> Cx {
        let m = exp(self.re, k);
        let (s, c) = sin_cos(self.im, k);
        Cx { re: m * c, im: m * s }
    }
    /// `Cv::exp_small`, operation for operation (|re|, |im| ≤ `vmath::SMALL_PHASE`).
    #[inline(always)]
    pub(super) fn exp_small(self, k: &Consts) -> Cx {
        let (a, b) = (self.re, self.im);
        let m = horner(a, &k.exp_small, k);
        let z = b * b;
        let s = b + b * z * horner(z, &k.sin_small, k);
        let c = k.f(&k.one) - k.f(&k.half) * z + z * z * horner(z, &k.cos_small, k);
        Cx { re: m * c, im: m * s }
    }
    /// `Cv::decaying_root`: the root with Im ≥ 0.
    #[inline(always)]
    pub(super) fn decaying_root(self, k: &Consts) -> Cx {
        let (x, y) = (self.re, self.im);
        let zero = F::splat(0.0);
        let half = k.f(&k.half);
        let t = (((x * x + y * y).sqrt() + x.abs()) * half).sqrt();
        let h = F::select(t.eq(zero), zero, half / t);
        let x_nonneg = x.ge(zero);
        let re = F::select(x_nonneg, t, y.abs() * h);
        let im = F::select(x_nonneg, y * h, t.copysign(y));
        let flip = im.lt(zero);
        Cx { re: re.negate_where(flip), im: im.negate_where(flip) }
    }
}
