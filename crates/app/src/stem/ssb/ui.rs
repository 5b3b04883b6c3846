//! The SSB page: controls (centre and radius, rotation, C10 / C12 / φ12 sliders, device, Fit) in
//! one column, the phase image with its colour bar, read-out, display controls, histogram and
//! export in the other — side by side when the window is wide enough, else one under the other.

use scatterlab_stem::ssb::FitOptions;

use super::{SsbDevice, SsbResult};
use crate::stem::controls::display_controls;
use crate::stem::layout::GAP;
use crate::stem::readout::{colour_bar, hover, Place, BAR_WIDTH};
use crate::stem::scale::PixelSize;
use crate::stem::view::{fmt, scale_bar};
use crate::stem::StemPanel;

/// Width of the controls column, points.
const COLUMN: f32 = 380.0;
/// Narrowest and widest phase image, points.
const IMAGE: [f32; 2] = [250.0, 560.0];

/// The phase image's width and whether it sits beside the controls, for `available` points.
fn image_width(available: f32) -> (f32, bool) {
    let beside = available - COLUMN - 2.0 * GAP - BAR_WIDTH - 8.0;
    if beside >= 300.0 {
        (beside.min(IMAGE[1]).floor(), true)
    } else {
        ((available - GAP - BAR_WIDTH - 8.0).clamp(IMAGE[0], IMAGE[1]).floor(), false)
    }
}

/// A value with an "auto" checkbox: unchecked edits `value`, checked shows `auto`.
fn overridable(ui: &mut egui::Ui, label: &str, value: &mut Option<f64>, auto: Option<f64>, speed: f64, suffix: &str) {
    ui.horizontal(|ui| {
        let mut is_auto = value.is_none();
        if ui.checkbox(&mut is_auto, "").on_hover_text("Use the workspace's value (auto probe)").changed() {
            *value = if is_auto { None } else { auto.or(Some(0.0)) };
        }
        match value {
            Some(v) => {
                ui.add(egui::DragValue::new(v).speed(speed).suffix(suffix)).on_hover_text(label);
                ui.label(label);
            }
            None => {
                ui.label(format!("{label}: auto {}", auto.map_or("—".to_owned(), |a| format!("{a:.3}{suffix}"))));
            }
        }
    });
}

impl StemPanel {
    /// The SSB page (updates it first).
    pub(crate) fn ssb_page(&mut self, ui: &mut egui::Ui) {
        if self.update_ssb(self.load_budget, ui.ctx()) || self.ssb.fitting() {
            ui.ctx().request_repaint();
        }
        egui::ScrollArea::both().id_salt("stem_ssb_scroll").show(ui, |ui| {
            let (width, beside) = image_width(ui.available_width());
            let controls = |this: &mut Self, ui: &mut egui::Ui| {
                ui.group(|ui| {
                    ui.vertical(|ui| {
                        ui.set_width(COLUMN);
                        this.ssb_controls(ui);
                    })
                });
            };
            let image = |this: &mut Self, ui: &mut egui::Ui| {
                ui.group(|ui| {
                    ui.vertical(|ui| {
                        ui.set_width(width + BAR_WIDTH + 8.0);
                        this.ssb_image(ui, width);
                    })
                });
            };
            if beside {
                ui.horizontal_top(|ui| {
                    controls(self, ui);
                    image(self, ui);
                });
            } else {
                controls(self, ui);
                image(self, ui);
            }
        });
    }

