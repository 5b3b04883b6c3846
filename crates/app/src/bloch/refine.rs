//! The Refine page's state and driver: a diffBloch experiment (`experiment.yaml`, its
//! `.cif_pets` and start CIF) refined by `scatterlab_bloch::refine::Refiner`, one LM iteration per
//! `step`. Natively the steps run on a thread (reports come back through a channel); in the
//! browser one step runs per UI frame (no threads in wasm). A run stops at its step budget, when
//! the refiner is done, or on Cancel, and is then finished (`refine::outcome::finish`: result
//! JSON, s.u., the refined CIF); Run again resumes from where it stopped.

use std::collections::BTreeMap;
use std::sync::mpsc;

use scatterlab_bloch::refine::outcome::{finish, Finished};
use scatterlab_bloch::refine::{refined_cif, Experiment, LmOptions, RefineError, Refiner, StepReport};
use scatterlab_core::CancelToken;

/// What a finished (or paused, or cancelled) run hands back.
pub struct Outputs {
    /// Result, s.u. and the refined model's evaluation.
    pub finished: Finished,
    /// `result.json` text.
    pub result_json: String,
    /// The refined CIF (or why it could not be written).
    pub refined_cif: Result<String, String>,
    /// Whether the run was cancelled.
    pub cancelled: bool,
}

/// What the native refinement thread reports.
#[cfg(not(target_arch = "wasm32"))]
enum Msg {
    Step(StepReport),
    Done(Box<(Refiner, Result<Outputs, String>)>),
}

enum Run {
    /// Native: the refiner is on a thread.
    #[cfg(not(target_arch = "wasm32"))]
    Thread { rx: mpsc::Receiver<Msg>, cancel: CancelToken },
    /// Browser (or [`RefineState::stepped`]): one step per UI frame, on the refiner held here.
    Stepped { cancel: CancelToken, steps_left: usize, started: web_time::Instant },
}

/// The Refine page.
pub struct RefineState {
    /// The experiment folder typed on the desktop.
    pub path: String,
    /// The opened experiment's name (its YAML `name`, else the file).
    pub name: Option<String>,
    /// Loading warnings (cell differences, …).
    pub warnings: Vec<String>,
    /// Every step report of the refiner so far (all runs).
    pub history: Vec<StepReport>,
    /// The last finished run's outputs.
    pub outputs: Option<Outputs>,
    /// Why the last open or run failed.
    pub error: Option<String>,
    /// Steps per Run (the refiner stops earlier when converged).
    pub steps_per_run: usize,
    /// Where exports go on the desktop.
    pub export_dir: String,
    /// The last export's message.
    pub message: Option<Result<String, String>>,
    /// One LM step per UI frame on the UI thread instead of a thread: always in the browser (no
    /// threads in wasm); natively when set (the tests run the browser's path this way).
    pub stepped: bool,
    refiner: Option<Refiner>,
    run: Option<Run>,
    pub(crate) incoming: Option<mpsc::Receiver<super::files::PickedTexts>>,
}

impl Default for RefineState {
    fn default() -> Self {
        Self { path: String::new(), name: None, warnings: Vec::new(), history: Vec::new(), outputs: None, error: None, steps_per_run: LmOptions::default().max_iterations, export_dir: ".".to_owned(), message: None, stepped: false, refiner: None, run: None, incoming: None }
    }
}

/// Finishes `refiner` into its outputs.
fn outputs(refiner: &Refiner, seconds: f64, cancelled: bool) -> Result<Outputs, String> {
    let finished = finish(refiner, seconds).map_err(|e| e.to_string())?;
    let result_json = serde_json::to_string_pretty(&finished.result).map_err(|e| e.to_string())?;
    let refined_cif = refined_cif(&refiner.experiment().start_cif, &refiner.state().asu, &finished.uncertainties).map_err(|e| e.to_string());
    Ok(Outputs { finished, result_json, refined_cif, cancelled })
}

