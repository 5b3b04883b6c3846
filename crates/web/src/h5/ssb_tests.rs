//! Native unit tests of `files.ssb` behind `H5Session.ssb`: the phase equals
//! `scatterlab_stem::ssb::ssb` on the same files (defaults, given aberrations and rotation, a
//! fit), and bad options, missing calibration or no open acquisition are errors naming them.

use scatterlab_core::CancelToken;
use scatterlab_hdf5::storage::open_native;
use scatterlab_stem::load::{Acquisition, Hints, MapFileSet};
use scatterlab_stem::ssb::{ssb, Aberrations, FitOptions, SsbOptions};
use serde_json::json;

use super::ssb::parse_options;
use super::*;
use crate::options::NON_FINITE;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/stem/");
const SMALL: [&str; 4] = ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"];

fn files() -> Vec<(String, scatterlab_hdf5::storage::DynStorage)> {
    SMALL.iter().map(|n| (n.to_string(), open_native(format!("{DIR}{n}")).unwrap())).collect()
}

/// The library's phase (as f32, as the handle returns it) with `options`.
fn library(options: &SsbOptions) -> (Vec<f32>, Aberrations) {
    let mut set = MapFileSet::new();
    for (n, s) in files() {
        set.insert(n, s);
    }
    let acq = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).unwrap();
    let p = ssb(&acq, &set, options, &mut |_, _| {}, &CancelToken::new()).unwrap();
    (p.object.iter().map(|z| z.arg() as f32).collect(), p.record.aberrations)
}

fn opened() -> H5Core {
    let mut s = H5Core::new(files()).unwrap();
    s.stem_info("dev_small_master.h5").unwrap();
    s
}

#[test]
fn phase_equals_the_library() {
    let s = opened();
    let mut calls = 0;
    let r = s.ssb(&serde_json::Value::Null, &mut |_, _| calls += 1, &CancelToken::new()).unwrap();
    assert_eq!(r.shape, [16, 16]);
    assert!(calls > 0, "progress reported");
    assert_eq!(r.phase, library(&SsbOptions::default()).0, "defaults: identical f32 phase");
    let record: serde_json::Value = serde_json::from_str(&r.record_json).unwrap();
    assert_eq!(record["fitted"], false);
    assert_eq!(record["bf_pixels"].as_u64(), Some(279), "{record}");
    assert!(record["device"].as_str().unwrap().starts_with("cpu"));
    assert!(record["provenance"]["sources"].is_array(), "{}", record["provenance"]);

    let options = json!({"aberrations": {"C10_nm": 3.0, "C12_nm": 0.6, "phi12_rad": 0.7}, "rotationDeg": -30.0, "transposed": true, "center": [32.0, 31.5], "bfRadius": 9.0});
    let r = s.ssb(&options, &mut |_, _| {}, &CancelToken::new()).unwrap();
    let ab = Aberrations { c10_nm: 3.0, c12_nm: 0.6, phi12_rad: 0.7 };
    let want =
        library(&SsbOptions { aberrations: ab, rotation_deg: Some(-30.0), transposed: Some(true), center: Some([32.0, 31.5]), bf_radius: Some(9.0), ..SsbOptions::default() });
    assert_eq!((r.phase, r.aberrations), want);
}

#[test]
fn fit_equals_the_library_fit() {
    let s = opened();
    let r = s.ssb(&json!({"fit": {"maxFullEvaluations": 30}}), &mut |_, _| {}, &CancelToken::new()).unwrap();
    let want = library(&SsbOptions { fit: Some(FitOptions { max_full_evaluations: 30, threads: Some(1), ..FitOptions::default() }), ..SsbOptions::default() });
    assert_eq!((r.phase.clone(), r.aberrations), want);
    // dev_small is unaberrated: the fit's gate is |C10| < 1 nm.
    assert!(r.aberrations.c10_nm.abs() < 1.0, "{:?}", r.aberrations);
    let record: serde_json::Value = serde_json::from_str(&r.record_json).unwrap();
    assert_eq!(record["fitted"], true);
    assert!(record["fit"]["loss_curve"].as_array().is_some_and(|c| !c.is_empty()));
    assert_eq!(parse_options(&json!({"fit": true})).unwrap().fit, Some(FitOptions::default()));
}

