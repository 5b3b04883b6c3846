//! The raw chunk walk: arbitrary bytes opened as HDF5, then every dataset the tree lists read
//! the ways the readers do — `open_raw` (chunk index walked into the table), single chunks by
//! index (first, middle, last and one past the end), a sub-range streamed with
//! `read_chunks` + `decode_chunk_into` (the STEM frame reader's path), contiguous reads at
//! offsets (one past the end included), and hdf5-reader's `read_slice` of a small corner (the
//! app's browser). Any panic, abort or out-of-memory is a bug; errors are the expected outcome.

#![no_main]

use hdf5_reader::{Datatype, H5Type, SliceInfo, SliceInfoElem};
use libfuzzer_sys::fuzz_target;
use scatterlab_hdf5::storage::bytes;
use scatterlab_hdf5::tree::NodeKind;
use scatterlab_hdf5::{open_raw, tree, H5File, RawLayout, TreeOptions};

/// Largest decode buffer the target allocates (a forged shape may claim far more).
const MAX_BUFFER: u64 = 16 << 20;
/// Chunks streamed per dataset.
const MAX_STREAMED: usize = 256;
/// Elements per dimension of the corner `read_slice` reads.
const CORNER: u64 = 8;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = H5File::open(bytes(data.to_vec()), "fuzz.h5") else { return };
    let t = tree(&f, &TreeOptions { attrs: false, max_nodes: 256 });
    for node in &t.nodes {
        if let NodeKind::Dataset(_) = &node.kind {
            raw(&f, &node.path);
            corner(&f, &node.path);
        }
    }
});

fn raw(f: &H5File, path: &str) {
    let Ok(ds) = open_raw(f, path) else { return };
    let _ = ds.unsupported_filter();
    if ds.chunk_bytes() > MAX_BUFFER {
        return;
    }
    let mut buf = vec![0u8; ds.chunk_bytes() as usize];
    let mut scratch = Vec::new();
    if let RawLayout::Chunked { .. } = ds.layout {
        let n = ds.n_chunks();
        for idx in [0, n / 2, n.saturating_sub(1), n] {
            let _ = ds.chunk_offsets(idx.min(n.saturating_sub(1)));
            let r = ds.read_chunk_into(f, idx, &mut buf, &mut scratch);
            assert!(idx < n || r.is_err(), "chunk {idx} of {n} read without error");
        }
        let start = n / 3;
        let _ = ds.read_chunks(f, start..n.min(start + MAX_STREAMED), |i, loc, raw| ds.decode_chunk_into(i, loc, raw, &mut buf, &mut scratch));
        // A range past the end is an error, never a panic.
        let _ = ds.read_chunks(f, n..n.saturating_add(2), |_, _, _| Ok(()));
    } else {
        let len = buf.len() as u64;
        for at in [0, len / 2, len.saturating_sub(1), len] {
            let _ = ds.read_contiguous_into(f, at, &mut buf[..(len - at.min(len)).min(64) as usize]);
        }
        let _ = ds.read_contiguous_into(f, len.saturating_add(1), &mut buf[..0]);
        let _ = ds.read_contiguous_into(f, 0, &mut buf);
    }
}

/// hdf5-reader's hyperslab read of the first `CORNER` elements of the last two dimensions at
/// index 0 of the others, typed as the dataset is (the app's browser reads slices this way).
fn corner(f: &H5File, path: &str) {
    let Ok(ds) = f.reader().dataset(path) else { return };
    let shape = ds.shape().to_vec();
    let nd = shape.len();
    let selections =
        shape.iter().enumerate().map(|(d, &n)| if d + 2 >= nd { SliceInfoElem::Slice { start: 0, end: n.min(CORNER), step: 1 } } else { SliceInfoElem::Index(0) }).collect();
    let sel = SliceInfo { selections };
    match ds.dtype() {
        Datatype::FixedPoint { size: 1, signed: false, .. } => read::<u8>(&ds, &sel),
        Datatype::FixedPoint { size: 2, signed: false, .. } => read::<u16>(&ds, &sel),
        Datatype::FixedPoint { size: 4, signed: false, .. } => read::<u32>(&ds, &sel),
        Datatype::FixedPoint { size: 4, signed: true, .. } => read::<i32>(&ds, &sel),
        Datatype::FixedPoint { size: 8, signed: true, .. } => read::<i64>(&ds, &sel),
        Datatype::FloatingPoint { size: 4, .. } => read::<f32>(&ds, &sel),
        Datatype::FloatingPoint { size: 8, .. } => read::<f64>(&ds, &sel),
        _ => {}
    }
}

fn read<T: H5Type + Copy>(ds: &hdf5_reader::Dataset, sel: &SliceInfo) {
    let _ = ds.read_slice::<T>(sel);
}
