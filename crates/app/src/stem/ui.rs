//! The workspace's layout: the open bar and load progress, then three columns — diffraction
//! pattern with detectors, virtual image with the scan-region selector, DPC (colour wheel,
//! signed components, rotation, iDPC) — side by side or stacked as the width allows
//! ([`Columns`]). Each image has its colour bar beside it and reads out the pixel under the
//! pointer.

use std::hash::{Hash, Hasher};

use egui::{Color32, Rect, Stroke};

use super::controls::display_controls;
use super::dp_view::PixelMap;
use super::gpu_live::StemDevice;
use super::layout::Columns;
use super::readout::{colour_bar, hover, Place};
use super::resident::ScanRegion;
use super::scale::PixelSize;
use super::view::scale_bar;
use super::{DpSource, Page, StemPanel};

pub(super) fn key(v: impl Hash) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

impl StemPanel {
    /// Draws the workspace (and updates it first).
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        self.update(ui.ctx());
        // The read-out belongs to this frame's pointer: whichever image is under it sets it.
        self.hover = None;
        self.open_bar(ui);
        ui.horizontal_wrapped(|ui| {
            ui.selectable_value(&mut self.page, Page::Workspace, "Workspace");
            ui.selectable_value(&mut self.page, Page::Browse, "Browse").on_hover_text("The HDF5 tree, metadata and quick views of any dataset");
            ui.selectable_value(&mut self.page, Page::Ssb, "SSB").on_hover_text("Single-sideband ptychography: phase with aberration correction and fit");
        });
        self.export_ui(ui);
        if self.page == Page::Browse {
            self.browser.sync(self.data.as_ref(), self.source_path.as_deref());
            egui::ScrollArea::both().id_salt("stem_browse_scroll").show(ui, |ui| self.browser.ui(ui, self.data.as_ref()));
            return;
        }
        if self.page == Page::Ssb {
            self.ssb_page(ui);
            return;
        }
        egui::ScrollArea::both().id_salt("stem_scroll").show(ui, |ui| {
            let columns = Columns::for_width(ui.available_width());
            self.columns = columns;
            for row in columns.rows() {
                ui.horizontal_top(|ui| {
                    for column in row {
                        ui.group(|ui| {
                            ui.vertical(|ui| {
                                ui.set_width(columns.width);
                                match column {
                                    0 => self.dp_column(ui),
                                    1 => self.image_column(ui),
                                    _ => self.dpc_column(ui),
                                }
                            })
                        });
                    }
                });
            }
        });
    }

    fn open_bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            if ui.button("Example").on_hover_text("Load the built-in synthetic acquisition").clicked() {
                self.open_example();
            }
            #[cfg(not(target_arch = "wasm32"))]
            {
                let field = ui
                    .add(egui::TextEdit::singleline(&mut self.path).hint_text("…/scan_master.h5 (or drop it here)").desired_width(320.0))
                    .on_hover_text("A Dectris master (its data files beside it) or a single HDF5 file with /entry/data/data")
                    .accessible_name("STEM file path");
                let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                if ui.button("Open").clicked() || enter {
                    let path = std::path::PathBuf::from(self.path.trim());
                    self.open_path(&path);
                }
                let browse = ui.add_enabled(!self.open_dialog.is_open(), egui::Button::new("Browse…"));
                if browse.on_hover_text("Pick the master (or single HDF5 file) in the system's dialog; it opens at once").clicked() {
                    let ask = crate::file_dialog::Ask::OpenFile { title: "Open a 4D-STEM master or HDF5 file" };
                    self.open_dialog.start(ask, ui.ctx());
                }
                if let Some(path) = self.open_dialog.take() {
                    self.path = path.display().to_string();
                    self.open_path(&path);
                }
            }
            #[cfg(target_arch = "wasm32")]
            if ui.button("Open files…").on_hover_text("A Dectris master with its data files (select them all), or a single HDF5 file; read in pieces, never whole").clicked() {
                if let Err(e) = super::browser_files::pick_files(ui.ctx().clone(), false) {
                    self.set_error(format!("file picker: {e}"));
                }
            }
            #[cfg(target_arch = "wasm32")]
            if ui.button("Open folder…").on_hover_text("A folder holding one acquisition (its master and data files)").clicked() {
                if let Err(e) = super::browser_files::pick_files(ui.ctx().clone(), true) {
                    self.set_error(format!("folder picker: {e}"));
                }
            }
            if let Some(d) = &self.data {
                ui.label(format!("{} · scan {}×{} · detector {}×{} · {} masked px", d.name, d.scan[0], d.scan[1], d.det[0], d.det[1], d.n_masked));
            }
        });
        if let (Some(d), true) = (&self.data, self.is_loading()) {
            let (n, total) = (d.loaded(), d.n_frames());
            let mut cancel = false;
            ui.horizontal(|ui| {
                let bar = egui::ProgressBar::new(n as f32 / total.max(1) as f32).text(format!("loading {n} / {total} frames")).desired_width(400.0);
                ui.add(bar);
                cancel = ui.button("Cancel").clicked();
            });
            if cancel {
                self.cancel();
            }
        }
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, format!("error: {e}"));
        }
        for n in &self.notes {
            ui.weak(n);
        }
    }

    fn dp_column(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.strong("Diffraction pattern");
            ui.selectable_value(&mut self.dp_source, DpSource::Mean, "mean");
            ui.selectable_value(&mut self.dp_source, DpSource::Max, "max");
            ui.selectable_value(&mut self.dp_source, DpSource::Selection, "selection");
        });
        let width = self.columns.image();
        ui.horizontal_top(|ui| {
            self.dp_view(ui, width);
            let unit = if self.dp_source == DpSource::Max { "counts" } else { "counts/frame" };
            let height = self.views.dp.height(width);
            colour_bar(ui, &self.displays.dp, self.views.dp.limits, unit, height, "diffraction pattern");
        });
        if let Some(p) = self.probe {
            ui.weak(format!("beam centre ({:.2}, {:.2}) px · BF radius {:.2} px", p.center[0], p.center[1], p.radius));
        }
        display_controls(ui, "stem dp", &mut self.displays.dp);
        self.views.dp.histogram_ui(ui, width, "diffraction pattern");
        ui.separator();
        self.detector_controls(ui);
    }

    fn image_column(&mut self, ui: &mut egui::Ui) {
        let Some(data) = &self.data else { return };
        let (scan, n) = (data.scan, data.n_frames());
        let name = self.detectors.get(self.selected).map_or("—", |d| d.name.as_str()).to_owned();
        ui.horizontal(|ui| {
            ui.strong(format!("Virtual image: {name}"));
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                let why = self.live.unavailable().map(str::to_owned);
                let gpu = ui.add_enabled(why.is_none(), egui::Button::selectable(self.device == StemDevice::Gpu, "GPU"));
                let gpu = match &why {
                    Some(w) => gpu.on_disabled_hover_text(w.as_str()),
                    None => gpu.on_hover_text("Frames resident on the GPU; each detector change is one dispatch (WGSL, exact sums)"),
                };
                crate::landmarks::mark(&gpu, "stem device GPU");
                if gpu.clicked() {
                    self.device = StemDevice::Gpu;
                }
                let cpu = ui.add(egui::Button::selectable(self.device == StemDevice::Cpu, "CPU")).on_hover_text("Exact sums over the frames in memory");
                if cpu.clicked() {
                    self.device = StemDevice::Cpu;
                }
            });
        });
        let values = self.virtual_image(self.selected).map(|sums| {
            // Positions without data stay NaN (drawn in the "no data" colour), never 0 counts.
            let mut v = vec![f64::NAN; n];
            let present = |i: usize| self.data.as_ref().is_some_and(|d| d.is_present(i));
            v.iter_mut().zip(sums).enumerate().filter(|(i, _)| present(*i)).for_each(|(_, (v, &s))| *v = s as f64);
            v
        });
        let detector = self.detectors.get(self.selected).map(|d| format!("{d:?}"));
        match (values, self.images.as_ref().map(|i| &i.images)) {
            (Some(v), _) => {
                // The device and frames are in the key: new sums redraw even when nothing else changed.
                let from = self.images.as_ref().map(|i| (i.device.name(), i.frames));
                let k = key((self.version, self.selected, detector, from));
                self.views.image.set_scalar(ui.ctx(), "stem virtual image", &v, scan, k, &mut self.displays.image);
            }
            (None, Some(Err(e))) => self.views.image.error = Some(e.clone()),
            (None, _) => self.views.image.error = Some("no virtual image yet".into()),
        }
        self.views.image.shape = scan;
        let width = self.columns.image();
        let step = self.data.as_ref().and_then(|d| d.calibration.scan_step_a);
        let response = ui
            .horizontal_top(|ui| {
                let response = self.views.image.show(ui, width, "virtual image");
                let height = self.views.image.height(width);
                colour_bar(ui, &self.displays.image, self.views.image.limits, "counts", height, "virtual image");
                response
            })
            .inner;
        crate::landmarks::mark(&response, "stem virtual image");
        self.select_region(&response, scan);
        let place = step.map_or(Place::None, |s| Place::Scan(PixelSize::Angstrom(s)));
        if let Some(h) = hover(ui, &response, &self.views.image, "virtual image", "counts", place) {
            self.hover = Some(h);
        }
        let painter = ui.painter_at(response.rect);
        if let Some(s) = self.selection {
            let map = PixelMap::new(response.rect, scan);
            let a = map.to_screen([s.rows[0] as f64 - 0.5, s.cols[0] as f64 - 0.5]);
            let b = map.to_screen([s.rows[1] as f64 - 0.5, s.cols[1] as f64 - 0.5]);
            painter.rect_stroke(Rect::from_two_pos(a, b), 0.0, Stroke::new(2.0, Color32::YELLOW), egui::StrokeKind::Middle);
        }
        if let Some(step) = step {
            scale_bar(&painter, response.rect, scan[1], PixelSize::Angstrom(step));
        }
        if let Some(i) = &self.images {
            let ms = i.elapsed.as_secs_f64() * 1e3;
            ui.label(format!("{} · {ms:.2} ms · {} detectors over {} frames", i.device.name(), i.detectors.len(), i.frames));
        }
        if let Some(s) = self.gpu_status() {
            ui.colored_label(ui.visuals().warn_fg_color, s);
        }
        display_controls(ui, "stem image", &mut self.displays.image);
        self.views.image.histogram_ui(ui, width, "virtual image");
        ui.horizontal_wrapped(|ui| match self.selection {
            Some(s) => {
                ui.label(format!("selection: rows {}..{} cols {}..{}", s.rows[0], s.rows[1], s.cols[0], s.cols[1]));
                if ui.button("clear").clicked() {
                    self.selection = None;
                    self.dp_source = DpSource::Mean;
                }
            }
            None => {
                ui.weak("click a scan position or drag a rectangle to see its mean pattern");
            }
        });
    }

    /// A click selects one scan position, a drag a rectangle; the pattern view follows.
    fn select_region(&mut self, response: &egui::Response, scan: [usize; 2]) {
        let map = PixelMap::new(response.rect, scan);
        let at = |p: egui::Pos2| {
            let [r, c] = map.to_pixel(p);
            [r.round().clamp(0.0, scan[0].saturating_sub(1) as f64) as usize, c.round().clamp(0.0, scan[1].saturating_sub(1) as f64) as usize]
        };
        let Some(pos) = response.interact_pointer_pos() else { return };
        if response.drag_started() {
            let origin = response.ctx.input(|i| i.pointer.press_origin()).unwrap_or(pos);
            self.select_from = Some(at(response.rect.clamp(origin)));
        }
        let end = at(response.rect.clamp(pos));
        let start = if response.clicked() {
            Some(end)
        } else if response.dragged() {
            self.select_from
        } else {
            None
        };
        if let Some(s) = start {
            self.selection = Some(ScanRegion { rows: [s[0].min(end[0]), s[0].max(end[0]) + 1], cols: [s[1].min(end[1]), s[1].max(end[1]) + 1] });
            self.dp_source = DpSource::Selection;
        }
    }
}
