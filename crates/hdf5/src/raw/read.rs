//! Reading stored chunk bytes in few large reads, and decoding them into caller buffers.

use std::ops::Range;

use hdf5_reader::filters::apply_pipeline;

use super::{ChunkLoc, DecodePath, RawDataset, RawLayout};
use crate::error::{DecodeError, H5Error, Result};
use crate::file::H5File;
use crate::filters::bitshuffle::bitunshuffle;
use crate::filters::bslz4::decode_bslz4_into;
use crate::filters::h5lz4::decode_h5lz4_into;
use crate::filters::registry;

/// Chunks whose stored bytes lie less than this apart are read in one request (the gap is read
/// and dropped): one request costs far more than 64 KiB of bandwidth, natively and in a browser.
pub const MERGE_GAP: u64 = 64 * 1024;
/// A merged read never grows past this (a single larger chunk is still read whole), which bounds
/// the read buffer at 4 MiB however many chunks a call covers.
pub const MAX_MERGED_READ: u64 = 4 * 1024 * 1024;

impl RawDataset {
    fn corrupt(&self, idx: usize, e: impl ToString) -> H5Error {
        H5Error::Corrupt { file: self.file_name.clone(), dataset: self.path.clone(), chunk: self.chunk_offsets(idx), detail: e.to_string() }
    }

    fn caller_error(&self, detail: String) -> H5Error {
        H5Error::Format { file: self.file_name.clone(), object: self.path.clone(), detail }
    }

    /// Calls `f(chunk index, location, stored bytes)` for every chunk in `range` (indices into the
    /// chunk table). Stored chunks are visited in address order, read in merged requests (gaps
    /// under [`MERGE_GAP`], at most [`MAX_MERGED_READ`] per request) from the uncached storage;
    /// unallocated chunks first, with empty bytes. For compact data, chunk 0 is the inline bytes.
    pub fn read_chunks(&self, file: &H5File, range: Range<usize>, mut f: impl FnMut(usize, ChunkLoc, &[u8]) -> Result<()>) -> Result<()> {
        let entries = match &self.layout {
            RawLayout::Chunked { entries, .. } => entries,
            RawLayout::Compact { data } if range == (0..1) => {
                // Compact data lives in an object header message (< 64 KiB), so its length fits a u32.
                let size = u32::try_from(data.len()).map_err(|_| self.caller_error("compact data larger than 4 GiB".into()))?;
                let loc = ChunkLoc { addr: 0, size, mask: 0 };
                return f(0, loc, data);
            }
            _ => return Err(self.caller_error(format!("chunks {range:?} requested from non-chunked data"))),
        };
        let Some(table) = entries.get(range.clone()) else {
            return Err(self.caller_error(format!("chunks {range:?} requested of {}", entries.len())));
        };
        let mut order = Vec::with_capacity(table.len());
        for (idx, &loc) in range.clone().zip(table) {
            if loc.is_stored() {
                order.push((idx, loc));
            } else {
                f(idx, loc, &[])?;
            }
        }
        order.sort_unstable_by_key(|&(_, loc)| loc.addr);
        let mut rest = order.as_slice();
        while let Some(&(_, first)) = rest.first() {
            let start = first.addr;
            let mut end = start.saturating_add(u64::from(first.size));
            let mut n = 1;
            for &(_, loc) in rest.iter().skip(1) {
                let loc_end = loc.addr.saturating_add(u64::from(loc.size));
                if loc.addr.saturating_sub(end) >= MERGE_GAP || loc_end.max(end) - start > MAX_MERGED_READ {
                    break;
                }
                end = end.max(loc_end);
                n += 1;
            }
            let (run, tail) = rest.split_at(n);
            rest = tail;
            let len = usize::try_from(end - start).map_err(|_| self.caller_error("read larger than memory".into()))?;
            let buf = file.read_at(start, len, &self.path)?;
            for &(idx, loc) in run {
                // Within this read (addr ≥ start, addr + size ≤ end), whose length fits a usize.
                let off = usize::try_from(loc.addr - start).unwrap_or(usize::MAX);
                let bytes = buf.get(off..off.saturating_add(loc.size as usize)).ok_or_else(|| self.corrupt(idx, "chunk outside its read"))?;
                f(idx, loc, bytes)?;
            }
        }
        Ok(())
    }

