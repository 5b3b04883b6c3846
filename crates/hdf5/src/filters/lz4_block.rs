//! A safe LZ4 *block* decoder tuned for bitshuffled detector data (no `unsafe`).
//!
//! Why not lz4_flex's `block::decompress_into` (still our encoder in tests, and the oracle the
//! tests compare against): it copies any match whose offset is shorter than its length + 15 one
//! byte at a time. Bitshuffled 4D-STEM frames are mostly long runs of zero bytes (the unused high
//! bit planes), i.e. long matches at offset 1, so lz4_flex spent ≈ 42 % of stem_decode_bench's
//! time there. This decoder fills offset-1 runs with `fill`, copies short-offset matches by
//! repeating a 16-byte pattern (offset 2 is the most common one in this data), and everything
//! else in 16-byte steps or with `copy_within`. Measured on dev_medium (49,152 LZ4 blocks, 302 MB
//! decoded, one thread, release, a shared 2-core machine):
//! - the LZ4 blocks alone: lz4_flex 0.14.2 1.5–1.8 GB/s, this decoder 6.4–6.6 GB/s;
//! - `stem_decode_bench`'s raw decode (LZ4 + unshuffle), the two builds run back to back:
//!   1.05 → 1.86 GB/s on a quiet machine, 0.88 → 1.24 GB/s under load.
//!
//! The format (lz4 `lz4_Block_format.md`): sequences of a token (high nibble literal length, low
//! nibble match length − 4; 15 = more length bytes follow, each added, until one is not 255),
//! the literals, a little-endian u16 offset and the match; the block ends after a sequence's
//! literals. Like lz4_flex, the end-of-block rules for encoders (last 5 bytes literals) are not
//! enforced, while offset 0 (which lz4_flex lets through) is an error.

/// Why an LZ4 block did not decode. Offsets (`at`) are byte positions in the input or output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Lz4Error {
    /// The input ends inside a token, a length or an offset.
    #[error("input ends at byte {at} inside a sequence")]
    Truncated {
        /// Input position where another byte was expected.
        at: usize,
    },
    /// A literal run is longer than the input left.
    #[error("{len} literal bytes at input byte {at}, only {have} left")]
    LiteralOverrun {
        /// Input position of the literals.
        at: usize,
        /// Declared literal length.
        len: usize,
        /// Input bytes left.
        have: usize,
    },
    /// A match with offset 0 (it would copy bytes not yet written).
    #[error("match offset 0 at output byte {at}")]
    ZeroOffset {
        /// Output position of the match.
        at: usize,
    },
    /// A match reaching back before the start of the output.
    #[error("match offset {offset} at output byte {at} points before the output")]
    OffsetOutOfBounds {
        /// The offset.
        offset: usize,
        /// Output position of the match.
        at: usize,
    },
    /// Literals or a match run past the end of the output buffer.
    #[error("output of {capacity} bytes too small: a sequence needs {needed}")]
    OutputTooSmall {
        /// Output bytes the sequence needs (saturating).
        needed: usize,
        /// The buffer's length.
        capacity: usize,
    },
}

/// Width of the fixed-size copies: literals and matches up to this many bytes are copied as one
/// 16-byte move when the buffers have room (the bytes past the sequence are overwritten later).
const WIDE: usize = 16;

/// Decodes one LZ4 block from `src` into `dst`, returning the bytes written. Bytes of `dst` past
/// the returned length may have been overwritten (wide copies); the rest of `dst` is untouched.
/// Accepts exactly the streams lz4_flex's `block::decompress_into` accepts, except offset 0.
pub fn decompress_into(src: &[u8], dst: &mut [u8]) -> Result<usize, Lz4Error> {
    let (mut ip, mut op) = (0usize, 0usize);
    loop {
        let token = *src.get(ip).ok_or(Lz4Error::Truncated { at: ip })?;
        ip += 1;
        let mut lit = usize::from(token >> 4);
        if lit == 15 {
            lit = lit.saturating_add(read_length(src, &mut ip)?);
        }
        copy_literals(src, ip, dst, op, lit)?;
        ip += lit;
        op += lit;
        if ip == src.len() {
            return Ok(op);
        }
        let offset = match src.get(ip..ip + 2) {
            Some(&[a, b]) => usize::from(u16::from_le_bytes([a, b])),
            _ => return Err(Lz4Error::Truncated { at: ip }),
        };
        ip += 2;
        let mut len = usize::from(token & 15) + 4;
        if len == 19 {
            len = len.saturating_add(read_length(src, &mut ip)?);
        }
        if offset == 0 {
            return Err(Lz4Error::ZeroOffset { at: op });
        }
        if offset > op {
            return Err(Lz4Error::OffsetOutOfBounds { offset, at: op });
        }
        let end = op.saturating_add(len);
        if end > dst.len() {
            return Err(Lz4Error::OutputTooSmall { needed: end, capacity: dst.len() });
        }
        copy_match(dst, op, offset, len);
        op = end;
    }
}

/// Reads the extra length bytes after a nibble of 15: each byte added, until one is not 255.
#[inline(always)]
fn read_length(src: &[u8], ip: &mut usize) -> Result<usize, Lz4Error> {
    let mut n = 0usize;
    loop {
        let b = *src.get(*ip).ok_or(Lz4Error::Truncated { at: *ip })?;
        *ip += 1;
        n = n.saturating_add(usize::from(b));
        if b != 255 {
            return Ok(n);
        }
    }
}

