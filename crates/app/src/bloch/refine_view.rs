//! The Refine page: open an experiment (a folder path or the system's folder dialog on the
//! desktop; the YAML, `.cif_pets` and CIF picked together in the browser), the optimiser, Run /
//! Cancel / Resume with progress (iteration, wR2), wR2 per iteration and per frame, the
//! parameter table ± σ, the frame browser (observed vs calculated) and the refined CIF / result
//! JSON / CSV exports (into a typed or chosen folder on the desktop).

use egui_plot::{Bar, BarChart, Legend, Line, Plot, PlotPoints};

use super::refine::RefineState;

/// Draws the page.
pub fn ui(state: &mut RefineState, ui: &mut egui::Ui) {
    open_row(state, ui);
    if let Some(e) = &state.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
    for w in &state.warnings {
        ui.colored_label(ui.visuals().warn_fg_color, w);
    }
    let Some(name) = state.name.clone() else {
        ui.label("No experiment yet: open a diffBloch experiment (experiment.yaml, its .cif_pets and the start CIF).");
        return;
    };
    ui.heading(name);
    ui.horizontal(|ui| {
        let run = ui.add_enabled(!state.is_running(), egui::Button::new(if state.history.is_empty() { "Run" } else { "Resume" }));
        crate::landmarks::mark(&run, "bloch refine run");
        if run.clicked() {
            let steps = state.steps_per_run;
            let _ = state.start(steps);
        }
        ui.add(egui::DragValue::new(&mut state.steps_per_run).range(1..=1000).prefix("steps ≤ "));
        optimizer(state, ui);
        if ui.add_enabled(state.is_running(), egui::Button::new("Cancel")).clicked() {
            state.cancel();
        }
        if state.is_running() {
            ui.spinner();
        }
        match state.history.last() {
            Some(r) => {
                let lambda = r.lambda.map(|l| format!(" · λ {l:.2e}")).unwrap_or_default();
                ui.label(format!("iteration {} · wR2 {:.5}{lambda} · {} evaluations{}", r.iteration, r.wr2, r.evaluations, if state.is_running() { " · refining…" } else { "" }))
            }
            None if state.is_running() => ui.label("refining… (first iteration)"),
            None => ui.label("not started"),
        };
    });
    if let Some(o) = &state.outputs {
        let r = &o.result;
        ui.label(format!(
            "wR2 {:.5} (start {:.5}) · R_obs {:.5} · {} iterations · stop: {}{}",
            r.wr2,
            r.start.wr2,
            r.r_obs,
            r.iterations,
            r.stop,
            if o.cancelled { " (cancelled)" } else { "" }
        ));
        exports(state, ui);
    }
    ui.columns(2, |cols| {
        plots(state, &mut cols[0]);
        parameters(state, &mut cols[1]);
    });
    ui.separator();
    super::frames_view::ui(state, ui);
}

/// The optimiser picker: fixed once the experiment has run (a resume continues the same run).
fn optimizer(state: &mut RefineState, ui: &mut egui::Ui) {
    use scatterlab_bloch::refine::Optimizer;
    ui.add_enabled_ui(state.history.is_empty() && !state.is_running(), |ui| {
        egui::ComboBox::from_id_salt("bloch optimizer").selected_text(state.optimizer.name()).show_ui(ui, |ui| {
            for (o, what) in [(Optimizer::Lm, "Levenberg–Marquardt (χ², s.u.)"), (Optimizer::Adam, "Adam (diffBloch's run)"), (Optimizer::Lbfgs, "L-BFGS (mean wR2)")] {
                ui.selectable_value(&mut state.optimizer, o, format!("{} — {what}", o.name()));
            }
        });
    });
}

