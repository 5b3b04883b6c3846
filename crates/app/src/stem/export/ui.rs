//! The export controls: which images (virtual images, the pattern on display, iDPC), which
//! formats, where (a folder natively; downloads in the browser), and the last result.

use scatterlab_stem::load::LoadProvenance;

use super::{deliver, safe_name, ExportArray, ExportError, Formats, Values};
use crate::stem::scale::PixelSize;
use crate::stem::view::{symmetric_limits, Display, Transform};
use crate::stem::{DpSource, StemPanel};
use scatterlab_stem::reduce::colormap::Colormap;

/// What to export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExportWhat {
    /// Every detector's virtual image.
    pub virtual_images: bool,
    /// The diffraction pattern on display (mean, max or the selection's mean).
    pub pattern: bool,
    /// The centre of mass after the DPC rotation: the colour wheel as shown (its raw arrays are
    /// the magnitude) and the row and column components, detector pixels.
    pub com: bool,
    /// The iDPC phase (when calibrated).
    pub idpc: bool,
}

impl Default for ExportWhat {
    fn default() -> Self {
        Self { virtual_images: true, pattern: true, com: false, idpc: false }
    }
}

/// The export settings and the last result.
#[derive(Clone, Debug, Default)]
pub struct ExportState {
    /// Native: the folder files are written into.
    pub folder: String,
    /// The formats.
    pub formats: Formats,
    /// The images.
    pub what: ExportWhat,
    /// What the last export wrote, or why it failed.
    pub status: Option<Result<Vec<String>, String>>,
    /// Files packed into the zip of the last export (`None`: written one by one).
    pub zipped: Option<usize>,
    /// Native: the folder dialog in flight.
    #[cfg(not(target_arch = "wasm32"))]
    pub dialog: crate::file_dialog::Pending,
    /// The open acquisition's provenance (hashing the sources once).
    pub provenance: Option<Result<LoadProvenance, String>>,
}

impl ExportState {
    /// The settings without the per-acquisition state (kept when another acquisition opens).
    pub fn settings(&self) -> Self {
        Self { folder: self.folder.clone(), formats: self.formats, what: self.what, ..Self::default() }
    }
}

