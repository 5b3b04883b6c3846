//! The Fit tab's data sections: curves waiting to be attached, the model's datasets, the plots
//! and the export buttons.

use super::export::{model_profile, Export};
use super::loading::{polarization_name, Target, POLARIZATIONS};
use super::q_units::QUnit;
use super::{corner, plot, residuals, FitPanel, FitView};
use crate::refl_panel::profile_plot;

/// Height of the residual plot, points.
const RESIDUALS_HEIGHT: f32 = 130.0;
/// What the window holds besides the data plot when everything fits (top bar, tabs, the load
/// and fit controls, status, the view row, the residuals), points.
const PLOTS_BELOW: f32 = 470.0;

impl FitPanel {
    /// Loaded curves: energy, polarisation and target chosen by the user, then Attach.
    pub(super) fn pending_ui(&mut self, ui: &mut egui::Ui) {
        if self.pending.is_empty() {
            return;
        }
        let targets: Vec<String> = self.model().map(|m| m.datasets().iter().map(|d| d.name.to_owned()).collect()).unwrap_or_default();
        let (mut attach, mut discard) = (None, None);
        ui.group(|ui| {
            ui.strong("Loaded data to attach");
            egui::Grid::new("refl_fit_pending").num_columns(7).show(ui, |ui| {
                for (i, p) in self.pending.iter_mut().enumerate() {
                    let d = &p.loaded.data;
                    let errors = if d.dr.is_some() { "with dR" } else { "no dR" };
                    ui.label(format!("{} ({} points, {errors})", d.name, d.q.len()));
                    ui.add(egui::DragValue::new(&mut p.energy_ev).range(1.0..=1e5).suffix(" eV")).accessible_name(format!("{} energy", d.name));
                    egui::ComboBox::from_id_salt(("refl_fit_q_unit", i))
                        .selected_text(p.q_unit.label())
                        .show_ui(ui, |ui| {
                            for unit in QUnit::ALL {
                                ui.selectable_value(&mut p.q_unit, unit, unit.label());
                            }
                        })
                        .response
                        .on_hover_text("Unit of the file's first column; 2θ uses the energy")
                        .accessible_name(format!("{} q unit", d.name));
                    egui::ComboBox::from_id_salt(("refl_fit_pol", i)).selected_text(polarization_name(p.polarization)).show_ui(ui, |ui| {
                        for pol in POLARIZATIONS {
                            ui.selectable_value(&mut p.polarization, pol, polarization_name(pol));
                        }
                    });
                    let target_text = match p.target {
                        Target::Replace(k) => format!("replace data of '{}'", targets.get(k).map_or("?", String::as_str)),
                        Target::New => "as a new dataset".into(),
                    };
                    egui::ComboBox::from_id_salt(("refl_fit_target", i)).selected_text(target_text).show_ui(ui, |ui| {
                        ui.selectable_value(&mut p.target, Target::New, "as a new dataset");
                        for (k, name) in targets.iter().enumerate() {
                            ui.selectable_value(&mut p.target, Target::Replace(k), format!("replace data of '{name}'"));
                        }
                    });
                    if ui.button("Attach").clicked() {
                        attach = Some(i);
                    }
                    if ui.small_button("discard").clicked() {
                        discard = Some(i);
                    }
                    ui.end_row();
                }
            });
            if self.pending.iter().any(|p| p.loaded.data.dr.is_none()) {
                ui.horizontal(|ui| {
                    let label = ui.label("dR for data without a dR column (% of R)");
                    ui.add(egui::DragValue::new(&mut self.relative_dr_pct).range(0.01..=100.0)).labelled_by(label.id);
                });
            }
        });
        if let Some(i) = attach {
            self.attach_pending(i);
        } else if let Some(i) = discard {
            self.pending.remove(i);
        }
    }

    /// The model's datasets, with remove buttons and the profile's dataset.
    pub(super) fn datasets_ui(&mut self, ui: &mut egui::Ui) {
        let Some(model) = self.model() else { return };
        ui.strong("Datasets");
        let mut remove = None;
        let rows: Vec<String> = model
            .datasets()
            .iter()
            .map(|d| {
                let data = if d.r.is_some() { "data" } else { "no data" };
                format!("{} · {} eV · {} · {} points · {data}", d.name, d.energy_ev, polarization_name(d.polarization), d.q.len())
            })
            .collect();
        let running = self.is_running();
        for (i, row) in rows.iter().enumerate() {
            ui.horizontal(|ui| {
                ui.radio_value(&mut self.profile_dataset, i, "").on_hover_text("Draw the depth profile at this dataset's energy");
                ui.label(row);
                if ui.add_enabled(!running, egui::Button::new("remove").small()).clicked() {
                    remove = Some(i);
                }
            });
        }
        if let Some(i) = remove {
            self.remove_dataset(i);
        }
    }

