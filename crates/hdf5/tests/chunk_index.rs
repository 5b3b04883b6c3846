//! The dense chunk table, filled while the index is walked (`raw/walk.rs`: our B-tree v1 walk,
//! the array walkers slab by slab), equals
//! - libhdf5's own view of every chunk (`get_chunk_info`, in `tests/data/chunk_indexes.json`) for
//!   every index type, in `tests/data/chunk_indexes_{v1,latest}.h5` (`gen_chunk_indexes.py`):
//!   edge chunks, unwritten chunks, uninitialized fixed-array pages, a fixed array across the
//!   16,384-cell slab boundary, a non-zero filter mask, extensible arrays with the unlimited
//!   dimension first and second, shrunk datasets, fixed-array and implicit datasets below their
//!   maximum dimensions, B-tree v2, implicit, single chunk;
//! - the table built from hdf5-reader's whole-index walkers (what `index.rs` did before) for every
//!   chunked dataset of every STEM fixture (B-tree v1, fixed array) and of those two files, except
//!   the fixed-array and implicit datasets whose maximum dimensions after the first exceed the
//!   shape: hdf5-reader 0.12.1 numbers their chunks over the current grid, libhdf5 (and we) over
//!   the grid at the maximum dimensions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::{Path, PathBuf};

use hdf5_reader::btree_v1::{collect_btree_v1_leaves_storage, BTreeV1Key};
use hdf5_reader::chunk_index::{self, ChunkEntry};
use hdf5_reader::extensible_array::collect_extensible_array_chunk_entries_storage;
use hdf5_reader::fixed_array::collect_fixed_array_chunk_entries_storage;
use hdf5_reader::io::Cursor;
use hdf5_reader::messages::layout::{ChunkIndexing, DataLayout};
use hdf5_reader::messages::HdfMessage;
use scatterlab_hdf5::raw::ChunkIndexKind;
use scatterlab_hdf5::tree::NodeKind;
use scatterlab_hdf5::{open_raw, tree, ChunkLoc, H5File, RawLayout, TreeOptions};

fn data_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data"))
}

fn stem_fixtures() -> Vec<PathBuf> {
    let dir = scatterlab_testkit::fixture("stem");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (the STEM fixtures must be at ../shared/fixtures/stem)", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "h5"))
        .collect();
    files.sort();
    assert!(files.len() >= 40, "{} STEM fixtures", files.len());
    files
}

