//! The 2-byte (u16 detector) unshuffle with 128-bit vectors: SSE2 on x86_64 (always present) and
//! simd128 on wasm32 when built with `+simd128` (scripts/env.sh). Elsewhere it does nothing and
//! the scalar u64 path covers every column. Both are the target's baseline, chosen at compile time
//! (CONTRIBUTING.md § SIMD dispatch): no run-time level is needed, so this crate does not ask
//! `scatterlab_core::simd::level()`.
//!
//! Sixteen groups at a time (bitshuffle's `shuffle_bit_eightelem` idea): load 16 bytes of each of
//! the 16 bit rows, transpose that 16×16 byte matrix (4 rounds of byte unpacks), so vector `g`
//! holds byte `r` = row `r` of group `g`. The sign bits of those 16 bytes are bit `r` of element
//! `8g + 7`, i.e. its whole u16: one movemask per element, shifting every byte left by one
//! (adding it to itself) between elements.

use super::load8;

#[cfg(target_arch = "x86_64")]
mod lanes {
    use core::arch::x86_64::{__m128i, _mm_add_epi8, _mm_movemask_epi8, _mm_set_epi64x, _mm_unpackhi_epi8, _mm_unpacklo_epi8};

    pub type V = __m128i;

    #[inline(always)]
    pub fn from_u64(lo: u64, hi: u64) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline, so the instruction always exists; no memory is touched.
        unsafe { _mm_set_epi64x(hi as i64, lo as i64) }
    }
    #[inline(always)]
    pub fn unpack_lo(a: V, b: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline, so the instruction always exists; no memory is touched.
        unsafe { _mm_unpacklo_epi8(a, b) }
    }
    #[inline(always)]
    pub fn unpack_hi(a: V, b: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline, so the instruction always exists; no memory is touched.
        unsafe { _mm_unpackhi_epi8(a, b) }
    }
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // a movemask of 16 byte lanes sets only the low 16 bits
    pub fn sign_bits(a: V) -> u16 {
        // SAFETY: SSE2 is part of the x86_64 baseline, so the instruction always exists; no memory is touched.
        unsafe { _mm_movemask_epi8(a) as u16 }
    }
    #[inline(always)]
    pub fn double(a: V) -> V {
        // SAFETY: SSE2 is part of the x86_64 baseline, so the instruction always exists; no memory is touched.
        unsafe { _mm_add_epi8(a, a) }
    }
}

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod lanes {
    use core::arch::wasm32::{i64x2, i8x16_add, i8x16_bitmask, i8x16_shuffle, v128};

    pub type V = v128;

    #[inline(always)]
    pub fn from_u64(lo: u64, hi: u64) -> V {
        i64x2(lo as i64, hi as i64)
    }
    #[inline(always)]
    pub fn unpack_lo(a: V, b: V) -> V {
        i8x16_shuffle::<0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23>(a, b)
    }
    #[inline(always)]
    pub fn unpack_hi(a: V, b: V) -> V {
        i8x16_shuffle::<8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31>(a, b)
    }
    #[inline(always)]
    pub fn sign_bits(a: V) -> u16 {
        i8x16_bitmask(a)
    }
    #[inline(always)]
    pub fn double(a: V) -> V {
        i8x16_add(a, a)
    }
}

/// One round of the 16×16 byte transpose, in place (constant `bit`, so it unrolls into registers).
#[cfg(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn unpack_round(v: &mut [lanes::V; 16], bit: usize) {
    for i in 0..16 {
        if i & bit == 0 {
            let (a, b) = (v[i], v[i | bit]);
            v[i] = lanes::unpack_lo(a, b);
            v[i | bit] = lanes::unpack_hi(a, b);
        }
    }
}

/// Unshuffles the first `nb & !15` columns (groups) of a validated 2-byte block of `nb` columns
/// and returns how many it did (0 without vector support); the caller does the rest.
#[cfg(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128")))]
pub(super) fn unshuffle_es2(src: &[u8], dst: &mut [u8], nb: usize) -> usize {
    use lanes::*;
    let wide = nb & !15;
    for (c16, out) in dst.chunks_exact_mut(16 * 16).take(wide / 16).enumerate() {
        let c = 16 * c16;
        let mut v: [V; 16] = std::array::from_fn(|r| from_u64(load8(src, r * nb + c), load8(src, r * nb + c + 8)));
        // Round `bit` pairs vectors whose index differs in `bit`: the byte position's top bit moves
        // into the vector index and that index bit into the position's bottom (rows 8, 4, 2, 1 in turn).
        unpack_round(&mut v, 8);
        unpack_round(&mut v, 4);
        unpack_round(&mut v, 2);
        unpack_round(&mut v, 1);
        for (u, grp) in v.into_iter().zip(out.chunks_exact_mut(16)) {
            let mut u = u;
            let mut elems = [0u16; 8];
            for e in elems.iter_mut().rev() {
                *e = sign_bits(u);
                u = double(u);
            }
            let word = |h: usize| (0..4).fold(0u64, |w, m| w | u64::from(elems[4 * h + m]) << (16 * m));
            let (lo, hi) = grp.split_at_mut(8);
            lo.copy_from_slice(&word(0).to_le_bytes());
            hi.copy_from_slice(&word(1).to_le_bytes());
        }
    }
    wide
}

/// Without vector support the scalar path does every column.
#[cfg(not(any(target_arch = "x86_64", all(target_arch = "wasm32", target_feature = "simd128"))))]
pub(super) fn unshuffle_es2(_src: &[u8], _dst: &mut [u8], _nb: usize) -> usize {
    0
}
