//! Native unit tests of `blochSimulate` / `blochRefine` behind the JS handle: the simulation equals
//! the library's zone-axis path (eigen and expm, tilted, ≤ 1e-12), two LM steps on the synthetic
//! quartz experiment (its three files read as texts) lower wR2 with a report per step, a cancel
//! stops the run at the next pause with the structure reached, and bad options or files are
//! errors naming them.

use std::collections::BTreeMap;
use std::future::Future;
use std::task::{Context, Poll, Waker};

use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::zone::{case_from_zone, ZoneCase};
use scatterlab_bloch::{parse_cif, Limits};
use scatterlab_core::CancelToken;
use serde_json::{json, Value};

use super::refine::{run_refine, RefineHost, RefineProgress};
use super::simulate::{parse_options, simulate, BlochSimulation};
use crate::options::NON_FINITE;

/// `blochSimulate` on the CPU, natively (its future never waits: one poll completes it).
pub(super) fn sim(cif: &str, options: &Value) -> Result<BlochSimulation, String> {
    let o = parse_options(options)?;
    ready(simulate(cif, &o, None))
}

pub(super) const QUARTZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/bloch/synthetic_quartz/");

pub(super) fn read(name: &str) -> String {
    std::fs::read_to_string(format!("{QUARTZ}{name}")).unwrap_or_else(|e| panic!("{QUARTZ}{name}: {e}"))
}

fn files() -> BTreeMap<String, String> {
    ["experiment.yaml", "exp_data.cif_pets", "start.cif"].iter().map(|n| (n.to_string(), read(n))).collect()
}

/// The library's intensities (thickness-major) for `case` with `solver`, as the CLI runs them.
fn library(case: &ZoneCase, solver: Solver) -> (Vec<[i32; 3]>, Vec<f64>) {
    let cif = read("start.cif");
    let crystal = parse_cif("crystal", &cif).unwrap();
    let file = case_from_zone("crystal", &cif, &crystal, case).unwrap();
    let (hkl, rows) = file.cases[0].run_within(&crystal, Method { solver, conventions: Conventions::DiffBloch }, &Limits::default()).unwrap();
    (hkl, rows.concat())
}

#[test]
fn simulate_equals_the_library() {
    let cif = read("start.cif");
    for (solver, name, tilt) in [(Solver::Eigen, "eigen", [0.0, 0.0]), (Solver::Expm, "expm", [0.4, -0.3])] {
        let options = json!({"kv": 200, "zone": [0, 0, 1], "thicknesses": [100, 250], "gMax": 1.2, "sgMax": 0.05, "solver": name, "tilt": tilt});
        let s = sim(&cif, &options).unwrap();
        let case = ZoneCase { kv: 200.0, zone: [0, 0, 1], tilt_deg: tilt, thicknesses_a: vec![100.0, 250.0], g_max: 1.2, sg_max: 0.05, ..ZoneCase::default() };
        let (hkl, want) = library(&case, solver);
        assert_eq!(s.hkl, hkl, "{name}: beams");
        assert!(hkl.len() > 10, "{name}: {} beams", hkl.len());
        assert_eq!(s.intensities.len(), 2 * hkl.len(), "{name}: thickness-major n_t × n");
        assert_eq!(s.g_xy.len(), 2 * hkl.len());
        let worst = s.intensities.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(worst <= 1e-12, "{name}: max |ΔI| = {worst:e}");
        // Without absorption each thickness's intensities sum to ≈ 1 (a sanity check of the layout).
        let first: f64 = s.intensities[..hkl.len()].iter().sum();
        assert!((first - 1.0).abs() < 1e-6, "{name}: Σ I = {first}");
        assert_eq!((s.id.as_str(), s.thicknesses.as_slice()), ("crystal-200kV-[0,0,1]", &[100.0, 250.0][..]));
    }
}

#[test]
fn bad_simulate_options_are_named() {
    let cif = read("start.cif");
    let nan = Value::String(format!("{NON_FINITE}NaN"));
    let base = json!({"kv": 200, "zone": [0, 0, 1], "thicknesses": [100]});
    let with = |key: &str, v: Value| {
        let mut o = base.clone();
        o[key] = v;
        o
    };
    let cases = [
        (with("kv", nan.clone()), "options.kv must be a finite number (got NaN)"),
        (with("kv", json!(-5)), "options.kv must be a positive number of kV"),
        (with("zone", json!("001")), "options.zone must be an array of numbers"),
        (with("zone", json!([0, 0])), "options.zone must be 3 numbers"),
        (with("zone", json!([0, 0.5, 1])), "options.zone must be three integers"),
        (with("zone", json!([0, 0, 0])), "options.zone must not be [0, 0, 0]"),
        (with("thicknesses", json!([100, nan])), "options.thicknesses[1] must be a finite number (got NaN)"),
        (with("thicknesses", json!([100, -1])), "options.thicknesses[1] must be a positive number"),
        (with("thicknesses", json!([])), "options.thicknesses must hold at least one"),
        (with("gMax", json!(0)), "options.gMax must be a positive number"),
        (with("solver", json!("lu")), "options.solver must be one of \"eigen\", \"expm\", \"taylor\" (got \"lu\")"),
        (with("tilt", json!([1])), "options.tilt must be 2 numbers"),
        (with("absorption", json!(1)), "options.absorption must be true or false"),
        (with("thickness", json!([100])), "unknown option options.thickness"),
        (json!({"zone": [0, 0, 1], "thicknesses": [100]}), "options.kv is required"),
        (Value::Null, "options are required"),
        (with("reference", json!([0, 0, 2])), "options.reference"),
    ];
    for (options, want) in cases {
        let e = sim(&cif, &options).err().unwrap_or_else(|| panic!("{options} accepted"));
        assert!(e.starts_with("blochSimulate: ") && e.contains(want), "{options}: {e}");
    }
    let e = sim("data_x\n_cell_length_a oops\n", &base).unwrap_err();
    assert!(e.starts_with("blochSimulate: cif:"), "{e}");
}

