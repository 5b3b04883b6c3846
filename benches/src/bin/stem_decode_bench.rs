//! 4D-STEM chunk decoding on the dev_medium fixture (docs/plans/hdf5-loading.md §4): 4 data files,
//! 16,384 bitshuffle+LZ4 frames of 96 × 96 u16, 302 MB decoded. One thread, best and median of 5
//! runs after a warm-up, decoded GB/s (10⁹ bytes of decoded pixels per second) for
//! - `raw decode (memory)`: our fast path alone, every stored chunk already in memory, decoded into
//!   one reused frame buffer ([`RawDataset::decode_chunk_into`]);
//! - `read_chunks + decode (memory)`: the same from files held in memory, through the chunk table
//!   and coalesced reads ([`RawDataset::read_chunks`]);
//! - `hdf5-reader read_array`: hdf5-reader's typed read of each whole dataset with our filter
//!   registry (allocates the array and each chunk);
//! - `read + decode (disk)`: files opened by path, read with positioned reads (page cache warm).
//!
//! The peer, in the same run: h5py + hdf5plugin (`python/h5py_decode.py`, through
//! `SCATTERLAB_BENCH_PYTHON`, default `~/.cache/scatterlab/bench-venv/bin/python`): `ds[...]` per
//! file, and per chunk `read_direct_chunk` + `bitshuffle.decompress_lz4` when the `bitshuffle`
//! package is importable. "-" where the peer cannot run. Each path's warm-up run sums the pixels
//! (the timed runs do not), and every sum must equal the raw decode's. Last line: one JSON object with the GB/s figures.
//!
//! `cargo run --release -p scatterlab-benches --bin stem_decode_bench [fixture dir]`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use std::time::Instant;

use scatterlab_hdf5::storage::bytes;
use scatterlab_hdf5::{open_raw, ChunkLoc, H5File, RawDataset};

const REPS: usize = 5;
const DATA: &str = "/entry/data/data";

