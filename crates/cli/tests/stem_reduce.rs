//! `scatterlab stem reduce` on the fixtures: with the fixture's geometry every integer product
//! equals `<prefix>_reference.h5` exactly and the centre of mass within 1e-4 px; the physical iDPC
//! correlates with the true phase; the manifest carries the rotation (≤ 0.05° of the fine
//! reference, modulo 180°), the geometry and the sources' hashes; with no geometry the auto probe
//! is used; a GPU request and a bad argument are named errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;
use std::process::Command;

use scatterlab_hdf5::values::dataset_numbers;
use scatterlab_hdf5::{tree, H5File, NodeKind, TreeOptions};
use serde_json::Value;

fn dir() -> PathBuf {
    let d = scatterlab_testkit::fixture("stem");
    assert!(d.join("dev_small_master.h5").is_file(), "STEM fixtures missing at {}", d.display());
    d
}

fn reference(prefix: &str, name: &str) -> Vec<f64> {
    let f = H5File::open_path(dir().join(format!("{prefix}_reference.h5"))).unwrap();
    let t = tree(&f, &TreeOptions { attrs: false, ..Default::default() });
    let node = t.nodes.iter().find(|n| n.path.rsplit('/').next() == Some(name) && matches!(n.kind, NodeKind::Dataset(_))).unwrap();
    dataset_numbers(&f, &node.path).unwrap()
}

/// Reads a `.npy` written by the CLI (`<u8` or `<f8`, C order) as f64 with its shape.
fn npy(path: &std::path::Path) -> (Vec<usize>, Vec<f64>) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
    assert_eq!((10 + hlen) % 64, 0, "header padded to 64 bytes");
    let shape_text = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape: Vec<usize> = shape_text.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
    let data = &b[10 + hlen..];
    let values = data
        .chunks_exact(8)
        .map(|c| {
            let a: [u8; 8] = c.try_into().unwrap();
            if header.contains("'<u8'") {
                u64::from_le_bytes(a) as f64
            } else {
                f64::from_le_bytes(a)
            }
        })
        .collect();
    (shape, values)
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(args).output().unwrap()
}

fn corr(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let ab: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let aa: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let bb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    ab / (aa * bb).sqrt()
}

