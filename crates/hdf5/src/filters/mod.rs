//! Chunk filters hdf5-reader lacks or gets wrong, and the registry that plugs them in.
//!
//! - 32008 bitshuffle (+LZ4): hdf5-reader 0.12.1 has no decoder ([`bslz4`], [`bitshuffle`]).
//! - 32004 LZ4: hdf5-reader's decoder expects a block size before every block, so chunks of more
//!   than one block fail ([`h5lz4`]).
//!
//! The decoders write into caller buffers (the fast path in [`crate::raw`]); [`registry`] wraps
//! them in hdf5-reader's allocate-per-chunk filter interface for everything that goes through it.

pub mod bitshuffle;
pub mod bslz4;
pub mod h5lz4;
pub mod lz4_block;

use hdf5_reader::filters::FilterRegistry;
use hdf5_reader::messages::filter_pipeline::FilterDescription;

use crate::error::DecodeError;

/// HDF5 filter id of bitshuffle (kiyo-masui/bitshuffle, registered with The HDF Group).
pub const FILTER_BITSHUFFLE: u16 = 32008;
/// HDF5 filter id of LZ4 (HDFGroup H5Zlz4).
pub const FILTER_LZ4: u16 = 32004;

/// LZ4 cannot expand a block by more than 255×; a declared chunk size beyond this multiple of the
/// compressed bytes is a forged header, refused before anything is allocated (hdf5-reader passes
/// no output limit to registered filters).
const MAX_EXPANSION: usize = 256;

/// Compression of a bitshuffle chunk (`cd_values[4]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitshuffleCompression {
    /// 0: bit transpose only.
    None,
    /// 2: LZ4 blocks with the 12-byte header ([`bslz4`]).
    Lz4,
    /// 3: zstd blocks (not decoded here).
    Zstd,
}

/// The parameters of a 32008 filter, read from its client data as `bshuf_h5_filter` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitshuffleParams {
    /// Element size in bytes (`cd_values[2]`, else the dataset's).
    pub elem_size: usize,
    /// Block size in elements (`cd_values[3]`; 0 = auto). LZ4 chunks carry their own in the header.
    pub block: usize,
    /// `cd_values[4]`.
    pub compression: BitshuffleCompression,
}

impl BitshuffleParams {
    /// Reads the client data; `dataset_elem_size` stands in when the writer left `cd_values[2]` out.
    pub fn from_client_data(cd: &[u32], dataset_elem_size: usize) -> Result<Self, DecodeError> {
        let elem_size = match cd.get(2) {
            Some(&e) if e > 0 => e as usize,
            _ => dataset_elem_size,
        };
        let compression = match cd.get(4).copied().unwrap_or(0) {
            0 => BitshuffleCompression::None,
            2 => BitshuffleCompression::Lz4,
            3 => BitshuffleCompression::Zstd,
            c => return Err(DecodeError::Unsupported { feature: format!("bitshuffle compression code {c}") }),
        };
        Ok(Self { elem_size, block: cd.get(3).copied().unwrap_or(0) as usize, compression })
    }
}

/// Decodes one 32008 chunk into a new buffer (the registry's interface).
pub fn decode_bitshuffle(desc: &FilterDescription, src: &[u8], dataset_elem_size: usize) -> Result<Vec<u8>, DecodeError> {
    let p = BitshuffleParams::from_client_data(&desc.client_data, dataset_elem_size)?;
    match p.compression {
        BitshuffleCompression::Lz4 => {
            let (total, _) = bslz4::bslz4_header(src)?;
            let total = checked_declared(total, src.len(), "bslz4 header")?;
            let mut out = zeroed(total)?;
            let mut scratch = Vec::new();
            let n = bslz4::decode_bslz4_into(src, p.elem_size, &mut out, &mut scratch)?;
            out.truncate(n);
            Ok(out)
        }
        BitshuffleCompression::None => {
            if p.elem_size == 0 || !src.len().is_multiple_of(p.elem_size) {
                return Err(DecodeError::invalid("bitshuffle chunk", format!("{} bytes is not whole elements of {} bytes", src.len(), p.elem_size)));
            }
            let mut out = vec![0u8; src.len()];
            bitshuffle::bitunshuffle(src, &mut out, src.len() / p.elem_size, p.elem_size, p.block)?;
            Ok(out)
        }
        BitshuffleCompression::Zstd => Err(DecodeError::Unsupported { feature: "bitshuffle+zstd".into() }),
    }
}

