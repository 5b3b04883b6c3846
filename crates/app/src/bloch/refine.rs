//! The Refine page's state and driver: a diffBloch experiment (`experiment.yaml`, its
//! `.cif_pets` and start CIF) refined by `scatterlab_bloch::refine::Refiner`. Natively the
//! iterations run on a thread (reports come back through a channel) and the refiner is kept, so
//! Run again resumes where it stopped. In the browser the run is the npm package's Worker's
//! `blochRefine` (as reflectivity fits are; see `refine_worker`), so the UI thread never evaluates
//! the model; a resume there sends the last refined CIF as the start structure. A run stops at its
//! step budget, when the refiner is done, or on Cancel, and is then finished (`Outputs`).

use std::collections::BTreeMap;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::mpsc;

use scatterlab_bloch::refine::{Experiment, LmOptions, Optimizer, RefineError, Refiner};
#[cfg(not(target_arch = "wasm32"))]
use scatterlab_core::CancelToken;

pub use super::refine_outputs::{ObsCalc, Outputs, Progress};

/// What the native refinement thread reports.
#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::large_enum_variant)] // one `Done` per run: boxing would save nothing that matters
enum Msg {
    Step(Progress),
    Done(Option<Box<Refiner>>, Result<Outputs, String>),
}

enum Run {
    /// Native: the refiner is on a thread.
    #[cfg(not(target_arch = "wasm32"))]
    Thread { rx: mpsc::Receiver<Msg>, cancel: CancelToken },
    /// Browser: the npm Worker runs it.
    #[cfg(target_arch = "wasm32")]
    Worker(super::refine_worker::WorkerRun),
}

/// The opened experiment's files (the browser's worker is sent them with every run).
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
struct Texts {
    yaml_name: String,
    files: BTreeMap<String, String>,
    /// The key of the start CIF among `files` (replaced by the refined CIF on a resume).
    structure: Option<String>,
}

/// The Refine page.
pub struct RefineState {
    /// The experiment folder typed on the desktop.
    pub path: String,
    /// The opened experiment's name (its YAML `name`, else the file).
    pub name: Option<String>,
    /// Loading warnings (cell differences, …).
    pub warnings: Vec<String>,
    /// Every progress point so far (all runs).
    pub history: Vec<Progress>,
    /// The last finished run's outputs.
    pub outputs: Option<Outputs>,
    /// Why the last open or run failed.
    pub error: Option<String>,
    /// Steps per Run (the refiner stops earlier when converged).
    pub steps_per_run: usize,
    /// The optimiser (chosen before the first run).
    pub optimizer: Optimizer,
    /// The frame on display in the frame browser (a PETS frame id).
    pub frame: Option<i64>,
    /// The frame browser's log axes.
    pub frames_log: bool,
    /// Where exports go on the desktop.
    pub export_dir: String,
    /// The last export's message.
    pub message: Option<Result<String, String>>,
    experiment: Option<Experiment>,
    texts: Option<Texts>,
    refiner: Option<Refiner>,
    run: Option<Run>,
    pub(crate) incoming: Option<std::sync::mpsc::Receiver<super::files::PickedTexts>>,
}

impl Default for RefineState {
    fn default() -> Self {
        Self {
            path: String::new(),
            name: None,
            warnings: Vec::new(),
            history: Vec::new(),
            outputs: None,
            error: None,
            steps_per_run: LmOptions::default().max_iterations,
            optimizer: Optimizer::Lm,
            frame: None,
            frames_log: false,
            export_dir: ".".to_owned(),
            message: None,
            experiment: None,
            texts: None,
            refiner: None,
            run: None,
            incoming: None,
        }
    }
}

impl RefineState {
    /// Opens an experiment from its YAML text and a reader of the files it names.
    pub fn open_texts(&mut self, yaml_name: &str, yaml: &str, files: &BTreeMap<String, String>) -> Result<(), String> {
        let mut used = None;
        let mut read = |name: &str| {
            let base = name.rsplit(['/', '\\']).next().unwrap_or(name);
            let key = if files.contains_key(name) { name } else { base };
            let text = files.get(key).ok_or_else(|| RefineError::Io { path: name.to_owned(), message: "not among the picked files".to_owned() })?;
            if name.ends_with(".cif") {
                used = Some(key.to_owned());
            }
            Ok((base.to_owned(), text.clone()))
        };
        let opened = Experiment::from_texts(yaml_name, yaml, &mut read);
        let mut all = files.clone();
        all.insert(yaml_name.to_owned(), yaml.to_owned());
        let structure = opened.as_ref().ok().and_then(|e| {
            let s = &e.config.inputs.structure;
            let base = s.rsplit(['/', '\\']).next().unwrap_or(s);
            [s.as_str(), base].into_iter().find(|k| files.contains_key(*k)).map(str::to_owned)
        });
        self.adopt(opened, yaml_name)?;
        self.texts = Some(Texts { yaml_name: yaml_name.to_owned(), files: all, structure: structure.or(used) });
        Ok(())
    }

    /// Opens the experiment folder (or YAML) at `path` (desktop).
    pub fn open_path(&mut self, path: &str) -> Result<(), String> {
        self.path = path.to_owned();
        self.adopt(Experiment::load(std::path::Path::new(path)), path)
    }

