//! The bitshuffle bit transpose (kiyo-masui/bitshuffle), scalar.
//!
//! A block of `n` elements (`n % 8 == 0`) of `es` bytes is stored as `8 * es` bit rows of
//! `nb = n / 8` bytes: bit `m` of `shuffled[(8 * j + k) * nb + i]` is bit `k` of byte `j`
//! (little-endian order in memory) of element `8 * i + m`. Gathering the 8 row bytes of one
//! (group `i`, byte `j`) into a u64 and transposing it as an 8×8 bit matrix gives byte `j` of
//! the 8 elements of group `i` at once (bitshuffle's `TRANS_BIT_8X8`).

use crate::error::DecodeError;

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
    let bytes = n
        .checked_mul(es)
        .ok_or_else(|| DecodeError::invalid("bitshuffle block", format!("{n} × {es} bytes overflows")))?;
    if src_len < bytes {
        return Err(DecodeError::truncated("bitshuffle block input", 0, bytes, src_len));
    }
    if dst_len < bytes {
        return Err(DecodeError::SizeMismatch {
            what: "bitshuffle block output buffer".into(),
            expected: bytes,
            actual: dst_len,
        });
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

/// Undoes the bit transpose of one block: `n` elements (`n % 8 == 0`) of `es` bytes from
/// `src[..n * es]` into `dst[..n * es]`.
pub fn bitunshuffle_block(src: &[u8], dst: &mut [u8], n: usize, es: usize) -> Result<(), DecodeError> {
    let bytes = block_bytes(src.len(), dst.len(), n, es)?;
    let nb = n / 8;
    if nb == 0 {
        return Ok(());
    }
    let (src, dst) = (&src[..bytes], &mut dst[..bytes]);
    if es == 2 {
        // The detector case (u16): both transposed bytes of a group interleave into two u64
        // stores instead of 16 byte stores.
        for (i, grp) in dst.chunks_exact_mut(16).enumerate() {
            let y0 = trans_bit_8x8(gather8(src, i, nb));
            let y1 = trans_bit_8x8(gather8(src, 8 * nb + i, nb));
            let lo = spread_bytes(y0 & 0xFFFF_FFFF) | (spread_bytes(y1 & 0xFFFF_FFFF) << 8);
            let hi = spread_bytes(y0 >> 32) | (spread_bytes(y1 >> 32) << 8);
            let (a, b) = grp.split_at_mut(8);
            a.copy_from_slice(&lo.to_le_bytes());
            b.copy_from_slice(&hi.to_le_bytes());
        }
        return Ok(());
    }
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
