//! Reading frames: decode the chunks covering a run of frames of one data file (read in few
//! coalesced requests) into a byte buffer in stored byte order, then into typed pixels.

use scatterlab_hdf5::RawLayout;

use super::dectris::DataPart;
use super::error::{usize_of, LoadError, Result};
use super::Acquisition;

/// Buffers reused across reads: one decoded chunk and the decoders' scratch.
#[derive(Default)]
pub(super) struct Decoder {
    chunk: Vec<u8>,
    scratch: Vec<u8>,
}

impl Acquisition {
    /// The part holding global frame `f` (present or not), or an error naming the range.
    pub(super) fn part_of(&self, f: u64) -> Result<(usize, &DataPart)> {
        self.parts
            .iter()
            .enumerate()
            .find(|(_, p)| f >= p.first_frame && f < p.first_frame + p.n_frames)
            .ok_or_else(|| LoadError::Request(format!("frame {f} is not in {} (frames 0..{})", self.master, self.n_frames)))
    }

    /// Decodes frames `first .. first + n` (all in part `pi`) into `out` (`n` frames of
    /// stored bytes).
    pub(super) fn read_part_bytes(&self, pi: usize, first: u64, n: usize, out: &mut [u8], dec: &mut Decoder) -> Result<()> {
        let part = self.parts.get(pi).ok_or_else(|| LoadError::Request(format!("no data part {pi}")))?;
        let Some(src) = &part.source else {
            return Err(LoadError::MissingData { frame: first, file: part.file.clone(), master: self.master.clone(), link: part.link.clone() });
        };
        let fb = self.frame_bytes();
        let local = first - part.first_frame;
        if local + n as u64 > part.n_frames || Some(out.len()) != n.checked_mul(fb) {
            return Err(LoadError::Request(format!("frames {first}..+{n} outside {} or buffer of {} bytes", part.file, out.len())));
        }
        let (file, ds) = (&src.file, &src.ds);
        let RawLayout::Chunked { dims, grid, .. } = &ds.layout else {
            // Checked: `local` comes from the file's declared frame count.
            let at = local.checked_mul(fb as u64).ok_or_else(|| LoadError::Request(format!("{}: frame {first} lies beyond any addressable byte", part.file)))?;
            return Ok(ds.read_contiguous_into(file, at, out)?);
        };
        let (Some([k, cr, cc]), Some([_, g1, g2])) = (as3(dims), as3(grid)) else {
            return Err(LoadError::Request(format!("{}: {} chunk grid is not 3-D", part.file, ds.path)));
        };
        let k = k.max(1);
        let (k_frames, cr, cc, g1, g2) = (
            usize_of(k, &part.file, "frames per chunk")?,
            usize_of(cr, &part.file, "chunk rows")?,
            usize_of(cc, &part.file, "chunk columns")?,
            usize_of(g1, &part.file, "chunk grid rows")?,
            usize_of(g2, &part.file, "chunk grid columns")?,
        );
        let per_row = g1.checked_mul(g2).ok_or_else(|| LoadError::Request(format!("{}: chunk grid {g1} × {g2} overflows", part.file)))?;
        let (g_first, g_last) = (usize_of(local / k, &part.file, "chunk index")?, usize_of((local + n as u64 - 1) / k, &part.file, "chunk index")?);
        let chunk_index = |g: usize| g.checked_mul(per_row).ok_or_else(|| LoadError::Request(format!("{}: chunk index {g} × {per_row} overflows", part.file)));
        let range = chunk_index(g_first)?..chunk_index(g_last + 1)?;
        let [dr, dc] = self.det;
        let es = self.kind.size();
        // The common case (Dectris): one whole frame per chunk, decoded straight into `out`.
        if k == 1 && per_row == 1 {
            // One frame per chunk: chunk `range.start` is frame `local`, the first of `out`.
            let start = range.start;
            return Ok(ds.read_chunks(file, range, |i, loc, raw| {
                let at = i.saturating_sub(start) * fb;
                let dst = out.get_mut(at..at + fb).ok_or_else(|| scatterlab_hdf5::H5Error::Format {
                    file: file.name().into(),
                    object: ds.path.clone(),
                    detail: format!("chunk {i} outside the frames read"),
                })?;
                ds.decode_chunk_into(i, loc, raw, dst, &mut dec.scratch)
            })?);
        }
        dec.chunk.resize(usize_of(ds.chunk_bytes(), &part.file, "chunk bytes")?, 0);
        let Decoder { chunk, scratch } = dec;
        ds.read_chunks(file, range, |i, loc, raw| {
            ds.decode_chunk_into(i, loc, raw, chunk, scratch)?;
            let (g, rest) = (i / per_row, i % per_row);
            let (r0, c0) = ((rest / g2) * cr, (rest % g2) * cc);
            let ncols = cc.min(dc.saturating_sub(c0));
            for j in 0..k_frames {
                let lf = g as u64 * k + j as u64;
                // Frames outside `local..local + n` belong to other requests (`n` is a usize).
                let Some(Ok(o)) = lf.checked_sub(local).map(usize::try_from) else { continue };
                if o >= n {
                    continue;
                }
                let fo = o * fb;
                for r in 0..cr.min(dr.saturating_sub(r0)) {
                    let s = ((j * cr + r) * cc) * es;
                    let d = fo + ((r0 + r) * dc + c0) * es;
                    if let (Some(src), Some(dst)) = (chunk.get(s..s + ncols * es), out.get_mut(d..d + ncols * es)) {
                        dst.copy_from_slice(src);
                    }
                }
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Decodes `n` consecutive frames from `first` into `out` (stored bytes), across data files.
    pub(super) fn read_bytes(&self, first: u64, n: usize, out: &mut [u8], dec: &mut Decoder) -> Result<()> {
        let fb = self.frame_bytes();
        let (mut f, mut done) = (first, 0usize);
        while done < n {
            let (pi, part) = self.part_of(f)?;
            // Saturating: what is left of the part only matters up to what is still wanted.
            let take = usize::try_from(part.first_frame + part.n_frames - f).unwrap_or(usize::MAX).min(n - done);
            let dst = out.get_mut(done * fb..(done + take) * fb).ok_or_else(|| LoadError::Request("output buffer too small".into()))?;
            self.read_part_bytes(pi, f, take, dst, dec)?;
            f += take as u64;
            done += take;
        }
        Ok(())
    }
}

fn as3(v: &[u64]) -> Option<[u64; 3]> {
    <[u64; 3]>::try_from(v).ok()
}