impl StemPanel {
    /// The images [`ExportState::what`] asks for, with the display each is shown with.
    pub fn export_arrays(&self) -> Result<Vec<(ExportArray, String)>, ExportError> {
        let data = self.data().ok_or_else(|| ExportError::Nothing("no acquisition open".into()))?;
        let what = self.export.what;
        let mut out = Vec::new();
        let scan_px = data.calibration.scan_step_a.map(PixelSize::Angstrom);
        let dp_px = self.probe().and_then(|p| data.calibration.mrad_per_px(p.radius)).map(PixelSize::Mrad);
        if what.virtual_images {
            let images = self.virtual_images().and_then(|i| i.images.as_ref().ok()).ok_or_else(|| ExportError::Nothing("no virtual image computed yet".into()))?;
            let n = data.n_frames();
            for (d, (_, _, sums)) in self.detectors.iter().zip(&images.detectors) {
                // Exact sums when every frame is in; NaN marks frames a cancelled load never read.
                let values = if sums.len() == n { Values::U64(sums.clone()) } else { Values::F64((0..n).map(|i| sums.get(i).map_or(f64::NAN, |&v| v as f64)).collect()) };
                let name = format!("virtual_{}", safe_name(&d.name));
                out.push((
                    ExportArray { name, shape: data.scan, values, display: self.displays.image.clone(), rgba: None, pixel: scan_px },
                    format!("virtual image of detector {}", d.name),
                ));
            }
        }
        if what.pattern {
            let fused = self.fused().ok_or_else(|| ExportError::Nothing("no diffraction pattern yet".into()))?;
            let (name, values, text) = match self.dp_source {
                DpSource::Mean => ("dp_mean", Values::F64(fused.mean_dp()), "mean diffraction pattern of the loaded frames"),
                DpSource::Max => ("dp_max", Values::U64(fused.max_dp.clone()), "maximum diffraction pattern of the loaded frames"),
                DpSource::Selection => {
                    let dp = self.region_dp().and_then(|r| r.as_ref().ok()).ok_or_else(|| ExportError::Nothing("no scan region selected".into()))?;
                    ("dp_selection", Values::F64(dp.clone()), "mean diffraction pattern of the selected scan region")
                }
            };
            out.push((ExportArray { name: name.into(), shape: data.det, values, display: self.displays.dp.clone(), rgba: None, pixel: dp_px }, text.to_owned()));
        }
        if what.com {
            let dpc = self.dpc().ok_or_else(|| ExportError::Nothing("no centre of mass yet (after loading)".into()))?;
            let (a, deg) = (&dpc.aligned, dpc.rotation.degrees);
            let turn = if dpc.rotation.transpose { ", components transposed" } else { "" };
            // As on screen: the components' display with one range, symmetric about 0, for both.
            let mut signed = self.displays.com.clone();
            if signed.auto && signed.centred {
                let both: Vec<f64> = a.r.iter().chain(&a.c).copied().collect();
                let (lo, hi) = symmetric_limits(&both, signed.percentiles[1]);
                signed.auto = false;
                signed.limits = [lo, hi];
            }
            let magnitude: Vec<f64> = a.r.iter().zip(&a.c).map(|(r, c)| r.hypot(*c)).collect();
            let wheel = format!(
                "centre of mass as a colour wheel (hue = direction, full value at |CoM| = {:.4} px) after the DPC rotation {deg:.3}°{turn}; raw arrays: |CoM|, detector pixels",
                dpc.magnitude_max
            );
            out.push((
                ExportArray {
                    name: "com_wheel".into(),
                    shape: data.scan,
                    values: Values::F64(magnitude),
                    display: Display::new(Colormap::Gray, Transform::Linear),
                    rgba: Some(dpc.wheel.clone()),
                    pixel: scan_px,
                },
                wheel,
            ));
            for (name, values, axis) in [("com_row", &a.r, "row"), ("com_col", &a.c, "column")] {
                let text = format!("centre of mass, {axis} component after the DPC rotation {deg:.3}°{turn}, mean-subtracted, detector pixels");
                out.push((ExportArray { name: name.into(), shape: data.scan, values: Values::F64(values.clone()), display: signed.clone(), rgba: None, pixel: scan_px }, text));
            }
        }
        if what.idpc {
            match self.dpc().map(|d| &d.idpc) {
                Some(Ok(phase)) => out.push((
                    ExportArray {
                        name: "idpc_phase".into(),
                        shape: data.scan,
                        values: Values::F64(phase.clone()),
                        display: self.displays.idpc.clone(),
                        rgba: None,
                        pixel: scan_px,
                    },
                    "iDPC phase, radians".to_owned(),
                )),
                Some(Err(e)) => return Err(ExportError::Nothing(e.clone())),
                None => return Err(ExportError::Nothing("no iDPC phase yet (after loading)".into())),
            }
        }
        if out.is_empty() {
            return Err(ExportError::Nothing("no image chosen".into()));
        }
        Ok(out)
    }

    /// Every file of the export as (name, bytes), sidecars included. Hashes the sources on the
    /// first call for an acquisition.
    pub fn export_files(&mut self) -> Result<Vec<(String, Vec<u8>)>, ExportError> {
        let arrays = self.export_arrays()?;
        let data = self.data().ok_or_else(|| ExportError::Nothing("no acquisition open".into()))?;
        let base = safe_name(data.name.rsplit_once('.').map_or(data.name.as_str(), |(stem, _)| stem));
        if self.export.provenance.is_none() {
            self.export.provenance = Some(super::provenance(data, self.source_path.as_deref()));
        }
        let provenance = self.export.provenance.clone().unwrap_or_else(|| Err("not computed".into()));
        let mut files = Vec::new();
        for (array, text) in arrays {
            let sidecar = self.sidecar(text, provenance.clone()).map_err(ExportError::Nothing)?;
            files.extend(array.files(&base, self.export.formats, sidecar)?);
        }
        Ok(files)
    }

    /// Exports now: writes the files into the folder (native) or downloads one zip (web); the
    /// result is shown.
    pub fn export_now(&mut self) {
        self.export_to(false);
    }

