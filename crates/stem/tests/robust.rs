//! Robustness of the acquisition loader: one file of an acquisition (the master, or one data
//! file) is replaced by a damaged copy in a `MapFileSet`, then `Acquisition::open` and frame
//! reads (first, a random one, last) run. Nothing may panic; every failure must be a
//! `LoadError` naming a file of the set.
//!
//! Seeded and time-bounded (about 6 s in a debug build); the seed is printed and
//! `SCATTERLAB_SEED=S` replays a run (`SCATTERLAB_CASE=N` one case with the normal panic hook,
//! `SCATTERLAB_ROBUST_SECS=N` soaks longer). The file-level twin is `crates/hdf5/tests/robust.rs`,
//! whose mutation helper this test shares.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

#[path = "../../hdf5/tests/common/mutate.rs"]
mod mutate;

use std::time::Instant;

use mutate::{budget, case_rng, mutate, no_panic, quiet_panics, run_seed, Counts};
use rand::Rng;
use scatterlab_hdf5::storage::{bytes, DynStorage};
use scatterlab_stem::load::{Acquisition, Hints, LoadError, MapFileSet, ReadOptions};

/// The acquisitions: every dev_small variant, oddtail, and the single-file layout.
const SETS: [(&str, usize); 9] = [
    ("dev_small", 3),
    ("dev_small_raw", 3),
    ("dev_small_gzip", 3),
    ("dev_small_lz4", 3),
    ("dev_small_lz4blk", 3),
    ("dev_small_latest", 3),
    ("dev_small_u32", 3),
    ("dev_oddtail", 3),
    ("single", 0),
];

/// An acquisition's files as (name, bytes), the master first.
type Files = Vec<(String, Vec<u8>)>;

/// One acquisition's files.
fn files(prefix: &str, n_data: usize) -> Files {
    let dir = scatterlab_testkit::fixture("stem");
    let names: Vec<String> = if n_data == 0 {
        vec!["dev_small_single.h5".into()]
    } else {
        std::iter::once(format!("{prefix}_master.h5")).chain((1..=n_data).map(|k| format!("{prefix}_data_{k:06}.h5"))).collect()
    };
    names
        .into_iter()
        .map(|n| {
            let data = std::fs::read(dir.join(&n)).unwrap_or_else(|e| panic!("fixture {n} unreadable ({e}): the STEM fixtures must be at {}", dir.display()));
            (n, data)
        })
        .collect()
}

/// Counts a step; an error that names none of the acquisition's files is a violation.
fn tally<T>(names: &[String], c: &mut Counts, r: Result<T, LoadError>) -> Result<Option<T>, String> {
    match r {
        Ok(v) => {
            c.ok += 1;
            Ok(Some(v))
        }
        Err(e) => {
            let msg = e.to_string();
            if names.iter().any(|n| msg.contains(n.as_str())) {
                c.typed += 1;
                Ok(None)
            } else {
                Err(format!("error names no file: {msg}"))
            }
        }
    }
}

/// Opens the acquisition and reads its first, a random and its last frame.
fn exercise(fs: &MapFileSet, names: &[String], pick: f64, c: &mut Counts) -> Result<(), String> {
    let Some(acq) = tally(names, c, Acquisition::open(fs, &names[0], &Hints::default()))? else { return Ok(()) };
    let n = acq.n_frames();
    if n == 0 {
        return Ok(());
    }
    for f in [0, ((n - 1) as f64 * pick) as u64, n - 1] {
        tally(names, c, acq.frame_at(f, &ReadOptions::default()))?;
    }
    Ok(())
}

#[test]
fn damaged_acquisition_files_never_panic_and_fail_with_errors_naming_a_file() {
    let seed = run_seed();
    let budget = budget(6);
    println!("robust (stem): seed {seed}, budget {budget:?}; replay with SCATTERLAB_SEED={seed}");
    let sets: Vec<(Files, Vec<DynStorage>)> = SETS
        .iter()
        .map(|&(p, n)| {
            let f = files(p, n);
            let st = f.iter().map(|(_, d)| bytes(d.clone())).collect();
            (f, st)
        })
        .collect();
    for (f, st) in &sets {
        let mut fs = MapFileSet::new();
        for ((name, _), s) in f.iter().zip(st) {
            fs.insert(name.clone(), s.clone());
        }
        let names: Vec<String> = f.iter().map(|(n, _)| n.clone()).collect();
        let mut c = Counts::default();
        exercise(&fs, &names, 0.5, &mut c).unwrap();
        assert_eq!((c.ok, c.typed), (4, 0), "{}: undamaged acquisition fails", names[0]);
    }
    let only: Option<u64> = std::env::var("SCATTERLAB_CASE").ok().and_then(|v| v.trim().parse().ok());
    if only.is_none() {
        quiet_panics();
    }
    let (mut master, mut data) = (Counts::default(), Counts::default());
    let mut failures = Vec::new();
    let start = Instant::now();
    let mut case = 0u64;
    while only.map_or(start.elapsed() < budget, |n| case <= n) {
        if only.is_some_and(|n| n != case) {
            case += 1;
            continue;
        }
        let mut rng = case_rng(seed, case);
        let (f, st) = &sets[rng.gen_range(0..sets.len())];
        // The master (or single file) half the time: it holds all the metadata.
        let victim = if rng.gen_bool(0.5) { 0 } else { rng.gen_range(0..f.len()) };
        let (damaged, what) = mutate(&f[victim].1, &mut rng);
        let mut fs = MapFileSet::new();
        for (i, ((name, _), s)) in f.iter().zip(st).enumerate() {
            fs.insert(name.clone(), if i == victim { bytes(damaged.clone()) } else { s.clone() });
        }
        let names: Vec<String> = f.iter().map(|(n, _)| n.clone()).collect();
        let counts = if victim == 0 { &mut master } else { &mut data };
        counts.cases += 1;
        let pick = rng.gen::<f64>();
        match no_panic(|| exercise(&fs, &names, pick, counts)) {
            Ok(Ok(())) => {}
            Ok(Err(v)) => failures.push(format!("seed {seed} case {case} {} ({what}): {v}", f[victim].0)),
            Err(p) => failures.push(format!("seed {seed} case {case} {} ({what}): PANIC {p}", f[victim].0)),
        }
        case += 1;
    }
    let _ = std::panic::take_hook();
    for (kind, c) in [("master", &master), ("data", &data)] {
        println!("robust (stem): {kind:6} damaged: {:5} cases, {:6} steps ok, {:5} typed errors", c.cases, c.ok, c.typed);
    }
    println!("robust (stem): {case} cases in {:.1} s, {} failures", start.elapsed().as_secs_f64(), failures.len());
    assert!(failures.is_empty(), "{} failures (seed {seed}):\n{}", failures.len(), failures.iter().take(20).cloned().collect::<Vec<_>>().join("\n"));
    assert!(case >= 50 || only.is_some(), "only {case} cases ran in {budget:?}");
}
