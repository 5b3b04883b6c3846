//! The Crystal page: open a CIF (a typed path or the system's dialog on the desktop, the file
//! picker in the browser), the error with its line and tag, the cell, the space group and the
//! asymmetric unit as an editable table (fractional coordinates, U_iso, occupancy; the P1
//! crystal Simulate uses is expanded from it).

use scatterlab_bloch::crystal::element_symbol;
use scatterlab_bloch::Displacement;

use super::crystal::CrystalState;

/// Draws the page.
pub fn ui(state: &mut CrystalState, ui: &mut egui::Ui) {
    open_row(state, ui);
    if let Some(problem) = &state.error {
        let where_ = match (problem.line, &problem.tag) {
            (Some(line), Some(tag)) => format!("line {line}, {tag}: "),
            _ => String::new(),
        };
        ui.colored_label(ui.visuals().error_fg_color, format!("{where_}{}", problem.message));
    }
    let Some(asu) = state.asu.as_mut() else {
        ui.label("No crystal yet: open a CIF.");
        return;
    };
    ui.heading(&state.name);
    let [a, b, c] = asu.cell.lengths;
    let [al, be, ga] = asu.cell.angles_deg;
    ui.label(format!("cell: a = {a} Å, b = {b} Å, c = {c} Å, α = {al}°, β = {be}°, γ = {ga}°  (V = {:.3} Å³)", asu.cell.volume()));
    ui.label(format!("space group: {} · {} symmetry operators", state.space_group.as_deref().unwrap_or("not named (operators given)"), asu.ops.len()));
    ui.label(format!("asymmetric unit: {} site(s)", asu.sites.len()));
    let mut edited = false;
    egui::ScrollArea::both().show(ui, |ui| {
        egui::Grid::new("bloch asu").striped(true).show(ui, |ui| {
            for h in ["label", "element", "x", "y", "z", "U_iso / U_aniso (Å²)", "occupancy"] {
                ui.strong(h);
            }
            ui.end_row();
            for site in &mut asu.sites {
                ui.label(&site.label);
                ui.label(element_symbol(site.z).unwrap_or("?"));
                for x in &mut site.frac {
                    edited |= ui.add(egui::DragValue::new(x).speed(1e-4).max_decimals(6)).changed();
                }
                match &mut site.displacement {
                    Displacement::Iso(u) => edited |= ui.add(egui::DragValue::new(u).speed(1e-4).max_decimals(6).range(0.0..=f64::INFINITY)).changed(),
                    Displacement::Aniso(u) => {
                        ui.label(format!("U11 {:.5} U22 {:.5} U33 {:.5} U12 {:.5} U13 {:.5} U23 {:.5}", u[0], u[1], u[2], u[3], u[4], u[5]));
                    }
                }
                edited |= ui.add(egui::DragValue::new(&mut site.occupancy).speed(1e-3).max_decimals(4).range(0.0..=1.0)).changed();
                ui.end_row();
            }
        });
    });
    if edited {
        // Edited sites are checked as the CIF reader checks them; Simulate refuses an invalid one.
        state.error = state.crystal().err().map(|message| super::crystal::CifProblem { message, line: None, tag: None });
    }
}

fn open_row(state: &mut CrystalState, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        if cfg!(target_arch = "wasm32") {
            if ui.button("Open CIF…").clicked() {
                match super::files::pick_texts(".cif,.txt", false, ui.ctx().clone()) {
                    Ok(rx) => state.incoming = Some(rx),
                    Err(e) => state.error = Some(super::crystal::CifProblem { message: e, line: None, tag: None }),
                }
            }
            if state.is_waiting() {
                ui.spinner();
            }
        } else {
            ui.label("CIF path:");
            let edit = ui.add(egui::TextEdit::singleline(&mut state.path).desired_width(420.0).hint_text("/path/to/crystal.cif"));
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Open").clicked() || enter {
                let path = state.path.clone();
                let _ = state.open_path(&path);
            }
            #[cfg(not(target_arch = "wasm32"))]
            {
                let ask = crate::file_dialog::Ask::OpenFile { title: "Open a CIF" };
                if let Some(path) = super::files::dialog_button(ui, "Browse…", "Pick the CIF in the system's dialog; it opens at once", ask) {
                    state.path = path.display().to_string();
                    let path = state.path.clone();
                    let _ = state.open_path(&path);
                }
            }
        }
    });
}