/// Native refinement never waits on anything: one poll completes it.
pub(super) fn ready<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("native refinement was pending"),
    }
}

/// Records reports; cancels at the pause after `cancel_after` taken iterations (as the worker does
/// when a cancel message arrived during that step).
struct Host {
    reports: Vec<RefineProgress>,
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

impl RefineHost for Host {
    fn progress(&mut self, report: &RefineProgress) {
        self.reports.push(*report);
    }
    async fn pause(&mut self) {
        self.pauses += 1;
        if self.cancel_after.is_some() && self.reports.last().map(|r| r.iteration) == self.cancel_after {
            self.cancel.cancel();
        }
    }
    fn now_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1e3
    }
}

#[test]
fn two_lm_steps_lower_wr2() {
    let cancel = CancelToken::new();
    let mut host = Host::new(&cancel, None);
    let a = ready(run_refine(&files(), &json!({"maxIterations": 2}), &mut host, &cancel)).unwrap();
    let r = &a.result;
    println!("reports {:?}\nresult wR2 {} start {} stop {}", host.reports, r["wR2"], r["start"]["wR2"], r["stop"]);
    assert_eq!(host.reports.iter().map(|p| p.iteration).collect::<Vec<_>>(), [0, 1, 2], "a report at the start and after each step");
    assert_eq!(host.pauses, 3, "a pause after the start and after each step");
    assert!(host.reports.iter().all(|p| p.max_iterations == 2 && p.wr2.is_finite() && p.cost.is_finite()));
    let w: Vec<f64> = host.reports.iter().map(|p| p.wr2).collect();
    assert!(w[2] < w[1] && w[1] < w[0], "wR2 falls step by step: {w:?}");
    let (wr2, start) = (r["wR2"].as_f64().unwrap(), r["start"]["wR2"].as_f64().unwrap());
    assert!(wr2 < 0.9 * start, "refined wR2 {wr2} vs start {start}");
    assert_eq!((r["iterations"].as_u64(), r["stop"].as_str(), r["optimizer"].as_str()), (Some(2), Some("max_iterations"), Some("lm")));
    assert!(!a.cancelled);
    assert!(a.refined_cif.contains("_atom_site_fract_x") && a.refined_cif.contains("Si"), "{}", a.refined_cif);
    assert!(a.csv.lines().count() > 10, "{}", a.csv);
}

#[test]
fn cancel_stops_at_the_next_pause() {
    let cancel = CancelToken::new();
    let mut host = Host::new(&cancel, Some(1));
    let a = ready(run_refine(&files(), &Value::Null, &mut host, &cancel)).unwrap();
    assert!(a.cancelled);
    assert_eq!(host.reports.len(), 2, "start and one step, then the cancel: {:?}", host.reports);
    assert_eq!((a.result["iterations"].as_u64(), a.result["stop"].as_str()), (Some(1), Some("cancelled")));
    assert!(a.result["wR2"].as_f64().unwrap() < a.result["start"]["wR2"].as_f64().unwrap());
}

#[test]
fn bad_refine_options_and_files_are_named() {
    let run = |files: &BTreeMap<String, String>, options: Value| {
        let cancel = CancelToken::new();
        // Cancelled at once: a valid setup stops before its first step.
        ready(run_refine(files, &options, &mut Host::new(&cancel, Some(0)), &cancel)).err()
    };
    let nan = Value::String(format!("{NON_FINITE}NaN"));
    for (options, want) in [
        (json!({"maxIter": 3}), "unknown option options.maxIter"),
        (json!({"maxIterations": 0}), "options.maxIterations must be a whole number from 1"),
        (json!({"maxIterations": nan}), "options.maxIterations must be a finite number (got NaN)"),
        (json!({"optimizer": "sgd"}), "options.optimizer must be one of \"lm\", \"adam\", \"lbfgs\""),
        (json!({"experiment": "other.yaml"}), "options.experiment: no file \"other.yaml\""),
        (json!([1]), "options must be an object"),
    ] {
        let e = run(&files(), options.clone()).unwrap_or_else(|| panic!("{options} accepted"));
        assert!(e.starts_with("blochRefine: ") && e.contains(want), "{options}: {e}");
    }
    let mut missing = files();
    missing.remove("exp_data.cif_pets");
    let e = run(&missing, Value::Null).unwrap();
    assert!(e.contains("exp_data.cif_pets: not among the files given"), "{e}");
    let mut no_yaml = files();
    no_yaml.remove("experiment.yaml");
    assert!(run(&no_yaml, Value::Null).unwrap().contains("no experiment.yaml"));
    // Files under a folder are found by their last path part.
    let nested: BTreeMap<String, String> = files().into_iter().map(|(k, v)| (format!("synthetic_quartz/{k}"), v)).collect();
    assert_eq!(run(&nested, Value::Null), None);
}
