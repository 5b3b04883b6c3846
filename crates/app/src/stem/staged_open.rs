//! Opening and streaming an acquisition from [`StagedFiles`]: the parser is retried while it
//! asks for bytes not fetched yet, and the stream holds one data file whole at a time.

use std::future::Future;
use std::sync::Arc;

use scatterlab_stem::load::{Acquisition, Hints, PixelSlice};

use super::loader::{AcquisitionSource, FrameSource};
use super::staged::{StagedFiles, READ_AHEAD};

/// Fetches the parser may ask for before opening gives up (a Dectris master with its data files
/// needs a few dozen; a file that keeps asking is not an acquisition we can read).
const MAX_FETCHES: usize = 4096;

/// The master among `names`: the one named `*_master.h5`, else the only HDF5 file (several
/// masters, as in a folder of acquisitions, is an error listing them).
pub fn pick_master(names: &[String]) -> Result<String, String> {
    let h5 = |n: &&String| n.ends_with(".h5") || n.ends_with(".hdf5") || n.ends_with(".nxs");
    match names.iter().filter(|n| n.contains("_master")).collect::<Vec<_>>().as_slice() {
        [] => {}
        [one] => return Ok((*one).clone()),
        many => {
            let list: Vec<&str> = many.iter().map(|m| m.as_str()).collect();
            return Err(format!("{} acquisitions ({}): open one master with its data files", many.len(), list.join(", ")));
        }
    }
    match names.iter().filter(h5).collect::<Vec<_>>().as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(format!("none of {} is an HDF5 file (.h5, .hdf5, .nxs)", names.join(", "))),
        many => Err(format!("{} HDF5 files and no *_master.h5 among them: open one acquisition at a time", many.len())),
    }
}

/// Opens acquisition `master` of `files`, fetching each range the parser wants with
/// `fetch(file index, start, end)`; once open, only the master's ranges stay in `files` (the
/// stream reads each data file whole). Errors name the file.
pub async fn open_staged<F, Fut>(files: &StagedFiles, master: &str, mut fetch: F) -> Result<Acquisition, String>
where
    F: FnMut(usize, u64, u64) -> Fut,
    Fut: Future<Output = Result<Vec<u8>, String>>,
{
    let _ = files.take_wanted(0);
    for _ in 0..MAX_FETCHES {
        let opened = Acquisition::open(files, master, &Hints::default());
        // A read of bytes not fetched yet may also fail where the parser takes a failure for
        // absence (an optional pixel mask, a calibration value): so an open that succeeded
        // still fetches and tries again while any read went unanswered.
        match (opened, files.take_wanted(READ_AHEAD)) {
            (Ok(acq), None) => {
                files.drop_ranges(files.index(master));
                return Ok(acq);
            }
            (Err(e), None) => return Err(format!("cannot open {master}: {e}")),
            (_, Some((i, start, end))) => {
                let bytes = fetch(i, start, end).await?;
                files.put_range(i, start, bytes);
            }
        }
    }
    Err(format!("cannot open {master}: it asked for more than {MAX_FETCHES} pieces"))
}

/// An acquisition streamed from staged files: before each batch the data file it reads must be
/// held whole; when it is not, `request(file index)` is called once and the source waits
/// ([`FrameSource::ready`]) until someone calls [`StagedFiles::put_whole`].
pub struct StagedSource {
    inner: AcquisitionSource,
    files: Arc<StagedFiles>,
    /// (file index, first frame, frames) of each present data file, in frame order.
    parts: Vec<(usize, u64, u64)>,
    frame_px: usize,
    next: u64,
    requested: Option<usize>,
    request: Box<dyn FnMut(usize)>,
}

