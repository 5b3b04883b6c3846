//! Native unit tests of the device choice, `blochSimulateCases` and `blochRocking` behind the JS
//! handle: option errors name the option (device, solver pairing, ids, tilts); the fixture's
//! reference cases from `reference.json` equal `I_ref` within 1e-6 on the CPU (f64) and 1e-4 on
//! the GPU (f32, lavapipe natively; `SCATTERLAB_SKIP_GPU=1` skips those); a rocking sweep equals
//! `blochSimulate` at each of its tilts on the union of the tilts' beams, reports every tilt and
//! stops at the pause after a cancel.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use scatterlab_bloch::solve::Solver;
use scatterlab_core::CancelToken;
use serde_json::{json, Value};

use super::cases::{self, simulate_cases};
use super::engine::{Engine, GpuKernel};
use super::rocking::{self, run_rocking, RockingHost, RockingProgress};
use super::simulate::{self, simulate};
use super::tests::{read, sim};
use crate::options::NON_FINITE;

const REFERENCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/bloch/reference.json");

/// Drives a future natively: GPU readbacks complete inside `Device::poll`, so polling again soon
/// is enough (no executor needed).
fn block_on<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(v) = future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            return v;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

fn nan() -> Value {
    Value::String(format!("{NON_FINITE}NaN"))
}

#[test]
fn device_solver_ids_and_tilts_options_are_named() {
    let base = json!({"kv": 200, "zone": [0, 0, 1], "thicknesses": [100]});
    let with = |pairs: &[(&str, Value)]| {
        let mut o = base.clone();
        for (k, v) in pairs {
            o[*k] = v.clone();
        }
        o
    };
    let engine = |v: &Value| simulate::parse_options(v).map(|o| o.engine);
    assert_eq!(engine(&base), Ok(Engine::Cpu(Solver::Expm)), "default: the CPU's expm");
    assert_eq!(engine(&with(&[("device", json!("gpu"))])), Ok(Engine::Gpu));
    assert_eq!(engine(&with(&[("device", json!("gpu")), ("solver", json!("taylor"))])), Ok(Engine::Gpu));
    assert_eq!(engine(&with(&[("device", json!("cpu")), ("solver", json!("eigen"))])), Ok(Engine::Cpu(Solver::Eigen)));
    for (options, want) in [
        (with(&[("device", json!("tpu"))]), "blochSimulate: options.device must be one of \"cpu\", \"gpu\" (got \"tpu\")"),
        (with(&[("device", nan())]), "blochSimulate: options.device must be one of \"cpu\", \"gpu\" (got NaN)"),
        (with(&[("device", json!("gpu")), ("solver", json!("eigen"))]), "blochSimulate: options.solver \"eigen\" runs on the CPU only"),
        (with(&[("solver", json!("taylor"))]), "blochSimulate: options.solver \"taylor\" runs on the GPU only"),
    ] {
        let e = simulate::parse_options(&options).unwrap_err();
        assert!(e.starts_with(want), "{options}: {e}");
    }
    // A GPU run without a kernel is an error naming the device (the JS layer always acquires one).
    let o = simulate::parse_options(&with(&[("device", json!("gpu"))])).unwrap();
    let e = block_on(simulate(&read("start.cif"), &o, None)).unwrap_err();
    assert!(e.contains("device \"gpu\""), "{e}");

    let text = std::fs::read_to_string(REFERENCE).unwrap();
    let run = |v: Value| cases::parse_options(&v).and_then(|o| block_on(simulate_cases(&text, &o, None)));
    for (options, want) in [
        (json!({"id": ["Si-200kV-00"]}), "blochSimulateCases: unknown option options.id"),
        (json!({"ids": "Si-200kV-00"}), "options.ids must be an array of strings"),
        (json!({"ids": [3]}), "options.ids[0] must be a string (got 3)"),
        (json!({"ids": []}), "options.ids must name at least one case"),
        (json!({"ids": ["nope"]}), "options.ids[0]: no case \"nope\" in the file (cases: Si-200kV-00, "),
        (json!({"ids": ["urea-300kV-11", "urea-300kV-11"]}), "options.ids[1]: case \"urea-300kV-11\" is listed twice"),
        (json!({"device": "gpu", "solver": "expm"}), "options.solver \"expm\" runs on the CPU only"),
    ] {
        let e = run(options.clone()).unwrap_err();
        assert!(e.starts_with("blochSimulateCases: ") && e.contains(want), "{options}: {e}");
    }
    let e = block_on(simulate_cases("{\"cases\": 3}", &cases::parse_options(&Value::Null).unwrap(), None)).unwrap_err();
    assert!(e.starts_with("blochSimulateCases: cases file"), "{e}");

    let tilts = |t: Value| with(&[("tilts", t)]);
    for (options, want) in [
        (base.clone(), "options.tilts is required"),
        (tilts(json!([1, 2])), "options.tilts must be an object"),
        (tilts(json!({"fromDeg": nan(), "toDeg": 1, "n": 3})), "options.tilts.fromDeg must be a finite number (got NaN)"),
        (tilts(json!({"fromDeg": 0, "toDeg": 1, "n": 0})), "options.tilts.n must be a whole number from 1 to 10000 (got 0)"),
        (tilts(json!({"fromDeg": 0, "toDeg": 1, "n": 2.5})), "options.tilts.n must be a whole number"),
        (tilts(json!({"fromDeg": 0, "toDeg": 1})), "options.tilts needs fromDeg, toDeg and n"),
        (tilts(json!({"fromDeg": 0, "toDeg": 1, "n": 3, "step": 1})), "unknown option options.tilts.step"),
        (tilts(json!({"axis": "z", "anglesDeg": [0]})), "options.tilts.axis must be one of \"x\", \"y\" (got \"z\")"),
        (tilts(json!({"anglesDeg": [0, nan()]})), "options.tilts.anglesDeg[1] must be a finite number (got NaN)"),
        (tilts(json!({"anglesDeg": []})), "options.tilts: a sweep needs at least one tilt"),
        (tilts(json!({"anglesDeg": [0], "n": 2})), "give anglesDeg or fromDeg, toDeg and n, not both"),
        (with(&[("tilts", json!({"anglesDeg": [0]})), ("tilt", json!([nan(), 0]))]), "options.tilt[0] must be a finite number (got NaN)"),
        (with(&[("tilts", json!({"anglesDeg": [0]})), ("tilt_deg", json!([0, 0]))]), "unknown option options.tilt_deg"),
    ] {
        let e = rocking::parse_options(&options).unwrap_err();
        assert!(e.starts_with("blochRocking: ") && e.contains(want), "{options}: {e}");
    }
}

