//! Browser: a refinement run is the npm package's Worker's `blochRefine` request (the worker
//! loop `lab.blochRefine` drives: one iteration per worker turn, progress after each, a `cancel`
//! message stops it after the iteration in progress). The CPU worker runs it (the model and its
//! Jacobian are f64). Progress reports land in a queue the page drains every frame.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use js_sys::Object;
use scatterlab_bloch::refine::Optimizer;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::refine_outputs::{Outputs, Progress};
use crate::compute_job::{self, Job, JobPoll};
use crate::worker_client::{js_error, json_text, ready, set, AppWorker, ProgressFn};
use crate::Device;

/// The request in flight: its worker and id once posted.
type Posted = Rc<RefCell<Option<(Rc<AppWorker>, u32)>>>;

/// One run in the worker.
pub struct WorkerRun {
    job: Job<Result<Outputs, String>>,
    progress: Rc<RefCell<Vec<Progress>>>,
    posted: Posted,
    cancelled: Rc<RefCell<bool>>,
}

impl WorkerRun {
    /// Asks the worker to stop after the iteration in progress (at once if already posted,
    /// otherwise as soon as it is).
    pub fn cancel(&self) {
        *self.cancelled.borrow_mut() = true;
        if let Some((worker, id)) = self.posted.borrow().as_ref() {
            worker.cancel(*id);
        }
    }

    /// Progress points that arrived since the last call.
    pub fn take_progress(&self) -> Vec<Progress> {
        std::mem::take(&mut *self.progress.borrow_mut())
    }

    /// The run's outputs once it has finished.
    pub fn poll(&self) -> Option<Result<Outputs, String>> {
        match self.job.poll() {
            JobPoll::Pending => None,
            JobPoll::Done(done) => Some(done),
            JobPoll::Lost => Some(Err("the refinement job was lost".to_owned())),
        }
    }
}

/// Posts `files` (name → text; `yaml_name` among them) to the CPU worker for at most
/// `max_iterations` iterations of `optimizer`; reported iterations are offset by `offset` (the
/// iterations of earlier runs of this experiment).
pub fn spawn(files: BTreeMap<String, String>, yaml_name: &str, optimizer: Optimizer, max_iterations: usize, offset: usize) -> WorkerRun {
    let progress: Rc<RefCell<Vec<Progress>>> = Rc::default();
    let posted: Posted = Rc::default();
    let cancelled = Rc::new(RefCell::new(false));
    // The workspace repaints every frame while a run is going, so no context is needed here.
    let repaint = egui::Context::default();
    let (p, q, c, yaml) = (progress.clone(), posted.clone(), cancelled.clone(), yaml_name.to_owned());
    let job = compute_job::spawn(repaint.clone(), move || async move { run(files, yaml, optimizer, max_iterations, offset, p, q, c, repaint).await });
    WorkerRun { job, progress, posted, cancelled }
}

#[allow(clippy::too_many_arguments)]
async fn run(
    files: BTreeMap<String, String>,
    yaml: String,
    optimizer: Optimizer,
    max_iterations: usize,
    offset: usize,
    progress: Rc<RefCell<Vec<Progress>>>,
    posted: Posted,
    cancelled: Rc<RefCell<bool>>,
    repaint: egui::Context,
) -> Result<Outputs, String> {
    let worker = ready(Device::Cpu).await?;
    let texts = Object::new();
    for (name, text) in &files {
        set(&texts, name, &JsValue::from_str(text));
    }
    let options = Object::new();
    set(&options, "optimizer", &optimizer.name().into());
    set(&options, "maxIterations", &(max_iterations as f64).into());
    set(&options, "experiment", &yaml.as_str().into());
    let message = Object::new();
    set(&message, "op", &"blochRefine".into());
    set(&message, "files", &texts);
    set(&message, "options", &options);
    let on_progress: ProgressFn = Box::new(move |p: &JsValue| {
        #[derive(serde::Deserialize)]
        struct Report {
            iteration: usize,
            evaluations: usize,
            #[serde(rename = "wR2")]
            wr2: f64,
        }
        // Iteration 0 is the start point: the page's history holds taken iterations only.
        if let Ok(r) = serde_json::from_str::<Report>(&json_text(p)) {
            if r.iteration > 0 {
                progress.borrow_mut().push(Progress { iteration: offset + r.iteration, evaluations: r.evaluations, wr2: r.wr2, lambda: None });
            }
        }
        repaint.request_repaint();
    });
    let id = worker.next_id();
    let promise = worker.request(message, Some(on_progress))?;
    *posted.borrow_mut() = Some((worker.clone(), id));
    if *cancelled.borrow() {
        worker.cancel(id);
    }
    let answer = JsFuture::from(promise).await.map_err(|e| js_error(&e))?;
    Outputs::from_answer(&json_text(&answer))
}
