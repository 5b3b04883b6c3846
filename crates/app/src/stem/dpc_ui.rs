//! The DPC column: the centre of mass as a colour wheel (with its legend), its row and column
//! components after the rotation as signed images on a diverging colormap centred at 0 (one
//! shared colour bar: the two are one vector field in one unit), the rotation and the iDPC phase.

use scatterlab_stem::reduce::VectorField;

use super::controls::display_controls;
use super::readout::{colour_bar, hover, Place, BAR_WIDTH};
use super::scale::PixelSize;
use super::ui::key;
use super::view::symmetric_limits;
use super::{dpc, StemPanel};

/// Width of the colour-wheel legend, points.
const LEGEND: f32 = 48.0;

impl StemPanel {
    pub(super) fn dpc_column(&mut self, ui: &mut egui::Ui) {
        ui.strong("Centre of mass (colour wheel)");
        let scan = self.data.as_ref().map_or([0, 0], |d| d.scan);
        let step = self.data.as_ref().and_then(|d| d.calibration.scan_step_a);
        let place = step.map_or(Place::None, |s| Place::Scan(PixelSize::Angstrom(s)));
        let ctx = ui.ctx().clone();
        match (&self.dpc, self.is_loading()) {
            (Some((k, p)), _) => {
                self.views.wheel.set_rgba(&ctx, "stem com", &p.wheel, scan, *k);
                // The wheel's read-out is |CoM|: the hue is the direction.
                self.views.wheel.values = p.aligned.r.iter().zip(&p.aligned.c).map(|(r, c)| r.hypot(*c)).collect();
            }
            (None, true) => self.views.wheel.error = Some("after loading".into()),
            (None, false) => {
                self.views.wheel.error = Some(self.auto_rotation.as_ref().and_then(|r| r.as_ref().err().cloned()).unwrap_or_else(|| "no centre of mass yet".into()));
            }
        }
        self.views.wheel.shape = scan;
        let wheel_width = self.columns.image() + BAR_WIDTH - LEGEND - 8.0;
        let response = ui
            .horizontal_top(|ui| {
                let response = self.views.wheel.show(ui, wheel_width, "centre of mass");
                self.views.legend.set_rgba(&ctx, "stem wheel legend", &dpc::legend(64), [64, 64], 0);
                self.views.legend.show(ui, LEGEND, "colour wheel legend");
                response
            })
            .inner;
        if let Some(h) = hover(ui, &response, &self.views.wheel, "CoM |magnitude|", "px", place) {
            self.hover = Some(h);
        }
        if let Some((_, p)) = &self.dpc {
            ui.weak(format!("|CoM| at full brightness: {:.3} px (hue = direction)", p.magnitude_max));
        }
        self.components_ui(ui, scan, place);
        self.rotation_controls(ui);
        ui.separator();
        ui.strong("iDPC phase (rad)");
        match self.dpc.as_ref().map(|d| (d.0, &d.1.idpc)) {
            Some((k, Ok(phase))) => self.views.idpc.set_scalar(&ctx, "stem idpc", phase, scan, k, &mut self.displays.idpc),
            Some((_, Err(e))) => self.views.idpc.error = Some(e.clone()),
            None => self.views.idpc.error = Some("after loading".into()),
        }
        self.views.idpc.shape = scan;
        if let Some(Err(e)) = self.dpc.as_ref().map(|d| &d.1.idpc) {
            ui.label(e.as_str());
        } else {
            let width = self.columns.image();
            let response = ui
                .horizontal_top(|ui| {
                    let response = self.views.idpc.show(ui, width, "iDPC phase");
                    let height = self.views.idpc.height(width);
                    colour_bar(ui, &self.displays.idpc, self.views.idpc.limits, "rad", height, "iDPC phase");
                    response
                })
                .inner;
            if let Some(h) = hover(ui, &response, &self.views.idpc, "iDPC phase", "rad", place) {
                self.hover = Some(h);
            }
            display_controls(ui, "stem idpc", &mut self.displays.idpc);
            self.views.idpc.histogram_ui(ui, width, "iDPC phase");
        }
    }

    /// The aligned CoM's row and column components side by side, one diverging colormap with
    /// limits symmetric about 0 over both, and their colour bar.
    fn components_ui(&mut self, ui: &mut egui::Ui, scan: [usize; 2], place: Place) {
        let Some((k, p)) = &self.dpc else { return };
        let (k, field): (u64, &VectorField) = (*k, &p.aligned);
        ui.strong("CoM components after rotation (px, signed)");
        let ctx = ui.ctx().clone();
        let mut display = self.displays.com.clone();
        if display.auto && display.centred {
            // One range for both: the components are one vector field.
            let both: Vec<f64> = field.r.iter().chain(&field.c).copied().collect();
            let (lo, hi) = symmetric_limits(&both, display.percentiles[1]);
            display.auto = false;
            display.limits = [lo, hi];
        }
        let k = key((k, "components"));
        self.views.com_row.set_scalar(&ctx, "stem com row", &field.r, scan, k, &mut display.clone());
        self.views.com_col.set_scalar(&ctx, "stem com col", &field.c, scan, k, &mut display.clone());
        let width = ((self.columns.image() - 8.0) / 2.0).floor();
        let [row, col] = ui
            .horizontal_top(|ui| {
                let row = self.views.com_row.show(ui, width, "CoM row component");
                let col = self.views.com_col.show(ui, width, "CoM column component");
                let height = self.views.com_row.height(width);
                colour_bar(ui, &display, self.views.com_row.limits, "px", height, "CoM components");
                [row, col]
            })
            .inner;
        for (response, view, name) in [(&row, &self.views.com_row, "CoM row"), (&col, &self.views.com_col, "CoM column")] {
            if let Some(h) = hover(ui, response, view, name, "px", place) {
                self.hover = Some(h);
            }
        }
        ui.horizontal_wrapped(|ui| {
            ui.weak("row ↓, column →; 0 = the mean deflection");
        });
        display_controls(ui, "stem com components", &mut self.displays.com);
    }

    fn rotation_controls(&mut self, ui: &mut egui::Ui) {
        let auto = self.auto_rotation.as_ref().and_then(|r| r.as_ref().ok()).copied();
        let Some(mut current) = self.rotation.or(auto) else { return };
        ui.horizontal(|ui| {
            ui.label("rotation");
            let changed = ui.add(egui::DragValue::new(&mut current.degrees).speed(0.2).range(-360.0..=360.0).suffix("°")).changed();
            let flipped = ui.checkbox(&mut current.transpose, "transpose").changed();
            if changed || flipped {
                self.rotation = Some(current);
            }
            if ui.add_enabled(self.rotation.is_some(), egui::Button::new("auto rotation")).on_hover_text("The curl-minimising rotation").clicked() {
                self.rotation = None;
            }
        });
        if let Some(a) = auto {
            ui.weak(format!("auto (min curl, ADF-positive phase): {:.2}°{}", a.degrees, if a.transpose { ", transposed" } else { "" }));
        }
    }
}
