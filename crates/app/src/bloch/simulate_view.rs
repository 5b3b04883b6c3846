//! The Simulate page: the case's inputs (voltage, zone axis, reference, tilt, thicknesses,
//! g_max, sg_max, solver, device), Run, and the result: the spot pattern with a thickness slider
//! (re-indexing one run), the log option and the CSV export of the intensity table.

use scatterlab_bloch::solve::Solver;

use super::crystal::CrystalState;
use super::simulate::{intensity_csv, series, SimulateState};

/// Draws the page.
pub fn ui(state: &mut SimulateState, crystal: &CrystalState, ui: &mut egui::Ui) {
    egui::Panel::left("bloch simulate inputs").resizable(true).default_size(330.0).show(ui, |ui| {
        egui::ScrollArea::vertical().id_salt("bloch simulate inputs scroll").show(ui, |ui| {
            inputs(state, crystal, ui);
            super::rocking_view::controls(state, crystal, ui);
        });
    });
    ui.horizontal(|ui| {
        ui.selectable_value(&mut state.show_rocking, false, "Pattern");
        ui.selectable_value(&mut state.show_rocking, true, "Rocking curves");
    });
    if state.show_rocking {
        return super::rocking_view::curves(state, ui);
    }
    let Some(result) = &state.result else {
        ui.label("No simulation yet: set the inputs and press Run.");
        return;
    };
    let last = result.thicknesses.len().saturating_sub(1);
    state.thickness_index = state.thickness_index.min(last);
    ui.horizontal(|ui| {
        let device = if result.device == crate::Device::Gpu { "GPU f32" } else { "CPU f64" };
        ui.label(format!("{} · {} beams · {:?} · {device} · {:.3} s", result.id, result.hkl.len(), result.solver, result.seconds));
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
        ui.label("orientation");
        ui.horizontal(|ui| {
            let mut euler = i.euler_deg.is_some();
            ui.selectable_value(&mut euler, false, "zone axis");
            ui.selectable_value(&mut euler, true, "Euler angles").on_hover_text("φ, θ, ψ (z–x′–z″, degrees): O = R_x(tx) R_y(ty) R_z(φ) R_x(θ) R_z(ψ)");
            if euler != i.euler_deg.is_some() {
                i.euler_deg = euler.then_some([0.0; 3]);
            }
        });
        ui.end_row();
        if let Some(euler) = &mut i.euler_deg {
            ui.label("φ, θ, ψ (°)");
            ui.horizontal(|ui| {
                euler.iter_mut().for_each(|v| {
                    ui.add(egui::DragValue::new(v).speed(0.1).range(-360.0..=360.0).max_decimals(4));
                })
            });
            ui.end_row();
        } else {
            ui.label("zone axis [uvw]");
            ui.horizontal(|ui| {
                i.zone.iter_mut().for_each(|v| {
                    ui.add(egui::DragValue::new(v).range(-20..=20));
                })
            });
            ui.end_row();
        }
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
        ui.horizontal(|ui| {
            i.tilt_deg.iter_mut().for_each(|v| {
                ui.add(egui::DragValue::new(v).speed(0.01).range(-90.0..=90.0).max_decimals(4));
            })
        });
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
        // In the browser the GPU is the npm Worker's WebGPU device (it says so if there is none).
        let gpu = cfg!(target_arch = "wasm32") || state.gpu.is_some();
        ui.horizontal(|ui| {
            ui.selectable_value(&mut i.device, crate::Device::Cpu, "CPU f64");
            ui.add_enabled_ui(gpu, |ui| {
                ui.selectable_value(&mut i.device, crate::Device::Gpu, "GPU f32")
                    .on_hover_text("WGSL, Taylor propagator, whatever the solver")
                    .on_disabled_hover_text("this app has no GPU device")
            });
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
    #[cfg(not(target_arch = "wasm32"))]
    ui.horizontal(|ui| {
        ui.label("export folder");
        ui.text_edit_singleline(&mut state.export_dir);
        let ask = crate::file_dialog::Ask::Folder { title: "Export into folder" };
        if let Some(dir) = super::files::dialog_button(ui, "Choose…", "Pick the export folder in the system's dialog", ask) {
            state.export_dir = dir.display().to_string();
        }
    });
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