/// One step of a run: `Ok(Some(report))` to go on, `Ok(None)` when the refiner is done, `Err`
/// with `true` when cancelled or the error's text.
fn step(refiner: &mut Refiner, cancel: &CancelToken) -> Result<Option<StepReport>, Result<bool, String>> {
    if refiner.is_done() {
        return Ok(None);
    }
    match refiner.step(cancel) {
        Ok(report) => Ok(Some(report)),
        Err(RefineError::Cancelled) => Err(Ok(true)),
        Err(e) => Err(Err(e.to_string())),
    }
}

impl RefineState {
    /// Opens an experiment from its YAML text and a reader of the files it names.
    pub fn open_texts(&mut self, yaml_name: &str, yaml: &str, files: &BTreeMap<String, String>) -> Result<(), String> {
        let mut read = |name: &str| {
            let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
            files.get(name).or_else(|| files.get(base)).map(|text| (base.to_owned(), text.clone())).ok_or_else(|| RefineError::Io { path: name.to_owned(), message: "not among the picked files".to_owned() })
        };
        let opened = Experiment::from_texts(yaml_name, yaml, &mut read);
        self.adopt(opened, yaml_name)
    }

    /// Opens the experiment folder (or YAML) at `path` (desktop).
    pub fn open_path(&mut self, path: &str) -> Result<(), String> {
        self.path = path.to_owned();
        self.adopt(Experiment::load(std::path::Path::new(path)), path)
    }

    fn adopt(&mut self, opened: Result<Experiment, RefineError>, what: &str) -> Result<(), String> {
        if self.run.is_some() {
            return Err("a refinement is running: cancel it first".to_owned());
        }
        let result = opened.and_then(|experiment| {
            let (name, warnings) = (experiment.config.name.clone(), experiment.warnings.clone());
            Refiner::new(experiment, LmOptions::default()).map(|r| (r, name, warnings))
        });
        match result {
            Ok((refiner, name, warnings)) => {
                self.name = Some(if name.is_empty() { what.to_owned() } else { name });
                (self.warnings, self.history, self.outputs, self.error) = (warnings, Vec::new(), None, None);
                self.refiner = Some(refiner);
                Ok(())
            }
            Err(e) => {
                self.error = Some(e.to_string());
                Err(e.to_string())
            }
        }
    }

    /// Starts (or resumes) a run of at most `steps` LM iterations.
    pub fn start(&mut self, steps: usize) -> Result<(), String> {
        if self.run.is_some() {
            return Err("a refinement is running".to_owned());
        }
        if self.refiner.is_none() {
            return Err("open an experiment first".to_owned());
        }
        let cancel = CancelToken::new();
        self.error = None;
        if self.stepped || cfg!(target_arch = "wasm32") {
            self.run = Some(Run::Stepped { cancel, steps_left: steps, started: web_time::Instant::now() });
            return Ok(());
        }
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(refiner) = self.refiner.take() {
            let (tx, rx) = mpsc::channel();
            let token = cancel.clone();
            std::thread::spawn(move || {
                let (mut refiner, started) = (refiner, web_time::Instant::now());
                let mut end = Ok(false);
                for _ in 0..steps {
                    match step(&mut refiner, &token) {
                        Ok(Some(report)) => {
                            let _ = tx.send(Msg::Step(report));
                        }
                        Ok(None) => break,
                        Err(e) => {
                            end = e;
                            break;
                        }
                    }
                }
                let done = end.and_then(|cancelled| outputs(&refiner, started.elapsed().as_secs_f64(), cancelled || token.is_cancelled()));
                let _ = tx.send(Msg::Done(Box::new((refiner, done))));
            });
            self.run = Some(Run::Thread { rx, cancel });
        }
        Ok(())
    }

    /// Asks the running refinement to stop (it stops between model evaluations and is finished).
    pub fn cancel(&mut self) {
        match &self.run {
            #[cfg(not(target_arch = "wasm32"))]
            Some(Run::Thread { cancel, .. }) => cancel.cancel(),
            Some(Run::Stepped { cancel, .. }) => cancel.cancel(),
            None => {}
        }
    }

    /// Whether a run is going.
    pub fn is_running(&self) -> bool {
        self.run.is_some()
    }

