//! The pull form of [`Acquisition::stream`]: the caller asks for the next batch when it is
//! ready, instead of handing a callback over for the whole run. A Web Worker needs this: it
//! returns to its event loop between batches (so a `cancel` message can arrive), which a
//! synchronous callback loop cannot do.
//!
//! The cursor does not borrow the acquisition (the worker keeps both in one handle); every call
//! takes it again, and a cursor used with another acquisition than it was made for is refused.

use super::access::Decoder;
use super::bin::MaskPolicy;
use super::error::{LoadError, Result};
use super::pixels::PixelData;
use super::stream::{FrameBatch, DEFAULT_BATCH_BYTES};
use super::Acquisition;

/// Where a pull stream stands: the next frame, and the buffers reused for every batch.
pub struct StreamCursor {
    master: String,
    n_frames: u64,
    next: u64,
    batches: u64,
    mask: MaskPolicy,
    skip_missing: bool,
    masked: Vec<usize>,
    bytes: Vec<u8>,
    data: PixelData,
    dec: Decoder,
}

impl StreamCursor {
    /// A cursor at frame 0 of `acq`, applying the bad-pixel policy `mask` to every batch.
    pub fn new(acq: &Acquisition, mask: MaskPolicy) -> Self {
        Self {
            master: acq.master.clone(),
            n_frames: acq.n_frames,
            next: 0,
            batches: 0,
            mask,
            skip_missing: false,
            masked: acq.masked(mask),
            bytes: Vec::new(),
            data: PixelData::zeros(acq.kind, 0),
            dec: Decoder::default(),
        }
    }

    /// The same cursor, stepping over the frames of missing data files instead of failing on
    /// them (a reduction of the frames present; [`Acquisition::present_frames`] says which).
    pub fn skipping_missing(mut self) -> Self {
        self.skip_missing = true;
        self
    }

    /// Frames delivered or skipped so far (= the global index of the next frame).
    pub fn frames_done(&self) -> u64 {
        self.next
    }

    /// Batches delivered so far.
    pub fn batches(&self) -> u64 {
        self.batches
    }

    /// Total frames of the acquisition.
    pub fn frames_total(&self) -> u64 {
        self.n_frames
    }

    /// Whether every frame has been delivered.
    pub fn is_done(&self) -> bool {
        self.next >= self.n_frames
    }

    /// The bad-pixel policy applied.
    pub fn mask_policy(&self) -> MaskPolicy {
        self.mask
    }

    /// Pixels zeroed per frame by the policy.
    pub fn n_masked(&self) -> usize {
        self.masked.len()
    }

    /// The next batch of at most `max_frames` frames (0 = as many as fit in
    /// [`DEFAULT_BATCH_BYTES`]), `None` once every frame was delivered. A batch never spans two
    /// data files. Reading a frame of a missing data file is an error naming the file; the
    /// cursor then stays where it was.
    pub fn next_batch<'a>(&'a mut self, acq: &Acquisition, max_frames: usize) -> Result<Option<FrameBatch<'a>>> {
        if acq.master != self.master || acq.n_frames != self.n_frames {
            return Err(LoadError::Request(format!("stream cursor of {} ({} frames) used with {} ({} frames)", self.master, self.n_frames, acq.master, acq.n_frames)));
        }
        if self.skip_missing && !self.is_done() {
            self.next = acq.next_present_frame(self.next).unwrap_or(self.n_frames);
        }
        if self.is_done() {
            return Ok(None);
        }
        let fb = acq.frame_bytes().max(1);
        let px = acq.det[0] * acq.det[1];
        let want = if max_frames == 0 { (DEFAULT_BATCH_BYTES / fb).max(1) } else { max_frames };
        let (pi, part) = acq.part_of(self.next)?;
        let n = usize::try_from(part.first_frame + part.n_frames - self.next).unwrap_or(usize::MAX).min(want);
        self.bytes.resize(n * fb, 0);
        acq.read_part_bytes(pi, self.next, n, &mut self.bytes, &mut self.dec)?;
        self.data.resize(n * px);
        self.data.fill_from_bytes(0, &self.bytes, acq.big_endian);
        self.data.zero_masked(&self.masked, px);
        let first_frame = self.next;
        self.next += n as u64;
        self.batches += 1;
        Ok(Some(FrameBatch { first_frame, n, det: acq.det, data: self.data.as_slice() }))
    }
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use scatterlab_core::CancelToken;

    use super::*;
    use crate::load::{DirFileSet, Hints, MapFileSet, StreamOptions};

    fn dir() -> std::path::PathBuf {
        scatterlab_testkit::fixture("stem")
    }

    /// Per-pixel sums and batch boundaries of a whole pull stream.
    fn pull(acq: &Acquisition, mask: MaskPolicy, max: usize) -> (Vec<u64>, Vec<(u64, usize)>) {
        let [r, c] = acq.det_shape();
        let mut sums = vec![0u64; r * c];
        let mut cur = StreamCursor::new(acq, mask);
        let mut batches = Vec::new();
        while let Some(b) = cur.next_batch(acq, max).unwrap() {
            batches.push((b.first_frame, b.n));
            for (i, x) in b.data.to_u64().into_iter().enumerate() {
                sums[i % (r * c)] += x;
            }
        }
        assert!(cur.is_done());
        assert_eq!(cur.frames_done(), acq.n_frames());
        (sums, batches)
    }

    #[test]
    fn cursor_equals_callback_stream() {
        let acq = Acquisition::open(&DirFileSet::new(dir()), "dev_small_master.h5", &Hints::default()).unwrap();
        for mask in [MaskPolicy::Keep, MaskPolicy::ZeroMasked] {
            let (sums, batches) = pull(&acq, mask, 37);
            // 100 + 100 + 56 frames in batches of ≤ 37 that never cross a file: 3 + 3 + 2 batches.
            assert_eq!(batches.len(), 8);
            assert_eq!(batches[2], (74, 26), "the last batch of the first file stops at its end");
            assert_eq!(batches[3], (100, 37));
            let mut want = vec![0u64; sums.len()];
            let opts = StreamOptions { mask, batch_frames: 64 };
            let on = &mut |b: FrameBatch<'_>| {
                for (i, x) in b.data.to_u64().into_iter().enumerate() {
                    want[i % sums.len()] += x;
                }
                ControlFlow::Continue(())
            };
            acq.stream(&opts, on, &mut |_: u64, _: u64| {}, &CancelToken::new()).unwrap();
            assert_eq!(sums, want, "{mask:?}");
        }
    }

    #[test]
    fn cursor_names_missing_file_and_other_acquisitions() {
        let mut set = MapFileSet::new();
        for f in ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5"] {
            set.insert(f, scatterlab_hdf5::storage::open_native(dir().join(f)).unwrap());
        }
        let acq = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).unwrap();
        let mut cur = StreamCursor::new(&acq, MaskPolicy::ZeroMasked);
        let mut done = 0;
        let err = loop {
            match cur.next_batch(&acq, 0) {
                Ok(Some(b)) => done += b.n,
                Ok(None) => panic!("stream ended without reaching the missing file"),
                Err(e) => break e.to_string(),
            }
        };
        assert_eq!(done, 200);
        assert!(err.contains("dev_small_data_000003.h5"), "{err}");
        assert_eq!(cur.frames_done(), 200, "a failed batch does not advance");
        let other = Acquisition::open(&DirFileSet::new(dir()), "dev_oddtail_master.h5", &Hints::default()).unwrap();
        let e = cur.next_batch(&other, 1).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("used with dev_oddtail_master.h5"), "{e}");
    }
}