fn open_row(state: &mut RefineState, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        if cfg!(target_arch = "wasm32") {
            if ui
                .add_enabled(!state.is_running(), egui::Button::new("Open experiment files…"))
                .on_hover_text("pick experiment.yaml, its .cif_pets and the start CIF together")
                .clicked()
            {
                match super::files::pick_texts(".yaml,.yml,.cif,.cif_pets", true, ui.ctx().clone()) {
                    Ok(rx) => state.incoming = Some(rx),
                    Err(e) => state.error = Some(e),
                }
            }
            if state.is_waiting() {
                ui.spinner();
            }
        } else {
            ui.label("experiment folder:");
            let edit = ui.add(egui::TextEdit::singleline(&mut state.path).desired_width(420.0).hint_text("folder with experiment.yaml"));
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.add_enabled(!state.is_running(), egui::Button::new("Open")).clicked() || enter {
                let path = state.path.clone();
                let _ = state.open_path(&path);
            }
            #[cfg(not(target_arch = "wasm32"))]
            ui.add_enabled_ui(!state.is_running(), |ui| {
                let ask = crate::file_dialog::Ask::Folder { title: "Open an experiment folder (with experiment.yaml)" };
                if let Some(path) = super::files::dialog_button(ui, "Browse…", "Pick the experiment folder in the system's dialog; it opens at once", ask) {
                    state.path = path.display().to_string();
                    let path = state.path.clone();
                    let _ = state.open_path(&path);
                }
            });
        }
    });
}

fn exports(state: &mut RefineState, ui: &mut egui::Ui) {
    let Some(o) = &state.outputs else { return };
    ui.horizontal(|ui| {
        #[cfg(not(target_arch = "wasm32"))]
        {
            ui.label("export folder");
            ui.text_edit_singleline(&mut state.export_dir);
            let ask = crate::file_dialog::Ask::Folder { title: "Export into folder" };
            if let Some(dir) = super::files::dialog_button(ui, "Choose…", "Pick the export folder in the system's dialog", ask) {
                state.export_dir = dir.display().to_string();
            }
        }
        let mut message = None;
        if ui.button("Export refined CIF").clicked() {
            message = Some(o.refined_cif.clone().and_then(|cif| super::files::save(&state.export_dir, "refined.cif", cif.as_bytes(), "chemical/x-cif")));
        }
        if ui.button("Export result JSON").clicked() {
            message = Some(super::files::save(&state.export_dir, "result.json", o.result_json.as_bytes(), "application/json"));
        }
        if ui.button("Export obs vs calc CSV").clicked() {
            message = Some(super::files::save(&state.export_dir, "observed_vs_calculated.csv", o.csv.as_bytes(), "text/csv"));
        }
        if message.is_some() {
            state.message = message;
        }
    });
    if let Some(message) = &state.message {
        match message {
            Ok(m) => ui.weak(m),
            Err(e) => ui.colored_label(ui.visuals().error_fg_color, e),
        };
    }
}

fn plots(state: &RefineState, ui: &mut egui::Ui) {
    ui.strong("wR2 per iteration");
    let history: Vec<[f64; 2]> = state.history.iter().map(|r| [r.iteration as f64, r.wr2]).collect();
    Plot::new("bloch wr2 history").height(160.0).legend(Legend::default()).show(ui, |p| {
        p.line(Line::new("wR2", PlotPoints::from(history)));
    });
    ui.strong("wR2 per frame");
    let Some(o) = &state.outputs else {
        ui.weak("after a run");
        return;
    };
    let bars: Vec<Bar> = o.result.per_frame.iter().map(|f| Bar::new(f.id as f64, f.wr2).width(0.8)).collect();
    Plot::new("bloch wr2 per frame").height(180.0).show(ui, |p| {
        p.bar_chart(BarChart::new("wR2 per frame", bars));
    });
}

fn parameters(state: &RefineState, ui: &mut egui::Ui) {
    ui.strong("parameters (value ± σ)");
    let Some(o) = &state.outputs else {
        ui.weak("after a run");
        return;
    };
    let r = &o.result;
    egui::ScrollArea::vertical().id_salt("bloch params").max_height(360.0).show(ui, |ui| {
        egui::Grid::new("bloch params grid").striped(true).show(ui, |ui| {
            for name in &r.parameter_order {
                let Some(p) = r.parameters.get(name) else { continue };
                ui.label(name);
                ui.label(match p.stderr {
                    Some(s) => format!("{:.6} ± {:.6}", p.value, s),
                    None => format!("{:.6} (σ n/a)", p.value),
                });
                ui.end_row();
            }
        });
    });
}