#[test]
fn products_match_the_reference() {
    let out = std::env::temp_dir().join(format!("scatterlab-stem-reduce-{}", std::process::id()));
    let master = dir().join("dev_small_master.h5");
    let o = run(&["stem", "reduce", master.to_str().unwrap(), "--center", "32.3,31.6", "--bf", "9.5", "--adf", "11,24", "--bin", "3", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for name in ["sum_dp", "max_dp", "total", "bf", "abf", "adf", "df", "bin3_sum_dp"] {
        let (shape, v) = npy(&out.join(format!("{name}.npy")));
        assert_eq!(v, reference("dev_small", name), "{name}");
        assert!(shape.iter().product::<usize>() == v.len() && shape.len() == 2, "{name} shape {shape:?}");
    }
    assert_eq!(npy(&out.join("bin3_sum_dp.npy")).0, vec![22, 22]);
    for name in ["com_row_raw", "com_col_raw", "com_row", "com_col"] {
        let (_, v) = npy(&out.join(format!("{name}.npy")));
        let e = v.iter().zip(reference("dev_small", name)).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(e <= 1e-4, "{name}: {e:e} px");
    }
    let (shape, idpc) = npy(&out.join("idpc.npy"));
    assert_eq!(shape, vec![16, 16]);
    let r = corr(&idpc, &reference("dev_small", "phase_truth_rad"));
    println!("idpc r(truth) = {r:.3}");
    assert!(r >= 0.7);
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let rot = m["rotation_deg"].as_f64().unwrap();
    assert!((rot.rem_euclid(180.0) - 168.38).abs() <= 0.05, "rotation {rot}");
    assert_eq!(m["use_transpose"], Value::Bool(false));
    assert_eq!(m["reduction"]["auto_probe"], Value::Bool(false));
    assert_eq!(m["provenance"]["sources"][0]["sha256"].as_str().or(m["provenance"]["sources"][0]["hash"].as_str()).map(str::len), Some(64));
    assert_eq!(m["provenance"]["source_shape"], serde_json::json!([16, 16, 64, 64]));
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn the_gpu_gives_the_same_products() {
    if scatterlab_testkit::skip_gpu("stem reduce --device gpu") {
        return;
    }
    let base = std::env::temp_dir().join(format!("scatterlab-stem-reduce-dev-{}", std::process::id()));
    let master = dir().join("dev_small_master.h5");
    for device in ["cpu", "gpu"] {
        let o = run(&["stem", "reduce", master.to_str().unwrap(), "--bin", "3", "--device", device, "--out", base.join(device).to_str().unwrap()]);
        assert!(o.status.success(), "{device}: {}", String::from_utf8_lossy(&o.stderr));
    }
    for name in ["sum_dp", "max_dp", "total", "bf", "abf", "adf", "df", "bin3_sum_dp", "com_row_raw", "com_col_raw", "com_row", "com_col", "idpc", "dpc_row_aligned"] {
        let (c, g) = (npy(&base.join("cpu").join(format!("{name}.npy"))), npy(&base.join("gpu").join(format!("{name}.npy"))));
        assert_eq!(c, g, "{name}: GPU and CPU differ");
    }
    let m: Value = serde_json::from_str(&std::fs::read_to_string(base.join("gpu/manifest.json")).unwrap()).unwrap();
    assert!(m["reduction"]["device"].as_str().unwrap().starts_with("gpu "), "{}", m["reduction"]["device"]);
    std::fs::remove_dir_all(&base).ok();
}

#[test]
fn defaults_and_errors() {
    let out = std::env::temp_dir().join(format!("scatterlab-stem-reduce-auto-{}", std::process::id()));
    let master = dir().join("dev_medium_master.h5");
    let o = run(&["stem", "reduce", master.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["reduction"]["auto_probe"], Value::Bool(true));
    let c = &m["reduction"]["center_row_col"];
    assert!((c[0].as_f64().unwrap() - 48.4722).abs() < 1e-3 && (c[1].as_f64().unwrap() - 47.7607).abs() < 1e-3, "{c}");
    let r = corr(&npy(&out.join("idpc.npy")).1, &reference("dev_medium", "phase_truth_rad"));
    assert!(r >= 0.7, "auto-probe iDPC r = {r}");
    std::fs::remove_dir_all(&out).ok();
    let small = dir().join("dev_small_master.h5");
    let o = run(&["stem", "reduce", small.to_str().unwrap(), "--center", "32,x", "--out", out.to_str().unwrap()]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--center"));
    assert!(!out.exists(), "nothing written on errors");
}

#[test]
fn radii_in_mrad() {
    let out = std::env::temp_dir().join(format!("scatterlab-stem-reduce-mrad-{}", std::process::id()));
    let small = dir().join("dev_small_master.h5");
    // dev_small: α = 20 mrad, so BF 20 mrad is the measured disc and ADF 40–80 mrad is 2–4 × its radius.
    let o = run(&["stem", "reduce", small.to_str().unwrap(), "--bf", "20", "--adf", "40,80", "--mrad", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let (r, s) = (m["reduction"]["bf_radius_px"].as_f64().unwrap(), m["reduction"]["sampling_mrad_per_px"].as_f64().unwrap());
    assert!((r * s - 20.0).abs() < 1e-9 && (r - 9.4575).abs() < 1e-3, "BF {r} px at {s} mrad/px");
    assert!((m["reduction"]["adf_px"][1].as_f64().unwrap() - 4.0 * r).abs() < 1e-9);
    std::fs::remove_dir_all(&out).ok();
}

#[test]
fn allow_missing_reduces_the_frames_present() {
    let tmp = std::env::temp_dir().join(format!("scatterlab-stem-reduce-missing-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for f in ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5"] {
        std::fs::copy(dir().join(f), tmp.join(f)).unwrap();
    }
    let master = tmp.join("dev_small_master.h5");
    let out = tmp.join("out");
    let o = run(&["stem", "reduce", master.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("56 of 256 frames missing (dev_small_data_000003.h5)") && err.contains("--allow-missing"), "{err}");
    let o = run(&["stem", "reduce", master.to_str().unwrap(), "--allow-missing", "--out", out.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && err.contains("56 of 256 frames missing"), "{err}");
    // present.npy: bool, scan shape, true for frames 0..200.
    let b = std::fs::read(out.join("present.npy")).unwrap();
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
    assert!(header.contains("'descr': '|b1'") && header.contains("'shape': (16, 16)"), "{header}");
    let present: Vec<bool> = b[10 + hlen..].iter().map(|&v| v == 1).collect();
    assert_eq!(present, (0..256).map(|i| i < 200).collect::<Vec<_>>());
    let (_, com) = npy(&out.join("com_row.npy"));
    let (_, bf) = npy(&out.join("bf.npy"));
    for i in 0..256 {
        assert_eq!(com[i].is_nan(), i >= 200, "com_row[{i}] = {}", com[i]);
        assert!(i < 200 || bf[i] == 0.0, "bf[{i}]");
    }
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(m["reduction"]["frames_missing"], 56);
    assert_eq!(m["reduction"]["missing_files"][0], "dev_small_data_000003.h5");
    assert_eq!(m["reduction"]["detector_sampling"]["source"], "semi_angle_over_disc");
    let o = run(&["stem", "reduce", master.to_str().unwrap(), "--bin", "0", "--out", out.to_str().unwrap()]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--bin"));
    std::fs::remove_dir_all(&tmp).ok();
}
