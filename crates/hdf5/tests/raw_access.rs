//! Raw access beyond "decodes right": coalesced reads on a 5000-chunk file, partial ranges,
//! and bad bytes (a damaged chunk, a truncated file, an unknown filter) as typed errors naming
//! file, dataset and chunk.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;

use hdf5_reader::{SliceInfo, SliceInfoElem};
use scatterlab_hdf5::raw::MAX_MERGED_READ;
use scatterlab_hdf5::storage::{bytes, open_native, Metered};
use scatterlab_hdf5::{open_raw, H5Error, H5File, RawLayout};

const DATA: &str = "/entry/data/data";

fn fixture_bytes(name: &str) -> Vec<u8> {
    scatterlab_testkit::read_fixture(&format!("stem/{name}"))
}

fn fixture_path(name: &str) -> PathBuf {
    scatterlab_testkit::fixture(&format!("stem/{name}"))
}

#[test]
fn medium_chunks_are_read_in_few_bounded_requests() {
    let name = "dev_medium_data_000001.h5";
    let metered = Metered::new(open_native(fixture_path(name)).unwrap());
    let f = H5File::open(metered.clone(), name).unwrap();
    let ds = open_raw(&f, DATA).unwrap();
    assert_eq!(ds.shape, vec![5000, 96, 96]);
    let RawLayout::Chunked { entries, .. } = &ds.layout else { panic!("not chunked") };
    let stored: u64 = entries.iter().map(|e| u64::from(e.size)).sum();
    let span = entries.iter().map(|e| e.addr + u64::from(e.size)).max().unwrap() - entries.iter().map(|e| e.addr).min().unwrap();
    metered.reset();
    let mut visits = vec![0u8; 5000];
    ds.read_chunks(&f, 0..5000, |i, loc, raw| {
        visits[i] += 1;
        assert_eq!(raw.len(), loc.size as usize);
        assert_eq!(&raw[..12], &[0, 0, 0, 0, 0, 0, 0x48, 0, 0, 0, 0x20, 0], "chunk {i}: 18432 B total, 8192 B blocks");
        Ok(())
    })
    .unwrap();
    let st = metered.stats();
    println!("{name}: 5000 chunks, {stored} stored bytes over a {span}-byte span, {} reads, {} bytes, peak {}", st.reads, st.bytes, st.peak);
    assert!(visits.iter().all(|&v| v == 1));
    let least = span.div_ceil(MAX_MERGED_READ);
    assert!(st.reads >= least && st.reads <= least + 1, "{} merged reads for a span needing {least}", st.reads);
    assert!(st.peak <= MAX_MERGED_READ && st.bytes >= stored && st.bytes <= span);
    // A partial range visits exactly its chunks.
    let mut seen = Vec::new();
    ds.read_chunks(&f, 1234..1240, |i, _, _| {
        seen.push(i);
        Ok(())
    })
    .unwrap();
    seen.sort_unstable();
    assert_eq!(seen, (1234..1240).collect::<Vec<_>>());
    assert!(ds.read_chunks(&f, 4999..5001, |_, _, _| Ok(())).is_err(), "range past the table");
    // Frames decoded through the raw path equal hdf5-reader's slice reads (with our registry).
    let reader = f.reader().dataset(DATA).unwrap();
    let (mut buf, mut scratch) = (vec![0u8; 18432], Vec::new());
    for i in [0usize, 1, 2500, 4999] {
        ds.read_chunk_into(&f, i, &mut buf, &mut scratch).unwrap();
        let ours: Vec<u16> = buf.chunks_exact(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
        let sel = SliceInfo {
            selections: vec![SliceInfoElem::Index(i as u64), SliceInfoElem::Slice { start: 0, end: 96, step: 1 }, SliceInfoElem::Slice { start: 0, end: 96, step: 1 }],
        };
        let theirs: Vec<u16> = reader.read_slice::<u16>(&sel).unwrap().iter().copied().collect();
        assert_eq!(ours, theirs, "frame {i}");
        let sum: u64 = ours.iter().map(|&v| u64::from(v)).sum();
        assert!(sum > 9216, "frame {i} holds counts ({sum})");
    }
}

#[test]
fn a_damaged_chunk_names_file_dataset_and_chunk() {
    let name = "dev_small_data_000001.h5";
    let mut b = fixture_bytes(name);
    let clean = H5File::open(bytes(b.clone()), name).unwrap();
    let RawLayout::Chunked { entries, .. } = &open_raw(&clean, DATA).unwrap().layout else { panic!() };
    // Chunk 5: make its first block's compressed length run past the chunk.
    let at = entries[5].addr as usize + 12;
    b[at..at + 4].copy_from_slice(&0x00FF_FFFFu32.to_be_bytes());
    let f = H5File::open(bytes(b), name).unwrap();
    let ds = open_raw(&f, DATA).unwrap();
    let mut buf = vec![0u8; 8192];
    ds.read_chunk_into(&f, 4, &mut buf, &mut Vec::new()).unwrap();
    let e = ds.read_chunk_into(&f, 5, &mut buf, &mut Vec::new()).unwrap_err();
    match &e {
        H5Error::Corrupt { file, dataset, chunk, detail } => {
            assert_eq!((file.as_str(), dataset.as_str(), chunk.as_slice()), (name, DATA, &[5u64, 0, 0][..]));
            assert!(detail.contains("bslz4 block 0: truncated at byte 16: needs 16777215 bytes"), "{detail}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert!(e.to_string().starts_with("dev_small_data_000001.h5: /entry/data/data: chunk [5, 0, 0]: "), "{e}");
    // A wrong-size output buffer is refused, not written past.
    assert!(matches!(ds.read_chunk_into(&f, 4, &mut [0u8; 100], &mut Vec::new()), Err(H5Error::Format { .. })));
}

#[test]
fn a_truncated_file_fails_per_chunk() {
    let name = "dev_small_data_000001.h5";
    let b = fixture_bytes(name);
    let clean = H5File::open(bytes(b.clone()), name).unwrap();
    let RawLayout::Chunked { entries, .. } = &open_raw(&clean, DATA).unwrap().layout else { panic!() };
    // Cut inside the chunk stored last: the index still reads, that chunk fails by name.
    let (last, loc) = entries.iter().enumerate().max_by_key(|(_, e)| e.addr).unwrap();
    let f = H5File::open(bytes(b[..loc.addr as usize + 10].to_vec()), name).unwrap();
    let ds = open_raw(&f, DATA).unwrap();
    let mut buf = vec![0u8; 8192];
    ds.read_chunk_into(&f, (last + 1) % 100, &mut buf, &mut Vec::new()).unwrap();
    let e = ds.read_chunk_into(&f, last, &mut buf, &mut Vec::new()).unwrap_err();
    assert!(matches!(e, H5Error::Format { .. }), "{e:?}");
    assert!(e.to_string().contains("run past the end of the file"), "{e}");
    let all = ds.read_chunks(&f, 0..100, |i, loc, raw| ds.decode_chunk_into(i, loc, raw, &mut buf, &mut Vec::new()));
    assert!(all.is_err());
    // Cut before the chunk index: opening the dataset fails, naming it.
    let cut = entries[50].addr as usize + 10;
    let f = H5File::open(bytes(b[..cut].to_vec()), name).unwrap();
    match open_raw(&f, DATA) {
        Err(H5Error::Format { file, object, detail }) => {
            assert_eq!((file.as_str(), object.as_str()), (name, DATA));
            println!("cut at {cut}: {detail}");
        }
        other => panic!("expected a format error, got {:?}", other.map(|d| d.shape)),
    }
}

#[test]
fn an_unknown_filter_is_reported_by_id() {
    let name = "dev_small_data_000001.h5";
    let mut b = fixture_bytes(name);
    // Filter pipeline v1 entry: id 32008 (08 7D), name length, flags, 5 client values, "bitshuffle…".
    let pos = b.windows(18).position(|w| w[..2] == [0x08, 0x7D] && w[6..8] == [5, 0] && &w[8..18] == b"bitshuffle").expect("the 32008 filter entry");
    b[pos..pos + 2].copy_from_slice(&32099u16.to_le_bytes());
    let f = H5File::open(bytes(b), name).unwrap();
    let ds = open_raw(&f, DATA).unwrap();
    let filt = ds.unsupported_filter().expect("32099 is not supported");
    assert_eq!((filt.id, filt.supported), (32099, false));
    let e = ds.read_chunk_into(&f, 0, &mut vec![0u8; 8192], &mut Vec::new()).unwrap_err();
    assert!(matches!(&e, H5Error::UnsupportedFilter { id: 32099, dataset, .. } if dataset == DATA), "{e:?}");
    // hdf5-reader's own read fails too, and maps onto the same kind.
    let re = f.reader().dataset(DATA).unwrap().read_array::<u16>().unwrap_err();
    let mapped = f.err(DATA, re);
    assert!(matches!(mapped, H5Error::UnsupportedFilter { id: 32099, .. }), "{mapped:?}");
}

#[test]
fn storage_errors_are_typed() {
    let missing = std::env::temp_dir().join("scatterlab_hdf5_no_such_file.h5");
    assert!(matches!(open_native(&missing), Err(H5Error::MissingFile { .. })));
    match H5File::open(bytes(b"not an HDF5 file at all".to_vec()), "junk.h5") {
        Err(e @ H5Error::Open { .. }) => assert!(e.to_string().starts_with("junk.h5: cannot open as HDF5"), "{e}"),
        other => panic!("expected Open, got {:?}", other.map(|f| f.len())),
    }
    let f = H5File::open(bytes(fixture_bytes("dev_small_master.h5")), "dev_small_master.h5").unwrap();
    assert_eq!(f.len(), 38632);
    // A path that is not there is a format error naming it.
    assert!(matches!(open_raw(&f, "/entry/nothing"), Err(H5Error::Format { object, .. }) if object == "/entry/nothing"));
    // The pixel mask: contiguous u32, 64 × 64, 5 non-zero (3 dead = 2, 2 hot = 8).
    let mask = open_raw(&f, "/entry/instrument/detector/detectorSpecific/pixel_mask").unwrap();
    assert_eq!((mask.shape.clone(), mask.dtype.size), (vec![64, 64], 4));
    let mut buf = vec![0u8; 4 * 4096];
    mask.read_contiguous_into(&f, 0, &mut buf).unwrap();
    let v: Vec<u32> = buf.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
    let bad: Vec<(usize, u32)> = v.iter().enumerate().filter(|(_, &x)| x != 0).map(|(i, &x)| (i, x)).collect();
    assert_eq!(bad, vec![(2415, 8), (2523, 2), (2848, 2), (3480, 2), (3832, 8)]);
}
