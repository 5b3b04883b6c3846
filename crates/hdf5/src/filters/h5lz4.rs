//! HDF5 LZ4 chunks (filter 32004), as HDFGroup's `H5Zlz4.c` writes them.
//!
//! Layout: `u64 BE` original size, **one** `u32 BE` block size for the whole chunk (clamped to
//! the original size), then until the original size is reached: `this = min(block, remaining)`,
//! a `u32 BE` compressed size and the data. A compressed size equal to `this` means the block is
//! stored raw; otherwise it is an LZ4 block that decodes to exactly `this` bytes.
//! hdf5-reader 0.12.1 reads a block size before every block instead, which breaks multi-block
//! chunks; this decoder replaces it in [`super::registry`].

use super::bslz4::{be_u32, read_header, HEADER_BYTES};
use crate::error::DecodeError;

/// The chunk header: (original bytes, block size in bytes).
pub fn h5lz4_header(src: &[u8]) -> Result<(u64, u32), DecodeError> {
    read_header(src, "h5lz4 header")
}

/// Decodes one 32004 chunk into `dst`, returning the bytes written (the header's original size,
/// which must fit in `dst`).
pub fn decode_h5lz4_into(src: &[u8], dst: &mut [u8]) -> Result<usize, DecodeError> {
    let (orig, block) = h5lz4_header(src)?;
    let orig = usize::try_from(orig).map_err(|_| DecodeError::invalid("h5lz4 header", format!("size {orig} bytes does not fit in memory")))?;
    if orig > dst.len() {
        return Err(DecodeError::SizeMismatch { what: "h5lz4 size vs output buffer".into(), expected: dst.len(), actual: orig });
    }
    let block = (block as usize).min(orig);
    if block == 0 && orig > 0 {
        // H5Zlz4.c would loop forever here.
        return Err(DecodeError::invalid("h5lz4 header", "block size 0"));
    }
    let mut pos = HEADER_BYTES;
    let mut done = 0usize;
    let mut b = 0usize;
    while done < orig {
        let this = block.min(orig - done);
        let clen = be_u32(src, pos, &format!("h5lz4 block {b} length"))? as usize;
        pos += 4;
        let data = src.get(pos..pos.saturating_add(clen)).ok_or_else(|| DecodeError::truncated(format!("h5lz4 block {b}"), pos, clen, src.len() - pos))?;
        let out = dst.get_mut(done..done + this).ok_or_else(|| DecodeError::invalid("h5lz4 block", "past the output"))?;
        if clen == this {
            out.copy_from_slice(data);
        } else {
            let got = super::lz4_block::decompress_into(data, out).map_err(|e| DecodeError::Lz4 { block: b, detail: e.to_string() })?;
            if got != this {
                return Err(DecodeError::SizeMismatch { what: format!("h5lz4 block {b} decoded"), expected: this, actual: got });
            }
        }
        pos += clen;
        done += this;
        b += 1;
    }
    Ok(orig)
}

/// Encodes `src` as a 32004 chunk with blocks of `block` bytes (0 = one block), storing a block
/// raw when LZ4 does not shrink it, as H5Zlz4.c does. The writer side of [`decode_h5lz4_into`], for tests.
pub fn encode_h5lz4(src: &[u8], block: usize) -> Vec<u8> {
    // H5Zlz4's largest block is 1 GiB: every length written below then fits its u32 field.
    let block = if block == 0 { src.len().max(1) } else { block }.min(1 << 30);
    let mut out = Vec::with_capacity(src.len() + HEADER_BYTES);
    out.extend_from_slice(&(src.len() as u64).to_be_bytes());
    out.extend_from_slice(&u32::try_from(block).unwrap_or(u32::MAX).to_be_bytes());
    for piece in src.chunks(block) {
        let c = lz4_flex::block::compress(piece);
        if c.len() >= piece.len() {
            out.extend_from_slice(&be_len(piece.len()));
            out.extend_from_slice(piece);
        } else {
            out.extend_from_slice(&be_len(c.len()));
            out.extend_from_slice(&c);
        }
    }
    out
}

/// A block length (at most LZ4's bound of a 1 GiB block, < 2^31) as its big-endian u32 field.
fn be_len(n: usize) -> [u8; 4] {
    u32::try_from(n).unwrap_or(u32::MAX).to_be_bytes()
}
