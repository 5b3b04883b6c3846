//! `scatterlab stem ssb` on the fixtures: with `dev_small`'s true geometry the phase equals the
//! reference's `ssb_phase` (< 1e-3 rad, the fixtures README's tolerance), `ssb_object.npy` is
//! complex128 (`<c16`) with amplitude and phase consistent with it, and the manifest records the
//! aberrations (`fitted: false`), rotation, sampling rule and sources; `dev_medium` with its
//! aberrations and the DPC rotation; `--fit` on `dev_small` (unaberrated) from a 2 nm start finds
//! |C10| < 1 nm and writes `fitted: true` with the loss curve; NaN parameters are named errors;
//! `--device gpu` writes a complex64 (`<c8`) object whose phase equals the reference's (< 1e-3
//! rad) and names the adapter in the manifest, and without an adapter it fails (no CPU run).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::{Path, PathBuf};
use std::process::Command;

use scatterlab_hdf5::values::dataset_numbers;
use scatterlab_hdf5::H5File;
use serde_json::Value;

fn dir() -> PathBuf {
    let d = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/stem/"));
    assert!(d.join("dev_small_master.h5").is_file(), "STEM fixtures missing at {}", d.display());
    d
}

fn reference(prefix: &str, name: &str) -> Vec<f64> {
    let f = H5File::open_path(dir().join(format!("{prefix}_reference.h5"))).unwrap();
    dataset_numbers(&f, &format!("/{name}")).unwrap()
}

/// A `.npy` written by the CLI: its `descr`, shape and little-endian f64 words (complex128 gives
/// re, im pairs).
fn npy(path: &Path) -> (String, Vec<usize>, Vec<f64>) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
    assert_eq!((10 + hlen) % 64, 0, "header padded to 64 bytes");
    let descr = header.split("'descr': '").nth(1).unwrap().split('\'').next().unwrap().to_owned();
    let shape_text = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape_text.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
    let values = b[10 + hlen..].chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
    (descr, shape, values)
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(args).output().unwrap()
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("scatterlab-stem-ssb-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Wrapped phase difference.
fn dphi(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::TAU);
    d.min(std::f64::consts::TAU - d)
}

