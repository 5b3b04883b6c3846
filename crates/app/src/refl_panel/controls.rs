//! The panel's controls: beam, q grid and resolution; device selector; plot view selector.

use super::{Device, PlotView, ReflPanel};

impl ReflPanel {
    /// Energy and q grid.
    pub(super) fn beam_ui(&mut self, ui: &mut egui::Ui) {
        let inputs = &mut self.inputs;
        ui.strong("Beam and q grid");
        egui::Grid::new("refl_beam").num_columns(2).show(ui, |ui| {
            let label = ui.label("energy");
            ui.add(egui::DragValue::new(&mut inputs.energy_ev).range(1.0..=1.0e5).speed(0.5).suffix(" eV")).labelled_by(label.id);
            ui.end_row();
            let label = ui.label("q min");
            ui.add(q_value(&mut inputs.q_min)).labelled_by(label.id);
            ui.end_row();
            let label = ui.label("q max");
            ui.add(q_value(&mut inputs.q_max)).labelled_by(label.id);
            ui.end_row();
            let label = ui.label("points");
            ui.add(egui::DragValue::new(&mut inputs.n_points).range(2..=100_000).speed(1.0)).labelled_by(label.id);
            ui.end_row();
            let label = ui.label("dQ/Q (FWHM, %)");
            ui.add(egui::DragValue::new(&mut inputs.resolution_pct).range(0.0..=20.0).speed(0.05).max_decimals(2))
                .on_hover_text("Gaussian instrument resolution, constant dQ/Q; 0 = none")
                .labelled_by(label.id);
            ui.end_row();
        });
        // R exists only below 2k0: beyond it the plot stops, and this note says where and why.
        let limit = format!("q must stay below 2k0 = {:.4} Å⁻¹", inputs.q_limit());
        let limit = if inputs.resolution_pct > 0.0 {
            // The smearing window reaches above each q, and must stay below 2k0 too.
            format!("{limit}\n(q ≤ {:.4} Å⁻¹ with the resolution window)", inputs.q_cutoff())
        } else {
            limit
        };
        if inputs.is_clamped() {
            let note = format!(
                "q max {:.4} Å⁻¹ is beyond the physical maximum at {} eV: plotted up to {:.4} Å⁻¹\n{limit}",
                inputs.q_max,
                inputs.energy_ev,
                inputs.valid_q_grid().last().copied().unwrap_or(inputs.q_min),
            );
            ui.colored_label(ui.visuals().warn_fg_color, note).accessible_name("q max clamped");
        } else {
            ui.weak(limit);
        }
    }

    /// The main plot's view selector.
    pub(super) fn view_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.label("view:");
            for view in PlotView::ALL {
                ui.selectable_value(&mut self.view, view, view.label());
            }
        });
    }

    /// CPU/GPU selector, naming the GPU device or saying why there is none.
    pub(super) fn device_ui(&mut self, ui: &mut egui::Ui) {
        ui.strong("Device");
        ui.radio_value(&mut self.inputs.device, Device::Cpu, Device::Cpu.label());
        ui.radio_value(&mut self.inputs.device, Device::Gpu, Device::Gpu.label());
        if self.gpu.is_available() {
            ui.weak(self.gpu.describe());
        } else {
            ui.colored_label(ui.visuals().warn_fg_color, format!("GPU {}", self.gpu.describe()));
        }
    }
}

/// A q value in Å⁻¹.
fn q_value(value: &mut f64) -> egui::DragValue<'_> {
    egui::DragValue::new(value).range(1.0e-6..=10.0).speed(1.0e-4).max_decimals(5).suffix(" Å⁻¹")
}