    /// Takes a parsed experiment (the model is first evaluated when a run starts, off this thread).
    fn adopt(&mut self, opened: Result<Experiment, RefineError>, what: &str) -> Result<(), String> {
        if self.run.is_some() {
            return Err("a refinement is running: cancel it first".to_owned());
        }
        match opened {
            Ok(experiment) => {
                let name = experiment.config.name.clone();
                self.name = Some(if name.is_empty() { what.to_owned() } else { name });
                (self.warnings, self.history, self.outputs, self.error, self.frame) = (experiment.warnings.clone(), Vec::new(), None, None, None);
                (self.experiment, self.refiner, self.texts) = (Some(experiment), None, None);
                Ok(())
            }
            Err(e) => {
                self.error = Some(e.to_string());
                Err(e.to_string())
            }
        }
    }

    /// Starts (or resumes) a run of at most `steps` iterations.
    pub fn start(&mut self, steps: usize) -> Result<(), String> {
        if self.run.is_some() {
            return Err("a refinement is running".to_owned());
        }
        let Some(experiment) = &self.experiment else {
            return Err("open an experiment first".to_owned());
        };
        self.error = None;
        let options = LmOptions::for_experiment(&experiment.config, self.optimizer, None);
        #[cfg(target_arch = "wasm32")]
        {
            let texts = self.texts.as_ref().ok_or("in the browser, open the experiment's files (picker or drop)")?;
            let mut files = texts.files.clone();
            if let (Some(key), Some(Ok(cif))) = (&texts.structure, self.outputs.as_ref().map(|o| &o.refined_cif)) {
                files.insert(key.clone(), cif.clone());
            }
            let offset = self.history.last().map_or(0, |p| p.iteration);
            let budget = (offset + steps).min(options.max_iterations).saturating_sub(offset).max(1);
            self.run = Some(Run::Worker(super::refine_worker::spawn(files, &texts.yaml_name, self.optimizer, budget, offset)));
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            let (refiner, experiment) = (self.refiner.take(), experiment.clone());
            let (tx, rx) = mpsc::channel();
            let cancel = CancelToken::new();
            let token = cancel.clone();
            std::thread::spawn(move || {
                let started = web_time::Instant::now();
                let refiner = match refiner.map(Ok).unwrap_or_else(|| Refiner::new(experiment, options)) {
                    Ok(r) => r,
                    Err(e) => return drop(tx.send(Msg::Done(None, Err(e.to_string())))),
                };
                let (refiner, done) = run_steps(refiner, steps, &token, &tx, started);
                let _ = tx.send(Msg::Done(Some(Box::new(refiner)), done));
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
            #[cfg(target_arch = "wasm32")]
            Some(Run::Worker(run)) => run.cancel(),
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
        self.experiment.is_some()
    }

    /// Takes progress and finished runs; opens picked files.
    pub fn poll(&mut self) {
        self.poll_picked();
        match self.run.take() {
            #[cfg(not(target_arch = "wasm32"))]
            Some(Run::Thread { rx, cancel }) => {
                let mut finished = None;
                while let Ok(msg) = rx.try_recv() {
                    match msg {
                        Msg::Step(p) => self.history.push(p),
                        Msg::Done(refiner, done) => finished = Some((refiner, done)),
                    }
                }
                match finished {
                    Some((refiner, done)) => {
                        self.refiner = refiner.map(|r| *r);
                        self.take_outputs(done);
                    }
                    None if matches!(rx.try_recv(), Err(mpsc::TryRecvError::Disconnected)) => self.error = Some("the refinement thread stopped".to_owned()),
                    None => self.run = Some(Run::Thread { rx, cancel }),
                }
            }
            #[cfg(target_arch = "wasm32")]
            Some(Run::Worker(run)) => {
                self.history.extend(run.take_progress());
                match run.poll() {
                    Some(done) => self.take_outputs(done),
                    None => self.run = Some(Run::Worker(run)),
                }
            }
            None => {}
        }
    }

    fn take_outputs(&mut self, done: Result<Outputs, String>) {
        match done {
            Ok(outputs) => {
                self.frame = self.frame.filter(|f| outputs.frames.contains_key(f)).or_else(|| outputs.frames.keys().next().copied());
                self.outputs = Some(outputs);
            }
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
            let r = &o.result;
            serde_json::json!({"wR2": r.wr2, "startWR2": r.start.wr2, "iterations": r.iterations, "stop": r.stop, "cancelled": o.cancelled,
                "parameters": r.parameters.len(), "frames": r.per_frame.len(), "refinedCif": o.refined_cif.is_ok(), "optimizer": r.optimizer})
        });
        serde_json::json!({
            "experiment": self.name, "running": self.is_running(), "error": self.error, "steps": self.history.len(),
            "iteration": last.map(|r| r.iteration), "wR2": last.map(|r| r.wr2), "wR2History": self.history.iter().map(|r| r.wr2).collect::<Vec<_>>(),
            "frame": self.frame, "result": result,
        })
    }
}

/// Runs at most `steps` iterations of `refiner` on this (native) thread, sending each report,
/// and finishes it.
#[cfg(not(target_arch = "wasm32"))]
fn run_steps(mut refiner: Refiner, steps: usize, cancel: &CancelToken, tx: &mpsc::Sender<Msg>, started: web_time::Instant) -> (Refiner, Result<Outputs, String>) {
    let mut end = Ok(false);
    for _ in 0..steps {
        if refiner.is_done() {
            break;
        }
        match refiner.step(cancel) {
            Ok(report) => {
                let _ = tx.send(Msg::Step(Progress::from(&report)));
            }
            Err(RefineError::Cancelled) => {
                end = Ok(true);
                break;
            }
            Err(e) => {
                end = Err(e.to_string());
                break;
            }
        }
    }
    let done = end.and_then(|cancelled| Outputs::from_refiner(&refiner, started.elapsed().as_secs_f64(), cancelled || cancel.is_cancelled()));
    (refiner, done)
}
