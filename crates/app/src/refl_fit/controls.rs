//! The Fit tab's layout, its load controls, and the fit controls with live progress.

use std::time::Duration;

use super::roles::stack_order;
use super::update::fmt_chi2;
use super::{params, FitPanel, Method, Start};
use crate::gpu_engine::GpuEngine;
use crate::{Device, ReflInputs};

impl FitPanel {
    /// Draws the tab (call [`FitPanel::update`] first, every frame).
    pub fn ui(&mut self, ui: &mut egui::Ui, gpu: &mut GpuEngine, inputs: &ReflInputs) {
        if self.is_running() {
            // Progress arrives from the job with a repaint request; this covers a lost wake-up.
            ui.ctx().request_repaint_after(Duration::from_millis(100));
        }
        egui::ScrollArea::both().id_salt("refl_fit_scroll").show(ui, |ui| {
            self.pair(ui, "controls", |this, ui| this.load_ui(ui, inputs), |this, ui| this.fit_ui(ui, gpu));
            self.status_ui(ui);
            self.pending_ui(ui);
            // The plots come before the tables, so a fit's curves show without scrolling
            // (1280 × 800); the parameter table and results follow.
            self.plots_ui(ui);
            self.export_ui(ui);
            // Without a model there is nothing to list: no empty frames in the empty state.
            let order = self.model.as_ref().map(|m| stack_order(m.file()));
            if let Some(order) = order {
                self.pair(
                    ui,
                    "tables",
                    |this, ui| this.params_ui(ui),
                    |this, ui| {
                        this.datasets_ui(ui);
                        if let Some(r) = &this.result {
                            ui.separator();
                            params::results(ui, r, &order);
                        }
                    },
                );
            }
        });
    }

    /// Two groups side by side when their widths (measured the frame before) fit the window,
    /// else one under the other: a narrow window stacks them instead of clipping the second.
    fn pair(&mut self, ui: &mut egui::Ui, name: &str, first: impl FnOnce(&mut Self, &mut egui::Ui), second: impl FnOnce(&mut Self, &mut egui::Ui)) {
        let id = egui::Id::unique(("refl_fit_pair", name));
        let widths: Option<[f32; 2]> = ui.data(|d| d.get_temp(id));
        let gap = ui.spacing().item_spacing.x;
        let beside = widths.is_none_or(|[a, b]| a + b + gap <= ui.available_width());
        let mut measured = [0.0f32; 2];
        let draw = |this: &mut Self, ui: &mut egui::Ui| {
            let first = ui.group(|ui| ui.vertical(|ui| first(this, ui)));
            measured[0] = first.response.rect.width();
            let second = ui.group(|ui| ui.vertical(|ui| second(this, ui)));
            measured[1] = second.response.rect.width();
        };
        if beside {
            ui.horizontal_top(|ui| draw(self, ui));
        } else {
            draw(self, ui);
        }
        if widths.is_none() {
            ui.ctx().request_repaint();
        }
        ui.data_mut(|d| d.insert_temp(id, measured));
    }