    fn ssb_controls(&mut self, ui: &mut egui::Ui) {
        ui.strong("Single-sideband ptychography");
        ui.weak("Phase at the dose of a BF image; the aberrations correct the probe (quantem's convention).");
        let probe = self.probe;
        let auto_rotation = self.rotation.or(self.auto_rotation.as_ref().and_then(|r| r.as_ref().ok()).copied());
        let s = &mut self.ssb.settings;
        ui.separator();
        ui.label("BF disc (px)");
        let mut row = s.center.map(|c| c[0]);
        let mut col = s.center.map(|c| c[1]);
        overridable(ui, "centre row", &mut row, probe.map(|p| p.center[0]), 0.05, " px");
        overridable(ui, "centre col", &mut col, probe.map(|p| p.center[1]), 0.05, " px");
        s.center = match (row, col) {
            (None, None) => None,
            (r, c) => Some([r.or(probe.map(|p| p.center[0])).unwrap_or(0.0), c.or(probe.map(|p| p.center[1])).unwrap_or(0.0)]),
        };
        overridable(ui, "BF radius", &mut s.bf_radius, probe.map(|p| p.radius), 0.05, " px");
        ui.separator();
        ui.horizontal(|ui| {
            let mut from_dpc = s.rotation.is_none();
            if ui.checkbox(&mut from_dpc, "rotation from DPC").on_hover_text("θ = −a for the DPC rotation a in use (CONVENTIONS.md § SSB)").changed() {
                s.rotation = if from_dpc { None } else { Some(auto_rotation.map_or((0.0, false), |r| (super::build::theta_from_dpc(r.degrees), r.transpose))) };
            }
            match &mut s.rotation {
                Some((theta, transposed)) => {
                    ui.add(egui::DragValue::new(theta).speed(0.1).range(-360.0..=360.0).suffix("°")).on_hover_text("scan rotation θ");
                    ui.checkbox(transposed, "transposed");
                }
                None => {
                    let text = auto_rotation.map_or("(DPC after loading)".to_owned(), |r| {
                        format!("θ {:.3}°{}", super::build::theta_from_dpc(r.degrees), if r.transpose { ", transposed" } else { "" })
                    });
                    ui.weak(text);
                }
            }
        });
        ui.separator();
        ui.label("Aberrations");
        let ab = &mut s.aberrations;
        ui.spacing_mut().slider_width = 220.0;
        ui.add(egui::Slider::new(&mut ab.c10_nm, -50.0..=50.0).text("C10 (nm)").clamping(egui::SliderClamping::Never)).on_hover_text("defocus");
        ui.add(egui::Slider::new(&mut ab.c12_nm, 0.0..=20.0).text("C12 (nm)").clamping(egui::SliderClamping::Never)).on_hover_text("two-fold astigmatism");
        ui.add(egui::Slider::new(&mut ab.phi12_rad, 0.0..=std::f64::consts::PI).text("φ12 (rad)")).on_hover_text("astigmatism angle from the row axis");
        if ui.button("zero aberrations").clicked() {
            *ab = Default::default();
        }
        ui.horizontal(|ui| {
            ui.label("device");
            for d in [SsbDevice::Cpu, SsbDevice::Gpu] {
                let label = if d == SsbDevice::Cpu { "SSB CPU" } else { "SSB GPU" };
                let unavailable = if d == SsbDevice::Gpu { self.ssb.gpu.unavailable() } else { None };
                let b = ui.add_enabled(unavailable.is_none(), egui::Button::selectable(s.device == d, label));
                let b = match unavailable {
                    Some(why) => b.on_disabled_hover_text(why),
                    None => b.on_hover_text(d.name()),
                };
                if b.clicked() {
                    s.device = d;
                }
            }
        });
        ui.separator();
        self.ssb_fit_controls(ui);
    }