    /// Decodes chunk `idx` (location `loc`, stored bytes `raw` from [`Self::read_chunks`]) into
    /// `dst`, which must be exactly [`Self::chunk_bytes`] long. Bitshuffle+LZ4, LZ4 and unfiltered
    /// chunks decode straight into `dst` (`scratch` holds one LZ4 block and is reused); other
    /// pipelines go through hdf5-reader's `apply_pipeline` with our registry, then a copy.
    /// Unallocated chunks read as the fill value.
    pub fn decode_chunk_into(&self, idx: usize, loc: ChunkLoc, raw: &[u8], dst: &mut [u8], scratch: &mut Vec<u8>) -> Result<()> {
        let expected = self.chunk_bytes();
        if dst.len() as u64 != expected {
            return Err(self.caller_error(format!("output buffer of {} bytes for a {expected}-byte chunk", dst.len())));
        }
        if !loc.is_stored() {
            for (d, s) in dst.iter_mut().zip(self.fill.iter().cycle()) {
                *d = *s;
            }
            return Ok(());
        }
        let want = dst.len();
        let exact = |got: usize, what: &str| -> Result<()> {
            if got == want {
                Ok(())
            } else {
                Err(self.corrupt(idx, DecodeError::SizeMismatch { what: what.into(), expected: want, actual: got }))
            }
        };
        let path = if loc.mask == 0 { self.decode } else { DecodePath::Pipeline };
        match path {
            DecodePath::Plain => {
                exact(raw.len(), "stored chunk")?;
                dst.copy_from_slice(raw);
            }
            DecodePath::Bslz4 { es } => {
                let got = decode_bslz4_into(raw, es, dst, scratch).map_err(|e| self.corrupt(idx, e))?;
                exact(got, "bslz4 total")?;
            }
            DecodePath::Bitshuffle { es, block } => {
                exact(raw.len(), "stored bitshuffle chunk")?;
                if es == 0 || !dst.len().is_multiple_of(es) {
                    return Err(self.corrupt(idx, format!("chunk is not whole elements of {es} bytes")));
                }
                bitunshuffle(raw, dst, dst.len() / es, es, block).map_err(|e| self.corrupt(idx, e))?;
            }
            DecodePath::H5Lz4 => {
                let got = decode_h5lz4_into(raw, dst).map_err(|e| self.corrupt(idx, e))?;
                exact(got, "h5lz4 size")?;
            }
            DecodePath::Pipeline => {
                let active = |i: usize| i >= 32 || loc.mask & (1 << i) == 0;
                if let Some((_, f)) = self.filters.iter().enumerate().find(|&(i, f)| active(i) && !f.supported) {
                    return Err(H5Error::UnsupportedFilter { file: self.file_name.clone(), dataset: self.path.clone(), id: f.id, name: f.name.clone() });
                }
                let out = apply_pipeline(raw, &self.pipeline, loc.mask, self.dtype.size, Some(self.registry())).map_err(|e| self.corrupt(idx, e))?;
                exact(out.len(), "filter pipeline output")?;
                dst.copy_from_slice(&out);
            }
        }
        Ok(())
    }

    /// Reads and decodes one chunk into `dst` ([`Self::read_chunks`] + [`Self::decode_chunk_into`]).
    pub fn read_chunk_into(&self, file: &H5File, idx: usize, dst: &mut [u8], scratch: &mut Vec<u8>) -> Result<()> {
        self.read_chunks(file, idx..idx.saturating_add(1), |i, loc, raw| self.decode_chunk_into(i, loc, raw, dst, scratch))
    }

    /// Reads `dst.len()` bytes at `byte_offset` of contiguous or compact data (one frame of a
    /// contiguous `(frames, rows, cols)` dataset is `frame * rows * cols * es`). Never-written
    /// contiguous storage reads as the fill value.
    pub fn read_contiguous_into(&self, file: &H5File, byte_offset: u64, dst: &mut [u8]) -> Result<()> {
        let end = byte_offset.checked_add(dst.len() as u64);
        let out_of_range = |size: u64| self.caller_error(format!("bytes {byte_offset}..+{} requested of {size}", dst.len()));
        match &self.layout {
            RawLayout::Compact { data } => {
                let src = usize::try_from(byte_offset).ok().and_then(|o| data.get(o..o + dst.len())).ok_or_else(|| out_of_range(data.len() as u64))?;
                dst.copy_from_slice(src);
            }
            RawLayout::Contiguous { addr, size } => {
                if end.is_none_or(|e| e > *size) {
                    return Err(out_of_range(*size));
                }
                if *addr == ChunkLoc::UNALLOCATED {
                    let es = self.fill.len().max(1);
                    // The remainder is below the fill's length, a usize.
                    let phase = usize::try_from(byte_offset % es as u64).unwrap_or(0);
                    for (d, s) in dst.iter_mut().zip(self.fill.iter().cycle().skip(phase)) {
                        *d = *s;
                    }
                    return Ok(());
                }
                let at = addr.checked_add(byte_offset).ok_or_else(|| out_of_range(*size))?;
                let buf = file.read_at(at, dst.len(), &self.path)?;
                dst.copy_from_slice(&buf);
            }
            RawLayout::Chunked { .. } => return Err(self.caller_error("contiguous read of chunked data".into())),
        }
        Ok(())
    }

    fn registry(&self) -> &hdf5_reader::FilterRegistry {
        self.registry.get_or_init(registry)
    }
}
