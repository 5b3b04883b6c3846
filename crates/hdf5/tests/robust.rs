//! Robustness: damaged copies of every STEM fixture kind (masters, data files of each variant,
//! the single file) go through open → tree → links → open_raw → decode of every chunk, and
//! nothing may panic; every failure must be an [`H5Error`] that names the file.
//!
//! Seeded and time-bounded (about 8 s in a debug build). The seed is printed; `SCATTERLAB_SEED=S`
//! replays a run, `SCATTERLAB_CASE=N` with it reruns one case with the
//! normal panic hook (for `RUST_BACKTRACE=1`), `SCATTERLAB_ROBUST_SECS=N` soaks longer. The Acquisition-level twin is
//! `crates/stem/tests/robust.rs`; coverage-guided fuzzing is in `crates/hdf5/fuzz/`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

#[path = "common/mutate.rs"]
mod mutate;

use std::time::Instant;

use mutate::{budget, case_rng, mutate, no_panic, quiet_panics, run_seed, Counts};
use rand::Rng;
use scatterlab_hdf5::storage::bytes;
use scatterlab_hdf5::tree::NodeKind;
use scatterlab_hdf5::{links, open_raw, tree, H5Error, H5File, RawLayout, TreeOptions};

/// The fixtures damaged, by kind: every master layout (sb v0 compact links, sb v3 dense links,
/// medium, oddtail) and one data file of each variant (bslz4 u16/u32, gzip+shuffle, LZ4 one and
/// two blocks, fixed-array index, odd tail, unfiltered, contiguous single file).
const FILES: [(&str, &str); 19] = [
    ("master", "dev_small_master.h5"),
    ("master", "dev_small_raw_master.h5"),
    ("master", "dev_small_gzip_master.h5"),
    ("master", "dev_small_lz4_master.h5"),
    ("master", "dev_small_lz4blk_master.h5"),
    ("master", "dev_small_latest_master.h5"),
    ("master", "dev_small_u32_master.h5"),
    ("master", "dev_medium_master.h5"),
    ("master", "dev_oddtail_master.h5"),
    ("master", "dev_oddtail_raw_master.h5"),
    ("data", "dev_small_data_000001.h5"),
    ("data", "dev_small_gzip_data_000003.h5"),
    ("data", "dev_small_lz4_data_000001.h5"),
    ("data", "dev_small_lz4blk_data_000003.h5"),
    ("data", "dev_small_latest_data_000001.h5"),
    ("data", "dev_small_u32_data_000003.h5"),
    ("data", "dev_oddtail_data_000003.h5"),
    ("data", "dev_small_raw_data_000003.h5"),
    ("single", "dev_small_single.h5"),
];

/// Largest decode buffer a case allocates: a damaged shape may claim gigabytes, which is the
/// caller's decision to refuse (the library hands out sizes, it does not allocate them).
const MAX_BUFFER: u64 = 64 << 20;

/// Never-written chunks decoded per dataset (they all decode the same way: the fill value).
const MAX_FILL_CHUNKS: usize = 64;

fn fixture(name: &str) -> Vec<u8> {
    scatterlab_testkit::read_fixture(&format!("stem/{name}"))
}

/// Counts a step's outcome; an error that does not name the file is a violation.
fn tally<T>(name: &str, c: &mut Counts, r: Result<T, H5Error>) -> Result<Option<T>, String> {
    match r {
        Ok(v) => {
            c.ok += 1;
            Ok(Some(v))
        }
        Err(e) => named(name, c, &e.to_string()).map(|()| None),
    }
}

fn named(name: &str, c: &mut Counts, msg: &str) -> Result<(), String> {
    if msg.contains(name) {
        c.typed += 1;
        Ok(())
    } else {
        Err(format!("error does not name the file: {msg}"))
    }
}

