//! The Simulate page: the case's inputs (voltage, zone axis, reference, tilt, thicknesses,
//! g_max, sg_max, solver, device), Run, and the result: the spot pattern with a thickness slider
//! (re-indexing one run), the log option and the CSV export of the intensity table.

use scatterlab_bloch::solve::Solver;

use super::crystal::CrystalState;
use super::simulate::{intensity_csv, series, SimulateState};

/// Draws the page.
pub fn ui(state: &mut SimulateState, crystal: &CrystalState, ui: &mut egui::Ui) {
    egui::Panel::left("bloch simulate inputs").resizable(true).default_size(330.0).show(ui, |ui| inputs(state, crystal, ui));
    let Some(result) = &state.result else {
        ui.label("No simulation yet: set the inputs and press Run.");
        return;
    };
    let last = result.thicknesses.len().saturating_sub(1);
    state.thickness_index = state.thickness_index.min(last);
    ui.horizontal(|ui| {
        ui.label(format!("{} · {} beams · {:?} · cpu f64 · {:.3} s", result.id, result.hkl.len(), result.solver, result.seconds));
    });
    ui.horizontal(|ui| {
        let t = result.thicknesses.get(state.thickness_index).copied().unwrap_or(f64::NAN);
        ui.add_enabled(last > 0, egui::Slider::new(&mut state.thickness_index, 0..=last).show_value(false).text("thickness"));
        ui.label(format!("t = {t} Å ({} of {})", state.thickness_index + 1, last + 1));
        ui.checkbox(&mut state.log, "log");
        if ui.button("Export CSV").clicked() {
            let name = format!("{}-intensities.csv", result.id.replace(['[', ']', ','], "_"));
            state.message = Some(super::files::save(&state.export_dir, &name, intensity_csv(result).as_bytes(), "text/csv"));
        }
    });
    if let Some(message) = &state.message {
        match message {
            Ok(m) => ui.weak(m),
            Err(e) => ui.colored_label(ui.visuals().error_fg_color, e),
        };
    }
    super::pattern::show(ui, result, state.thickness_index, state.log);
}

fn inputs(state: &mut SimulateState, crystal: &CrystalState, ui: &mut egui::Ui) {
    let i = &mut state.inputs;
    ui.label(match crystal.asu {
        Some(_) => format!("crystal: {}", crystal.name),
        None => "crystal: none (open a CIF on the Crystal page)".to_owned(),
    });
    egui::Grid::new("bloch sim grid").num_columns(2).show(ui, |ui| {
        ui.label("voltage (kV)");
        ui.add(egui::DragValue::new(&mut i.kv).range(1.0..=3000.0).speed(1.0));
        ui.end_row();
        ui.label("zone axis [uvw]");
        ui.horizontal(|ui| i.zone.iter_mut().for_each(|v| {
            ui.add(egui::DragValue::new(v).range(-20..=20));
        }));
        ui.end_row();
        ui.label("reference (hkl) → +x");
        ui.horizontal(|ui| {
            let mut given = i.reference.is_some();
            ui.checkbox(&mut given, "");
            if given != i.reference.is_some() {
                i.reference = given.then_some([1, 0, 0]);
            }
            if let Some(r) = &mut i.reference {
                r.iter_mut().for_each(|v| {
                    ui.add(egui::DragValue::new(v).range(-20..=20));
                });
            } else {
                ui.weak("default");
            }
        });
        ui.end_row();
        ui.label("tilt x, y (°)");
        ui.horizontal(|ui| i.tilt_deg.iter_mut().for_each(|v| {
            ui.add(egui::DragValue::new(v).speed(0.01).range(-90.0..=90.0).max_decimals(4));
        }));
        ui.end_row();
        ui.label("thicknesses (Å)");
        ui.text_edit_singleline(&mut i.thicknesses);
        ui.end_row();
        ui.label("g_max (Å⁻¹)");
        ui.add(egui::DragValue::new(&mut i.g_max).speed(0.01).range(0.05..=10.0));
        ui.end_row();
        ui.label("sg_max (Å⁻¹)");
        ui.add(egui::DragValue::new(&mut i.sg_max).speed(0.001).range(0.0001..=5.0).max_decimals(4));
        ui.end_row();
        ui.label("solver");
        ui.horizontal(|ui| {
            ui.selectable_value(&mut i.solver, Solver::Eigen, "eigen").on_hover_text("one decomposition for every thickness");
            ui.selectable_value(&mut i.solver, Solver::Expm, "expm").on_hover_text("one matrix exponential per thickness");
        });
        ui.end_row();
        ui.label("device");
        ui.horizontal(|ui| {
            let _ = ui.selectable_label(true, "CPU f64");
            ui.add_enabled(false, egui::Button::new("GPU f32")).on_disabled_hover_text("not in the app yet: use `scatterlab bloch simulate --device gpu`");
        });
        ui.end_row();
    });
    ui.horizontal(|ui| {
        let (from, to, n) = &mut state.series;
        ui.label("series");
        ui.add(egui::DragValue::new(from).range(1.0..=1e5).suffix(" Å"));
        ui.add(egui::DragValue::new(to).range(1.0..=1e5).suffix(" Å"));
        ui.add(egui::DragValue::new(n).range(1..=2000));
        if ui.button("fill").on_hover_text("evenly spaced thicknesses for the slider").clicked() {
            state.inputs.thicknesses = series(*from, *to, *n);
        }
    });
    if cfg!(not(target_arch = "wasm32")) {
        ui.horizontal(|ui| {
            ui.label("export folder");
            ui.text_edit_singleline(&mut state.export_dir);
        });
    }
    ui.horizontal(|ui| {
        let run = ui.add_enabled(!state.is_running() && crystal.asu.is_some(), egui::Button::new("Run"));
        crate::landmarks::mark(&run, "bloch simulate run");
        if run.clicked() {
            let _ = state.start(crystal);
        }
        if state.is_running() {
            ui.spinner();
            ui.label("simulating…");
        }
    });
    if let Some(e) = &state.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
}
