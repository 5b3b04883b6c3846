//! Progressive loading without threads: each UI frame reads batches from a [`FrameSource`] into
//! the [`Resident`] frames until a time budget is spent, then returns to paint. The same code
//! runs natively and in the browser (wasm32 has no threads); images fill in as batches arrive
//! and Cancel simply drops the loader, keeping the frames read so far.

use std::time::Duration;

use scatterlab_stem::load::{Acquisition, MaskPolicy, PixelSlice, StreamCursor};
use web_time::Instant;

use super::resident::Resident;

/// Frames per batch: small enough that a batch of a large detector stays well inside a frame's
/// budget, large enough that the per-batch overhead does not matter.
const BATCH_FRAMES: usize = 64;

/// Where frames come from, in frame order.
pub trait FrameSource {
    /// The next batch of at most `max_frames` frames as (first frame, pixels); `None` at the end.
    /// Errors name the file (the STEM loader's messages).
    fn next_batch(&mut self, max_frames: usize) -> Result<Option<(u64, PixelSlice<'_>)>, String>;

    /// Whether the next batch can be read now. A source whose bytes arrive asynchronously (the
    /// browser's files) answers `false` while it waits, and the loader tries again next frame.
    fn ready(&mut self) -> bool {
        true
    }
}

/// An opened acquisition read through the STEM crate's pull stream.
pub struct AcquisitionSource {
    acq: Acquisition,
    cursor: StreamCursor,
}

impl AcquisitionSource {
    /// Streams `acq` from frame 0 with bad pixels zeroed (the default policy), stepping over
    /// the frames of missing data files.
    pub fn new(acq: Acquisition) -> Self {
        // Frames of missing data files are stepped over (the resident marks them absent).
        let cursor = StreamCursor::new(&acq, MaskPolicy::ZeroMasked).skipping_missing();
        Self { acq, cursor }
    }

    /// Pixels zeroed per frame.
    pub fn n_masked(&self) -> usize {
        self.cursor.n_masked()
    }
}

impl FrameSource for AcquisitionSource {
    fn next_batch(&mut self, max_frames: usize) -> Result<Option<(u64, PixelSlice<'_>)>, String> {
        match self.cursor.next_batch(&self.acq, max_frames) {
            Ok(Some(b)) => Ok(Some((b.first_frame, b.data))),
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// A load in progress.
pub struct Loader {
    source: Box<dyn FrameSource>,
    started: Instant,
    batches: u64,
}

/// What one [`Loader::pump`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pumped {
    /// Frames arrived; more are to come.
    Progress,
    /// Every frame of the scan is in memory (or the source ended).
    Done,
}

impl Loader {
    /// A loader reading `source`.
    pub fn new(source: Box<dyn FrameSource>) -> Self {
        Self { source, started: Instant::now(), batches: 0 }
    }

    /// Seconds since the load started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// Batches read so far.
    pub fn batches(&self) -> u64 {
        self.batches
    }

    /// Reads batches into `resident` until `budget` has passed (at least one batch, unless the
    /// source is waiting for bytes: then none, and the load goes on next frame).
    pub fn pump(&mut self, resident: &mut Resident, budget: Duration) -> Result<Pumped, String> {
        let t0 = Instant::now();
        loop {
            if resident.is_complete() {
                return Ok(Pumped::Done);
            }
            if !self.source.ready() {
                return Ok(Pumped::Progress);
            }
            let want = BATCH_FRAMES.min(resident.n_frames() - resident.loaded());
            let Some((first, data)) = self.source.next_batch(want)? else {
                resident.end_of_source();
                return Ok(Pumped::Done);
            };
            resident.push(first, data)?;
            self.batches += 1;
            if t0.elapsed() >= budget {
                return Ok(if resident.is_complete() { Pumped::Done } else { Pumped::Progress });
            }
        }
    }
}