/// open → tree → links of every group → open_raw and decode every chunk of every dataset.
fn exercise(name: &str, data: Vec<u8>, c: &mut Counts) -> Result<(), String> {
    let Some(f) = tally(name, c, H5File::open(bytes(data), name))? else { return Ok(()) };
    let t = tree(&f, &TreeOptions::default());
    for node in &t.nodes {
        match &node.kind {
            NodeKind::Error { message } => named(name, c, message)?,
            NodeKind::Group { .. } => {
                tally(name, c, links(&f, &node.path))?;
            }
            NodeKind::Dataset(_) => decode_all(name, &f, &node.path, c)?,
            _ => {}
        }
    }
    Ok(())
}

fn decode_all(name: &str, f: &H5File, path: &str, c: &mut Counts) -> Result<(), String> {
    let Some(ds) = tally(name, c, open_raw(f, path))? else { return Ok(()) };
    if ds.chunk_bytes() > MAX_BUFFER {
        return Ok(());
    }
    let mut buf = vec![0u8; ds.chunk_bytes() as usize];
    let mut scratch = Vec::new();
    if let RawLayout::Chunked { .. } = ds.layout {
        let (mut violation, mut fills) = (None, 0usize);
        let r = ds.read_chunks(f, 0..ds.n_chunks(), |i, loc, raw| {
            // A damaged dimension can grow the grid to millions of never-written chunks; a few
            // of them show that fill works, decoding them all would only burn the time budget.
            if !loc.is_stored() {
                fills += 1;
                if fills > MAX_FILL_CHUNKS {
                    return Ok(());
                }
            }
            // Every chunk is decoded; one bad chunk must not hide the next.
            if let Err(v) = tally(name, c, ds.decode_chunk_into(i, loc, raw, &mut buf, &mut scratch)) {
                violation.get_or_insert(v);
            }
            Ok(())
        });
        if let Some(v) = violation {
            return Err(v);
        }
        tally(name, c, r)?;
    } else {
        tally(name, c, ds.read_contiguous_into(f, 0, &mut buf))?;
    }
    Ok(())
}