impl StagedSource {
    /// Streams `acq` (opened from `files`) from frame 0.
    pub fn new(acq: Acquisition, files: Arc<StagedFiles>, request: Box<dyn FnMut(usize)>) -> Self {
        let mut parts: Vec<(usize, u64, u64)> = acq.parts().iter().filter_map(|p| Some((files.index(p.file.rsplit(['/', '\\']).next()?)?, p.first_frame, p.n_frames))).collect();
        parts.sort_by_key(|p| p.1);
        let frame_px = acq.det_shape()[0] * acq.det_shape()[1];
        Self { inner: AcquisitionSource::new(acq), files, parts, frame_px, next: 0, requested: None, request }
    }

    /// Pixels zeroed per frame.
    pub fn n_masked(&self) -> usize {
        self.inner.n_masked()
    }

    /// The data file holding frame `self.next` and the frames left in it.
    fn current(&self) -> Option<(usize, u64)> {
        part_at(&self.parts, self.next)
    }
}

/// The data file of `parts` holding frame `frame` and the frames left in it from there.
fn part_at(parts: &[(usize, u64, u64)], frame: u64) -> Option<(usize, u64)> {
    parts.iter().find(|p| p.1 <= frame && frame < p.1 + p.2).map(|p| (p.0, p.1 + p.2 - frame))
}

impl FrameSource for StagedSource {
    fn ready(&mut self) -> bool {
        let Some((file, _)) = self.current() else { return true };
        if self.files.is_whole(file) {
            return true;
        }
        if self.requested != Some(file) {
            self.requested = Some(file);
            (self.request)(file);
        }
        false
    }

    fn next_batch(&mut self, max_frames: usize) -> Result<Option<(u64, PixelSlice<'_>)>, String> {
        // A batch never spans two data files, so only one is ever held whole.
        let max = self.current().map_or(max_frames, |(_, left)| max_frames.min(left as usize)).max(1);
        let batch = self.inner.next_batch(max)?;
        if let Some((first, data)) = &batch {
            self.next = first + (data.len() / self.frame_px.max(1)) as u64;
        }
        // Past the last frame of a data file its bytes go (the next file is fetched when asked).
        if part_at(&self.parts, self.next).is_none_or(|(file, _)| !self.files.is_whole(file)) {
            self.files.hold_only(None);
        }
        Ok(batch)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::path::PathBuf;
    use std::rc::Rc;

    use scatterlab_stem::load::DirFileSet;

    use super::*;

    fn fixtures() -> PathBuf {
        scatterlab_testkit::fixture("stem")
    }

    #[test]
    fn pick_master_finds_one_acquisition() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(pick_master(&names(&["a_data_000001.h5", "a_master.h5"])).as_deref(), Ok("a_master.h5"));
        assert_eq!(pick_master(&names(&["single.h5", "notes.txt"])).as_deref(), Ok("single.h5"));
        let two = pick_master(&names(&["a_master.h5", "b_master.h5"])).expect_err("two masters");
        assert!(two.contains("a_master.h5") && two.contains("b_master.h5"), "{two}");
        assert!(pick_master(&names(&["x.h5", "y.h5"])).is_err());
        assert!(pick_master(&names(&["notes.txt"])).is_err());
    }

    /// Opening dev_medium from staged files fetches its master and the data files' headers and
    /// chunk-index nodes, not their chunks: less than one data file in all.
    #[test]
    fn opening_fetches_the_index_not_the_chunks() {
        let dir = fixtures();
        let names: Vec<String> =
            ["dev_medium_master.h5", "dev_medium_data_000001.h5", "dev_medium_data_000002.h5", "dev_medium_data_000003.h5", "dev_medium_data_000004.h5"].map(String::from).to_vec();
        let sizes: Vec<u64> = names.iter().map(|n| std::fs::metadata(dir.join(n)).map(|m| m.len()).unwrap_or(0)).collect();
        let files = StagedFiles::new(names.iter().cloned().zip(sizes.iter().copied()));
        let (mut fetches, mut bytes) = (0u64, 0u64);
        let acq = pollster::block_on(open_staged(&files, "dev_medium_master.h5", |i, start, end| {
            fetches += 1;
            bytes += end - start;
            let read = std::fs::read(dir.join(&names[i])).map_err(|e| e.to_string());
            async move { read.map(|b| b[start as usize..end as usize].to_vec()) }
        }))
        .expect("dev_medium opens from staged files");
        assert_eq!(acq.n_frames(), 16384);
        eprintln!("opening dev_medium: {fetches} fetches, {bytes} bytes (data files {:?})", &sizes[1..]);
        // 302 fetches, 2.47 MB (8 KiB read-ahead on 4 KiB blocks); it was 16 MB with 64 KiB blocks.
        let largest = sizes[1..].iter().copied().max().unwrap_or(0);
        assert!(bytes < largest, "opening fetched {bytes} bytes, more than the largest data file ({largest})");
    }

