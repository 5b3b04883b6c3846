//! The reflectivity panel: layer table, beam, q grid and resolution, device selector, status line,
//! a live plot of R(q) (log R, R·q⁴ or anisotropy) and the depth profile of the stack. Every change
//! of the inputs recomputes through `scatterlab_refl::compute` (or `compute_smeared`).
//! A second tab fits models to measured data ([`crate::refl_fit`]).

mod controls;
mod inputs;
pub mod layer_table;
pub mod materials;
pub mod plot;
pub mod profile_plot;
mod run;

use std::time::Duration;

use scatterlab_refl::Reflectivity;

use crate::compute_job::{self, Job, JobPoll};
use crate::gpu_engine::{GpuEngine, GpuReadiness, GpuSupport};
use crate::refl_fit::FitPanel;
pub use inputs::{Device, ReflInputs};
pub use plot::{PlotView, Series};
pub use profile_plot::DepthProfile;

/// One finished computation.
#[derive(Clone, Debug)]
pub struct Computed {
    /// The q grid, Å⁻¹.
    pub q: Vec<f64>,
    /// R_s and R_p at each q.
    pub reflectivity: Reflectivity,
    /// The device that actually ran: `"cpu f64"` or `"gpu f32 <GpuContext::describe()>"`.
    pub device: String,
    /// Wall time of the computation (on the GPU: upload, dispatch and readback).
    pub elapsed: Duration,
    /// The inputs this result belongs to.
    pub inputs: ReflInputs,
}

/// The panel's tabs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReflTab {
    /// Layer table, beam and live curves.
    #[default]
    Simulate,
    /// Model and data loading, fitting, results and exports.
    Fit,
}

/// A computation's result, or the error text shown in the status line.
pub type Outcome = Result<Computed, String>;

/// The reflectivity panel and its computation state.
#[derive(Debug)]
pub struct ReflPanel {
    /// What the user has set; edit freely, the next frame recomputes.
    pub inputs: ReflInputs,
    gpu: GpuEngine,
    outcome: Option<Outcome>,
    /// The inputs of the last computation started; differs from `inputs` when a run is due.
    computed_for: Option<ReflInputs>,
    /// A GPU job in flight (at most one: edits made meanwhile are coalesced into the next run).
    pending: Option<Job<Outcome>>,
    /// What the main plot shows (a view choice: changing it recomputes nothing).
    pub view: PlotView,
    /// The depth profile of `inputs.stack`, refreshed by [`Self::update`].
    profile: DepthProfile,
    /// The tab on display (a dropped file switches to Fit).
    pub tab: ReflTab,
    /// The Fit tab.
    pub fit: FitPanel,
    /// Layers whose formula or density could not give δ, β (they keep their last values).
    material_errors: Vec<String>,
}

impl ReflPanel {
    /// A panel on the built-in example stack; `gpu` is what the GPU option will use.
    pub fn new(gpu: GpuSupport) -> Self {
        let inputs = ReflInputs::example();
        Self {
            profile: DepthProfile::new(&inputs.stack),
            inputs,
            gpu: GpuEngine::new(gpu),
            outcome: None,
            computed_for: None,
            pending: None,
            view: PlotView::default(),
            tab: ReflTab::default(),
            fit: FitPanel::default(),
            material_errors: Vec::new(),
        }
    }

    /// The last outcome, if any computation has finished.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// The curves on display, if the last computation succeeded.
    pub fn curve(&self) -> Option<&Computed> {
        self.outcome.as_ref().and_then(|o| o.as_ref().ok())
    }

    /// The error on display, if the last computation failed.
    pub fn error(&self) -> Option<&str> {
        self.outcome.as_ref().and_then(|o| o.as_ref().err()).map(String::as_str)
    }

    /// Why a layer's formula or density could not give δ, β, one line per such layer.
    pub fn material_errors(&self) -> &[String] {
        &self.material_errors
    }

    /// The depth profile of the current stack (as of the last [`Self::update`]).
    pub fn profile(&self) -> &DepthProfile {
        &self.profile
    }

    /// The lines the main plot draws now: the current view of the curve on display.
    pub fn plotted_series(&self) -> Vec<Series> {
        self.curve().map(|c| plot::series(self.view, c)).unwrap_or_default()
    }

    /// True while a result for the current inputs is still to come.
    pub fn is_busy(&self) -> bool {
        self.pending.is_some() || self.computed_for.as_ref() != Some(&self.inputs)
    }

    /// The GPU device as the selector names it, or why there is none.
    pub fn gpu_description(&self) -> String {
        self.gpu.describe()
    }

