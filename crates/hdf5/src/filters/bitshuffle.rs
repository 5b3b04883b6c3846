//! The bitshuffle bit transpose (kiyo-masui/bitshuffle): scalar u64 words, plus 128-bit vectors
//! for 2-byte elements (`bitshuffle/simd.rs`).
//!
//! A block of `n` elements (`n % 8 == 0`) of `es` bytes is stored as `8 * es` bit rows of
//! `nb = n / 8` bytes: bit `m` of `shuffled[(8 * j + k) * nb + i]` is bit `k` of byte `j`
//! (little-endian order in memory) of element `8 * i + m`. Gathering the 8 row bytes of one
//! (group `i`, byte `j`) into a u64 and transposing it as an 8×8 bit matrix gives byte `j` of
//! the 8 elements of group `i` at once (bitshuffle's `TRANS_BIT_8X8`).

use crate::error::DecodeError;

mod simd;

/// Elements per block a bitshuffle writer uses when the filter asks for "auto" (block size 0):
/// `bshuf_default_block_size`, 8 KiB worth of elements rounded down to a multiple of 8, at least 128.
pub fn default_block_elems(es: usize) -> usize {
    ((8192 / es.max(1)) & !7).max(128)
}

/// Transposes an 8×8 bit matrix held in a u64 (byte = row): bit `k` of byte `m` of the result
/// is bit `m` of byte `k` of the input. Three delta swaps, as bitshuffle's `TRANS_BIT_8X8`.
#[inline(always)]
fn trans_bit_8x8(mut x: u64) -> u64 {
    let t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x ^= t ^ (t << 7);
    let t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x ^= t ^ (t << 14);
    let t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^= t ^ (t << 28);
    x
}

/// Spreads the 4 bytes of `v` (low 32 bits) to the even bytes of a u64: byte `m` → byte `2m`.
#[inline(always)]
fn spread_bytes(v: u64) -> u64 {
    let s = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF;
    (s | (s << 8)) & 0x00FF_00FF_00FF_00FF
}

/// Checks the common preconditions and returns the block's byte count `n * es`.
fn block_bytes(src_len: usize, dst_len: usize, n: usize, es: usize) -> Result<usize, DecodeError> {
    if es == 0 {
        return Err(DecodeError::invalid("bitshuffle element size", "is 0"));
    }
    if !n.is_multiple_of(8) {
        return Err(DecodeError::invalid("bitshuffle block", format!("{n} elements is not a multiple of 8")));
    }
    let bytes = n.checked_mul(es).ok_or_else(|| DecodeError::invalid("bitshuffle block", format!("{n} × {es} bytes overflows")))?;
    if src_len < bytes {
        return Err(DecodeError::truncated("bitshuffle block input", 0, bytes, src_len));
    }
    if dst_len < bytes {
        return Err(DecodeError::SizeMismatch { what: "bitshuffle block output buffer".into(), expected: bytes, actual: dst_len });
    }
    Ok(bytes)
}

/// Reads the byte at row `row`, column `i` of the bit-row matrix as the u64's byte `k`.
#[inline(always)]
fn gather8(src: &[u8], base: usize, nb: usize) -> u64 {
    // Callers guarantee base + 7 * nb < src.len() (validated block size), so these never fail.
    let b = |k: usize| src.get(base + k * nb).copied().unwrap_or(0);
    u64::from_le_bytes([b(0), b(1), b(2), b(3), b(4), b(5), b(6), b(7)])
}

/// The 8 bytes at `pos` as a little-endian u64 (0 past the end, which validated callers never reach).
#[inline(always)]
fn load8(src: &[u8], pos: usize) -> u64 {
    src.get(pos..pos + 8).and_then(|s| <[u8; 8]>::try_from(s).ok()).map_or(0, u64::from_le_bytes)
}

/// Transposes an 8×8 byte matrix held in 8 u64 rows: byte `g` of `w[k]` ends up as byte `k` of
/// `w[g]`. Three rounds of delta swaps (4, 2, then 1 row apart).
#[inline(always)]
fn trans_byte_8x8(w: &mut [u64; 8]) {
    #[inline(always)]
    fn swap(w: &mut [u64; 8], a: usize, b: usize, shift: u32, mask: u64) {
        let t = ((w[a] >> shift) ^ w[b]) & mask;
        w[b] ^= t;
        w[a] ^= t << shift;
    }
    for a in 0..4 {
        swap(w, a, a + 4, 32, 0x0000_0000_FFFF_FFFF);
    }
    for a in [0, 1, 4, 5] {
        swap(w, a, a + 2, 16, 0x0000_FFFF_0000_FFFF);
    }
    for a in [0, 2, 4, 6] {
        swap(w, a, a + 1, 8, 0x00FF_00FF_00FF_00FF);
    }
}

