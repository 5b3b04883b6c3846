//! The reflectivity panel's Fit tab: load a model (model JSON or fixture fit task) and measured
//! data (ORSO `.ort`, text columns) by drag and drop, a path (desktop) or a file picker (web);
//! edit values, vary flags and bounds; fit (DE + LM, LM, MCMC) as a background job with live
//! progress and Cancel, then Resume or Polish; see data with error bars over the model; export
//! the model JSON, the curves and the depth profile as CSV, and the plots as PNG.
//!
//! Parameter edits never change a loaded [`Model`] in place: each edit builds a new model from a
//! modified `ModelFile` through `Model::new`, which validates it; a rejected edit is shown and the
//! last valid model stays.

mod controls;
pub mod corner;
mod data_ui;
pub mod export;
pub mod job;
pub mod loading;
mod params;
pub mod plot;
pub mod q_units;
pub mod residuals;
pub mod roles;
mod running;
mod settings;
mod stages;
mod update;
#[cfg(target_arch = "wasm32")]
pub(crate) mod web_io;
#[cfg(target_arch = "wasm32")]
mod worker_fit;
pub mod worker_protocol;

use std::collections::BTreeMap;
use std::sync::{mpsc, Arc};

use scatterlab_core::CancelToken;
use scatterlab_refl::model::{Model, ParamSpec, Polarization};

use crate::compute_job::Job;
pub use job::run_fit;
pub use loading::{LoadedData, Target};
pub use plot::FitView;
pub use settings::{DeState, FitRequest, FitResult, FitSettings, McmcSummary, Method, Progress, ProgressSink, Stage, Start};
pub use stages::de_options;
pub use update::fmt_chi2;

/// A file read in the background (web drops and picks): its name and bytes, or why not.
type Incoming = (String, Result<Vec<u8>, String>);

/// Data loaded and waiting for the user to say where it belongs.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingData {
    /// The curve.
    pub loaded: LoadedData,
    /// Photon energy it was measured at, eV.
    pub energy_ev: f64,
    /// Its polarisation.
    pub polarization: Polarization,
    /// A new dataset, or the dataset whose data it replaces.
    pub target: Target,
    /// The unit of the file's q column, converted to Å⁻¹ on attach.
    pub q_unit: q_units::QUnit,
}

/// A fit in flight.
#[derive(Debug)]
struct RunningFit {
    job: Job<Result<FitResult, String>>,
    progress: ProgressSink,
    cancel: CancelToken,
    started: web_time::Instant,
}

/// Model curves (and χ²) at the current model's values, cached per model revision.
#[derive(Debug)]
pub(crate) struct Curves {
    revision: u64,
    log_transform: bool,
    /// The parameter vector the curves are for (the model's, or DE's best while it runs).
    pub values: Vec<f64>,
    /// `[dataset][q]`, or why the model could not be evaluated.
    pub curves: Result<Vec<Vec<f64>>, String>,
    /// χ² at the current values, or why there is none (no data, nothing varies).
    pub chi2: Result<f64, String>,
}

/// The Fit tab's state.
#[derive(Debug)]
pub struct FitPanel {
    model: Option<Model>,
    revision: u64,
    /// Where the model came from (a file name, or "layer table").
    pub source: String,
    /// The parameter table as edited (applied through `Model::new` when it differs).
    edits: BTreeMap<String, ParamSpec>,
    /// Edits `Model::new` refused, and why (not retried until they change).
    rejected: Option<(BTreeMap<String, ParamSpec>, String)>,
    /// Method, seed, device, limits.
    pub settings: FitSettings,
    /// The desktop's file path field.
    pub path: String,
    /// The folder exports are written to (desktop; the web downloads instead).
    pub export_dir: String,
    /// Loaded data waiting to be attached.
    pub pending: Vec<PendingData>,
    /// dR = this % of R for data files without a dR column.
    pub relative_dr_pct: f64,
    run: Option<RunningFit>,
    /// A fit waiting for the GPU pipeline to compile.
    queued: Option<FitRequest>,
    last_progress: Option<Progress>,
    result: Option<FitResult>,
    /// The last status line: `Ok(info)` or `Err(error)`.
    message: Option<Result<String, String>>,
    curves: Option<Curves>,
    /// Log R or R·q⁴.
    pub view: FitView,
    /// The dataset whose energy the depth profile is drawn at.
    pub profile_dataset: usize,
    incoming: (mpsc::Sender<Incoming>, mpsc::Receiver<Incoming>),
    shots: (mpsc::Sender<Arc<egui::ColorImage>>, mpsc::Receiver<Arc<egui::ColorImage>>),
    /// Screen rectangle of the plots, for cropping a screenshot.
    plot_rect: Option<egui::Rect>,
    /// The data plot's bounds `[q min, q max, y min, y max]` (moved by a pan or zoom).
    plot_bounds: Option<[f64; 4]>,
    /// Desktop: the open dialog ("Browse…") in flight.
    #[cfg(not(target_arch = "wasm32"))]
    open_dialog: crate::file_dialog::Pending,
    /// Desktop: the export-folder dialog in flight.
    #[cfg(not(target_arch = "wasm32"))]
    export_dialog: crate::file_dialog::Pending,
}