/// Max |I − I_ref| over every beam and thickness of case `id`, matching beams by hkl (a beam
/// missing from either side fails the test).
fn worst_vs_reference(reference: &Value, r: &cases::CaseResult) -> f64 {
    let case = reference["cases"].as_array().and_then(|cs| cs.iter().find(|c| c["id"] == r.id.as_str())).unwrap();
    let hkl: Vec<[i32; 3]> = serde_json::from_value(case["beams"]["hkl"].clone()).unwrap();
    let want: Vec<Vec<f64>> = serde_json::from_value(case["intensities"]["I_ref"].clone()).unwrap();
    assert_eq!(r.error, None, "{}", r.id);
    assert_eq!(hkl.len(), r.hkl.len(), "{}: beam count", r.id);
    let n = r.hkl.len();
    let mut worst = 0.0f64;
    for (t, row) in want.iter().enumerate() {
        for (h, w) in hkl.iter().zip(row) {
            let j = r.hkl.iter().position(|x| x == h).unwrap_or_else(|| panic!("{}: beam {h:?} missing", r.id));
            worst = worst.max((r.intensities[t * n + j] - w).abs());
        }
    }
    worst
}

const IDS: [&str; 3] = ["urea-300kV-11", "SrTiO3-300kV-08", "quartz_aniso-200kV-13"];

