//! A master with one of its three data files missing: the open succeeds and names the missing
//! file with its inferred frames, frames in the present files read, and a frame in the missing
//! file (by index, by scan position, in a region or the stream) is an error naming it. The same
//! through a `MapFileSet` (the browser's picked files).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::ops::ControlFlow;
use std::path::PathBuf;

use scatterlab_core::CancelToken;
use scatterlab_hdf5::storage::open_native;
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, LoadError, MapFileSet, ReadOptions, StreamOptions};

fn dir() -> PathBuf {
    let d = scatterlab_testkit::fixture("stem");
    assert!(d.join("dev_small_master.h5").is_file(), "STEM fixtures missing: expected them at {} (../shared/fixtures/stem beside the repository)", d.display());
    d
}

const PRESENT: [&str; 3] = ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5"];
const MISSING: &str = "dev_small_data_000003.h5";

fn temp_copy() -> PathBuf {
    let t = std::env::temp_dir().join(format!("scatterlab-stem-missing-{}", std::process::id()));
    std::fs::create_dir_all(&t).unwrap();
    for f in PRESENT {
        std::fs::copy(dir().join(f), t.join(f)).unwrap();
    }
    let _ = std::fs::remove_file(t.join(MISSING));
    t
}

fn check(acq: &Acquisition) {
    assert!(!acq.is_complete());
    let m = acq.missing();
    assert_eq!(m.len(), 1);
    assert_eq!((m[0].file.as_str(), m[0].link.as_str(), m[0].frames), (MISSING, "data_000003", Some([200, 256])));
    assert_eq!(acq.n_frames(), 256, "nimages still declares every frame");
    // Frames 0–199 read (first, last of each present file), with the right counts.
    let reference = Acquisition::open(&DirFileSet::new(dir()), "dev_small_master.h5", &Hints::default()).unwrap();
    for f in [0u64, 99, 100, 199] {
        let got = acq.frame_at(f, &ReadOptions::default()).unwrap_or_else(|e| panic!("frame {f}: {e}"));
        assert_eq!(got.data, reference.frame_at(f, &ReadOptions::default()).unwrap().data, "frame {f}");
    }
    let mut bytes = Vec::new();
    let mut data = scatterlab_stem::load::PixelData::U16(Vec::new());
    acq.read_frames_into(0, 200, Default::default(), &mut data, &mut bytes).unwrap();
    assert_eq!(data.len(), 200 * 4096);
    // Frame 200 (scan row 12, col 8) is in the missing file: the error names it.
    for e in
        [acq.frame_at(200, &ReadOptions::default()).unwrap_err(), acq.frame(12, 8, &ReadOptions::default()).unwrap_err(), acq.frame(15, 15, &ReadOptions::default()).unwrap_err()]
    {
        assert!(matches!(e, LoadError::MissingData { .. }), "{e:?}");
        let msg = e.to_string();
        assert!(msg.contains(MISSING) && msg.contains("dev_small_master.h5"), "{msg}");
    }
    let e = acq.region(11..13, 0..16, &ReadOptions::default()).unwrap_err();
    assert!(e.to_string().contains(MISSING), "{e}");
    // The stream delivers the 200 present frames, then stops with the error.
    let mut delivered = 0;
    let e = acq
        .stream(
            &StreamOptions::default(),
            &mut |b| {
                delivered += b.n;
                ControlFlow::Continue(())
            },
            &mut |_: u64, _: u64| {},
            &CancelToken::new(),
        )
        .unwrap_err();
    assert_eq!(delivered, 200);
    assert!(e.to_string().contains("frame 200 is in dev_small_data_000003.h5"), "{e}");
}

#[test]
fn a_missing_data_file_is_listed_and_named_on_read() {
    let t = temp_copy();
    let acq = Acquisition::open(&DirFileSet::new(&t), "dev_small_master.h5", &Hints::default()).unwrap();
    check(&acq);
    let _ = std::fs::remove_dir_all(&t);
}

#[test]
fn picked_files_without_one_data_file() {
    let mut set = MapFileSet::new();
    for f in PRESENT {
        set.insert(f, open_native(dir().join(f)).unwrap());
    }
    let acq = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).unwrap();
    check(&acq);
    // Without the master itself the open names it.
    let e = Acquisition::open(&set, "dev_medium_master.h5", &Hints::default()).err().unwrap();
    assert!(e.to_string().contains("missing file dev_medium_master.h5"), "{e}");
}

#[test]
fn a_missing_first_file_still_opens() {
    let mut set = MapFileSet::new();
    for f in ["dev_small_master.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"] {
        set.insert(f, open_native(dir().join(f)).unwrap());
    }
    let acq = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).unwrap();
    assert_eq!(acq.missing()[0].frames, Some([0, 100]));
    assert!(acq.frame_at(100, &ReadOptions::default()).is_ok());
    assert!(acq.frame_at(99, &ReadOptions::default()).unwrap_err().to_string().contains("dev_small_data_000001.h5"));
}
