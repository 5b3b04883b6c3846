//! Native unit tests of `files.reduce` / `display` behind `H5Session`: the products equal
//! `scatterlab_stem::reduce::reduce` on the same files (names, shapes, values exactly), the pause
//! is awaited once per batch, a cancel stops it, and bad options are errors naming them.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use scatterlab_core::CancelToken;
use scatterlab_hdf5::storage::open_native;
use scatterlab_stem::load::{Acquisition, Hints, MapFileSet};
use scatterlab_stem::reduce::colormap::{colorize, Colormap};
use scatterlab_stem::reduce::display::Scale;
use scatterlab_stem::reduce::{reduce, ReduceDevice, ReduceOptions};
use serde_json::json;

use super::super::H5Core;
use super::{display_rgba, parse_options};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/stem/");
const SMALL: [&str; 4] = ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"];

fn files() -> Vec<(String, scatterlab_hdf5::storage::DynStorage)> {
    SMALL.iter().map(|n| (n.to_string(), open_native(format!("{DIR}{n}")).expect("fixture"))).collect()
}

/// Runs a future that never waits (the CPU path: every await is ready at once).
fn ready<T>(f: impl Future<Output = T>) -> T {
    match std::pin::pin!(f).as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("the CPU reduction waited"),
    }
}

fn opened() -> H5Core {
    let mut s = H5Core::new(files()).expect("files");
    s.stem_info("dev_small_master.h5").expect("stemInfo");
    s
}

#[test]
fn products_equal_the_library_and_the_pause_runs_per_batch() {
    let mut set = MapFileSet::new();
    for (n, st) in files() {
        set.insert(n, st);
    }
    let acq = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).expect("open");
    let options = ReduceOptions { center: Some([32.3, 31.6]), bf_radius: Some(9.5), adf: Some([12.0, 30.0]), bin: Some(2), ..Default::default() };
    let want = ready(reduce(&acq, &set, &options, ReduceDevice::Cpu, &mut |_, _| {}, &CancelToken::new())).expect("library");
    let js = json!({"center": [32.3, 31.6], "bfRadius": 9.5, "adf": [12.0, 30.0], "bin": 2});
    let (mut batches, mut pauses) = (0, 0);
    let mut pause = || -> std::pin::Pin<Box<dyn Future<Output = ()>>> {
        pauses += 1;
        Box::pin(async {})
    };
    let got = ready(opened().reduce(&js, None, &mut |_, _| batches += 1, &CancelToken::new(), Some(&mut pause))).expect("reduce");
    assert_eq!(pauses, batches, "one pause per batch");
    assert!(batches >= 4, "{batches} batches");
    let integers = got.products.iter().filter(|p| p.integer).count();
    assert_eq!(integers, want.integers.len());
    for ((name, shape, values), p) in want.integers.iter().zip(&got.products) {
        assert_eq!((name, shape), (&p.name, &p.shape));
        assert!(values.iter().zip(&p.values).all(|(a, b)| *a as f64 == *b), "{name}");
    }
    for ((name, shape, values), p) in want.reals.iter().zip(&got.products[integers..]) {
        assert_eq!((name, shape, values), (&p.name, &p.shape, &p.values));
    }
    assert!(got.products.iter().any(|p| p.name == "idpc") && got.products.iter().any(|p| p.name == "bin2_sum_dp"));
    assert!(got.present.iter().all(|&p| p));
    let record: serde_json::Value = serde_json::from_str(&got.record_json).expect("record JSON");
    assert!(record["provenance"].is_object(), "{record}");
}

#[test]
fn cancel_gpu_without_device_and_bad_options_are_named() {
    let s = opened();
    let cancelled = CancelToken::new();
    cancelled.cancel();
    let Err(e) = ready(s.reduce(&serde_json::Value::Null, None, &mut |_, _| {}, &cancelled, None)) else { panic!("expected an error: cancelled") };
    assert!(e.contains("cancelled"), "{e}");
    let Err(e) = ready(s.reduce(&json!({"device": "gpu"}), None, &mut |_, _| {}, &CancelToken::new(), None)) else { panic!("expected an error: no GPU") };
    assert!(e.contains("device \"gpu\""), "{e}");
    for (options, named) in [
        (json!({"centre": [1, 2]}), "unknown option options.centre"),
        (json!({"bfRadius": -1}), "options.bfRadius"),
        (json!({"adf": [5, 3]}), "options.adf"),
        (json!({"bin": 0}), "options.bin"),
        (json!({"device": "tpu"}), "options.device"),
        (json!({"radiusUnit": "deg"}), "options.radiusUnit"),
        (json!({"mask": 3}), "options.mask"),
        (json!({"center": [1.0, "\u{0}nonfinite:NaN"]}), "options.center[1]"),
    ] {
        let e = parse_options(&options).err().unwrap_or_else(|| panic!("{options} accepted"));
        assert!(e.contains(named), "{options}: {e}");
    }
    // Missing data file: named, unless allowMissing.
    let mut partial = H5Core::new(files().into_iter().take(3).collect()).expect("files");
    partial.stem_info("dev_small_master.h5").expect("stemInfo");
    let Err(e) = ready(partial.reduce(&serde_json::Value::Null, None, &mut |_, _| {}, &CancelToken::new(), None)) else { panic!("expected an error: missing") };
    assert!(e.contains("dev_small_data_000003.h5"), "{e}");
    let r = ready(partial.reduce(&json!({"allowMissing": true}), None, &mut |_, _| {}, &CancelToken::new(), None)).expect("present frames");
    assert_eq!(r.present.iter().filter(|&&p| !p).count(), 56);
}

#[test]
fn display_equals_the_pipeline() {
    let values: Vec<f64> = (0..64).map(|i| (i as f64 * 0.37).sin() * 100.0).chain([f64::NAN]).collect();
    let rgba = display_rgba(&values, &json!({"colormap": "viridis", "transform": "sqrt", "limits": [-50.0, 80.0]})).expect("display");
    let want: Vec<u8> = colorize(&values, -50.0, 80.0, Scale::Sqrt, Colormap::Viridis).expect("colorize").into_iter().flatten().collect();
    assert_eq!(rgba, want);
    assert_eq!(&rgba[64 * 4..], &[0, 0, 0, 0], "NaN is transparent");
    let full = display_rgba(&values, &serde_json::Value::Null).expect("defaults");
    assert_eq!(full.len(), values.len() * 4);
    for (options, named) in [
        (json!({"colormap": "rainbow"}), "colormap 'rainbow'"),
        (json!({"transform": "gamma"}), "options.gamma"),
        (json!({"percentiles": [90, 10]}), "options.percentiles"),
        (json!({"shade": 1}), "unknown option options.shade"),
    ] {
        let e = display_rgba(&values, &options).err().unwrap_or_else(|| panic!("{options} accepted"));
        assert!(e.contains(named), "{options}: {e}");
    }
}