#[test]
fn reference_cases_on_the_cpu_equal_i_ref() {
    let text = std::fs::read_to_string(REFERENCE).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let o = cases::parse_options(&json!({"ids": IDS})).unwrap();
    let results = block_on(simulate_cases(&text, &o, None)).unwrap();
    assert_eq!(results.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(), IDS, "the ids' order");
    for r in &results {
        let worst = worst_vs_reference(&reference, r);
        println!("{} (cpu expm): {} beams, max |I − I_ref| = {worst:.2e}", r.id, r.hkl.len());
        assert!(worst <= 1e-6, "{}: {worst:e}", r.id);
        assert_eq!(r.thicknesses.len() * r.hkl.len(), r.intensities.len());
    }
}

/// The GPU kernel on wgpu's native adapter (lavapipe here), or `None` with `SCATTERLAB_SKIP_GPU`.
fn native_kernel() -> Option<GpuKernel> {
    if std::env::var_os("SCATTERLAB_SKIP_GPU").is_some() {
        eprintln!("SCATTERLAB_SKIP_GPU set: skipping the GPU half");
        return None;
    }
    let ctx = block_on(scatterlab_gpu::GpuContext::new(&Default::default())).expect("a GPU (lavapipe) or SCATTERLAB_SKIP_GPU=1");
    Some(block_on(GpuKernel::new(&ctx, "test")).expect("the propagation kernel"))
}

#[test]
fn reference_cases_and_a_sweep_on_the_gpu() {
    let Some(kernel) = native_kernel() else { return };
    let text = std::fs::read_to_string(REFERENCE).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let o = cases::parse_options(&json!({"ids": IDS, "device": "gpu"})).unwrap();
    for r in block_on(simulate_cases(&text, &o, Some(&kernel))).unwrap() {
        let worst = worst_vs_reference(&reference, &r);
        println!("{} (gpu {}): {} beams, max |I − I_ref| = {worst:.2e}", r.id, kernel.describe, r.hkl.len());
        assert!(worst <= 1e-4, "{}: {worst:e}", r.id);
    }
    // A short sweep on the GPU equals the CPU's within the f32 gate, beam for beam.
    let options = json!({"kv": 200, "zone": [0, 0, 1], "thicknesses": [100, 250], "gMax": 1.2, "sgMax": 0.05, "tilts": {"axis": "x", "fromDeg": -0.3, "toDeg": 0.3, "n": 3}});
    let mut gpu_options = options.clone();
    gpu_options["device"] = json!("gpu");
    let cif = read("start.cif");
    let sweep = |v: &Value, gpu: Option<&GpuKernel>| {
        let cancel = CancelToken::new();
        block_on(run_rocking(&cif, &rocking::parse_options(v).unwrap(), gpu, &mut Host::new(&cancel, None), &cancel)).unwrap()
    };
    let (cpu, gpu) = (sweep(&options, None), sweep(&gpu_options, Some(&kernel)));
    assert_eq!((cpu.series.hkl(), gpu.engine), (gpu.series.hkl(), Engine::Gpu));
    let worst = cpu.series.intensities().iter().zip(gpu.series.intensities()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    println!("sweep of 3 tilts, {} beams: max |I_gpu − I_cpu| = {worst:.2e}", cpu.series.n_beams());
    assert!(worst <= 1e-4, "{worst:e}");
}

/// Records reports; cancels at the pause after `cancel_after` tilts.
struct Host {
    reports: Vec<RockingProgress>,
    pauses: usize,
    cancel: CancelToken,
    cancel_after: Option<usize>,
    start: std::time::Instant,
}

impl Host {
    fn new(cancel: &CancelToken, cancel_after: Option<usize>) -> Self {
        Host { reports: Vec::new(), pauses: 0, cancel: cancel.clone(), cancel_after, start: std::time::Instant::now() }
    }
}

impl RockingHost for Host {
    fn progress(&mut self, report: &RockingProgress) {
        self.reports.push(*report);
    }
    async fn pause(&mut self) {
        self.pauses += 1;
        if self.cancel_after.is_some() && self.reports.last().map(|r| r.done) == self.cancel_after {
            self.cancel.cancel();
        }
    }
    fn now_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1e3
    }
}

