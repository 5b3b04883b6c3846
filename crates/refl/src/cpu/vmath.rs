//! Lane-wise f64 math that the compiler can vectorise: exp, sin/cos with Cody–Waite
//! reduction, complex arithmetic on `L` lanes at once.
//!
//! Why our own: libm's `exp`/`sin_cos` are opaque calls that stop LLVM from vectorising the
//! reflectivity loop, and they dominate its cost. The polynomials are Cephes' double-precision
//! minimax sets (≲ 1e-16 relative on the reduced ranges); arguments up to ~1e6 rad reduce exactly
//! enough for the 1e-9 gate (the phase's own rounding is larger).

// The constants are Cephes' published values, kept digit for digit.
#![allow(clippy::excessive_precision)]

/// Lanes per block: 8 f64 = two AVX2 or one AVX-512 register.
pub const L: usize = 8;
/// A block of lane values.
pub type V = [f64; L];

/// A block of complex numbers, split into real and imaginary parts.
#[derive(Clone, Copy, Debug)]
pub struct Cv {
    pub re: V,
    pub im: V,
}

macro_rules! lanes {
    (|$i:ident| $e:expr) => {{
        let mut out = [0.0f64; L];
        for $i in 0..L {
            out[$i] = $e;
        }
        out
    }};
}
pub(crate) use lanes;

impl Cv {
    #[inline(always)]
    pub fn splat(re: f64, im: f64) -> Self {
        Self { re: [re; L], im: [im; L] }
    }
    #[inline(always)]
    pub fn add(self, o: Self) -> Self {
        Self { re: lanes!(|i| self.re[i] + o.re[i]), im: lanes!(|i| self.im[i] + o.im[i]) }
    }
    #[inline(always)]
    pub fn mul(self, o: Self) -> Self {
        Self { re: lanes!(|i| self.re[i] * o.re[i] - self.im[i] * o.im[i]), im: lanes!(|i| self.re[i] * o.im[i] + self.im[i] * o.re[i]) }
    }
    #[inline(always)]
    pub fn scale(self, s: V) -> Self {
        Self { re: lanes!(|i| self.re[i] * s[i]), im: lanes!(|i| self.im[i] * s[i]) }
    }
    /// a / b for every lane.
    #[inline(always)]
    pub fn div(self, b: Self) -> Self {
        let inv = lanes!(|i| 1.0 / (b.re[i] * b.re[i] + b.im[i] * b.im[i]));
        Self { re: lanes!(|i| (self.re[i] * b.re[i] + self.im[i] * b.im[i]) * inv[i]), im: lanes!(|i| (self.im[i] * b.re[i] - self.re[i] * b.im[i]) * inv[i]) }
    }
    #[inline(always)]
    pub fn norm_sqr(self) -> V {
        lanes!(|i| self.re[i] * self.re[i] + self.im[i] * self.im[i])
    }
    /// exp of every lane: e^re (cos im, sin im).
    #[inline(always)]
    pub fn exp(self) -> Self {
        let m = exp(self.re);
        let (s, c) = sin_cos(self.im);
        Self { re: lanes!(|i| m[i] * c[i]), im: lanes!(|i| m[i] * s[i]) }
    }
    /// exp of every lane when |re| and |im| are at most [`SMALL_PHASE`] in every lane (the phase
    /// factor of a thin slab, [`super::LayerTerms::small_phase`]): Taylor series without range
    /// reduction, about a third of [`Cv::exp`]'s operations, within 3e-16 relative of it.
    #[inline(always)]
    pub fn exp_small(self) -> Self {
        let (a, b) = (self.re, self.im);
        let m = lanes!(|i| horner(a[i], &EXP_SMALL));
        let z = lanes!(|i| b[i] * b[i]);
        let s = lanes!(|i| b[i] + b[i] * z[i] * horner(z[i], &SIN_SMALL));
        let c = lanes!(|i| 1.0 - 0.5 * z[i] + z[i] * z[i] * horner(z[i], &COS_SMALL));
        Self { re: lanes!(|i| m[i] * c[i]), im: lanes!(|i| m[i] * s[i]) }
    }
    /// The square root with Im ≥ 0 in every lane (see [`super::decaying_root`]); inputs must
    /// not be so small that their squares underflow (the caller checks q).
    #[inline(always)]
    pub fn decaying_root(self) -> Self {
        let (x, y) = (self.re, self.im);
        let t = lanes!(|i| ((((x[i] * x[i] + y[i] * y[i]).sqrt()) + x[i].abs()) * 0.5).sqrt());
        let h = lanes!(|i| if t[i] == 0.0 { 0.0 } else { 0.5 / t[i] });
        let re = lanes!(|i| if x[i] >= 0.0 { t[i] } else { y[i].abs() * h[i] });
        let im = lanes!(|i| if x[i] >= 0.0 { y[i] * h[i] } else { t[i].copysign(y[i]) });
        let flip = lanes!(|i| if im[i] < 0.0 { -1.0 } else { 1.0 });
        Self { re: lanes!(|i| re[i] * flip[i]), im: lanes!(|i| im[i] * flip[i]) }
    }
}

/// Largest |argument| of [`Cv::exp_small`]: at 1/8 the truncated terms are below 3e-16 relative
/// (exp: x¹¹/11!; cos: x¹⁰/10!; sin: x¹¹/11!).
pub const SMALL_PHASE: f64 = 0.125;
/// e^x to degree 10 (Taylor, highest first).
pub const EXP_SMALL: [f64; 11] = [1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0];
/// sin x = x + x·z·P(z), z = x², P to x⁹'s term (Taylor, highest first).
pub const SIN_SMALL: [f64; 4] = [1.0 / 362880.0, -1.0 / 5040.0, 1.0 / 120.0, -1.0 / 6.0];
/// cos x = 1 − z/2 + z²·P(z), P to x⁸'s term (Taylor, highest first).
pub const COS_SMALL: [f64; 3] = [1.0 / 40320.0, -1.0 / 720.0, 1.0 / 24.0];