    /// Model source, path field or file picker, and the layer-table model.
    fn load_ui(&mut self, ui: &mut egui::Ui, inputs: &ReflInputs) {
        ui.strong("Model and data");
        if self.model().is_some() {
            ui.label(format!("model: {}", self.source));
        } else {
            ui.weak("no model loaded");
        }
        #[cfg(not(target_arch = "wasm32"))]
        ui.horizontal(|ui| {
            let field = ui
                .add(egui::TextEdit::singleline(&mut self.path).hint_text("path to a file"))
                .on_hover_text("A model JSON, a fit task, an ORSO .ort file or q R [dR [dQ]] columns")
                .accessible_name("file path");
            let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Load").clicked() || enter {
                let path = self.path.clone();
                self.load_path(&path);
            }
            let browse = ui.add_enabled(!self.open_dialog.is_open(), egui::Button::new("Browse…"));
            if browse.on_hover_text("Pick the file in the system's dialog; it loads at once").clicked() {
                let ask = crate::file_dialog::Ask::OpenFile { title: "Load a model, fit task or data file" };
                self.open_dialog.start(ask, ui.ctx());
            }
            if let Some(path) = self.open_dialog.take() {
                self.path = path.display().to_string();
                let path = self.path.clone();
                self.load_path(&path);
            }
        });
        #[cfg(target_arch = "wasm32")]
        {
            let open = ui.button("Open file…");
            crate::landmarks::mark(&open, "Open file…");
            if open.clicked() {
                if let Err(e) = super::web_io::pick_file(self.incoming.0.clone(), ui.ctx().clone()) {
                    self.message = Some(Err(format!("cannot open the file dialog: {e}")));
                }
            }
        }
        ui.weak("or drop a model JSON, fit task, .ort or text data file on the window");
        if ui.button("New model from the layer table").on_hover_text("Film thicknesses and roughnesses vary; attach measured data to fit").clicked() {
            self.model_from_inputs(inputs);
        }
    }

    /// Method, seed, limits, device; Run, Resume, Polish, Cancel; progress.
    fn fit_ui(&mut self, ui: &mut egui::Ui, gpu: &mut GpuEngine) {
        ui.strong("Fitting");
        let running = self.is_running();
        ui.add_enabled_ui(!running, |ui| {
            let s = &mut self.settings;
            ui.horizontal(|ui| {
                for m in Method::ALL {
                    let r = ui.selectable_value(&mut s.method, m, m.label());
                    crate::landmarks::mark(&r, m.label());
                }
            });
            egui::Grid::new("refl_fit_settings").num_columns(4).show(ui, |ui| {
                let label = ui.label("seed");
                ui.add(egui::DragValue::new(&mut s.seed)).labelled_by(label.id);
                let label = ui.label("DE generations");
                ui.add(egui::DragValue::new(&mut s.max_generations).range(1..=100_000)).labelled_by(label.id);
                ui.end_row();
                let label = ui.label("population × free");
                let r = ui.add(egui::DragValue::new(&mut s.popsize).range(1..=200)).labelled_by(label.id);
                crate::landmarks::mark(&r, "population × free");
                let label = ui.label("MCMC steps");
                ui.add(egui::DragValue::new(&mut s.mcmc_steps).range(8..=1_000_000)).labelled_by(label.id);
                ui.end_row();
            });
            ui.checkbox(&mut s.log_transform, "fit ln R (relative errors)");
            ui.horizontal(|ui| {
                ui.label("device:");
                ui.radio_value(&mut s.device, Device::Cpu, Device::Cpu.label());
                ui.radio_value(&mut s.device, Device::Gpu, Device::Gpu.label());
            });
            if s.device == Device::Gpu && !gpu.is_available() {
                ui.colored_label(ui.visuals().warn_fg_color, format!("GPU {}", gpu.describe()));
            }
        });
        let can_resume = self.result.as_ref().and_then(|r| r.de.clone());
        let mut start = None;
        ui.horizontal(|ui| {
            let ready = !running && self.model().is_some();
            let run = ui.add_enabled(ready, egui::Button::new("Run fit"));
            crate::landmarks::mark(&run, "Run fit");
            if run.clicked() {
                start = Some(Start::Fresh);
            }
            let resume = ui
                .add_enabled(ready && can_resume.is_some(), egui::Button::new("Resume"))
                .on_hover_text("Continue DE from the last population (as many generations again), then polish");
            if resume.clicked() {
                start = can_resume.map(Start::Resume);
            }
            let polish = ui.add_enabled(ready, egui::Button::new("Polish")).on_hover_text("LM from the current values");
            if polish.clicked() {
                start = Some(Start::Polish);
            }
            let cancel = ui.add_enabled(running, egui::Button::new("Cancel"));
            crate::landmarks::mark(&cancel, "Cancel");
            if cancel.clicked() {
                self.cancel();
            }
        });
        if let Some(start) = start {
            self.start(start, gpu, ui.ctx());
        }
        self.progress_ui(ui);
    }

    /// The progress bar and line of a running fit.
    fn progress_ui(&self, ui: &mut egui::Ui) {
        if !self.is_running() {
            return;
        }
        let Some(p) = self.progress() else {
            let what = if self.run.is_some() { "starting…" } else { "waiting for the GPU pipeline…" };
            ui.add(egui::ProgressBar::new(0.0).text(what).animate(true));
            return;
        };
        let fraction = p.iteration as f32 / p.max_iterations.max(1) as f32;
        ui.add(egui::ProgressBar::new(fraction).show_percentage());
        let rate = self.evaluations_per_second().map_or(String::new(), |r| format!(" · {r:.0} evaluations/s"));
        ui.label(format!("{} {} of {} · best χ² {}{rate}", p.stage.step_name(), p.iteration, p.max_iterations, fmt_chi2(p.best_chi2)));
    }

    /// The last message and the χ² at the current values.
    fn status_ui(&self, ui: &mut egui::Ui) {
        match self.message() {
            Some(Ok(info)) => {
                ui.label(info);
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            None => {}
        }
        if let Some(c) = self.curves() {
            match &c.chi2 {
                Ok(chi2) => ui.label(format!("χ² at the current values: {}", fmt_chi2(*chi2))),
                Err(why) => ui.weak(format!("no χ² yet: {why}")),
            };
        }
    }
}