#[test]
fn a_sweep_equals_blochsimulate_at_each_tilt_and_cancels_between_tilts() {
    let cif = read("start.cif");
    let options = json!({"kv": 200, "zone": [0, 0, 1], "thicknesses": [100, 250], "gMax": 1.2, "sgMax": 0.03, "solver": "eigen",
                         "tilt": [0.2, 0.0], "tilts": {"axis": "y", "fromDeg": -1.0, "toDeg": 1.0, "n": 5}});
    let o = rocking::parse_options(&options).unwrap();
    let cancel = CancelToken::new();
    let mut host = Host::new(&cancel, None);
    let a = block_on(run_rocking(&cif, &o, None, &mut host, &cancel)).unwrap();
    assert_eq!(host.reports.iter().map(|p| (p.done, p.total)).collect::<Vec<_>>(), [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]);
    assert_eq!(host.pauses, 6, "after the structure factors and after each tilt");
    assert!(!a.cancelled && a.series.len() == 5 && a.series.tilts() == [-1.0, -0.5, 0.0, 0.5, 1.0]);
    let (hkl, all) = (a.series.hkl(), a.series.intensities());
    let (n, nt) = (hkl.len(), a.thicknesses.len());
    let mut smallest = usize::MAX;
    for (i, ty) in [-1.0, -0.5, 0.0, 0.5, 1.0].into_iter().enumerate() {
        let mut single = options.clone();
        single.as_object_mut().unwrap().remove("tilts");
        single["tilt"] = json!([0.2, ty]);
        let s = sim(&cif, &single).unwrap();
        smallest = smallest.min(s.hkl.len());
        for t in 0..nt {
            let row = &all[(i * nt + t) * n..][..n];
            for (j, h) in hkl.iter().enumerate() {
                let want = s.hkl.iter().position(|x| x == h).map_or(0.0, |k| s.intensities[t * s.hkl.len() + k]);
                assert!((row[j] - want).abs() <= 1e-12, "tilt {i} thickness {t} beam {h:?}: {} vs {want}", row[j]);
            }
        }
    }
    println!("sweep: {n} beams in the union, as few as {smallest} at one tilt");
    assert!(n > smallest, "the beam sets change across 2° (absent beams read 0): {n} vs {smallest}");

    let cancel = CancelToken::new();
    let mut host = Host::new(&cancel, Some(2));
    let cut = block_on(run_rocking(&cif, &o, None, &mut host, &cancel)).unwrap();
    assert!(cut.cancelled && cut.series.len() == 2 && host.reports.len() == 2, "{:?}", host.reports);
    assert_eq!(cut.series.tilts(), [-1.0, -0.5]);
    let full = a.series.curve([0, 0, 0], 1).unwrap();
    assert_eq!(cut.series.curve([0, 0, 0], 1).unwrap(), full[..2], "the tilts done are the full run's");
}

/// Beams and time per tilt of the e2e's responsiveness sweep (run with `--ignored --nocapture`).
#[test]
#[ignore = "a measurement, not a check"]
fn measure_sweep_sizes() {
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(REFERENCE).unwrap()).unwrap();
    for (crystal, zone, g, sg) in [("SrTiO3", [0, 0, 1], 3.0, 0.07), ("SrTiO3", [0, 0, 1], 3.0, 0.08), ("SrTiO3", [0, 0, 1], 3.2, 0.075), ("SrTiO3", [0, 0, 1], 3.3, 0.08)] {
        let cif = reference["crystals"][crystal]["cif"].as_str().unwrap().to_owned();
        let options = json!({"kv": 200, "zone": zone, "thicknesses": [100, 200, 400], "gMax": g, "sgMax": sg, "solver": "eigen", "tilts": {"axis": "x", "fromDeg": -0.5, "toDeg": 0.5, "n": 5}});
        let cancel = CancelToken::new();
        let mut host = Host::new(&cancel, None);
        let t0 = std::time::Instant::now();
        let a = block_on(run_rocking(&cif, &rocking::parse_options(&options).unwrap(), None, &mut host, &cancel)).unwrap();
        let per: Vec<usize> = (0..a.series.len()).map(|i| a.series.tilt_hkl(i).map_or(0, <[_]>::len)).collect();
        println!("{crystal} {zone:?} g {g} sg {sg}: beams per tilt {per:?}, union {}, {:.3} s per tilt", a.series.n_beams(), t0.elapsed().as_secs_f64() / 5.0);
    }
}