/// Spreads the two u16 of `v` (low 32 bits) to u16 slots 0 and 2 of a u64.
#[inline(always)]
fn spread_u16(v: u64) -> u64 {
    (v | (v << 16)) & 0x0000_FFFF_0000_FFFF
}

/// Writes one group of 8 elements: `y[j]` holds byte `j` of the 8 elements (byte `m` = element
/// `m`), `grp` is the 8 × `ES` output bytes. Element sizes 1, 2 and 4 build whole u64 words
/// (byte interleaves by shifts and masks) instead of storing single bytes.
#[inline(always)]
fn store_group<const ES: usize>(y: &[u64; ES], grp: &mut [u8]) {
    let words: [u64; ES] = match ES {
        1 => std::array::from_fn(|_| y[0]),
        2 => std::array::from_fn(|h| {
            let (a, b) = ((y[0] >> (32 * h)) & 0xFFFF_FFFF, (y[1 % ES] >> (32 * h)) & 0xFFFF_FFFF);
            spread_bytes(a) | (spread_bytes(b) << 8)
        }),
        4 => {
            // Bytes j0,j1 and j2,j3 interleave into u16 pairs, then the pairs interleave.
            let half = |p: usize, h: usize| {
                let (a, b) = ((y[p % ES] >> (32 * h)) & 0xFFFF_FFFF, (y[(p + 1) % ES] >> (32 * h)) & 0xFFFF_FFFF);
                spread_bytes(a) | (spread_bytes(b) << 8)
            };
            let (lo01, hi01, lo23, hi23) = (half(0, 0), half(0, 1), half(2, 0), half(2, 1));
            std::array::from_fn(|w| {
                let (a, b) = if w < 2 { (lo01, lo23) } else { (hi01, hi23) };
                let sh = if w % 2 == 0 { 0 } else { 32 };
                spread_u16((a >> sh) & 0xFFFF_FFFF) | (spread_u16((b >> sh) & 0xFFFF_FFFF) << 16)
            })
        }
        _ => {
            for (j, yj) in y.iter().enumerate() {
                for (m, byte) in yj.to_le_bytes().into_iter().enumerate() {
                    if let Some(d) = grp.get_mut(m * ES + j) {
                        *d = byte;
                    }
                }
            }
            return;
        }
    };
    for (d, w) in grp.chunks_exact_mut(8).zip(words) {
        d.copy_from_slice(&w.to_le_bytes());
    }
}

/// [`bitunshuffle_block`] for a compile-time element size on a validated `n * ES`-byte block.
/// Eight groups at a time: one u64 load per bit row covers 8 groups, an 8×8 byte transpose turns
/// those 8 row words into one word per group, and [`trans_bit_8x8`] turns each into byte `j` of
/// its 8 elements. Columns past the last multiple of 8 (`nb % 8`) gather single bytes. Columns
/// before `from` (a multiple of 8) are left alone: the vector path did them.
fn unshuffle_es<const ES: usize>(src: &[u8], dst: &mut [u8], nb: usize, from: usize) {
    let wide = nb & !7;
    let group = 8 * ES;
    for (c8, out) in dst.chunks_exact_mut(8 * group).enumerate().take(wide / 8).skip(from / 8) {
        let c = 8 * c8;
        let mut ys = [[0u64; ES]; 8];
        for j in 0..ES {
            let mut w: [u64; 8] = std::array::from_fn(|k| load8(src, (8 * j + k) * nb + c));
            trans_byte_8x8(&mut w);
            for (y, x) in ys.iter_mut().zip(w) {
                y[j] = trans_bit_8x8(x);
            }
        }
        for (y, grp) in ys.iter().zip(out.chunks_exact_mut(group)) {
            store_group::<ES>(y, grp);
        }
    }
    for (i, grp) in dst.chunks_exact_mut(group).enumerate().skip(wide) {
        let y: [u64; ES] = std::array::from_fn(|j| trans_bit_8x8(gather8(src, 8 * j * nb + i, nb)));
        store_group::<ES>(&y, grp);
    }
}