    /// Whether a browser pick is on its way.
    pub fn is_waiting(&self) -> bool {
        self.incoming.is_some()
    }

    /// Whether an experiment is open.
    pub fn has_experiment(&self) -> bool {
        self.refiner.is_some() || self.run.is_some()
    }

    /// Takes step reports and finished runs (natively), or runs one step (browser); opens picked files.
    pub fn poll(&mut self) {
        self.poll_picked();
        match self.run.take() {
            #[cfg(not(target_arch = "wasm32"))]
            Some(Run::Thread { rx, cancel }) => {
                let mut finished = None;
                while let Ok(msg) = rx.try_recv() {
                    match msg {
                        Msg::Step(report) => self.history.push(report),
                        Msg::Done(boxed) => finished = Some(*boxed),
                    }
                }
                match finished {
                    Some((refiner, done)) => {
                        self.refiner = Some(refiner);
                        self.take_outputs(done);
                    }
                    None if matches!(rx.try_recv(), Err(mpsc::TryRecvError::Disconnected)) => self.error = Some("the refinement thread stopped".to_owned()),
                    None => self.run = Some(Run::Thread { rx, cancel }),
                }
            }
            Some(Run::Stepped { cancel, steps_left, started }) => {
                let Some(refiner) = self.refiner.as_mut() else { return };
                let next = if steps_left == 0 || cancel.is_cancelled() { Err(Ok(cancel.is_cancelled())) } else { step(refiner, &cancel) };
                match next {
                    Ok(Some(report)) => {
                        self.history.push(report);
                        self.run = Some(Run::Stepped { cancel, steps_left: steps_left - 1, started });
                    }
                    Ok(None) => {
                        let done = outputs(refiner, started.elapsed().as_secs_f64(), false);
                        self.take_outputs(done);
                    }
                    Err(end) => {
                        let done = end.and_then(|cancelled| outputs(refiner, started.elapsed().as_secs_f64(), cancelled));
                        self.take_outputs(done);
                    }
                }
            }
            None => {}
        }
    }

    fn take_outputs(&mut self, done: Result<Outputs, String>) {
        match done {
            Ok(outputs) => self.outputs = Some(outputs),
            Err(e) => self.error = Some(e),
        }
    }

    fn poll_picked(&mut self) {
        let Some(rx) = &self.incoming else { return };
        let Ok(files) = rx.try_recv() else { return };
        self.incoming = None;
        self.open_files(files);
    }

    /// Opens the experiment of picked or dropped files (the YAML among them names the others).
    pub fn open_files(&mut self, files: super::files::PickedTexts) {
        let mut texts = BTreeMap::new();
        for (name, text) in files {
            match text {
                Ok(text) => {
                    texts.insert(name, text);
                }
                Err(e) => {
                    self.error = Some(format!("{name}: {e}"));
                    return;
                }
            }
        }
        let yaml = texts.iter().find(|(n, _)| n.ends_with(".yaml") || n.ends_with(".yml")).map(|(n, t)| (n.clone(), t.clone()));
        match yaml {
            Some((name, text)) => {
                let _ = self.open_texts(&name, &text, &texts);
            }
            None => self.error = Some("pick the experiment's .yaml together with its .cif_pets and CIF".to_owned()),
        }
    }

    /// The page's part of the status JSON.
    pub fn status_json(&self) -> serde_json::Value {
        let last = self.history.last();
        let result = self.outputs.as_ref().map(|o| {
            let r = &o.finished.result;
            serde_json::json!({"wR2": r.wr2, "startWR2": r.start.wr2, "iterations": r.iterations, "stop": r.stop, "cancelled": o.cancelled,
                "parameters": r.parameters.len(), "frames": r.per_frame.len(), "refinedCif": o.refined_cif.is_ok()})
        });
        serde_json::json!({
            "experiment": self.name, "running": self.is_running(), "error": self.error, "steps": self.history.len(),
            "iteration": last.map(|r| r.iteration), "wR2": last.map(|r| r.wr2), "wR2History": self.history.iter().map(|r| r.wr2).collect::<Vec<_>>(),
            "result": result,
        })
    }
}