/// Decodes one 32004 chunk into a new buffer (the registry's interface).
pub fn decode_h5lz4(src: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let (orig, _) = h5lz4::h5lz4_header(src)?;
    let orig = checked_declared(orig, src.len(), "h5lz4 header")?;
    let mut out = zeroed(orig)?;
    let n = h5lz4::decode_h5lz4_into(src, &mut out)?;
    out.truncate(n);
    Ok(out)
}

/// A zeroed buffer, or an error instead of the abort a failed allocation would be (a declared
/// size can still be large, and wasm has little memory).
fn zeroed(n: usize) -> Result<Vec<u8>, DecodeError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| DecodeError::invalid("chunk output", format!("cannot allocate {n} bytes")))?;
    v.resize(n, 0);
    Ok(v)
}

/// A declared decoded size as usize, refused when no LZ4 stream of `src_len` bytes could produce it.
fn checked_declared(declared: u64, src_len: usize, what: &str) -> Result<usize, DecodeError> {
    let limit = src_len.saturating_mul(MAX_EXPANSION);
    match usize::try_from(declared) {
        Ok(d) if d <= limit => Ok(d),
        _ => Err(DecodeError::invalid(what, format!("declares {declared} bytes from {src_len} compressed (more than {MAX_EXPANSION}×)"))),
    }
}

/// hdf5-reader's filter registry with our 32008 and 32004 decoders (its built-ins for the rest:
/// deflate, shuffle, fletcher32, szip, nbit, scaleoffset).
pub fn registry() -> FilterRegistry {
    let mut r = FilterRegistry::new();
    r.register(FILTER_BITSHUFFLE, Box::new(|desc, src, es| decode_bitshuffle(desc, src, es).map_err(DecodeError::into_reader)));
    r.register(FILTER_LZ4, Box::new(|_, src, _| decode_h5lz4(src).map_err(DecodeError::into_reader)));
    r
}

/// Whether [`registry`] decodes filter `id`.
pub fn is_supported(id: u16) -> bool {
    matches!(id, 1..=6 | FILTER_LZ4 | FILTER_BITSHUFFLE)
}

/// The registered name of an HDF5 filter id (The HDF Group's filter list), for messages and the
/// file browser; `"unknown"` when not registered.
pub fn filter_name(id: u16) -> &'static str {
    match id {
        1 => "deflate",
        2 => "shuffle",
        3 => "fletcher32",
        4 => "szip",
        5 => "nbit",
        6 => "scaleoffset",
        305 => "lzo",
        307 => "bzip2",
        32000 => "lzf",
        32001 => "blosc",
        32002 => "mafisc",
        32003 => "snappy",
        FILTER_LZ4 => "lz4",
        32005 => "apax",
        32006 => "cbf",
        32007 => "jpeg-xr",
        FILTER_BITSHUFFLE => "bitshuffle",
        32009 => "spdp",
        32010 => "lpc-rice",
        32011 => "ccsds-123",
        32012 => "jpeg-ls",
        32013 => "zfp",
        32014 => "fpzip",
        32015 => "zstd",
        32016 => "b3d",
        32017 => "sz",
        32018 => "fcidecomp",
        32019 => "jpeg",
        32020 => "vbz",
        32021 => "fapec",
        32022 => "bitgroom",
        32023 => "granularbr",
        32024 => "sz3",
        32025 => "delta-rice",
        32026 => "blosc2",
        32027 => "flac",
        _ => "unknown",
    }
}