/// 1.5·2^52: adding it to an integer-valued f64 below 2^51 in magnitude puts the integer in the
/// low mantissa bits.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

#[inline(always)]
fn horner(x: f64, coefficients: &[f64]) -> f64 {
    coefficients.iter().fold(0.0, |acc, &c| acc * x + c)
}

/// e^x per lane; 0 below −708 (the phase attenuation of a thick absorbing layer).
#[inline(always)]
pub fn exp(x: V) -> V {
    const LOG2E: f64 = std::f64::consts::LOG2_E;
    const LN2_HI: f64 = 6.931_457_519_531_25e-1;
    const LN2_LO: f64 = 1.428_606_820_309_417_232_12e-6;
    // Taylor to degree 12 on |r| ≤ ln2/2: truncation < 1e-16 relative.
    const C: [f64; 13] =
        [1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0, 1.0];
    lanes!(|i| {
        let xi = x[i].clamp(-708.0, 709.0);
        let n = (xi * LOG2E).round();
        let r = (xi - n * LN2_HI) - n * LN2_LO;
        // 2^n without a float→int conversion (AVX2 has none for f64→i64): n sits in the low
        // mantissa bits of n + 1.5·2^52.
        let scale = f64::from_bits((n + ROUND_MAGIC).to_bits().wrapping_add(1023) << 52);
        let value = horner(r, &C) * scale;
        if x[i] < -708.0 {
            0.0
        } else {
            value
        }
    })
}

/// (sin x, cos x) per lane.
#[inline(always)]
pub fn sin_cos(x: V) -> (V, V) {
    const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;
    const PIO2_1: f64 = 1.570_796_251_296_997_070_31;
    const PIO2_2: f64 = 7.549_789_415_861_596_353_36e-8;
    const PIO2_3: f64 = 5.390_302_858_158_119_052_90e-15;
    const SIN: [f64; 6] = [
        1.589_623_015_765_465_680_60e-10,
        -2.505_074_776_285_780_728_66e-8,
        2.755_731_362_138_572_452_13e-6,
        -1.984_126_982_958_953_859_96e-4,
        8.333_333_333_322_118_588_78e-3,
        -1.666_666_666_666_663_072_95e-1,
    ];
    const COS: [f64; 6] = [
        -1.135_853_652_138_768_173_00e-11,
        2.087_570_084_197_473_167_78e-9,
        -2.755_731_417_929_673_881_12e-7,
        2.480_158_728_885_170_453_48e-5,
        -1.388_888_888_887_305_641_16e-3,
        4.166_666_666_666_659_292_18e-2,
    ];
    let mut sin = [0.0; L];
    let mut cos = [0.0; L];
    for i in 0..L {
        let j = (x[i] * TWO_OVER_PI).round();
        let r = ((x[i] - j * PIO2_1) - j * PIO2_2) - j * PIO2_3;
        let z = r * r;
        let s = r + r * z * horner(z, &SIN);
        let c = 1.0 - 0.5 * z + z * z * horner(z, &COS);
        // Quadrant from the low bits of j + 1.5·2^52 (branch-free, vectorisable):
        // q=0: (s, c); q=1: (c, −s); q=2: (−s, −c); q=3: (−c, s).
        let quadrant = (j + ROUND_MAGIC).to_bits();
        let swap = quadrant & 1 == 1;
        let sin_sign = if quadrant & 2 == 2 { -1.0 } else { 1.0 };
        let cos_sign = if (quadrant.wrapping_add(1)) & 2 == 2 { -1.0 } else { 1.0 };
        sin[i] = sin_sign * if swap { c } else { s };
        cos[i] = cos_sign * if swap { s } else { c };
    }
    (sin, cos)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_and_sin_cos_match_libm() {
        let mut worst = (0.0f64, 0.0f64);
        let mut x = [0.0; L];
        for k in 0..20_000 {
            for (i, xi) in x.iter_mut().enumerate() {
                *xi = ((k * L + i) as f64 * 0.7548776662466927).fract() * 2000.0 - 1000.0;
            }
            let e = exp(lanes!(|i| x[i] * 0.7));
            let (s, c) = sin_cos(x);
            for i in 0..L {
                let xe = x[i] * 0.7;
                worst.0 = worst.0.max(((e[i] - xe.exp()) / xe.exp()).abs());
                worst.1 = worst.1.max((s[i] - x[i].sin()).abs()).max((c[i] - x[i].cos()).abs());
            }
        }
        assert!(worst.0 < 1e-14 && worst.1 < 1e-13, "{worst:?}");
        assert_eq!(exp([-800.0; L]), [0.0; L]);
    }

    /// The small-argument exp equals the reduced one to a few ulps over the whole square it is used on.
    #[test]
    fn exp_small_matches_exp_within_its_range() {
        let mut worst = 0.0f64;
        for k in 0..20_000 {
            let t = |j: usize| (((k * L + j) as f64 * 0.7548776662466927).fract() * 2.0 - 1.0) * SMALL_PHASE;
            let z = Cv { re: lanes!(|i| t(i)), im: lanes!(|i| t(i + 3)) };
            let (small, full) = (z.exp_small(), z.exp());
            for i in 0..L {
                let scale = full.re[i].hypot(full.im[i]);
                worst = worst.max((small.re[i] - full.re[i]).abs().max((small.im[i] - full.im[i]).abs()) / scale);
            }
        }
        assert!(worst < 1e-15, "{worst:e}");
    }
}