/// Copies `lit` literal bytes from `src[ip..]` to `dst[op..]`, as one 16-byte move when both
/// sides have 16 bytes of room.
#[inline(always)]
fn copy_literals(src: &[u8], ip: usize, dst: &mut [u8], op: usize, lit: usize) -> Result<(), Lz4Error> {
    if lit <= WIDE {
        if let (Some(s), Some(d)) = (src.get(ip..ip + WIDE), dst.get_mut(op..op + WIDE)) {
            d.copy_from_slice(s);
            return Ok(());
        }
    }
    let Some(s) = src.get(ip..ip.saturating_add(lit)) else {
        return Err(Lz4Error::LiteralOverrun { at: ip, len: lit, have: src.len().saturating_sub(ip) });
    };
    match dst.get_mut(op..op.saturating_add(lit)) {
        Some(d) => {
            d.copy_from_slice(s);
            Ok(())
        }
        None => Err(Lz4Error::OutputTooSmall { needed: op.saturating_add(lit), capacity: dst.len() }),
    }
}

/// Writes the `len`-byte match at `op` that repeats the bytes `offset` back. The caller checked
/// `1 <= offset <= op` and `op + len <= dst.len()`; every access is still checked, so a broken
/// promise leaves bytes unwritten rather than panicking.
#[inline(always)]
fn copy_match(dst: &mut [u8], op: usize, offset: usize, len: usize) {
    let from = op - offset;
    // Room for whole 16-byte steps past the match end.
    let wide = op + len + WIDE <= dst.len();
    if offset >= WIDE && wide {
        // Each step reads 16 bytes that are already final (they end at least 16 bytes back, or
        // at `op`), so this is right for overlapping matches too.
        let mut k = 0;
        while k < len {
            copy16(dst, from + k, op + k);
            k += WIDE;
        }
    } else if offset == 1 {
        let b = dst.get(from).copied().unwrap_or(0);
        if let Some(d) = dst.get_mut(op..op + len) {
            d.fill(b);
        }
    } else if offset < WIDE && wide {
        // A 16-byte pattern of the period, written every `step` bytes (the largest multiple of
        // the offset that fits in 16), so that each write starts in phase.
        let pat = pattern(dst.get(from..op).unwrap_or(&[]));
        let step = WIDE - WIDE % offset;
        let mut k = 0;
        while k < len {
            if let Some(d) = dst.get_mut(op + k..op + k + WIDE) {
                d.copy_from_slice(&pat);
            }
            k += step;
        }
    } else if offset >= len {
        copy_within(dst, from, op, len);
    } else {
        // Near the end of the output: copy the period, then doubling runs (each a whole number
        // of periods, so the phase is kept).
        let mut done = 0;
        while done < len {
            let n = (offset + done).min(len - done);
            copy_within(dst, from, op + done, n);
            done += n;
        }
    }
}

/// The period `p` (2 to 15 bytes) repeated over 16 bytes. Periods 2, 4 and 8 (offset 2 is the
/// most common one in bitshuffled frames) by one multiplication, the others byte by byte.
#[inline(always)]
fn pattern(p: &[u8]) -> [u8; WIDE] {
    const ONES_2: u128 = u128::from_le_bytes([1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]);
    const ONES_4: u128 = u128::from_le_bytes([1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0]);
    const ONES_8: u128 = u128::from_le_bytes([1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
    match *p {
        [a, b] => (u128::from(u16::from_le_bytes([a, b])) * ONES_2).to_le_bytes(),
        [a, b, c, d] => (u128::from(u32::from_le_bytes([a, b, c, d])) * ONES_4).to_le_bytes(),
        [a, b, c, d, e, f, g, h] => (u128::from(u64::from_le_bytes([a, b, c, d, e, f, g, h])) * ONES_8).to_le_bytes(),
        _ => {
            let mut pat = [0u8; WIDE];
            let n = p.len().min(WIDE);
            if let (Some(head), Some(src)) = (pat.get_mut(..n), p.get(..n)) {
                head.copy_from_slice(src);
            }
            for i in n.max(1)..WIDE {
                pat[i] = pat[i - n.max(1)];
            }
            pat
        }
    }
}

/// Copies 16 bytes from `dst[from..]` to `dst[to..]` (`from < to`), through a register.
#[inline(always)]
fn copy16(dst: &mut [u8], from: usize, to: usize) {
    let mut tmp = [0u8; WIDE];
    if let Some(s) = dst.get(from..from + WIDE) {
        tmp.copy_from_slice(s);
    }
    if let Some(d) = dst.get_mut(to..to + WIDE) {
        d.copy_from_slice(&tmp);
    }
}

/// `dst.copy_within(from..from + n, to)` when both ranges are inside `dst` (else nothing).
#[inline(always)]
fn copy_within(dst: &mut [u8], from: usize, to: usize, n: usize) {
    if from.saturating_add(n) <= dst.len() && to.saturating_add(n) <= dst.len() {
        dst.copy_within(from..from + n, to);
    }
}
