//! The reflectivity panel: layer table, beam and q grid, device selector, status line and a
//! live log10 R(q) plot. Every change of the inputs recomputes through `scatterlab_refl::compute`.

mod inputs;
pub mod layer_table;
pub mod plot;
mod run;

use std::time::Duration;

use scatterlab_refl::Reflectivity;

use crate::compute_job::{self, Job, JobPoll};
use crate::gpu_engine::{GpuEngine, GpuReadiness, GpuSupport};
pub use inputs::{Device, ReflInputs};

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
}

impl ReflPanel {
    /// A panel on the built-in example stack; `gpu` is what the GPU option will use.
    pub fn new(gpu: GpuSupport) -> Self {
        Self {
            inputs: ReflInputs::example(),
            gpu: GpuEngine::new(gpu),
            outcome: None,
            computed_for: None,
            pending: None,
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
        self.outcome
            .as_ref()
            .and_then(|o| o.as_ref().err())
            .map(String::as_str)
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
                    self.pending = Some(compute_job::spawn(repaint.clone(), move || {
                        run::run_gpu(pipeline, inputs)
                    }));
                    self.computed_for = Some(self.inputs.clone());
                }
            },
        }
    }

    /// One line: the device that ran, the time and the size, or what is being waited for.
    pub fn status_text(&self) -> String {
        let mut text = match &self.outcome {
            Some(Ok(c)) => format!(
                "{} · {} · {} points",
                c.device,
                format_duration(c.elapsed),
                c.q.len()
            ),
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
        if self.is_busy() {
            // Belt and braces: jobs request a repaint when done, this covers a lost wake-up.
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        egui::ScrollArea::horizontal()
            .id_salt("refl_inputs_scroll")
            .show(ui, |ui| {
                ui.horizontal_top(|ui| {
                    ui.group(|ui| {
                        ui.vertical(|ui| {
                            ui.strong("Layers (fronting medium first, substrate last)");
                            layer_table::show(ui, &mut self.inputs.stack);
                        });
                    });
                    ui.group(|ui| ui.vertical(|ui| self.beam_ui(ui)));
                    ui.group(|ui| ui.vertical(|ui| self.device_ui(ui)));
                });
            });
        let status = self.status_text();
        if self.error().is_some() {
            ui.colored_label(ui.visuals().error_fg_color, status);
        } else {
            ui.label(status);
        }
        plot::show(ui, self.curve());
    }

    /// Energy and q grid.
    fn beam_ui(&mut self, ui: &mut egui::Ui) {
        let inputs = &mut self.inputs;
        ui.strong("Beam and q grid");
        egui::Grid::new("refl_beam").num_columns(2).show(ui, |ui| {
            let label = ui.label("energy");
            ui.add(
                egui::DragValue::new(&mut inputs.energy_ev)
                    .range(1.0..=1.0e5)
                    .speed(0.5)
                    .suffix(" eV"),
            )
            .labelled_by(label.id);
            ui.end_row();
            let label = ui.label("q min");
            ui.add(q_value(&mut inputs.q_min)).labelled_by(label.id);
            ui.end_row();
            let label = ui.label("q max");
            ui.add(q_value(&mut inputs.q_max)).labelled_by(label.id);
            ui.end_row();
            let label = ui.label("points");
            ui.add(
                egui::DragValue::new(&mut inputs.n_points)
                    .range(2..=100_000)
                    .speed(1.0),
            )
            .labelled_by(label.id);
            ui.end_row();
        });
        // The engine rejects q ≥ 2k0 and says so; the limit is shown up front so that is rare.
        ui.weak(format!(
            "q must stay below 2k0 = {:.4} Å⁻¹",
            inputs.q_limit()
        ));
    }

    /// CPU/GPU selector, naming the GPU device or saying why there is none.
    fn device_ui(&mut self, ui: &mut egui::Ui) {
        ui.strong("Device");
        ui.radio_value(&mut self.inputs.device, Device::Cpu, Device::Cpu.label());
        ui.radio_value(&mut self.inputs.device, Device::Gpu, Device::Gpu.label());
        if self.gpu.is_available() {
            ui.weak(self.gpu.describe());
        } else {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!("GPU {}", self.gpu.describe()),
            );
        }
    }
}

/// A q value in Å⁻¹.
fn q_value(value: &mut f64) -> egui::DragValue<'_> {
    egui::DragValue::new(value)
        .range(1.0e-6..=10.0)
        .speed(1.0e-4)
        .max_decimals(5)
        .suffix(" Å⁻¹")
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