/// Best and median seconds of `REPS` runs of `f(false)` after one warm-up run `f(true)`, whose
/// return value (the pixel sum; the timed runs skip summing) is returned as the checksum.
fn best_median(mut f: impl FnMut(bool) -> u64) -> (f64, f64, u64) {
    let sum = f(true);
    let mut t = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        let t0 = Instant::now();
        std::hint::black_box(f(false));
        t.push(t0.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    (t[0], t[REPS / 2], sum)
}

/// Sum of the u16 pixels of a decoded frame (the checksum every path must agree on).
fn sum_u16(frame: &[u8]) -> u64 {
    frame.chunks_exact(2).map(|p| u64::from(u16::from_le_bytes([p[0], p[1]]))).sum()
}

/// One data file: its bytes, the raw dataset, and every stored chunk copied out once.
struct Source {
    path: std::path::PathBuf,
    file: H5File,
    ds: RawDataset,
    chunks: Vec<(usize, ChunkLoc, std::ops::Range<usize>)>,
    stored: Vec<u8>,
}

fn load(path: std::path::PathBuf) -> Source {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file = H5File::open(bytes(data), name).expect("fixture opens");
    let ds = open_raw(&file, DATA).expect("fixture dataset");
    let (mut chunks, mut stored) = (Vec::new(), Vec::new());
    ds.read_chunks(&file, 0..ds.n_chunks(), |i, loc, raw| {
        chunks.push((i, loc, stored.len()..stored.len() + raw.len()));
        stored.extend_from_slice(raw);
        Ok(())
    })
    .expect("fixture chunks read");
    Source { path, file, ds, chunks, stored }
}

/// The peer's JSON (`{"decoded_bytes", "sum", "ds": {"best", "median"}, "direct_chunk": …}`), or None.
fn peer(files: &[String]) -> Option<serde_json::Value> {
    let default = std::env::var("HOME").map(|h| format!("{h}/.cache/scatterlab/bench-venv/bin/python")).unwrap_or_default();
    let python = std::env::var("SCATTERLAB_BENCH_PYTHON").unwrap_or(default);
    let script = format!("{}/python/h5py_decode.py", env!("CARGO_MANIFEST_DIR"));
    let out = std::process::Command::new(&python).arg(script).arg(REPS.to_string()).args(files).output().ok()?;
    if !out.status.success() {
        eprintln!("h5py peer not run: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

fn main() {
    let dir = std::env::args().nth(1).unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/fixtures/stem").into());
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("dev_medium_data_")))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no dev_medium_data_* files in {dir}");
    let sources: Vec<Source> = paths.into_iter().map(load).collect();
    let frame_bytes = sources[0].ds.chunk_bytes() as usize;
    let decoded: usize = sources.iter().map(|s| s.ds.n_chunks() * s.ds.chunk_bytes() as usize).sum();
    let compressed: usize = sources.iter().map(|s| s.stored.len()).sum();
    let frames: usize = sources.iter().map(|s| s.ds.n_chunks()).sum();
    let (mut frame, mut scratch) = (vec![0u8; frame_bytes], Vec::new());

    let raw = best_median(|check| {
        let mut sum = 0;
        for s in &sources {
            for (i, loc, r) in &s.chunks {
                s.ds.decode_chunk_into(*i, *loc, &s.stored[r.clone()], &mut frame, &mut scratch).expect("decodes");
                if check {
                    sum += sum_u16(&frame);
                }
            }
        }
        sum
    });
    let via_chunks = best_median(|check| {
        let mut sum = 0;
        for s in &sources {
            s.ds.read_chunks(&s.file, 0..s.ds.n_chunks(), |i, loc, b| {
                s.ds.decode_chunk_into(i, loc, b, &mut frame, &mut scratch)?;
                if check {
                    sum += sum_u16(&frame);
                }
                Ok(())
            })
            .expect("decodes");
        }
        sum
    });
    let read_array = best_median(|check| {
        let mut sum = 0;
        for s in &sources {
            let a = s.file.reader().dataset(DATA).and_then(|d| d.read_array::<u16>()).expect("read_array");
            if check {
                sum += a.iter().map(|&v| u64::from(v)).sum::<u64>();
            }
        }
        sum
    });
    let disk = best_median(|check| {
        let mut sum = 0;
        for s in &sources {
            let f = H5File::open_path(&s.path).expect("opens");
            let ds = open_raw(&f, DATA).expect("dataset");
            ds.read_chunks(&f, 0..ds.n_chunks(), |i, loc, b| {
                ds.decode_chunk_into(i, loc, b, &mut frame, &mut scratch)?;
                if check {
                    sum += sum_u16(&frame);
                }
                Ok(())
            })
            .expect("decodes");
        }
        sum
    });
    for (what, r) in [("read_chunks", &via_chunks), ("read_array", &read_array), ("disk", &disk)] {
        assert_eq!(r.2, raw.2, "{what}: pixel sum differs from the raw decode's");
    }

    let files: Vec<String> = sources.iter().map(|s| s.path.display().to_string()).collect();
    let py = peer(&files);
    let peer_s = |key: &str| py.as_ref().and_then(|p| Some((p[key]["best"].as_f64()?, p[key]["median"].as_f64()?)));
    let (py_ds, py_direct) = (peer_s("ds"), peer_s("direct_chunk"));
    if let Some(p) = &py {
        let ok = p["sum"].as_u64() == Some(raw.2);
        println!("h5py {} + hdf5plugin {}: pixel sum {}", p["h5py"], p["hdf5plugin"], if ok { "agrees" } else { "DIFFERS" });
    }

    let gbs = |s: f64| decoded as f64 / s / 1e9;
    println!(
        "dev_medium: {} files, {frames} frames of {frame_bytes} B, {:.1} MB stored → {:.1} MB decoded; one thread, best/median of {REPS}",
        sources.len(),
        compressed as f64 / 1e6,
        decoded as f64 / 1e6
    );
    println!("{:<34} | {:>8} {:>8} | {:>9}", "path", "best GB/s", "median", "vs h5py ds[...]");
    let row = |name: &str, t: Option<(f64, f64)>| {
        let cell = |v: Option<f64>| v.map_or("-".to_owned(), |s| format!("{:.3}", gbs(s)));
        let ratio = match (t, py_ds) {
            (Some((b, _)), Some((p, _))) => format!("{:.1}x", p / b),
            _ => "-".to_owned(),
        };
        println!("{name:<34} | {:>9} {:>8} | {ratio:>9}", cell(t.map(|t| t.0)), cell(t.map(|t| t.1)));
    };
    row("ours raw decode (memory)", Some((raw.0, raw.1)));
    row("ours read_chunks + decode (memory)", Some((via_chunks.0, via_chunks.1)));
    row("ours hdf5-reader read_array", Some((read_array.0, read_array.1)));
    row("ours read + decode (disk)", Some((disk.0, disk.1)));
    row("h5py ds[...] + hdf5plugin (disk)", py_ds);
    row("h5py read_direct_chunk + bitshuffle", py_direct);
    let goal = if gbs(raw.0) >= 1.0 { "met" } else { "NOT met" };
    println!("raw decode: {:.3} GB/s per core (goal ≥ 1 GB/s: {goal})", gbs(raw.0));
    let json = |t: Option<(f64, f64)>| t.map_or(serde_json::Value::Null, |t| gbs(t.0).into());
    println!(
        "{}",
        serde_json::json!({ "stem_decode_gbs": {
            "raw": json(Some((raw.0, raw.1))),
            "read_chunks": json(Some((via_chunks.0, via_chunks.1))), "read_array": json(Some((read_array.0, read_array.1))),
            "disk": json(Some((disk.0, disk.1))), "h5py_ds": json(py_ds), "h5py_direct_chunk": json(py_direct),
        }})
    );
}
