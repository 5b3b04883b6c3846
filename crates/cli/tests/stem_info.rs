//! `scatterlab stem info` on the STEM fixtures: shapes, dtype, chunking, filters, calibration
//! (or "not in file"), mask count, data files with frame ranges, and a missing data file
//! (exit 0, non-zero with --strict).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;
use std::process::Command;

fn fixtures() -> PathBuf {
    let d = scatterlab_testkit::fixture("stem");
    assert!(d.join("dev_small_master.h5").is_file(), "STEM fixtures missing at {}", d.display());
    d
}

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(args).output().expect("run scatterlab");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn summarises_a_complete_acquisition() {
    let master = fixtures().join("dev_medium_master.h5");
    let (code, out, err) = run(&["stem", "info", master.to_str().unwrap(), "--strict"]);
    assert_eq!(code, Some(0), "{err}");
    for line in [
        "master: dev_medium_master.h5 (Dectris master, 4 data files)",
        "frames: 16384 of 96 × 96 u16 (shape [16384, 96, 96])",
        "scan: 128 × 128 (from /entry/data@scan_shape)",
        "storage: chunked [1, 96, 96] (BTreeV1 index)",
        "filters: bitshuffle (32008)",
        "  voltage: 300 kV",
        "  convergence semi-angle: 20 mrad",
        "  scan step: 0.24 Å",
        "  beam centre: (48.4, 47.7) px (row, col)",
        "mask: 9 bad pixels of 9216 (non-zero pixel_mask; zeroed by default)",
        "  data_000001  dev_medium_data_000001.h5  frames 0..5000  4892604 bytes",
        "  data_000004  dev_medium_data_000004.h5  frames 15000..16384  1365334 bytes",
        "missing: none",
    ] {
        assert!(out.lines().any(|l| l == line), "no line {line:?} in\n{out}");
    }
}

#[test]
fn says_not_in_file_for_absent_calibration() {
    let (code, out, err) = run(&["stem", "info", fixtures().join("dev_small_single.h5").to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("master: dev_small_single.h5 (single file)\n"), "{out}");
    assert!(out.contains("storage: contiguous\nfilters: none\n"), "{out}");
    assert!(out.contains("  wavelength: not in file\n  voltage: not in file\n"), "{out}");
    assert!(out.contains("mask: 5 bad pixels of 4096"), "{out}");
}

#[test]
fn names_a_missing_data_file() {
    let dir = std::env::temp_dir().join(format!("scatterlab-cli-steminfo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["dev_oddtail_master.h5", "dev_oddtail_data_000001.h5", "dev_oddtail_data_000003.h5"] {
        std::fs::copy(fixtures().join(f), dir.join(f)).unwrap();
    }
    let master = dir.join("dev_oddtail_master.h5");
    let (code, out, err) = run(&["stem", "info", master.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("  data_000002  dev_oddtail_data_000002.h5  frames 8..16  MISSING\n"), "{out}");
    assert!(out.contains("missing: dev_oddtail_data_000002.h5 (link data_000002, frames 8..16)\n"), "{out}");
    assert!(out.contains("frames: 20 of 61 × 67 u16"), "{out}");
    let (code, _, err) = run(&["stem", "info", master.to_str().unwrap(), "--strict"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--strict: missing data files: dev_oddtail_data_000002.h5"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_master_is_a_named_error() {
    let (code, _, err) = run(&["stem", "info", fixtures().join("nothing_master.h5").to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(err.contains("missing file nothing_master.h5"), "{err}");
}

#[test]
fn one_detector_sampling_rule_with_its_source() {
    // dev_small: α = 20 mrad over the measured BF disc (all 256 frames sampled, as `stem reduce`
    // measures it: radius 9.4575 px → 2.1147 mrad/px; the simulation's 2.1053 used the nominal
    // 9.5 px); the file's pixel size / distance says 1 mrad/px, which is named as disagreeing.
    let (code, out, err) = run(&["stem", "info", fixtures().join("dev_small_master.h5").to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let line = out.lines().find(|l| l.starts_with("  detector sampling: ")).unwrap_or_default();
    assert!(line.starts_with("  detector sampling: 2.114") && line.contains("convergence semi-angle 20 mrad / BF disc radius 9.457") && line.contains("256 frames"), "{line}");
    assert!(out.contains("warning: detector sampling: the file's geometry (pixel size / detector distance) gives 1.0000 mrad/px"), "{out}");
}

#[test]
fn scan_shape_from_the_command_line() {
    // The single file has no scan shape of its own; --scan gives it, and a bad one is named.
    let single = fixtures().join("dev_small_single.h5");
    let (code, out, err) = run(&["stem", "info", single.to_str().unwrap(), "--scan", "16,16"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("scan: 16 × 16 (from hint)"), "{out}");
    let (code, _, err) = run(&["stem", "info", single.to_str().unwrap(), "--scan", "16x16"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--scan: expected ROWS,COLS"), "{err}");
}

#[test]
fn counts_missing_frames() {
    let dir = std::env::temp_dir().join(format!("scatterlab-cli-steminfo-count-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["dev_small_master.h5", "dev_small_data_000001.h5"] {
        std::fs::copy(fixtures().join(f), dir.join(f)).unwrap();
    }
    let (code, out, err) = run(&["stem", "info", dir.join("dev_small_master.h5").to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("frames missing: 156 of 256\n"), "{out}");
    assert!(out.contains("missing: dev_small_data_000002.h5 (link data_000002, frames 100..200)\n"), "{out}");
    assert!(out.contains("missing: dev_small_data_000003.h5 (link data_000003, frames 200..256)\n"), "{out}");
    assert!(err.contains("156 of 256 frames missing (dev_small_data_000002.h5, dev_small_data_000003.h5)"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
