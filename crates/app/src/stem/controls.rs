//! The workspace's small controls: display settings under each image, the detector list with
//! presets, and the selected detector's numbers.

use scatterlab_stem::reduce::colormap::Colormap;

use super::detectors::{Detector, Preset, Shape};
use super::dp_view::colour;
use super::view::{Display, Transform};
use super::StemPanel;

/// Colormap, transform, γ, auto range (percentiles) or manual limits, on two rows.
pub fn display_controls(ui: &mut egui::Ui, id: &str, d: &mut Display) {
    ui.horizontal(|ui| {
        egui::ComboBox::from_id_salt((id, "colormap")).width(80.0).selected_text(d.colormap.name()).show_ui(ui, |ui| {
            for m in Colormap::ALL {
                ui.selectable_value(&mut d.colormap, m, m.name());
            }
        });
        egui::ComboBox::from_id_salt((id, "transform")).width(60.0).selected_text(d.transform.name()).show_ui(ui, |ui| {
            for t in Transform::ALL {
                ui.selectable_value(&mut d.transform, t, t.name());
            }
        });
        if d.transform == Transform::Gamma {
            ui.add(egui::DragValue::new(&mut d.gamma).range(0.05..=5.0).speed(0.01).prefix("γ "));
        }
    });
    ui.horizontal(|ui| {
        ui.checkbox(&mut d.auto, "auto").on_hover_text("Limits at the percentiles of the values");
        if d.auto {
            ui.checkbox(&mut d.centred, "±").on_hover_text("Signed data: limits symmetric about 0 (± the upper percentile of |v|), 0 at the colormap's centre");
            let [lo, hi] = &mut d.percentiles;
            let (l, h) = (*lo, *hi);
            ui.add(egui::DragValue::new(lo).range(0.0..=h).speed(0.1).suffix(" %"));
            ui.add(egui::DragValue::new(hi).range(l..=100.0).speed(0.1).suffix(" %"));
        } else {
            let speed = ((d.limits[1] - d.limits[0]).abs() * 0.005).max(1e-6);
            ui.add(egui::DragValue::new(&mut d.limits[0]).speed(speed).prefix("low "));
            ui.add(egui::DragValue::new(&mut d.limits[1]).speed(speed).prefix("high "));
        }
    });
}

/// One line describing a detector's geometry.
fn describe(d: &Detector) -> String {
    match d.shape {
        Shape::Disc { center, radius } => format!("disc ({:.1}, {:.1}) r {radius:.2}", center[0], center[1]),
        Shape::Annulus { center, inner, outer } => format!("annulus ({:.1}, {:.1}) {inner:.2}…{outer:.2}", center[0], center[1]),
        Shape::Rect { rows, cols } => format!("rows {}..{} cols {}..{}", rows[0], rows[1], cols[0], cols[1]),
    }
}

impl StemPanel {
    /// The detector list, presets, add/remove, and the selected detector's numbers.
    pub(super) fn detector_controls(&mut self, ui: &mut egui::Ui) {
        let Some(probe) = self.probe else {
            ui.weak("detectors appear once the beam centre is found");
            return;
        };
        for (i, d) in self.detectors.iter().enumerate() {
            let text = egui::RichText::new(format!("{}: {} — {}", i + 1, d.name, describe(d)));
            // The selected row takes the theme's selection text colour: a light selection fill
            // (the browser's light theme) would swallow the overlay colour.
            let text = if i == self.selected { text.strong() } else { text.color(colour(i)) };
            if ui.selectable_label(i == self.selected, text).clicked() {
                self.selected = i;
            }
        }
        ui.horizontal(|ui| {
            ui.label("preset:");
            for p in Preset::ALL {
                if ui.button(p.name()).on_hover_text(format!("Make the selected detector {}", p.name())).clicked() {
                    self.set_selected(Detector::preset(p, &probe));
                }
            }
        });
        ui.horizontal(|ui| {
            let mut add = None;
            if ui.button("+ disc").clicked() {
                add = Some(Shape::Disc { center: probe.center, radius: probe.radius });
            }
            if ui.button("+ annulus").clicked() {
                add = Some(Shape::Annulus { center: probe.center, inner: probe.radius, outer: 2.0 * probe.radius });
            }
            if ui.button("+ rect").clicked() {
                let (r, c, h) = (probe.center[0].max(0.0) as usize, probe.center[1].max(0.0) as usize, (probe.radius / 2.0).max(1.0) as usize);
                add = Some(Shape::Rect { rows: [r.saturating_sub(h), r + h], cols: [c.saturating_sub(h), c + h] });
            }
            if let Some(shape) = add {
                self.detectors.push(Detector { name: format!("D{}", self.detectors.len() + 1), shape });
                self.selected = self.detectors.len() - 1;
                self.user_placed = true;
            }
            if self.detectors.len() > 1 && ui.button("remove").clicked() {
                self.detectors.remove(self.selected.min(self.detectors.len() - 1));
                self.selected = self.selected.saturating_sub(1);
                self.user_placed = true;
            }
        });
        self.selected_numbers(ui);
    }

    fn set_selected(&mut self, d: Detector) {
        match self.detectors.get_mut(self.selected) {
            Some(slot) => *slot = d,
            None => {
                self.detectors.push(d);
                self.selected = self.detectors.len() - 1;
            }
        }
        self.user_placed = true;
    }

    /// Drag values for the selected detector (pixels).
    fn selected_numbers(&mut self, ui: &mut egui::Ui) {
        let Some(d) = self.detectors.get_mut(self.selected) else { return };
        let before = d.shape.clone();
        ui.horizontal(|ui| match &mut d.shape {
            Shape::Disc { center, radius } => {
                ui.add(egui::DragValue::new(&mut center[0]).speed(0.1).prefix("row "));
                ui.add(egui::DragValue::new(&mut center[1]).speed(0.1).prefix("col "));
                ui.add(egui::DragValue::new(radius).speed(0.1).range(0.0..=f64::MAX).prefix("r "));
            }
            Shape::Annulus { center, inner, outer } => {
                ui.add(egui::DragValue::new(&mut center[0]).speed(0.1).prefix("row "));
                ui.add(egui::DragValue::new(&mut center[1]).speed(0.1).prefix("col "));
                ui.add(egui::DragValue::new(inner).speed(0.1).range(0.0..=*outer).prefix("in "));
                if outer.is_finite() {
                    ui.add(egui::DragValue::new(outer).speed(0.1).range(*inner..=f64::MAX).prefix("out "));
                } else {
                    ui.label("out ∞");
                }
            }
            Shape::Rect { rows, cols } => {
                ui.add(egui::DragValue::new(&mut rows[0]).prefix("rows "));
                ui.add(egui::DragValue::new(&mut rows[1]));
                ui.add(egui::DragValue::new(&mut cols[0]).prefix("cols "));
                ui.add(egui::DragValue::new(&mut cols[1]));
            }
        });
        if d.shape != before {
            self.user_placed = true;
        }
        ui.weak("drag inside to move, drag an edge to resize; arrow keys nudge (Shift: 0.1 px)");
    }
}
