//! A reduction split over frame ranges (`reduce_range` → `merge` → `finish`, what the Python
//! extension runs on Dask workers) equals `reduce` (the CLI's one pass) bit for bit, for uneven
//! ranges that cross data-file boundaries, on u16 (dev_small), u32 with bad pixels
//! (dev_small_u32) and the odd detector (dev_oddtail); bad ranges and splits are refused by name.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;

use scatterlab_core::CancelToken;
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, LoadRecord, MapFileSet};
use scatterlab_stem::reduce::{auto_probe, finish, merge, needs_probe, reduce, reduce_range, resolve_geometry, ReduceDevice, ReduceOptions};

fn dir() -> PathBuf {
    scatterlab_testkit::fixture("stem")
}

/// Splits `0..n` at `cuts` (sorted, inside).
fn ranges(n: u64, cuts: &[u64]) -> Vec<std::ops::Range<u64>> {
    let mut edges = vec![0];
    edges.extend(cuts.iter().copied().filter(|&c| c > 0 && c < n));
    edges.push(n);
    edges.windows(2).map(|w| w[0]..w[1]).collect()
}

fn split_equals_one_pass(master: &str, cuts: &[u64]) {
    let files = DirFileSet::new(dir());
    let acq = Acquisition::open(&files, master, &Hints::default()).unwrap();
    let options = ReduceOptions::default();
    let cancel = CancelToken::new();
    let want = pollster::block_on(reduce(&acq, &files, &options, ReduceDevice::Cpu, &mut |_, _| {}, &cancel)).unwrap();
    let n = acq.n_frames();
    let split = ranges(n, cuts);
    // Reversed: merge sorts by first frame.
    let run = |dets: &[_]| split.iter().rev().map(|r| reduce_range(&acq, r.clone(), dets, options.mask, &cancel).unwrap()).collect::<Vec<_>>();
    assert!(needs_probe(&options));
    let sums = merge(run(&[]), n).unwrap();
    let probe = auto_probe(&sums.result.mean_dp(), acq.det_shape()).unwrap();
    let geometry = resolve_geometry(&acq, &options, Some(&probe)).unwrap();
    let merged = merge(run(&geometry.detectors()), n).unwrap();
    let record = LoadRecord { frames: [0, n], region: None, bin: 1, mask_policy: options.mask, n_masked: merged.n_masked };
    let provenance = acq.provenance(&files, &record, None).unwrap();
    let got = finish(&acq, &options, &geometry, merged.result, Vec::new(), "cpu (fused pass u64)".into(), provenance).unwrap();
    println!("{master}: {} frames in {} ranges {split:?}", n, split.len());
    assert_eq!(got.integers, want.integers, "{master}: integer products");
    assert_eq!(got.reals.len(), want.reals.len());
    for ((name, shape, a), (wname, wshape, b)) in got.reals.iter().zip(&want.reals) {
        assert_eq!((name, shape), (wname, wshape));
        // Same code on the same integers: equal bit for bit (NaN where both are NaN).
        assert!(a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()), "{master}: {name}");
    }
    assert_eq!(got.record, want.record, "{master}: record");
}

#[test]
fn dev_small_split_across_files() {
    // Files hold 100 + 100 + 56 frames: ranges cross both boundaries.
    split_equals_one_pass("dev_small_master.h5", &[37, 150, 151, 230]);
}

#[test]
fn dev_small_u32_with_bad_pixels() {
    split_equals_one_pass("dev_small_u32_master.h5", &[1, 99, 201]);
}

#[test]
fn dev_oddtail_uneven() {
    // 8 + 8 + 4 frames.
    split_equals_one_pass("dev_oddtail_master.h5", &[3, 11, 19]);
}

#[test]
fn bad_ranges_and_splits_are_named() {
    let files = DirFileSet::new(dir());
    let acq = Acquisition::open(&files, "dev_oddtail_master.h5", &Hints::default()).unwrap();
    let (mask, cancel) = (ReduceOptions::default().mask, CancelToken::new());
    let e = reduce_range(&acq, 15..25, &[], mask, &cancel).unwrap_err().to_string();
    assert!(e.contains("frames 15..25") && e.contains("20 frames of dev_oddtail_master.h5"), "{e}");
    let e = reduce_range(&acq, 4..4, &[], mask, &cancel).unwrap_err().to_string();
    assert!(e.contains("frames 4..4"), "{e}");
    let part = |r: std::ops::Range<u64>| reduce_range(&acq, r, &[], mask, &cancel).unwrap();
    let e = merge(vec![part(0..10), part(12..20)], 20).unwrap_err().to_string();
    assert!(e.contains("frames 10..12 uncovered"), "{e}");
    let e = merge(vec![part(0..10), part(8..20)], 20).unwrap_err().to_string();
    assert!(e.contains("overlap"), "{e}");
    let e = merge(vec![part(0..10)], 20).unwrap_err().to_string();
    assert!(e.contains("frames 10..20 are not covered"), "{e}");
    // A missing data file: the ranges that need it fail naming it, the others reduce.
    let mut set = MapFileSet::new();
    for f in ["dev_oddtail_master.h5", "dev_oddtail_data_000001.h5", "dev_oddtail_data_000003.h5"] {
        set.insert(f, scatterlab_hdf5::storage::open_native(dir().join(f)).unwrap());
    }
    let acq = Acquisition::open(&set, "dev_oddtail_master.h5", &Hints::default()).unwrap();
    assert!(reduce_range(&acq, 0..8, &[], mask, &cancel).is_ok());
    let e = reduce_range(&acq, 5..12, &[], mask, &cancel).unwrap_err().to_string();
    assert!(e.contains("dev_oddtail_data_000002.h5"), "{e}");
}
