//! `lab.blochRefine(files, options, onProgress, signal)`: the refinement of `scatterlab bloch
//! refine` on a diffBloch experiment given as texts (the YAML, the `.cif_pets` and the start CIF,
//! by file name), driven one optimiser iteration per step.
//!
//! # Why one iteration per step
//! As for `Scatterlab.fit` ([`crate::fit`]): a Web Worker handles its next message (a cancel) only
//! when the running wasm call returns to the event loop, and [`Refiner::step`] never waits on
//! anything. [`run_refine`] therefore awaits [`RefineHost::pause`] after building the refiner and
//! after every [`Refiner::step`]; the JS host returns to the event loop there (every time: one LM
//! iteration solves every frame several times, far longer than a yield costs) and cancels the
//! [`CancelToken`] if the caller's `AbortSignal` was aborted. A cancelled run still resolves, with
//! the structure reached, `cancelled: true` and `result.stop == "cancelled"`.

use std::collections::BTreeMap;
use std::future::Future;

use scatterlab_bloch::refine::outcome::finish;
use scatterlab_bloch::refine::{observed_vs_calculated_csv, refined_cif, Experiment, LmOptions, Optimizer, RefineError, Refiner};
use scatterlab_core::CancelToken;
use serde_json::Value;

use crate::options::{choice, object, string, whole};

const OP: &str = "blochRefine";
const KNOWN: [&str; 3] = ["optimizer", "maxIterations", "experiment"];

/// The options of one `blochRefine` call.
#[derive(Clone, Debug, PartialEq)]
pub struct RefineOptions {
    /// The optimiser (default LM).
    pub optimizer: Optimizer,
    /// Most iterations (epochs for Adam); default as the CLI's: 50, Adam `refinement.steps`.
    pub max_iterations: Option<usize>,
    /// The name of the experiment YAML among the files (default `experiment.yaml`, else the only
    /// `.yaml` / `.yml`).
    pub experiment: Option<String>,
}

/// Reads the options (`null` = all defaults).
pub fn parse_options(v: &Value) -> Result<RefineOptions, String> {
    let Some(m) = object(v, OP, &KNOWN)? else { return Ok(RefineOptions { optimizer: Optimizer::Lm, max_iterations: None, experiment: None }) };
    let optimizer = match choice(m, "optimizer", OP, &["lm", "adam", "lbfgs"])? {
        Some("adam") => Optimizer::Adam,
        Some("lbfgs") => Optimizer::Lbfgs,
        _ => Optimizer::Lm,
    };
    let max_iterations = whole(m, "maxIterations", OP, 1, 1_000_000)?.map(|n| n as usize);
    Ok(RefineOptions { optimizer, max_iterations, experiment: string(m, "experiment", OP)? })
}

/// A progress report: after the start point is evaluated (iteration 0) and after every step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RefineProgress {
    /// Taken iterations (epochs) so far.
    pub iteration: usize,
    /// The iteration budget.
    pub max_iterations: usize,
    /// Model evaluations so far (each solves every frame).
    pub evaluations: usize,
    /// Mean per-frame wR2 now.
    pub wr2: f64,
    /// The optimiser's cost now (Σ r² for LM).
    pub cost: f64,
    /// Seconds since the refinement started (loading included).
    pub seconds: f64,
}

/// What the driver needs from where it runs.
pub trait RefineHost {
    /// Receives every report.
    fn progress(&mut self, report: &RefineProgress);
    /// Awaited after the start point and after each step: where an event loop runs and a cancel lands.
    fn pause(&mut self) -> impl Future<Output = ()>;
    /// A clock in milliseconds (any origin; `Date.now()` on wasm, where `Instant` panics).
    fn now_ms(&self) -> f64;
}

/// The files `scatterlab bloch refine` writes, and what the run saw.
#[derive(Clone, Debug, PartialEq)]
pub struct RefineAnswer {
    /// `result.json` as a value (with `stop: "cancelled"` after a cancel).
    pub result: Value,
    /// `refined.cif`.
    pub refined_cif: String,
    /// `observed_vs_calculated.csv`.
    pub csv: String,
    /// Whether the run was cancelled (the structure is then the last one reached).
    pub cancelled: bool,
    /// Non-fatal findings of loading (e.g. a CIF cell 1–5 % off the PETS cell).
    pub warnings: Vec<String>,
}

