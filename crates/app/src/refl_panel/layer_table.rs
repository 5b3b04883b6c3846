//! The editable layer table: one row per layer, fronting medium first, substrate last.

use scatterlab_refl::{Layer, Stack};

use super::materials::{LayerMaterial, PRESETS};

/// Column headers. δ/β are the optical constants of n = 1 − δ + iβ, per axis
/// (o: in-plane, e: along the surface normal); a material (formula, density) sets them instead.
const HEADERS: [&str; 9] = ["layer", "material", "thickness (Å)", "roughness (Å)", "δ_o", "β_o", "δ_e", "β_e", ""];

/// The film layer added by "Add film layer" when there is no film to copy.
const DEFAULT_FILM: Layer = Layer { thickness: 50.0, roughness: 3.0, delta_o: 2.0e-3, beta_o: 2.0e-4, delta_e: 2.0e-3, beta_e: 2.0e-4 };

/// Shows the table and applies the user's edits to `stack` and `materials` (one per layer:
/// values, added and removed layers).
pub fn show(ui: &mut egui::Ui, stack: &mut Stack, materials: &mut Vec<LayerMaterial>) {
    materials.resize(stack.layers.len(), LayerMaterial::MANUAL);
    let n = stack.layers.len();
    let mut remove = None;
    egui::Grid::new("refl_layer_table").striped(true).num_columns(HEADERS.len()).show(ui, |ui| {
        for header in HEADERS {
            ui.strong(header);
        }
        ui.end_row();
        for (j, (layer, material)) in stack.layers.iter_mut().zip(materials.iter_mut()).enumerate() {
            let is_fronting = j == 0;
            let is_substrate = j + 1 == n && n > 1;
            let role = if is_fronting {
                "fronting".to_owned()
            } else if is_substrate {
                "substrate".to_owned()
            } else {
                format!("film {j}")
            };
            ui.label(&role);
            // Each cell is named "<row> <column>" (e.g. "film 1 thickness (Å)") for screen
            // readers and for tests that look cells up by name.
            let name = |column: usize| format!("{role} {}", HEADERS[column]);
            // The fronting medium is vacuum or air in practice; it keeps typed δ/β.
            if is_fronting {
                ui.label("");
            } else {
                material_cell(ui, &role, material);
            }
            // Semi-infinite media have no thickness, and the fronting medium has no interface
            // above it: the engine ignores those numbers, so the table does not offer them.
            ui.add_enabled(!is_fronting && !is_substrate, length_value(&mut layer.thickness, 1e6)).accessible_name(name(2));
            ui.add_enabled(!is_fronting, length_value(&mut layer.roughness, 1e3)).accessible_name(name(3));
            // From the formula: shown, not editable (the Henke tables set them).
            let typed = !material.is_compound();
            for (column, value) in [&mut layer.delta_o, &mut layer.beta_o, &mut layer.delta_e, &mut layer.beta_e].into_iter().enumerate() {
                ui.add_enabled(typed, optical_value(value)).accessible_name(name(column + 4));
            }
            if !is_fronting && !is_substrate {
                if ui.small_button("remove").on_hover_text("Remove this film layer").clicked() {
                    remove = Some(j);
                }
            } else {
                ui.label("");
            }
            ui.end_row();
        }
    });
    // Applied after the loop: the rows borrow the stack mutably while they are drawn.
    if let Some(j) = remove {
        stack.layers.remove(j);
        materials.remove(j);
    }
    if ui.button("Add film layer").on_hover_text("Insert a film layer just above the substrate").clicked() {
        add_film_layer(stack);
        // The new layer copies the film below it (or the default film): its material too.
        let n = materials.len();
        let template = if n > 2 { materials[n - 2].clone() } else { LayerMaterial::MANUAL };
        materials.insert(n.saturating_sub(1), template);
    }
}

/// The material cell: "δ/β" (typed) or a formula with its density, with presets.
fn material_cell(ui: &mut egui::Ui, role: &str, material: &mut LayerMaterial) {
    ui.horizontal(|ui| {
        let shown = if material.is_compound() { material.formula.clone() } else { "δ/β".to_owned() };
        egui::ComboBox::from_id_salt(("refl_layer_material", role))
            .selected_text(shown)
            .width(70.0)
            .show_ui(ui, |ui| {
                if ui.selectable_label(!material.is_compound(), "δ/β (typed)").clicked() {
                    *material = LayerMaterial::MANUAL;
                }
                for (formula, density) in PRESETS {
                    let label = format!("{formula} ({density} g/cm³)");
                    if ui.selectable_label(material.formula == formula, label).clicked() {
                        *material = LayerMaterial::compound(formula, density);
                    }
                }
            })
            .response
            .accessible_name(format!("{role} material"));
        ui.add(egui::TextEdit::singleline(&mut material.formula).hint_text("formula").desired_width(60.0))
            .on_hover_text("Chemical formula (e.g. SiO2): δ, β from the Henke tables at the beam energy; empty: type δ, β")
            .accessible_name(format!("{role} formula"));
        ui.add_enabled(material.is_compound(), egui::DragValue::new(&mut material.density_g_cm3).range(1e-3..=30.0).speed(0.01).max_decimals(3).suffix(" g/cm³"))
            .accessible_name(format!("{role} density"));
    });
}

/// Inserts a film layer directly above the substrate: a copy of the lowest film if there is one.
pub fn add_film_layer(stack: &mut Stack) {
    let n = stack.layers.len();
    if n < 2 {
        // Not a valid stack (the engine says so); make it fronting | film | substrate-less.
        stack.layers.push(DEFAULT_FILM);
        return;
    }
    let template = if n > 2 { stack.layers[n - 2] } else { DEFAULT_FILM };
    stack.layers.insert(n - 1, template);
}

/// A thickness or roughness in Å, 0 to `max`.
fn length_value(value: &mut f64, max: f64) -> egui::DragValue<'_> {
    egui::DragValue::new(value).range(0.0..=max).speed(0.1).max_decimals(2)
}

/// A δ or β: small numbers, shown and typed in scientific notation.
fn optical_value(value: &mut f64) -> egui::DragValue<'_> {
    egui::DragValue::new(value)
        .speed(1e-5)
        .custom_formatter(|v, _| format!("{v:.3e}"))
        // Only finite numbers: a NaN would never compare equal and would recompute every frame.
        .custom_parser(|s| s.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_layer_goes_above_the_substrate() {
        let mut stack = Stack { layers: vec![Layer::VACUUM, Layer::isotropic(0.0, 3.0, 5e-3, 4e-3)] };
        add_film_layer(&mut stack);
        assert_eq!(stack.layers.len(), 3);
        assert_eq!(stack.layers[1], DEFAULT_FILM);
        assert_eq!(stack.layers[2].delta_o, 5e-3);
    }
}