    /// Collects finished jobs and starts a computation if the inputs changed. [`Self::ui`] calls
    /// this every frame; hosts and tests may call it directly.
    pub fn update(&mut self, repaint: &egui::Context) {
        // Formula layers first: their δ, β follow the energy (a change here recomputes).
        let energy = self.inputs.energy_ev;
        self.material_errors = materials::apply(&mut self.inputs.stack, &mut self.inputs.materials, energy);
        if self.profile.stack != self.inputs.stack {
            self.profile = DepthProfile::new(&self.inputs.stack);
        }
        if let Some(job) = &self.pending {
            match job.poll() {
                JobPoll::Pending => {}
                JobPoll::Done(outcome) => {
                    self.outcome = Some(outcome);
                    self.pending = None;
                }
                JobPoll::Lost => {
                    self.outcome = Some(Err("the GPU job ended without a result".into()));
                    self.pending = None;
                }
            }
        }
        if self.computed_for.as_ref() == Some(&self.inputs) {
            return;
        }
        match self.inputs.device {
            Device::Cpu => {
                // A GPU result still in flight is for inputs that are no longer wanted.
                self.pending = None;
                self.outcome = Some(run::run_cpu(&self.inputs));
                self.computed_for = Some(self.inputs.clone());
            }
            Device::Gpu if self.pending.is_some() => {} // runs when the job in flight ends
            Device::Gpu => match self.gpu.readiness(repaint) {
                GpuReadiness::Compiling => {} // the compile job requests a repaint when done
                GpuReadiness::Unusable(why) => {
                    // Shown as an error: never fall back to the CPU behind the user's back.
                    self.outcome = Some(Err(why));
                    self.computed_for = Some(self.inputs.clone());
                }
                GpuReadiness::Ready(pipeline) => {
                    let inputs = self.inputs.clone();
                    self.pending = Some(compute_job::spawn(repaint.clone(), move || run::run_gpu(pipeline, inputs)));
                    self.computed_for = Some(self.inputs.clone());
                }
            },
        }
    }

    /// One line: the device that ran, the time and the size, or what is being waited for.
    pub fn status_text(&self) -> String {
        let mut text = match &self.outcome {
            Some(Ok(c)) => format!("{} · {} · {} points", c.device, format_duration(c.elapsed), c.q.len()),
            Some(Err(e)) => format!("error: {e}"),
            None => "no result yet".to_owned(),
        };
        if self.pending.is_some() {
            text.push_str(" · computing on the GPU...");
        } else if self.is_busy() && self.inputs.device == Device::Gpu {
            text.push_str(" · compiling the GPU pipeline...");
        }
        text
    }

    /// Draws the panel (and updates it first).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        self.update(ui.ctx());
        if self.fit.update(ui.ctx(), &mut self.gpu) {
            self.tab = ReflTab::Fit;
        }
        ui.horizontal(|ui| {
            ui.selectable_value(&mut self.tab, ReflTab::Simulate, "Simulate");
            let fit = ui.selectable_value(&mut self.tab, ReflTab::Fit, "Fit");
            crate::landmarks::mark(&fit, "tab Fit");
        });
        if self.tab == ReflTab::Fit {
            self.fit.ui(ui, &mut self.gpu, &self.inputs);
            return;
        }
        if self.is_busy() {
            // Belt and braces: jobs request a repaint when done, this covers a lost wake-up.
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        // The layer table, beam and device side by side when they fit the width (as measured
        // last frame), else the table above the other two; scrolled within 60 % of the height
        // so that the plots keep the rest (a narrow window neither clips nor hides them).
        let id = egui::Id::unique("refl_inputs_widths");
        let widths: Option<[f32; 3]> = ui.data(|d| d.get_temp(id));
        let gap = ui.spacing().item_spacing.x;
        let fits = |w: [f32; 3]| w.iter().sum::<f32>() + 2.0 * gap <= ui.available_width();
        let side_by_side = widths.is_none_or(fits);
        if widths.is_none() {
            ui.ctx().request_repaint();
        }
        let mut measured = [0.0; 3];
        egui::ScrollArea::both().id_salt("refl_inputs_scroll").max_height((ui.available_height() * 0.6).max(200.0)).show(ui, |ui| {
            let table = |this: &mut Self, ui: &mut egui::Ui| {
                let group = ui.group(|ui| {
                    ui.vertical(|ui| {
                        ui.strong("Layers (fronting medium first, substrate last)");
                        let inputs = &mut this.inputs;
                        layer_table::show(ui, &mut inputs.stack, &mut inputs.materials);
                        for e in &this.material_errors {
                            ui.colored_label(ui.visuals().error_fg_color, e);
                        }
                    });
                });
                group.response.rect.width()
            };
            let others = |this: &mut Self, ui: &mut egui::Ui| {
                let beam = ui.group(|ui| ui.vertical(|ui| this.beam_ui(ui)));
                let device = ui.group(|ui| ui.vertical(|ui| this.device_ui(ui)));
                [beam.response.rect.width(), device.response.rect.width()]
            };
            if side_by_side {
                ui.horizontal_top(|ui| {
                    measured[0] = table(self, ui);
                    [measured[1], measured[2]] = others(self, ui);
                });
            } else {
                measured[0] = table(self, ui);
                ui.horizontal_top(|ui| [measured[1], measured[2]] = others(self, ui));
            }
        });
        ui.data_mut(|d| d.insert_temp(id, measured));
        let status = self.status_text();
        if self.error().is_some() {
            ui.colored_label(ui.visuals().error_fg_color, status);
        } else {
            ui.label(status);
        }
        self.view_ui(ui);
        // Main plot on the left, the (narrower) depth profile beside it.
        let width = ui.available_width();
        let main_width = (width * 0.64).max(200.0);
        ui.horizontal_top(|ui| {
            plot::show(ui, self.view, self.curve(), main_width);
            let rest = ui.available_width().max(150.0);
            profile_plot::show(ui, &self.profile, rest);
        });
    }
}

/// Milliseconds with sensible precision.
fn format_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms < 10.0 {
        format!("{ms:.3} ms")
    } else {
        format!("{ms:.1} ms")
    }
}
