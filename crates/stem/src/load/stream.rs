//! Streaming every frame in chunk order, in batches that reuse one buffer, with progress and
//! cancellation. A batch never spans two data files, so each is one run of coalesced reads.

use std::ops::ControlFlow;

use scatterlab_core::{CancelToken, Progress};
use scatterlab_hdf5::RawLayout;

use super::access::Decoder;
use super::bin::MaskPolicy;
use super::error::{usize_of, LoadError, Result};
use super::pixels::{PixelData, PixelSlice};
use super::provenance::LoadRecord;
use super::Acquisition;

/// Default decoded bytes per batch.
pub const DEFAULT_BATCH_BYTES: usize = 4 << 20;

/// How to stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamOptions {
    /// Bad-pixel policy.
    pub mask: MaskPolicy,
    /// Frames per batch (0 = as many as fit in [`DEFAULT_BATCH_BYTES`]); rounded up to whole chunks.
    pub batch_frames: usize,
}

impl Default for StreamOptions {
    fn default() -> Self {
        Self { mask: MaskPolicy::ZeroMasked, batch_frames: 0 }
    }
}

/// Consecutive frames handed to the consumer; the buffer is reused for the next batch.
#[derive(Clone, Copy, Debug)]
pub struct FrameBatch<'a> {
    /// Global index of the first frame.
    pub first_frame: u64,
    /// Frames in the batch.
    pub n: usize,
    /// Detector shape.
    pub det: [usize; 2],
    /// `n` frames, row-major.
    pub data: PixelSlice<'a>,
}

/// How a stream ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamSummary {
    /// Frames delivered.
    pub frames: u64,
    /// Batches delivered.
    pub batches: u64,
    /// Whether the consumer stopped it early (`ControlFlow::Break`).
    pub stopped: bool,
    /// What was read and how.
    pub record: LoadRecord,
}

impl Acquisition {
    /// Streams every frame in file and chunk order. `progress` gets (frames done, total) after
    /// each batch; `cancel` is checked before each batch (then the result is
    /// [`LoadError::Cancelled`]). A frame in a missing data file is an error naming the file.
    pub fn stream(
        &self,
        opts: &StreamOptions,
        on_batch: &mut dyn FnMut(FrameBatch<'_>) -> ControlFlow<()>,
        progress: &mut dyn Progress,
        cancel: &CancelToken,
    ) -> Result<StreamSummary> {
        let px = self.det[0] * self.det[1];
        let fb = self.frame_bytes().max(1);
        let masked = self.masked(opts.mask);
        let mut bytes = Vec::new();
        let mut data = PixelData::zeros(self.kind, 0);
        let mut dec = Decoder::default();
        let mut summary =
            StreamSummary { frames: 0, batches: 0, stopped: false, record: LoadRecord { frames: [0, 0], region: None, bin: 1, mask_policy: opts.mask, n_masked: masked.len() } };
        let mut order: Vec<usize> = (0..self.parts.len()).collect();
        order.sort_by_key(|&i| self.parts.get(i).map_or(0, |p| p.first_frame));
        'parts: for pi in order {
            let Some(part) = self.parts.get(pi) else { continue };
            let k = match part.source.as_ref().map(|s| &s.ds.layout) {
                Some(RawLayout::Chunked { dims, .. }) => usize_of(dims.first().copied().unwrap_or(1).max(1), &part.file, "frames per chunk")?,
                _ => 1,
            };
            let want = if opts.batch_frames == 0 { (DEFAULT_BATCH_BYTES / fb).max(1) } else { opts.batch_frames };
            let batch = want.div_ceil(k) * k;
            let end = part.first_frame + part.n_frames;
            let mut f = part.first_frame;
            while f < end {
                if cancel.is_cancelled() {
                    return Err(LoadError::Cancelled);
                }
                let n = usize::try_from(end - f).unwrap_or(usize::MAX).min(batch);
                bytes.resize(n * fb, 0);
                self.read_part_bytes(pi, f, n, &mut bytes, &mut dec)?;
                data.resize(n * px);
                data.fill_from_bytes(0, &bytes, self.big_endian);
                data.zero_masked(&masked, px);
                let flow = on_batch(FrameBatch { first_frame: f, n, det: self.det, data: data.as_slice() });
                f += n as u64;
                summary.frames += n as u64;
                summary.batches += 1;
                summary.record.frames[1] = f;
                progress.report(summary.frames, self.n_frames);
                if flow.is_break() {
                    summary.stopped = true;
                    break 'parts;
                }
            }
        }
        Ok(summary)
    }
}
