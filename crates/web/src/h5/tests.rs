//! Native unit tests of the session logic behind `H5Session` (the worker test in
//! `tests/worker_storage.rs` runs the same over `BlobStorage` in a browser).

use super::*;
use scatterlab_hdf5::storage::open_native;
use scatterlab_stem::load::MaskPolicy;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/stem/");

fn session(names: &[&str]) -> H5Core {
    let files = names.iter().map(|n| (n.to_string(), open_native(format!("{DIR}{n}")).unwrap())).collect();
    H5Core::new(files).unwrap()
}

const SMALL: [&str; 4] = ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"];

#[test]
fn info_frames_and_stream_agree() {
    let mut s = session(&SMALL);
    assert_eq!(s.names().len(), 4);
    let info = s.stem_info("dev_small_master.h5").unwrap();
    assert_eq!((info.frames, info.det_shape, info.dtype, info.scan_shape), (256, [64, 64], "u16", Some([16, 16])));
    assert_eq!(info.chunks, Some(vec![1, 64, 64]));
    assert_eq!(info.filters.iter().map(|f| (f.id, f.supported)).collect::<Vec<_>>(), vec![(32008, true)]);
    assert_eq!(info.mask_bad_pixels, Some(5));
    assert!(info.complete && info.missing.is_empty());
    assert_eq!(info.data_files.iter().map(|d| d.n_frames).collect::<Vec<_>>(), vec![100, 100, 56]);
    let json = serde_json::to_value(&info).unwrap();
    assert!((json["calibration"]["voltage_kv"].as_f64().unwrap() - 300.0).abs() < 1e-9, "{json}");

    // All frames at once, and streamed in batches of 50: the same per-pixel sums.
    let all = s.read_frames(0, 256, MaskPolicy::ZeroMasked).unwrap().to_u64();
    assert_eq!(all.len(), 256 * 64 * 64);
    let total: u64 = all.iter().sum();
    assert_eq!(s.stream_start(MaskPolicy::ZeroMasked).unwrap(), 256);
    let (mut streamed, mut steps) = (0u64, Vec::new());
    loop {
        let step = s.stream_next(50).unwrap();
        let Some(b) = step.batch else {
            assert_eq!(step.frames_done, 256);
            break;
        };
        streamed += b.data.to_u64().iter().sum::<u64>();
        steps.push((b.first_frame, b.n, step.frames_done));
    }
    assert_eq!(streamed, total);
    assert_eq!(steps.first(), Some(&(0, 50, 50)));
    assert_eq!(steps.len(), 6, "100 + 100 + 56 frames in batches of ≤ 50 per file: {steps:?}");
    assert_eq!(steps[5], (250, 6, 256));
    // Keep leaves the dead pixels' 65535 in: 3 dead pixels × 256 frames more than zeroed (at least).
    let kept: u64 = s.read_frames(0, 256, MaskPolicy::Keep).unwrap().to_u64().iter().sum();
    assert!(kept >= total + 3 * 256 * 65535, "{kept} vs {total}");
}

#[test]
fn errors_name_the_file() {
    let mut s = session(&SMALL[..3]);
    let info = s.stem_info("dev_small_master.h5").unwrap();
    assert!(!info.complete);
    assert_eq!(info.missing.iter().map(|m| m.file.as_str()).collect::<Vec<_>>(), vec!["dev_small_data_000003.h5"]);
    assert_eq!(s.read_frames(199, 1, MaskPolicy::ZeroMasked).unwrap().len(), 64 * 64);
    let e = s.read_frames(199, 2, MaskPolicy::ZeroMasked).err().unwrap();
    assert!(e.contains("dev_small_data_000003.h5"), "{e}");
    let e = s.tree_json("nope.h5").err().unwrap();
    assert!(e.contains("nope.h5") && e.contains("dev_small_master.h5"), "{e}");
    assert!(s.stem_info("nope.h5").err().unwrap().contains("nope.h5"));
    assert!(s.stream_next(1).err().unwrap().contains("no stream running"));
    let e = s.read_frames(0, 100_000, MaskPolicy::ZeroMasked).err().unwrap();
    assert!(e.contains("limit"), "{e}");
    assert!(parse_mask(Some("drop")).err().unwrap().contains("\"drop\""));
    assert!(H5Core::new(Vec::new()).is_err());
}

#[test]
fn tree_marks_links_resolved_against_the_set() {
    let s = session(&SMALL[..3]);
    let json: serde_json::Value = serde_json::from_str(&s.tree_json("dev_small_master.h5").unwrap()).unwrap();
    let nodes = json["nodes"].as_array().unwrap();
    let link = |k: &str| nodes.iter().find(|n| n["path"] == format!("/entry/data/data_00000{k}")).unwrap()["kind"].clone();
    assert_eq!(link("1")["type"], "external_link");
    assert_eq!(link("1")["resolved"], true);
    assert_eq!(link("3")["file"], "dev_small_data_000003.h5");
    assert_eq!(link("3")["resolved"], false);
}

/// The counts tests/e2e/h5.html expects through the real worker (keep the two in step): dev_small
/// sum of every frame with bad pixels zeroed, without (Keep), frame 0 zeroed; dev_oddtail zeroed.
const E2E_SMALL: [u64; 3] = [771_154, 53_663_293, 2_952];
const E2E_ODDTAIL: u64 = 60_088;

/// The reference dataset `name` of `<prefix>_reference.h5`, summed.
fn reference_sum(prefix: &str, name: &str) -> (u64, Vec<u64>) {
    use scatterlab_hdf5::{tree, H5File, NodeKind, TreeOptions};
    let f = H5File::open_path(format!("{DIR}{prefix}_reference.h5")).unwrap();
    let t = tree(&f, &TreeOptions { attrs: false, ..Default::default() });
    let node = t.nodes.iter().find(|n| n.path.rsplit('/').next() == Some(name) && matches!(n.kind, NodeKind::Dataset(_))).unwrap();
    let v: Vec<u64> = scatterlab_hdf5::values::dataset_numbers(&f, &node.path).unwrap().into_iter().map(|x| x as u64).collect();
    (v.iter().sum(), v)
}

#[test]
fn e2e_constants() {
    let (masked, per_frame) = reference_sum("dev_small", "total");
    let (raw, _) = reference_sum("dev_small", "sum_dp_raw");
    let (odd, _) = reference_sum("dev_oddtail", "total");
    let got = ([masked, raw, per_frame.first().copied().unwrap_or(0)], odd);
    assert_eq!(got, (E2E_SMALL, E2E_ODDTAIL), "tests/e2e/h5.html's constants must equal the reference sums");
    // And the session reads the same.
    let mut s = session(&SMALL);
    s.stem_info("dev_small_master.h5").unwrap();
    let keep: u64 = s.read_frames(0, 256, MaskPolicy::Keep).unwrap().to_u64().iter().sum();
    assert_eq!(keep, raw);
}
