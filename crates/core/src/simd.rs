//! The one SIMD-dispatch idiom of the workspace (CONTRIBUTING.md § SIMD dispatch).
//!
//! Vector code is written once as plain `#[inline(always)]` Rust (or with `core::arch`
//! intrinsics) and built several times; which build runs is decided in one place:
//! * **x86-64, at run time**: [`level`] detects the CPU once (cached) and the caller `match`es on
//!   it; the wider builds are declared with [`x86_build!`](crate::x86_build), which spells each
//!   level's `target_feature` list here, so a build never enables more than the detection proved.
//! * **wasm32, at compile time**: wasm has no run-time feature detection; a module with f64x2 /
//!   i8x16 intrinsics is gated by `#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]`
//!   (scripts/env.sh builds wasm with `+simd128`) and [`level`] is the constant
//!   [`Level::Simd128`] there, so the `match` folds away.
//! * The target's baseline (SSE2 on x86-64, plain code elsewhere) needs neither.
//!
//! The pattern at a call site:
//! ```ignore
//! use scatterlab_core::simd::{level, Level};
//! scatterlab_core::x86_build!(avx2, unsafe fn curve_avx2(q: &[f64]) { curve_portable(q) });
//! scatterlab_core::x86_build!(avx512, unsafe fn curve_avx512(q: &[f64]) { curve_portable(q) });
//! match level() {
//!     #[cfg(target_arch = "x86_64")]
//!     // SAFETY: `level()` found every feature `x86_build!(avx512, …)` enables.
//!     Level::Avx512 => unsafe { curve_avx512(q) },
//!     #[cfg(target_arch = "x86_64")]
//!     // SAFETY: `level()` found AVX2 and FMA, all `x86_build!(avx2, …)` enables.
//!     Level::Avx2 => unsafe { curve_avx2(q) },
//!     #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
//!     Level::Simd128 => simd128::curve(q),
//!     _ => curve_portable(q),
//! }
//! ```
//! A site with no wasm build puts `#[cfg(target_arch = "x86_64")]` on the `match` (arms
//! `return`, `_ => {}`) and falls through to the portable call; a site with only an AVX2 build
//! tests `level().avx2()`.
//! Every build computes the same operations in the same order (Rust never contracts a multiply
//! and an add into an FMA by itself), so the levels agree bit for bit unless the code asks for
//! `mul_add` explicitly.

/// The widest SIMD build the running machine can execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// The target's baseline only: SSE2 on x86-64 (always present), plain code elsewhere (wasm
    /// built without `simd128`, other architectures).
    Scalar,
    /// wasm32 built with `+simd128`: 128-bit vectors, known at compile time.
    Simd128,
    /// x86-64 with AVX2 and FMA (detected at run time).
    Avx2,
    /// x86-64 with AVX-512 F, DQ, BW and VL besides AVX2 and FMA (detected at run time).
    Avx512,
}

impl Level {
    /// Whether the AVX2 + FMA builds ([`x86_build!`](crate::x86_build)`(avx2, …)`) may run:
    /// [`Level::Avx2`] and [`Level::Avx512`].
    pub fn avx2(self) -> bool {
        matches!(self, Level::Avx2 | Level::Avx512)
    }

    /// Short lower-case name for logs and benchmark headers (`"avx512"`, `"simd128"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Simd128 => "simd128",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }
}

/// The widest build this machine runs: detected once per process on x86-64 (then cached), a
/// compile-time constant on every other target.
#[inline]
pub fn level() -> Level {
    #[cfg(target_arch = "x86_64")]
    {
        static LEVEL: std::sync::OnceLock<Level> = std::sync::OnceLock::new();
        *LEVEL.get_or_init(detect_x86)
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        Level::Simd128
    }
    #[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
    {
        Level::Scalar
    }
}

/// Probes the CPU: the features of each level exactly as [`x86_build!`](crate::x86_build) enables them.
#[cfg(target_arch = "x86_64")]
fn detect_x86() -> Level {
    use std::arch::is_x86_feature_detected as has;
    let avx2 = has!("avx2") && has!("fma");
    if avx2 && has!("avx512f") && has!("avx512dq") && has!("avx512bw") && has!("avx512vl") {
        Level::Avx512
    } else if avx2 {
        Level::Avx2
    } else {
        Level::Scalar
    }
}

/// Declares one x86-64 build of a function (`avx2` or `avx512`): the item gets
/// `#[cfg(target_arch = "x86_64")]` and the level's `#[target_feature(enable = …)]` list, the
/// one spelling of the features [`simd::level`](crate::simd::level) checks. Call it only where
/// `level()` returned that level or a wider one (`Level::avx2()` for the AVX2 build), inside an
/// `unsafe` block with a `// SAFETY:` comment saying so. Works for free functions, nested
/// functions, generic functions and methods (inside an `impl` block).
#[macro_export]
macro_rules! x86_build {
    (avx2, $($item:tt)*) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        $($item)*
    };
    (avx512, $($item:tt)*) => {
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl,avx2,fma")]
        $($item)*
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_is_cached_and_consistent() {
        let first = level();
        assert_eq!(first, level());
        assert_eq!(first.avx2(), first >= Level::Avx2);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(first.avx2(), std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma"));
        println!("simd level: {}", first.name());
    }
}