    /// dev_small from staged files equals dev_small from the folder, batch by batch, while the
    /// staged set holds at most one data file whole (plus the metadata ranges).
    #[test]
    fn staged_files_stream_what_the_folder_streams() {
        let dir = fixtures();
        let names: Vec<String> = ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"].map(String::from).to_vec();
        let sizes: Vec<u64> = names.iter().map(|n| std::fs::metadata(dir.join(n)).map(|m| m.len()).unwrap_or(0)).collect();
        let files = Arc::new(StagedFiles::new(names.iter().cloned().zip(sizes.iter().copied())));
        assert_eq!(pick_master(&names).as_deref(), Ok("dev_small_master.h5"));
        let read = |i: usize, start: u64, end: u64| {
            let bytes = std::fs::read(dir.join(&names[i])).map_err(|e| e.to_string());
            async move { bytes.map(|b| b[start as usize..end as usize].to_vec()) }
        };
        let mut fetches = 0;
        let acq = pollster::block_on(open_staged(&files, "dev_small_master.h5", |i, s, e| {
            fetches += 1;
            read(i, s, e)
        }))
        .expect("dev_small opens from staged files");
        assert!(fetches < 40, "{fetches} fetches to open dev_small");
        let metadata = files.held_bytes();
        assert!(metadata <= sizes[0], "after opening only the master's ranges stay: {metadata} bytes held");
        let requests = Rc::new(RefCell::new(Vec::new()));
        let log = requests.clone();
        let mut staged = StagedSource::new(acq, files.clone(), Box::new(move |i| log.borrow_mut().push(i)));
        let (folder, master) = DirFileSet::for_file(&dir.join("dev_small_master.h5")).expect("folder");
        let folder_acq = Acquisition::open(&folder, &master, &Hints::default()).expect("opens");
        let px = folder_acq.det_shape()[0] * folder_acq.det_shape()[1];
        let mut plain = AcquisitionSource::new(folder_acq);
        let largest = sizes[1..].iter().copied().max().unwrap_or(0);
        let mut frames = 0u64;
        loop {
            if !staged.ready() {
                let i = *requests.borrow().last().expect("a request");
                let whole = std::fs::read(dir.join(&names[i])).expect("data file");
                files.put_whole(i, whole.into()).expect("whole file");
                assert!(files.held_bytes() <= metadata + largest, "held {} bytes", files.held_bytes());
                continue;
            }
            let Some((first, data)) = staged.next_batch(64).expect("staged batch") else { break };
            let (first, values): (u64, Vec<u64>) = (first, (0..data.len()).filter_map(|k| data.get(k)).collect());
            let want = plain.next_batch(values.len() / px).expect("plain batch");
            let (f2, d2) = want.expect("the folder has as many frames");
            assert_eq!(first, f2);
            let bad: Vec<_> = (0..d2.len()).filter(|&k| d2.get(k) != values.get(k).copied()).take(5).map(|k| (k, d2.get(k), values.get(k))).collect();
            assert!(bad.is_empty(), "frames from {first} differ: {bad:?} of {}", d2.len());
            frames += (values.len() / px) as u64;
        }
        assert_eq!(requests.borrow().as_slice(), &[1, 2, 3], "each data file fetched once, in order");
        assert_eq!(files.held_bytes(), metadata, "no data file held after the last frame");
        assert!(frames > 0);
    }
}