#[test]
fn damaged_fixtures_never_panic_and_fail_with_errors_naming_the_file() {
    let seed = run_seed();
    let budget = budget(8);
    println!("robust (hdf5): seed {seed}, budget {budget:?}; replay with SCATTERLAB_SEED={seed}");
    let originals: Vec<(&str, &str, Vec<u8>)> = FILES.iter().map(|&(kind, name)| (kind, name, fixture(name))).collect();
    // The undamaged files pass cleanly: otherwise the counts below would mean nothing.
    for (_, name, data) in &originals {
        let mut c = Counts::default();
        exercise(name, data.clone(), &mut c).unwrap();
        assert_eq!(c.typed, 0, "{name}: undamaged fixture fails");
    }
    // `SCATTERLAB_CASE=N` (with the seed) reruns one case with the normal panic hook, so
    // `RUST_BACKTRACE=1` shows where it panicked.
    let only: Option<u64> = std::env::var("SCATTERLAB_CASE").ok().and_then(|v| v.trim().parse().ok());
    if only.is_none() {
        quiet_panics();
    }
    let mut per_kind: Vec<(&str, Counts)> = vec![("master", Counts::default()), ("data", Counts::default()), ("single", Counts::default())];
    let mut failures = Vec::new();
    let start = Instant::now();
    let mut case = 0u64;
    let mut slowest = (std::time::Duration::ZERO, String::new());
    while only.map_or(start.elapsed() < budget, |n| case <= n) {
        if only.is_some_and(|n| n != case) {
            case += 1;
            continue;
        }
        let t0 = Instant::now();
        let mut rng = case_rng(seed, case);
        let (kind, name, orig) = &originals[rng.gen_range(0..originals.len())];
        let (data, what) = mutate(orig, &mut rng);
        let counts = &mut per_kind.iter_mut().find(|(k, _)| k == kind).expect("kind listed").1;
        counts.cases += 1;
        match no_panic(|| exercise(name, data, counts)) {
            Ok(Ok(())) => {}
            Ok(Err(v)) => failures.push(format!("seed {seed} case {case} {name} ({what}): {v}")),
            Err(p) => failures.push(format!("seed {seed} case {case} {name} ({what}): PANIC {p}")),
        }
        if t0.elapsed().as_secs_f64() > 0.5 {
            println!("robust (hdf5): slow case {case} {name} ({what}): {:.1} s", t0.elapsed().as_secs_f64());
        }
        if t0.elapsed() > slowest.0 {
            slowest = (t0.elapsed(), format!("case {case} {name} ({what})"));
        }
        case += 1;
    }
    println!("robust (hdf5): slowest {:.3} s: {}", slowest.0.as_secs_f64(), slowest.1);
    let _ = std::panic::take_hook();
    for (kind, c) in &per_kind {
        println!("robust (hdf5): {kind:6}: {:5} cases, {:6} steps ok, {:5} typed errors", c.cases, c.ok, c.typed);
    }
    println!("robust (hdf5): {case} cases in {:.1} s, {} failures", start.elapsed().as_secs_f64(), failures.len());
    assert!(failures.is_empty(), "{} failures (seed {seed}):\n{}", failures.len(), failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
    assert!(case >= 50 || only.is_some(), "only {case} cases ran in {budget:?}");
}

/// Fuzz regression (`fuzz/` target `acquisition`, 2026-12-05; the input is
/// `fuzz/seeds/acquisition/regression_oom_description_4gb.bin`): a master whose
/// `/entry/instrument/detector/description` declares 4.1 GB of fixed-length strings in a 38 KB
/// file. `dataset_string` allocated and filled all of it (12 s, 4 GB RSS); it is now a limit error
/// naming the file and the dataset, before any allocation.
#[test]
fn forged_metadata_string_size_is_a_limit_error() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz_description_4gb_master.h5");
    let f = H5File::open_path(&path).unwrap();
    let object = "/entry/instrument/detector/description";
    let start = Instant::now();
    match scatterlab_hdf5::values::dataset_string(&f, object) {
        Err(H5Error::Limit { file, object: o, requested, limit, .. }) => {
            assert_eq!((file.as_str(), o.as_str()), ("fuzz_description_4gb_master.h5", object));
            assert!(requested > limit && limit == scatterlab_hdf5::values::MAX_METADATA_BYTES, "{requested} > {limit}");
        }
        other => panic!("expected a limit error, got {other:?}"),
    }
    assert!(start.elapsed().as_secs_f64() < 1.0, "refused in {:?}", start.elapsed());
}

/// Fuzz regression (`crates/hdf5/fuzz` target `open_tree`, 2026-12-05; the input is also
/// `fuzz/seeds/open_tree/regression_chunk_grid_27m.h5`): a 7 KB file declaring a chunk grid of
/// ~27 M cells, whose dense table took 435 MB. With `MAX_CHUNKS` at 2²⁴ (256 MiB of table),
/// opening it for raw access is a limit error naming the file, the dataset and the grid; the
/// tree and the links still read.
#[test]
fn forged_chunk_grid_is_a_limit_error() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz_chunk_grid_27m.h5");
    let f = H5File::open_path(&path).unwrap();
    let t = tree(&f, &TreeOptions::default());
    let mut refused = Vec::new();
    for node in &t.nodes {
        match &node.kind {
            NodeKind::Group { .. } => {
                let _ = links(&f, &node.path);
            }
            NodeKind::Dataset(_) => {
                if let Err(H5Error::Limit { file, object, what, requested, limit }) = open_raw(&f, &node.path) {
                    assert_eq!((file.as_str(), object.as_str()), ("fuzz_chunk_grid_27m.h5", node.path.as_str()));
                    assert!(what.starts_with("chunk table for grid") && limit == scatterlab_hdf5::raw::MAX_CHUNKS * 16 && requested > limit, "{what}: {requested} > {limit}");
                    refused.push(node.path.clone());
                }
            }
            _ => {}
        }
    }
    assert!(!refused.is_empty(), "no dataset of the forged grid was refused");
}
