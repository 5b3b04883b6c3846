//! Replays every committed seed and regression input (`fuzz/seeds/<target>/*`) through its target on
//! stable, as CI's smoke of the fuzz targets; `cargo +nightly fuzz run` explores beyond them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::Path;

#[test]
fn every_seed_and_regression_runs_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let mut total = 0;
    for (name, target) in scatterlab_fuzz_targets::TARGETS {
        let dir = root.join(name);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut count = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            target(&bytes);
            // Truncations and a flipped byte of each seed too: the cheapest mutations.
            for cut in [bytes.len() / 3, bytes.len() / 2, bytes.len().saturating_sub(1)] {
                target(&bytes[..cut]);
            }
            let mut flipped = bytes.clone();
            if let Some(b) = flipped.get_mut(bytes.len() / 2) {
                *b ^= 0x55;
            }
            target(&flipped);
            count += 1;
        }
        assert!(count > 0, "{name}: no seed in {}", dir.display());
        total += count;
    }
    println!("{total} seeds replayed");
}
