//! `scatterlab h5 ls` on the STEM fixtures: the indented tree with external links (and a
//! missing one flagged), dataset shapes, types, chunking and filters, attributes, and JSON.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;
use std::process::Command;

fn fixtures() -> PathBuf {
    let d = scatterlab_testkit::fixture("stem");
    assert!(d.join("dev_small_master.h5").is_file(), "STEM fixtures missing at {}", d.display());
    d
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(args).output().expect("run scatterlab");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn lists_a_master_with_its_external_links() {
    let master = fixtures().join("dev_small_latest_master.h5");
    let (ok, out, err) = run(&["h5", "ls", master.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.starts_with("dev_small_latest_master.h5 (HDF5, superblock v3)\n/  group (compact)\n  entry/\n    data/\n"), "{out}");
    assert!(out.contains("      data_000002 -> dev_small_latest_data_000002.h5:/entry/data/data  (external link)\n"), "{out}");
    assert!(!out.contains("MISSING"), "{out}");
    assert!(out.contains("          pixel_mask  (64, 64) u32  contiguous 16384 B\n"), "{out}");
    assert_eq!(out.lines().count(), 35, "{out}");
}

#[test]
fn lists_a_data_file_with_filters_and_attributes() {
    let data = fixtures().join("dev_small_gzip_data_000003.h5");
    let (ok, out, err) = run(&["h5", "ls", "--attrs", data.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("      data  (56, 64, 64) u16  chunked (1, 64, 64) b_tree_v1  filters: shuffle (2), deflate (1)\n"), "{out}");
    assert!(out.contains("          @image_nr_low = 201  (u64)\n"), "{out}");
    assert!(out.contains("          @image_nr_high = 256  (u64)\n"), "{out}");
}

#[test]
fn flags_a_missing_link_target_and_prints_json() {
    let dir = std::env::temp_dir().join(format!("scatterlab-cli-h5ls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let master = dir.join("dev_small_master.h5");
    std::fs::copy(fixtures().join("dev_small_master.h5"), &master).unwrap();
    std::fs::copy(fixtures().join("dev_small_data_000001.h5"), dir.join("dev_small_data_000001.h5")).unwrap();
    let (ok, out, err) = run(&["h5", "ls", master.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(out.contains("data_000003 -> dev_small_data_000003.h5:/entry/data/data  (external link)  [MISSING]"), "{out}");
    assert!(!out.contains("data_000001.h5:/entry/data/data  (external link)  [MISSING]"), "{out}");
    let (ok, json, err) = run(&["h5", "ls", "--json", master.to_str().unwrap()]);
    assert!(ok, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    let link = nodes.iter().find(|n| n["path"] == "/entry/data/data_000002").unwrap();
    assert_eq!(link["kind"]["type"], "external_link");
    assert_eq!(link["kind"]["resolved"], false);
    assert_eq!(nodes.iter().find(|n| n["path"] == "/entry/data/data_000001").unwrap()["kind"]["resolved"], true);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_non_hdf5_file_is_a_named_error() {
    let (ok, _, err) = run(&["h5", "ls", fixtures().join("README.md").to_str().unwrap()]);
    assert!(!ok);
    assert!(err.contains("README.md") && err.contains("cannot open as HDF5"), "{err}");
}