#[test]
fn bad_options_are_named() {
    let nan = format!("{NON_FINITE}NaN");
    let cases = [
        (json!({"bfRadius": nan}), "bfRadius must be a finite number (got NaN)"),
        (json!({"center": [1.0, format!("{NON_FINITE}Infinity")]}), "center[1] must be a finite number (got Infinity)"),
        (json!({"center": [1.0]}), "options.center must be 2 numbers [row, col]"),
        (json!({"aberrations": {"C10_nm": nan}}), "aberrations.C10_nm must be a finite number"),
        (json!({"aberrations": {"C21_nm": 1.0}}), "unknown option options.aberrations.C21_nm"),
        (json!({"radius": 3.0}), "unknown option options.radius"),
        (json!({"transposed": "yes"}), "transposed must be true or false"),
        (json!({"mask": "drop"}), "\"drop\""),
        (json!({"fit": {"maxFullEvaluations": 0}}), "fit.maxFullEvaluations"),
        (json!({"fit": 3}), "fit must be true, false or an object"),
        (json!(7), "options must be an object"),
    ];
    for (options, want) in cases {
        let e = parse_options(&options).err().unwrap_or_else(|| panic!("{options} accepted"));
        assert!(e.contains(want), "{options}: {e}");
    }
    let s = opened();
    // The library's own checks come through, naming the parameter.
    let e = s.ssb(&json!({"center": [500.0, 500.0], "bfRadius": 2.0}), &mut |_, _| {}, &CancelToken::new()).err().unwrap();
    assert!(e.contains("BF radius"), "{e}");
    let e = s.ssb(&json!({"bfRadius": -1.0, "center": [32.0, 32.0]}), &mut |_, _| {}, &CancelToken::new()).err().unwrap();
    assert!(e.contains("BF radius") && e.contains("positive"), "{e}");
    let e = s.ssb(&json!({"fit": {"c10RangeNm": [5.0, -5.0]}}), &mut |_, _| {}, &CancelToken::new()).err().unwrap();
    assert!(e.contains("C10 range"), "{e}");
    // A cancelled token (what a throwing onProgress sets) stops it, said as such.
    let cancelled = CancelToken::new();
    cancelled.cancel();
    let e = s.ssb(&serde_json::Value::Null, &mut |_, _| {}, &cancelled).err().unwrap();
    assert!(e.contains("cancelled"), "{e}");
    let fresh = H5Core::new(files()).unwrap();
    let e = fresh.ssb(&serde_json::Value::Null, &mut |_, _| {}, &CancelToken::new()).err().unwrap();
    assert!(e.contains("ssb: no acquisition open"), "{e}");
    // Missing data file: every scan position is needed, the file is named.
    let mut partial = H5Core::new(files().into_iter().take(3).collect()).unwrap();
    partial.stem_info("dev_small_master.h5").unwrap();
    let e = partial.ssb(&serde_json::Value::Null, &mut |_, _| {}, &CancelToken::new()).err().unwrap();
    assert!(e.contains("dev_small_data_000003.h5"), "{e}");
    // The device option: named when wrong; "gpu" never runs on the CPU path.
    use super::ssb::{parse_device, SsbDevice};
    assert_eq!(parse_device(&json!({})), Ok(SsbDevice::Cpu));
    assert_eq!(parse_device(&json!({"device": "GPU"})), Ok(SsbDevice::Gpu));
    let e = parse_device(&json!({"device": "tpu"})).err().unwrap();
    assert!(e.contains("ssb: device must be"), "{e}");
    let e = s.ssb(&json!({"device": "gpu"}), &mut |_, _| {}, &CancelToken::new()).err().unwrap();
    assert!(e.contains("device \"gpu\""), "{e}");
}

/// What tests/e2e/h5.html expects from `files.ssb()` on dev_small through the real worker (keep
/// the two in step): BF pixels, θ from DPC (degrees) and Σ|phase| (f32 radians summed in f64).
const E2E_SSB: (u64, f64, f64) = (279, 11.618839281742567, 6.569376548519358);

#[test]
fn e2e_ssb_constants() {
    let r = opened().ssb(&serde_json::Value::Null, &mut |_, _| {}, &CancelToken::new()).unwrap();
    let record: serde_json::Value = serde_json::from_str(&r.record_json).unwrap();
    let abs_sum: f64 = r.phase.iter().map(|&p| f64::from(p).abs()).sum();
    println!("bf_pixels {} θ {} Σ|phase| {abs_sum}", record["bf_pixels"], record["rotation_deg"]);
    assert_eq!(record["bf_pixels"].as_u64(), Some(E2E_SSB.0));
    assert!((record["rotation_deg"].as_f64().unwrap() - E2E_SSB.1).abs() < 1e-9);
    assert!((abs_sum - E2E_SSB.2).abs() < 1e-9 * abs_sum, "{abs_sum} vs {}", E2E_SSB.2);
}