/// Undoes the bit transpose of one block: `n` elements (`n % 8 == 0`) of `es` bytes from
/// `src[..n * es]` into `dst[..n * es]`.
pub fn bitunshuffle_block(src: &[u8], dst: &mut [u8], n: usize, es: usize) -> Result<(), DecodeError> {
    let bytes = block_bytes(src.len(), dst.len(), n, es)?;
    let nb = n / 8;
    if nb == 0 {
        return Ok(());
    }
    let (src, dst) = (&src[..bytes], &mut dst[..bytes]);
    match es {
        1 => unshuffle_es::<1>(src, dst, nb, 0),
        2 => {
            let done = simd::unshuffle_es2(src, dst, nb);
            unshuffle_es::<2>(src, dst, nb, done);
        }
        4 => unshuffle_es::<4>(src, dst, nb, 0),
        8 => unshuffle_es::<8>(src, dst, nb, 0),
        _ => {
            for (i, grp) in dst.chunks_exact_mut(8 * es).enumerate() {
                for j in 0..es {
                    let y = trans_bit_8x8(gather8(src, 8 * j * nb + i, nb)).to_le_bytes();
                    for (m, &byte) in y.iter().enumerate() {
                        if let Some(d) = grp.get_mut(m * es + j) {
                            *d = byte;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// The forward bit transpose of one block (the inverse of [`bitunshuffle_block`]). For tests
/// and for building chunks the way a bitshuffle writer does.
pub fn bitshuffle_block(src: &[u8], dst: &mut [u8], n: usize, es: usize) -> Result<(), DecodeError> {
    let bytes = block_bytes(src.len(), dst.len(), n, es)?;
    let nb = n / 8;
    let (src, dst) = (&src[..bytes], &mut dst[..bytes]);
    for (i, grp) in src.chunks_exact(8 * es).enumerate() {
        for j in 0..es {
            let b = |m: usize| grp.get(m * es + j).copied().unwrap_or(0);
            let x = u64::from_le_bytes([b(0), b(1), b(2), b(3), b(4), b(5), b(6), b(7)]);
            for (k, &byte) in trans_bit_8x8(x).to_le_bytes().iter().enumerate() {
                if let Some(d) = dst.get_mut((8 * j + k) * nb + i) {
                    *d = byte;
                }
            }
        }
    }
    Ok(())
}

/// Block sizes of bitshuffle's blocked layout (`bshuf_blocked_wrap_fun`) for `n` elements:
/// `n / block` full blocks, one partial block of the remainder rounded down to a multiple of 8,
/// then `n % 8` elements left as they are. Yields the element count of each transposed block.
pub fn block_plan(n: usize, block: usize) -> impl Iterator<Item = usize> {
    let block = block.max(8);
    let full = n / block;
    let last = (n % block) & !7;
    std::iter::repeat_n(block, full).chain((last > 0).then_some(last))
}

/// Undoes bitshuffle without compression (filter 32008 with compression 0): `n` elements of
/// `es` bytes in blocks of `block` elements (a multiple of 8; 0 = [`default_block_elems`]),
/// the `n % 8` trailing elements stored untransposed.
pub fn bitunshuffle(src: &[u8], dst: &mut [u8], n: usize, es: usize, block: usize) -> Result<(), DecodeError> {
    let block = if block == 0 { default_block_elems(es) } else { block };
    if block % 8 != 0 {
        return Err(DecodeError::invalid("bitshuffle block size", format!("{block} elements is not a multiple of 8")));
    }
    let total = block_bytes(src.len(), dst.len(), n & !7, es)?;
    let total = total + (n % 8) * es;
    if src.len() < total || dst.len() < total {
        return Err(DecodeError::truncated("bitshuffle input", 0, total, src.len().min(dst.len())));
    }
    let mut done = 0;
    for this in block_plan(n, block) {
        let (a, b) = (done * es, (done + this) * es);
        bitunshuffle_block(&src[a..b], &mut dst[a..b], this, es)?;
        done += this;
    }
    dst[done * es..total].copy_from_slice(&src[done * es..total]);
    Ok(())
}