fn open(p: &Path) -> H5File {
    H5File::open_path(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn table(f: &H5File, path: &str) -> (ChunkIndexKind, Vec<u64>, Vec<ChunkLoc>) {
    let ds = open_raw(f, path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let RawLayout::Chunked { index, grid, entries, .. } = ds.layout else { panic!("{path}: not chunked") };
    (index, grid, entries)
}

#[test]
fn tables_equal_libhdf5_for_every_index_type() {
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(data_dir().join("chunk_indexes.json")).unwrap()).unwrap();
    let mut kinds = Vec::new();
    for (name, rows) in json.as_object().unwrap() {
        let f = open(&data_dir().join(name));
        for row in rows.as_array().unwrap() {
            let path = row["path"].as_str().unwrap();
            let (index, grid, entries) = table(&f, path);
            let want_kind = serde_json::to_value(index).unwrap();
            assert_eq!(want_kind, row["index"], "{name} {path}");
            kinds.push(index);
            let shape: Vec<u64> = serde_json::from_value(row["shape"].clone()).unwrap();
            let chunks: Vec<u64> = serde_json::from_value(row["chunks"].clone()).unwrap();
            let want_grid: Vec<u64> = shape.iter().zip(&chunks).map(|(s, c)| s.div_ceil(*c)).collect();
            assert_eq!(grid, want_grid, "{name} {path}");
            let mut want = vec![ChunkLoc { addr: ChunkLoc::UNALLOCATED, size: 0, mask: 0 }; entries.len()];
            for s in row["stored"].as_array().unwrap() {
                let v: Vec<u64> = serde_json::from_value(s.clone()).unwrap();
                want[v[0] as usize] = ChunkLoc { addr: v[1], size: v[2] as u32, mask: v[3] as u32 };
            }
            let bad: Vec<_> = (0..want.len()).filter(|&i| entries[i] != want[i]).take(5).map(|i| (i, entries[i], want[i])).collect();
            assert!(bad.is_empty(), "{name} {path}: (cell, ours, libhdf5's) {bad:?}");
            println!("{name} {path}: {index:?}, {} cells, {} stored, equal to libhdf5", want.len(), row["stored"].as_array().unwrap().len());
        }
    }
    for k in [ChunkIndexKind::BTreeV1, ChunkIndexKind::FixedArray, ChunkIndexKind::ExtensibleArray, ChunkIndexKind::BTreeV2, ChunkIndexKind::Implicit, ChunkIndexKind::SingleChunk]
    {
        assert!(kinds.contains(&k), "{k:?} not covered");
    }
}

/// The table the way `index.rs` built it before streaming: hdf5-reader's whole-index walkers,
/// then each entry placed in its row-major cell (undefined addresses and chunks outside the
/// extent skipped, unfiltered sizes the full chunk).
fn walker_table(f: &H5File, path: &str) -> Option<Vec<ChunkLoc>> {
    let h5 = f.reader();
    let ds = h5.dataset(path).unwrap();
    let header = h5.get_or_parse_header(ds.address()).unwrap();
    let (mut layout, mut filtered) = (None, false);
    for msg in &header.messages {
        match msg {
            HdfMessage::DataLayout(m) => layout = Some(m.layout.clone()),
            HdfMessage::FilterPipeline(p) => filtered = !p.filters.is_empty(),
            _ => {}
        }
    }
    let Some(DataLayout::Chunked { address, mut dims, chunk_indexing, .. }) = layout else { return None };
    let shape = ds.shape();
    // hdf5-reader numbers fixed-array and implicit chunks over the current grid, libhdf5 over the
    // grid at the maximum dimensions: where these differ the walkers are wrong (the libhdf5 test
    // above covers those datasets).
    let numbered_at_max = matches!(chunk_indexing, Some(ChunkIndexing::FixedArray { .. } | ChunkIndexing::Implicit));
    if numbered_at_max && ds.max_dims().is_some_and(|m| m.iter().zip(shape).skip(1).any(|(m, s)| m != s)) {
        println!("{path}: skipped (maximum dimensions {:?} above the shape {shape:?})", ds.max_dims());
        return None;
    }
    let ndim = shape.len();
    if dims.len() == ndim + 1 {
        dims.pop();
    }
    let es = ds.raw_element_size().unwrap();
    let (osz, lsz) = (h5.superblock().offset_size, h5.superblock().length_size);
    let st = h5.storage();
    let grid: Vec<u64> = shape.iter().zip(&dims).map(|(&s, &d)| s.div_ceil(u64::from(d))).collect();
    let n: u64 = grid.iter().product();
    let mut out = vec![ChunkLoc { addr: ChunkLoc::UNALLOCATED, size: 0, mask: 0 }; n as usize];
    if n == 0 || Cursor::is_undefined_offset(address, osz) {
        return Some(out);
    }
    let found: Vec<ChunkEntry> = match chunk_indexing.as_ref() {
        None => collect_btree_v1_leaves_storage(st, address, osz, lsz, Some(ndim as u32), &dims, None)
            .unwrap()
            .into_iter()
            .map(|(key, addr)| match key {
                BTreeV1Key::RawData { chunk_size, filter_mask, offsets } => {
                    ChunkEntry { address: addr, size: u64::from(chunk_size), filter_mask, offsets: offsets[..ndim].to_vec() }
                }
                BTreeV1Key::Group { .. } => panic!("{path}: group key"),
            })
            .collect(),
        Some(ChunkIndexing::SingleChunk { filtered_size, filters }) => vec![chunk_index::single_chunk_entry(address, *filtered_size, *filters, ndim)],
        Some(ChunkIndexing::Implicit) => chunk_index::collect_implicit_chunk_entries(address, shape, &dims, es, None, st.len()).unwrap(),
        Some(ChunkIndexing::FixedArray { .. }) => collect_fixed_array_chunk_entries_storage(st, address, osz, lsz, shape, &dims, None).unwrap(),
        Some(ChunkIndexing::ExtensibleArray { .. }) => collect_extensible_array_chunk_entries_storage(st, address, osz, lsz, shape, ds.max_dims(), &dims, None).unwrap(),
        Some(ChunkIndexing::BTreeV2) => chunk_index::collect_v2_chunk_entries_storage(st, address, osz, lsz, ndim as u32, &dims, None).unwrap(),
    };
    let chunk_bytes = dims.iter().fold(es as u64, |a, &d| a * u64::from(d)) as u32;
    for e in found {
        if Cursor::is_undefined_offset(e.address, osz) || e.offsets.iter().zip(shape).any(|(o, s)| o >= s) {
            continue;
        }
        let idx = e.offsets.iter().zip(&dims).zip(&grid).fold(0, |a, ((o, d), g)| a * g + o / u64::from(*d));
        let size = if filtered { e.size as u32 } else { chunk_bytes };
        assert!(!out[idx as usize].is_stored(), "{path}: chunk {:?} twice", e.offsets);
        out[idx as usize] = ChunkLoc { addr: e.address, size, mask: e.filter_mask };
    }
    Some(out)
}

#[test]
fn tables_equal_hdf5_reader_walkers_on_every_chunked_fixture() {
    let mut files = stem_fixtures();
    files.extend(["chunk_indexes_v1.h5", "chunk_indexes_latest.h5"].map(|n| data_dir().join(n)));
    let (mut datasets, mut chunks) = (0, 0);
    let mut kinds = Vec::new();
    for p in &files {
        let f = open(p);
        let t = tree(&f, &TreeOptions::default());
        for node in &t.nodes {
            let NodeKind::Dataset(_) = &node.kind else { continue };
            let Some(want) = walker_table(&f, &node.path) else { continue };
            let (index, _, got) = table(&f, &node.path);
            let bad: Vec<_> = (0..want.len()).filter(|&i| got[i] != want[i]).take(5).map(|i| (i, got[i], want[i])).collect();
            assert!(got.len() == want.len() && bad.is_empty(), "{} {}: (cell, streamed, walker) {bad:?}", p.display(), node.path);
            kinds.push(index);
            datasets += 1;
            chunks += want.iter().filter(|c| c.is_stored()).count();
        }
    }
    println!("{} files, {datasets} chunked datasets, {chunks} stored chunks: streamed tables equal the walkers'", files.len());
    assert!(datasets >= 40 && chunks >= 15_000, "{datasets} datasets, {chunks} chunks");
    for k in [ChunkIndexKind::BTreeV1, ChunkIndexKind::FixedArray, ChunkIndexKind::ExtensibleArray, ChunkIndexKind::BTreeV2] {
        assert!(kinds.contains(&k), "{k:?} not covered");
    }
}