    fn ssb_fit_controls(&mut self, ui: &mut egui::Ui) {
        match self.ssb.fit_progress() {
            Some((done, total)) => {
                let mut cancel = false;
                ui.horizontal(|ui| {
                    let text = if total > 0 { format!("fitting: {done} / {total} evaluations") } else { "fitting…".to_owned() };
                    ui.add(egui::ProgressBar::new(done as f32 / total.max(1) as f32).text(text).desired_width(260.0));
                    cancel = ui.button("Cancel fit").clicked();
                });
                if cancel {
                    self.cancel_ssb_fit();
                }
            }
            None => {
                let ready = self.ssb.stack().is_some() && self.ssb.blocked.is_none();
                let b = ui
                    .add_enabled(ready, egui::Button::new("Fit aberrations"))
                    .on_hover_text("C10, C12, φ12 minimising the phase variance over BF pixels: grid, then Nelder–Mead (from the sliders)");
                if b.clicked() {
                    if let Err(e) = self.start_ssb_fit(FitOptions::default(), Some(ui.ctx().clone())) {
                        self.ssb.last_fit = Some(Err(e));
                    }
                }
            }
        }
        match &self.ssb.last_fit {
            Some(Ok(r)) => {
                ui.label(format!("fitted: C10 {:.3} nm, C12 {:.3} nm, φ12 {:.3} rad", r.aberrations.c10_nm, r.aberrations.c12_nm, r.aberrations.phi12_rad));
                ui.weak(format!("loss {:.5} after {} evaluations", r.loss, r.evaluations));
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("fit: {e}"));
            }
            None => {}
        }
        if let Some(device) = self.ssb.fit_device() {
            ui.weak(format!("fit losses on {device}"));
        }
    }

    fn ssb_image(&mut self, ui: &mut egui::Ui, width: f32) {
        ui.strong("SSB phase (rad)");
        if let Some((done, total)) = self.ssb.stack_progress().filter(|(d, t)| d < t) {
            ui.add(egui::ProgressBar::new(done as f32 / total.max(1) as f32).text(format!("gathering BF pixels: {done} / {total} frames")).desired_width(width));
        }
        let ctx = ui.ctx().clone();
        let shape = self.ssb.result.as_ref().map_or([1, 1], |r| r.scan);
        let version = self.ssb.result.as_ref().map_or(0, result_key);
        match (&self.ssb.blocked, &self.ssb.result) {
            (Some(e), _) => self.ssb.view.error = Some(e.clone()),
            (None, Some(r)) => match &r.phase {
                Ok(phase) => self.ssb.view.set_scalar(&ctx, "stem ssb phase", phase, r.scan, version, &mut self.ssb.display),
                Err(e) => self.ssb.view.error = Some(e.clone()),
            },
            (None, None) => self.ssb.view.error = Some("gathering the BF pixels…".into()),
        }
        self.ssb.view.shape = shape;
        let response = ui
            .horizontal_top(|ui| {
                let response = self.ssb.view.show(ui, width, "SSB phase");
                let height = self.ssb.view.height(width);
                colour_bar(ui, &self.ssb.display, self.ssb.view.limits, "rad", height, "SSB phase");
                response
            })
            .inner;
        crate::landmarks::mark(&response, "stem ssb phase");
        let step = self.data.as_ref().and_then(|d| d.calibration.scan_step_a);
        if let Some(step) = step {
            scale_bar(&ui.painter_at(response.rect), response.rect, shape[1], PixelSize::Angstrom(step));
        }
        let place = step.map_or(Place::None, |s| Place::Scan(PixelSize::Angstrom(s)));
        if let Some(h) = hover(ui, &response, &self.ssb.view, "SSB phase", "rad", place) {
            self.hover = Some(h);
        }
        if let Some(r) = &self.ssb.result {
            let i = &r.inputs;
            ui.label(format!("{} · {:.1} ms · {} BF pixels", r.device.name(), r.elapsed.as_secs_f64() * 1e3, self.ssb.stack().map_or(0, |s| s.pixels.len())));
            if r.device == SsbDevice::Gpu {
                if let Some(adapter) = self.ssb.gpu.adapter() {
                    ui.weak(adapter);
                }
            }
            if self.ssb.settings.device == SsbDevice::Gpu {
                if let Some(status) = self.ssb.gpu.status() {
                    ui.label(status);
                }
            }
            ui.weak(format!(
                "centre ({:.2}, {:.2}) px, radius {:.2} px{} · θ {:.3}°{} · {}",
                i.center[0],
                i.center[1],
                i.bf_radius,
                if i.auto_probe { " (auto probe)" } else { "" },
                i.rotation_deg,
                if i.transposed { ", transposed" } else { "" },
                i.rotation_source
            ));
            ui.weak(format!("λ {} Å · α {} mrad · step {} Å · sampling {}", fmt(i.optics.wavelength_a), fmt(i.convergence_mrad), fmt(i.scan_step_a), i.sampling_rule));
        }
        display_controls(ui, "stem ssb", &mut self.ssb.display);
        self.ssb.view.histogram_ui(ui, width, "SSB phase");
        ui.horizontal(|ui| {
            let label = if cfg!(target_arch = "wasm32") { "Download SSB phase (zip)" } else { "Export SSB phase" };
            if ui
                .add_enabled(self.ssb.phase().is_some(), egui::Button::new(label))
                .on_hover_text("PNG (as shown), .npy (f64 radians), TIFF, with a sidecar JSON; formats and folder from Export images")
                .clicked()
            {
                self.ssb_export_now();
            }
        });
        match &self.ssb.export_status {
            Some(Ok(files)) => {
                ui.weak(format!("exported {} files: {}", files.len(), files.join(", ")));
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("export failed: {e}"));
            }
            None => {}
        }
    }
}

/// A texture key for a result: changes whenever its numbers may have.
fn result_key(r: &SsbResult) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let i = &r.inputs;
    (i.version, i.center.map(f64::to_bits), i.bf_radius.to_bits(), i.rotation_deg.to_bits(), i.transposed, i.optics.dk_inv_a_per_px.to_bits()).hash(&mut h);
    (r.aberrations.c10_nm.to_bits(), r.aberrations.c12_nm.to_bits(), r.aberrations.phi12_rad.to_bits(), r.device.name()).hash(&mut h);
    h.finish()
}