    /// Exports every file in one zip, `<base>_export.zip`: into the folder (native) or as one
    /// download (web).
    pub fn export_zip_now(&mut self) {
        self.export_to(true);
    }

    fn export_to(&mut self, zip: bool) {
        let dir = std::path::PathBuf::from(self.export.folder.trim());
        if cfg!(not(target_arch = "wasm32")) && self.export.folder.trim().is_empty() {
            self.export.status = Some(Err("type or choose the folder to write into".to_owned()));
            return;
        }
        let zip = zip || cfg!(target_arch = "wasm32");
        let name = self.data().map(|d| format!("{}_export.zip", safe_name(d.name.rsplit_once('.').map_or(d.name.as_str(), |(stem, _)| stem))));
        let result = self.export_files().and_then(|files| {
            self.export.zipped = zip.then_some(files.len());
            deliver(&dir, name.as_deref().unwrap_or("export.zip"), &files, zip)
        });
        self.export.status = Some(result.map_err(|e| e.to_string()));
    }

    /// The export section (under the open bar).
    pub(crate) fn export_ui(&mut self, ui: &mut egui::Ui) {
        egui::CollapsingHeader::new("Export images").id_salt("stem export").show(ui, |ui| {
            let e = &mut self.export;
            ui.horizontal_wrapped(|ui| {
                ui.checkbox(&mut e.what.virtual_images, "virtual images");
                ui.checkbox(&mut e.what.pattern, "diffraction pattern (as shown)");
                ui.checkbox(&mut e.what.com, "CoM (wheel + components)");
                ui.checkbox(&mut e.what.idpc, "iDPC phase");
                ui.separator();
                ui.checkbox(&mut e.formats.png, "PNG").on_hover_text("8-bit RGBA, with the colormap, transform and limits on screen");
                ui.checkbox(&mut e.formats.npy, ".npy").on_hover_text("The raw numbers: exact u64 sums or f64");
                ui.checkbox(&mut e.formats.tiff, "TIFF").on_hover_text("The raw numbers as 32-bit float greyscale");
                ui.checkbox(&mut e.formats.scale_bar, "scale bar").on_hover_text("PNGs of calibrated images get a scale bar (nm/Å or mrad), enlarged to at least 512 px wide");
                ui.weak("+ sidecar JSON (provenance)");
            });
            // The browser has one button (a zip download); the desktop both.
            #[cfg_attr(target_arch = "wasm32", allow(unused_mut))]
            let (mut go, mut go_zip) = (false, false);
            ui.horizontal_wrapped(|ui| {
                #[cfg(not(target_arch = "wasm32"))]
                {
                    ui.add(egui::TextEdit::singleline(&mut e.folder).hint_text("folder to write into").desired_width(320.0))
                        .on_hover_text("Created if missing")
                        .accessible_name("export folder");
                    if ui.button("Choose…").on_hover_text("Pick the folder in the system's dialog").clicked() {
                        e.dialog.start(crate::file_dialog::Ask::Folder { title: "Export into folder" }, ui.ctx());
                    }
                    if let Some(dir) = e.dialog.take() {
                        e.folder = dir.display().to_string();
                    }
                    go = ui.button("Export").on_hover_text("Each file into the folder").clicked();
                    go_zip = ui.button("Export as zip").on_hover_text("Every file in one zip in the folder").clicked();
                }
                #[cfg(target_arch = "wasm32")]
                {
                    go_zip = ui.button("Download").on_hover_text("Every file in one zip").clicked();
                }
            });
            if go {
                self.export_now();
            }
            if go_zip {
                self.export_zip_now();
            }
            match (&self.export.status, self.export.zipped) {
                (Some(Ok(files)), Some(n)) => {
                    ui.weak(format!("exported {n} files in one zip: {}", files.join(", ")));
                }
                (Some(Ok(files)), None) => {
                    ui.weak(format!("exported {} files: {}", files.len(), files.join(", ")));
                }
                (Some(Err(e)), _) => {
                    ui.colored_label(ui.visuals().error_fg_color, format!("export failed: {e}"));
                }
                (None, _) => {}
            }
        });
    }
}