#[test]
fn ssb_of_dev_small_matches_the_reference_phase() {
    let out = out_dir("small");
    let master = dir().join("dev_small_master.h5");
    let o = run(&[
        "stem",
        "ssb",
        master.to_str().unwrap(),
        "--center",
        "32.3,31.6",
        "--bf",
        "9.5",
        "--rotation-deg",
        "12",
        "--dk",
        "0.10693406155495676",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (descr, shape, object) = npy(&out.join("ssb_object.npy"));
    assert_eq!((descr.as_str(), shape.as_slice(), object.len()), ("<c16", &[16usize, 16][..], 2 * 256));
    let (d, _, phase) = npy(&out.join("ssb_phase.npy"));
    let (_, _, amplitude) = npy(&out.join("ssb_amplitude.npy"));
    assert_eq!(d, "<f8");
    let want = reference("dev_small", "ssb_phase");
    let max_amp = amplitude.iter().cloned().fold(0.0, f64::max);
    let mut worst = 0.0f64;
    for i in 0..256 {
        let (re, im) = (object[2 * i], object[2 * i + 1]);
        assert!((re.hypot(im) - amplitude[i]).abs() <= 1e-12 * max_amp && dphi(im.atan2(re), phase[i]) < 1e-12);
        if amplitude[i] > 1e-3 * max_amp {
            worst = worst.max(dphi(phase[i], want[i]));
        }
    }
    println!("dev_small: ssb_phase max abs error {worst:.3e} rad");
    assert!(worst < 1e-3, "{worst}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let ab = &m["aberrations"];
    assert_eq!((ab["C10_nm"].as_f64(), ab["C12_nm"].as_f64(), ab["phi12_rad"].as_f64(), ab["fitted"].as_bool()), (Some(0.0), Some(0.0), Some(0.0), Some(false)), "{m}");
    assert_eq!(m["rotation_deg"].as_f64(), Some(12.0));
    assert_eq!(m["transposed"].as_bool(), Some(false));
    assert_eq!(m["ssb"]["bf_pixels"].as_u64(), Some(284));
    assert!(m["ssb"]["sampling_rule"].as_str().unwrap().starts_with("given"), "{m}");
    assert!(m["ssb"]["device"].as_str().unwrap().starts_with("cpu"));
    assert!(m["provenance"]["sources"].as_array().is_some_and(|s| s.len() == 4), "{}", m["provenance"]);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn ssb_of_dev_medium_with_aberrations_and_the_dpc_rotation() {
    let out = out_dir("medium");
    let master = dir().join("dev_medium_master.h5");
    let o =
        run(&["stem", "ssb", master.to_str().unwrap(), "--center", "48.4,47.7", "--bf", "12.2", "--C10", "3", "--C12", "0.6", "--phi12", "0.7", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let theta = m["rotation_deg"].as_f64().unwrap();
    assert!((theta + 27.0).abs() < 1.0, "θ {theta} (true −27)");
    assert!(m["ssb"]["rotation_source"].as_str().unwrap().starts_with("dpc"), "{m}");
    assert!(m["ssb"]["sampling_rule"].as_str().unwrap().contains("SemiAngleOverDisc"), "{m}");
    assert_eq!(m["aberrations"]["C10_nm"].as_f64(), Some(3.0));
    let (_, _, phase) = npy(&out.join("ssb_phase.npy"));
    let want = reference("dev_medium", "ssb_phase");
    let mean = phase.iter().zip(&want).map(|(a, b)| dphi(*a, *b)).sum::<f64>() / want.len() as f64;
    println!("dev_medium (DPC θ = {theta:.3}°): mean abs phase difference to the reference {mean:.3e} rad");
    assert!(mean < 0.01, "{mean}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_parameters_are_named_errors() {
    let master = dir().join("dev_oddtail_master.h5");
    let out = out_dir("bad");
    for (args, want) in [(["--C10", "NaN"], "C10"), (["--bf", "0.1"], "BF radius"), (["--phi12", "inf"], "phi12"), (["--center", "1,x"], "--center")] {
        let mut all = vec!["stem", "ssb", master.to_str().unwrap(), "--rotation-deg", "5", "--out", out.to_str().unwrap()];
        all.extend(args);
        let o = run(&all);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn fit_writes_the_fitted_aberrations_and_the_loss_curve() {
    let out = out_dir("fit");
    let master = dir().join("dev_small_master.h5");
    let o = run(&["stem", "ssb", master.to_str().unwrap(), "--center", "32.3,31.6", "--bf", "9.5", "--rotation-deg", "12", "--C10", "2", "--fit", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("fitted C10"), "{stdout}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let ab = &m["aberrations"];
    assert_eq!(ab["fitted"].as_bool(), Some(true), "{ab}");
    let c10 = ab["C10_nm"].as_f64().unwrap();
    println!("dev_small --fit from C10 = 2 nm: {ab}, {} evaluations, {} s", m["fit"]["evaluations"], m["wall_s"]);
    assert!(c10.abs() < 1.0, "{ab}");
    assert_eq!(
        m["fit"]["aberrations"],
        *ab.as_object()
            .map(|o| {
                let mut o = o.clone();
                o.remove("fitted");
                Value::Object(o)
            })
            .as_ref()
            .unwrap()
    );
    let curve = m["fit"]["loss_curve"].as_array().unwrap();
    assert_eq!(curve.len() as u64, m["fit"]["evaluations"].as_u64().unwrap());
    // The start is the first evaluation; the levels come in order.
    assert_eq!((curve[0]["C10_nm"].as_f64(), curve[0]["level"].as_str()), (Some(2.0), Some("grid")));
    assert_eq!(curve.last().unwrap()["level"].as_str(), Some("full"));
    assert!(m["ssb"].get("fit").is_none(), "the report is written once, at the top level");
    // The rotation is fitted only within a fit.
    let o = run(&["stem", "ssb", master.to_str().unwrap(), "--rotation-deg", "12", "--fit-rotation", "--out", out.to_str().unwrap()]);
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("--fit"), "{}", String::from_utf8_lossy(&o.stderr));
    let _ = std::fs::remove_dir_all(&out);
}

/// A `.npy` of 4-byte words (`<c8` as re, im pairs, or `<f4`): descr, shape, values.
fn npy32(path: &Path) -> (String, Vec<usize>, Vec<f32>) {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    let header = std::str::from_utf8(&b[10..10 + hlen]).unwrap();
    let descr = header.split("'descr': '").nth(1).unwrap().split('\'').next().unwrap().to_owned();
    let shape_text = header.split("'shape': (").nth(1).unwrap().split(')').next().unwrap();
    let shape = shape_text.split(',').filter(|s| !s.trim().is_empty()).map(|s| s.trim().parse().unwrap()).collect();
    (descr, shape, b[10 + hlen..].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect())
}

#[test]
fn gpu_writes_a_complex64_object_equal_to_the_reference() {
    let master = dir().join("dev_small_master.h5");
    let out = out_dir("gpu");
    let args = |out: &Path| {
        [
            "stem",
            "ssb",
            master.to_str().unwrap(),
            "--center",
            "32.3,31.6",
            "--bf",
            "9.5",
            "--rotation-deg",
            "12",
            "--dk",
            "0.10693406155495676",
            "--device",
            "gpu",
            "--out",
            out.to_str().unwrap(),
        ]
        .map(str::to_owned)
    };
    // No adapter (a backend this machine lacks): an error naming the device, nothing written.
    let none = out_dir("gpu-none");
    let o = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(args(&none)).env("WGPU_BACKEND", if cfg!(target_os = "macos") { "dx12" } else { "metal" }).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--device gpu"), "{err}");
    assert!(!none.exists(), "nothing is written without a GPU");
    if std::env::var("SCATTERLAB_SKIP_GPU").is_ok_and(|v| v == "1") {
        return eprintln!("SCATTERLAB_SKIP_GPU=1: GPU test skipped");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_scatterlab")).args(args(&out)).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (descr, shape, object) = npy32(&out.join("ssb_object.npy"));
    assert_eq!((descr.as_str(), shape.as_slice(), object.len()), ("<c8", &[16usize, 16][..], 2 * 256));
    let (d, _, phase) = npy32(&out.join("ssb_phase.npy"));
    let (d2, _, amplitude) = npy32(&out.join("ssb_amplitude.npy"));
    assert_eq!((d.as_str(), d2.as_str()), ("<f4", "<f4"));
    let want = reference("dev_small", "ssb_phase");
    let max_amp = amplitude.iter().cloned().fold(0.0, f32::max) as f64;
    let mut worst = 0.0f64;
    for i in 0..256 {
        let (re, im, a, p) = (object[2 * i] as f64, object[2 * i + 1] as f64, amplitude[i] as f64, phase[i] as f64);
        assert!((re.hypot(im) - a).abs() <= 1e-6 * max_amp && dphi(im.atan2(re), p) < 1e-6);
        if a > 1e-3 * max_amp {
            worst = worst.max(dphi(p, want[i]));
        }
    }
    println!("dev_small on the GPU: ssb_phase max abs error {worst:.3e} rad");
    assert!(worst < 1e-3, "{worst}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert!(m["device"].as_str().unwrap().starts_with("gpu: ") && m["ssb"]["device"] == m["device"], "{m}");
    assert_eq!(m["aberrations"]["fitted"].as_bool(), Some(false));
    assert_eq!(m["ssb"]["bf_pixels"].as_u64(), Some(284));
    let _ = std::fs::remove_dir_all(&out);
}
