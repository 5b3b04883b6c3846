//! Whole files: arbitrary bytes opened as HDF5, then the file browser's tree, the links of every
//! group, and every dataset opened for raw access with every chunk decoded — the path
//! `tests/robust.rs` runs on damaged fixtures, here guided by coverage. Seed it with the STEM
//! fixtures (README.md). Any panic, abort or out-of-memory is a bug; errors are expected.

#![no_main]

use libfuzzer_sys::fuzz_target;
use scatterlab_hdf5::storage::bytes;
use scatterlab_hdf5::tree::NodeKind;
use scatterlab_hdf5::{links, open_raw, tree, H5File, RawLayout, TreeOptions};

/// Largest decode buffer the target allocates (a forged shape may claim far more; refusing is
/// the caller's decision, as in tests/robust.rs).
const MAX_BUFFER: u64 = 64 << 20;
/// Never-written chunks decoded per dataset (all decode to the fill value).
const MAX_FILL_CHUNKS: usize = 64;
/// Chunks visited per dataset: the table itself is built whole by `open_raw` (bounded by
/// `MAX_CHUNKS`); walking 16 M cells of a forged grid one callback at a time would only measure
/// the harness (a timeout under ASan, campaign 2026-12-05), never reach new code.
const MAX_VISITED_CHUNKS: usize = 1 << 16;

fuzz_target!(|data: &[u8]| {
    let Ok(f) = H5File::open(bytes(data.to_vec()), "fuzz.h5") else { return };
    let t = tree(&f, &TreeOptions::default());
    for node in &t.nodes {
        match &node.kind {
            NodeKind::Group { .. } => {
                let _ = links(&f, &node.path);
            }
            NodeKind::Dataset(_) => decode_all(&f, &node.path),
            _ => {}
        }
    }
});

fn decode_all(f: &H5File, path: &str) {
    let Ok(ds) = open_raw(f, path) else { return };
    if ds.chunk_bytes() > MAX_BUFFER {
        return;
    }
    let mut buf = vec![0u8; ds.chunk_bytes() as usize];
    let mut scratch = Vec::new();
    if let RawLayout::Chunked { .. } = ds.layout {
        let mut fills = 0;
        let _ = ds.read_chunks(f, 0..ds.n_chunks().min(MAX_VISITED_CHUNKS), |i, loc, raw| {
            if !loc.is_stored() {
                fills += 1;
                if fills > MAX_FILL_CHUNKS {
                    return Ok(());
                }
            }
            let _ = ds.decode_chunk_into(i, loc, raw, &mut buf, &mut scratch);
            Ok(())
        });
    } else {
        let _ = ds.read_contiguous_into(f, 0, &mut buf);
    }
}