    /// Data with error bars over the model, the depth profile, and MCMC histograms.
    pub(super) fn plots_ui(&mut self, ui: &mut egui::Ui) {
        if self.model().is_none() {
            return;
        }
        ui.horizontal_wrapped(|ui| {
            ui.label("view:");
            for view in FitView::ALL {
                ui.selectable_value(&mut self.view, view, view.label());
            }
            // The wheel scrolls the page over the plots; zoom is on a modifier.
            ui.weak("plots: drag to pan · Ctrl + wheel to zoom · double-click to reset");
        });
        let Some(model) = self.model() else { return };
        let series = match self.curves().map(|c| &c.curves) {
            Some(Ok(curves)) => plot::series(self.view, model, curves),
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("model: {e}"));
                Vec::new()
            }
            None => Vec::new(),
        };
        let profile = model_profile(model, self.profile_dataset, model.values());
        let width = ui.available_width();
        // Shorter plots in short windows: data and residuals fit under the controls at 800 px.
        let tall = (ui.ctx().content_rect().height() - PLOTS_BELOW).clamp(220.0, 380.0);
        let main = egui::vec2((width * 0.64).max(200.0), tall);
        let residuals = match self.curves().map(|c| &c.curves) {
            Some(Ok(curves)) => residuals::series(model, curves),
            _ => Vec::new(),
        };
        let rect = ui
            .horizontal_top(|ui| {
                let data_rect = ui
                    .vertical(|ui| {
                        let (rect, bounds) = plot::show(ui, self.view, series, main);
                        self.plot_bounds = Some(bounds);
                        // Only datasets with dR have residuals in units of σ.
                        if !residuals.is_empty() {
                            let size = egui::vec2(main.x, RESIDUALS_HEIGHT);
                            residuals::show(ui, residuals, size, plot::x_link());
                        }
                        rect
                    })
                    .inner;
                let rest = ui.available_width().max(150.0);
                match &profile {
                    Ok(p) => ui.allocate_ui(egui::vec2(rest, main.y), |ui| profile_plot::show(ui, p, rest)),
                    Err(e) => ui.allocate_ui(egui::vec2(rest, main.y), |ui| {
                        ui.colored_label(ui.visuals().error_fg_color, format!("profile: {e}"));
                    }),
                };
                data_rect
            })
            .response
            .rect;
        self.plot_rect = Some(rect);
        if let Some((names, mcmc)) = self.result.as_ref().and_then(|r| Some((&r.names, r.mcmc.as_ref()?))) {
            corner::show(ui, names, mcmc);
        }
    }

    /// Export buttons (files on the desktop, downloads on the web).
    pub(super) fn export_ui(&mut self, ui: &mut egui::Ui) {
        if self.model().is_none() {
            return;
        }
        ui.horizontal_wrapped(|ui| {
            ui.strong("Export");
            #[cfg(not(target_arch = "wasm32"))]
            {
                let label = ui.label("to folder");
                ui.add(egui::TextEdit::singleline(&mut self.export_dir).desired_width(240.0)).labelled_by(label.id);
                let choose = ui.add_enabled(!self.export_dialog.is_open(), egui::Button::new("Choose…"));
                if choose.on_hover_text("Pick the folder in the system's dialog").clicked() {
                    let ask = crate::file_dialog::Ask::Folder { title: "Export into folder" };
                    self.export_dialog.start(ask, ui.ctx());
                }
                if let Some(dir) = self.export_dialog.take() {
                    self.export_dir = dir.display().to_string();
                }
            }
            for (what, label) in [(Export::ModelJson, "model JSON"), (Export::CurvesCsv, "curves CSV"), (Export::ProfileCsv, "profile CSV")] {
                let button = ui.button(label);
                crate::landmarks::mark(&button, label);
                if button.clicked() {
                    self.export(what);
                }
            }
            let has_samples = self.result().is_some_and(|r| r.mcmc.is_some());
            let samples = ui.add_enabled(has_samples, egui::Button::new("MCMC samples CSV")).on_disabled_hover_text("after an MCMC fit");
            crate::landmarks::mark(&samples, "MCMC samples CSV");
            if samples.clicked() {
                self.export(Export::SamplesCsv);
            }
            let png = ui.button("plots PNG");
            crate::landmarks::mark(&png, "plots PNG");
            if png.clicked() {
                self.request_png(ui.ctx());
            }
        });
    }
}
