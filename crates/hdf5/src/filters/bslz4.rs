//! Bitshuffle+LZ4 chunks (HDF5 filter 32008, compression 2), as `bshuf_h5_filter` writes them.
//!
//! Layout: `u64 BE` uncompressed bytes, `u32 BE` block size in bytes (it overrides the filter's
//! cd_values), then per transposed block a `u32 BE` compressed length and an LZ4 *block* that
//! decodes to exactly `block_elems * es` bytes, and last the `n % 8` trailing elements
//! (`(n % 8) * es` bytes) copied raw. Block sizes follow [`super::bitshuffle::block_plan`].

use super::bitshuffle::{bitunshuffle_block, block_plan, default_block_elems};
use crate::error::DecodeError;

/// Bytes before the first block: the u64 total and the u32 block size.
pub const HEADER_BYTES: usize = 12;

/// Reads a big-endian u32 at `pos`, or says which part was truncated.
pub(crate) fn be_u32(src: &[u8], pos: usize, what: &str) -> Result<u32, DecodeError> {
    match src.get(pos..pos.saturating_add(4)) {
        Some(&[a, b, c, d]) => Ok(u32::from_be_bytes([a, b, c, d])),
        _ => Err(DecodeError::truncated(what, pos, 4, src.len().saturating_sub(pos))),
    }
}

/// Reads the `u64 BE` total and `u32 BE` size header shared by 32008 and 32004 chunks.
pub(crate) fn read_header(src: &[u8], what: &str) -> Result<(u64, u32), DecodeError> {
    match src.get(..HEADER_BYTES) {
        Some(h) => {
            let mut total = [0u8; 8];
            total.copy_from_slice(&h[..8]);
            Ok((u64::from_be_bytes(total), be_u32(h, 8, what)?))
        }
        None => Err(DecodeError::truncated(what, 0, HEADER_BYTES, src.len())),
    }
}

/// The chunk header: (uncompressed bytes, block size in bytes).
pub fn bslz4_header(src: &[u8]) -> Result<(u64, u32), DecodeError> {
    read_header(src, "bslz4 header")
}

/// Decodes one bitshuffle+LZ4 chunk of `es`-byte elements into `dst`, returning the bytes written
/// (the header's total). `dst` must hold at least that many; `scratch` is reused between calls
/// (it grows to one block, 8 KiB for the usual block size) so a stream of chunks allocates once.
pub fn decode_bslz4_into(src: &[u8], es: usize, dst: &mut [u8], scratch: &mut Vec<u8>) -> Result<usize, DecodeError> {
    let (total, block_bytes) = bslz4_header(src)?;
    if es == 0 {
        return Err(DecodeError::invalid("bslz4 element size", "is 0"));
    }
    let total = usize::try_from(total).map_err(|_| DecodeError::invalid("bslz4 header", format!("total {total} bytes does not fit in memory")))?;
    if total % es != 0 {
        return Err(DecodeError::invalid("bslz4 header", format!("total {total} bytes is not a multiple of the element size {es}")));
    }
    if total > dst.len() {
        return Err(DecodeError::SizeMismatch { what: "bslz4 total vs output buffer".into(), expected: dst.len(), actual: total });
    }
    let n = total / es;
    // As in bshuf_h5_filter: the header's byte count divided by the element size, 0 = auto.
    let block = match block_bytes as usize / es {
        0 => default_block_elems(es),
        b if b % 8 != 0 => return Err(DecodeError::invalid("bslz4 header", format!("block of {block_bytes} bytes = {b} elements is not a multiple of 8"))),
        b => b,
    };
    // Scratch holds one decoded block; never more than the output itself, so a forged block size
    // cannot make it large.
    let need = block.min(n & !7) * es;
    if scratch.len() < need {
        scratch.resize(need, 0);
    }
    let mut pos = HEADER_BYTES;
    let mut done = 0usize;
    for (b, this) in block_plan(n, block).enumerate() {
        let clen = be_u32(src, pos, &format!("bslz4 block {b} length"))? as usize;
        pos += 4;
        let data = src.get(pos..pos.saturating_add(clen)).ok_or_else(|| DecodeError::truncated(format!("bslz4 block {b}"), pos, clen, src.len() - pos))?;
        let bytes = this * es;
        let out = scratch.get_mut(..bytes).ok_or_else(|| DecodeError::invalid("bslz4 block", "larger than scratch"))?;
        let got = super::lz4_block::decompress_into(data, out).map_err(|e| DecodeError::Lz4 { block: b, detail: e.to_string() })?;
        if got != bytes {
            return Err(DecodeError::SizeMismatch { what: format!("bslz4 block {b} decoded"), expected: bytes, actual: got });
        }
        let dst_block = dst.get_mut(done * es..done * es + bytes).ok_or_else(|| DecodeError::invalid("bslz4 block", "past the output"))?;
        bitunshuffle_block(out, dst_block, this, es)?;
        pos += clen;
        done += this;
    }
    // The n % 8 trailing elements are stored untransposed after the last block.
    let tail = total - done * es;
    let raw = src.get(pos..pos + tail).ok_or_else(|| DecodeError::truncated("bslz4 raw tail", pos, tail, src.len().saturating_sub(pos)))?;
    if let Some(d) = dst.get_mut(done * es..total) {
        d.copy_from_slice(raw);
    }
    Ok(total)
}

/// Encodes `src` (`src.len() / es` elements) as a bitshuffle+LZ4 chunk with blocks of `block`
/// elements (a multiple of 8; 0 = default). The writer side of [`decode_bslz4_into`], for tests.
pub fn encode_bslz4(src: &[u8], es: usize, block: usize) -> Result<Vec<u8>, DecodeError> {
    if es == 0 || !src.len().is_multiple_of(es) {
        return Err(DecodeError::invalid("bslz4 encode", "input is not whole elements"));
    }
    let block = if block == 0 { default_block_elems(es) } else { block };
    if block % 8 != 0 {
        return Err(DecodeError::invalid("bslz4 encode", "block is not a multiple of 8"));
    }
    let n = src.len() / es;
    let mut out = Vec::with_capacity(src.len() + HEADER_BYTES);
    out.extend_from_slice(&(src.len() as u64).to_be_bytes());
    let too_big = || DecodeError::invalid("bslz4 encode", "block larger than 4 GiB");
    out.extend_from_slice(&u32::try_from(block * es).map_err(|_| too_big())?.to_be_bytes());
    let mut done = 0;
    let mut shuffled = Vec::new();
    for this in block_plan(n, block) {
        let bytes = this * es;
        shuffled.resize(bytes, 0);
        super::bitshuffle::bitshuffle_block(&src[done * es..done * es + bytes], &mut shuffled, this, es)?;
        let c = lz4_flex::block::compress(&shuffled);
        out.extend_from_slice(&u32::try_from(c.len()).map_err(|_| too_big())?.to_be_bytes());
        out.extend_from_slice(&c);
        done += this;
    }
    out.extend_from_slice(&src[done * es..]);
    Ok(out)
}