impl Default for FitPanel {
    fn default() -> Self {
        Self {
            model: None,
            revision: 0,
            source: String::new(),
            edits: BTreeMap::new(),
            rejected: None,
            settings: FitSettings::default(),
            path: String::new(),
            export_dir: ".".into(),
            pending: Vec::new(),
            relative_dr_pct: 5.0,
            run: None,
            queued: None,
            last_progress: None,
            result: None,
            message: None,
            curves: None,
            view: FitView::default(),
            profile_dataset: 0,
            incoming: mpsc::channel(),
            shots: mpsc::channel(),
            plot_rect: None,
            plot_bounds: None,
            #[cfg(not(target_arch = "wasm32"))]
            open_dialog: Default::default(),
            #[cfg(not(target_arch = "wasm32"))]
            export_dialog: Default::default(),
        }
    }
}

impl FitPanel {
    /// The current model (with the table's values), if one is loaded.
    pub fn model(&self) -> Option<&Model> {
        self.model.as_ref()
    }

    /// Where the data, residual and profile plots were drawn last (screen points).
    pub fn plot_rect(&self) -> Option<egui::Rect> {
        self.plot_rect
    }

    /// The bounds the data plot showed last: `[q min, q max, y min, y max]` (q in Å⁻¹).
    pub fn plot_bounds(&self) -> Option<[f64; 4]> {
        self.plot_bounds
    }

    /// The last finished fit.
    pub fn result(&self) -> Option<&FitResult> {
        self.result.as_ref()
    }

    /// The running fit's latest progress, or the last one of the finished fit.
    pub fn progress(&self) -> Option<Progress> {
        let live = self.run.as_ref().and_then(|r| r.progress.lock().ok()?.as_ref().cloned());
        live.or_else(|| self.last_progress.clone())
    }

    /// Objective evaluations per second of the running fit so far.
    pub fn evaluations_per_second(&self) -> Option<f64> {
        let run = self.run.as_ref()?;
        let p = self.progress()?;
        let s = run.started.elapsed().as_secs_f64();
        (s > 0.0).then(|| p.evaluations as f64 / s)
    }

    /// Whether a fit is running or waiting for the GPU.
    pub fn is_running(&self) -> bool {
        self.run.is_some() || self.queued.is_some()
    }

    /// The status line: `Ok(info)` or `Err(error)`.
    pub fn message(&self) -> Option<&Result<String, String>> {
        self.message.as_ref()
    }

    /// Why the last parameter edit was refused, if it was.
    pub fn edit_error(&self) -> Option<&str> {
        self.rejected.as_ref().map(|(_, e)| e.as_str())
    }

    /// Model curves and χ² at the current values (as of the last update).
    pub(crate) fn curves(&self) -> Option<&Curves> {
        self.curves.as_ref()
    }

    /// The parameter vector the plotted model curves are for: the model's values, or DE's best
    /// of the latest generation while a fit runs.
    pub fn plotted_values(&self) -> Option<&[f64]> {
        self.curves.as_ref().map(|c| c.values.as_slice())
    }

    /// The normalised residuals (R − R_model)/dR the residual plot shows, per dataset with data.
    pub fn residuals(&self) -> Vec<residuals::ResidualSeries> {
        match (&self.model, self.curves.as_ref().map(|c| &c.curves)) {
            (Some(m), Some(Ok(curves))) => residuals::series(m, curves),
            _ => Vec::new(),
        }
    }

    /// The parameters in the table's order (stack order) with their roles.
    pub fn parameter_order(&self) -> Vec<(String, roles::Role)> {
        self.model.as_ref().map(|m| roles::stack_order(m.file())).unwrap_or_default()
    }

    /// Replaces the model (a load, or a new model from the layer table); clears the old result.
    pub fn set_model(&mut self, model: Model, source: &str) {
        self.edits = model.file().parameters.clone();
        self.rejected = None;
        self.model = Some(model);
        self.revision += 1;
        self.source = source.to_owned();
        self.result = None;
        self.last_progress = None;
        self.profile_dataset = 0;
    }

    /// Builds a new model when the table's edits differ from the model (never mutating it).
    fn apply_edits(&mut self) {
        let Some(model) = &self.model else { return };
        if self.edits == model.file().parameters {
            self.rejected = None;
            return;
        }
        if self.rejected.as_ref().is_some_and(|(e, _)| *e == self.edits) {
            return;
        }
        let mut file = model.file().clone();
        file.parameters = self.edits.clone();
        match Model::new(file) {
            Ok(m) => {
                self.model = Some(m);
                self.revision += 1;
                self.rejected = None;
            }
            Err(e) => self.rejected = Some((self.edits.clone(), e.to_string())),
        }
    }
}