/// The experiment YAML among `files`: the named one, else `experiment.yaml`, else the only YAML.
fn yaml_name<'a>(files: &'a BTreeMap<String, String>, named: Option<&str>) -> Result<&'a str, String> {
    let listed = || files.keys().map(String::as_str).collect::<Vec<_>>().join(", ");
    if let Some(name) = named {
        return files.get_key_value(name).map(|(k, _)| k.as_str()).ok_or_else(|| format!("{OP}: options.experiment: no file {name:?} among the files ({})", listed()));
    }
    if let Some((k, _)) = files.get_key_value("experiment.yaml") {
        return Ok(k);
    }
    let yamls: Vec<&str> = files.keys().map(String::as_str).filter(|k| k.ends_with(".yaml") || k.ends_with(".yml")).collect();
    match yamls.as_slice() {
        [one] => Ok(one),
        [] => Err(format!("{OP}: files: no experiment.yaml among the files ({})", listed())),
        _ => Err(format!("{OP}: files: several YAML files ({}); name one with options.experiment", yamls.join(", "))),
    }
}

/// A file the YAML names: by its name, else by the last part of a path (`dir/start.cif`).
fn lookup(files: &BTreeMap<String, String>, name: &str) -> Result<(String, String), RefineError> {
    let base = |s: &str| s.rsplit(['/', '\\']).next().unwrap_or(s).to_owned();
    let found = files.get_key_value(name).or_else(|| files.iter().find(|(k, _)| base(k) == base(name)));
    found.map(|(k, v)| (k.clone(), v.clone())).ok_or_else(|| RefineError::Io {
        path: name.to_owned(),
        message: format!("not among the files given ({})", files.keys().map(String::as_str).collect::<Vec<_>>().join(", ")),
    })
}

fn report<H: RefineHost>(host: &mut H, refiner: &Refiner, max_iterations: usize, start_ms: f64) {
    let last = refiner.history().last().copied();
    let (wr2, cost) = last.map_or((f64::NAN, f64::NAN), |r| (r.wr2, r.cost));
    let seconds = (host.now_ms() - start_ms) / 1e3;
    host.progress(&RefineProgress { iteration: refiner.iterations(), max_iterations, evaluations: refiner.evaluations(), wr2, cost, seconds });
}

/// Refines the experiment in `files` (name → text) with `options` (the JS call's object).
pub async fn run_refine<H: RefineHost>(files: &BTreeMap<String, String>, options: &Value, host: &mut H, cancel: &CancelToken) -> Result<RefineAnswer, String> {
    let o = parse_options(options)?;
    let start_ms = host.now_ms();
    let yaml = yaml_name(files, o.experiment.as_deref())?;
    let err = |e: RefineError| format!("{OP}: {e}");
    let yaml_text = files.get(yaml).ok_or_else(|| format!("{OP}: files: {yaml:?} vanished"))?;
    let experiment = Experiment::from_texts(yaml, yaml_text, &mut |name| lookup(files, name)).map_err(err)?;
    let warnings = experiment.warnings.clone();
    let defaults = LmOptions::default();
    let max_iterations = o.max_iterations.unwrap_or(if o.optimizer == Optimizer::Adam { experiment.config.refinement.steps } else { defaults.max_iterations });
    let lm = LmOptions { optimizer: o.optimizer, max_iterations, learning_rate: experiment.config.refinement.lr, ..defaults };
    let mut refiner = Refiner::new(experiment, lm).map_err(err)?;
    report(host, &refiner, max_iterations, start_ms);
    host.pause().await;
    while !refiner.is_done() && !cancel.is_cancelled() {
        match refiner.step(cancel) {
            Ok(_) => {}
            // A cancel seen inside the step: the refiner keeps its last taken point.
            Err(RefineError::Cancelled) => break,
            Err(e) => return Err(err(e)),
        }
        report(host, &refiner, max_iterations, start_ms);
        host.pause().await;
    }
    let cancelled = cancel.is_cancelled() && !refiner.is_done();
    let finished = finish(&refiner, (host.now_ms() - start_ms) / 1e3).map_err(err)?;
    let refined_cif = refined_cif(&refiner.experiment().start_cif, &refiner.state().asu, &finished.uncertainties).map_err(err)?;
    let mut result = serde_json::to_value(&finished.result).map_err(|e| format!("{OP}: result.json: {e}"))?;
    if let (true, Some(r)) = (cancelled, result.as_object_mut()) {
        r.insert("stop".into(), "cancelled".into());
    }
    Ok(RefineAnswer { result, refined_cif, csv: observed_vs_calculated_csv(&finished.evaluation), cancelled, warnings })
}
