//! The export controls: which images (virtual images, the pattern on display, iDPC), which
//! formats, where (a folder natively; downloads in the browser), and the last result.

use scatterlab_stem::load::LoadProvenance;

use super::{safe_name, write_files, ExportArray, ExportError, Formats, Values};
use crate::stem::view::{Display, Transform};
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
    /// The open acquisition's provenance (hashing the sources once).
    pub provenance: Option<Result<LoadProvenance, String>>,
}

impl ExportState {
    /// The settings without the per-acquisition state (kept when another acquisition opens).
    pub fn settings(&self) -> Self {
        Self { folder: self.folder.clone(), formats: self.formats, what: self.what, status: None, provenance: None }
    }
}

impl StemPanel {
    /// The images [`ExportState::what`] asks for, with the display each is shown with.
    pub fn export_arrays(&self) -> Result<Vec<(ExportArray, String)>, ExportError> {
        let data = self.data().ok_or_else(|| ExportError::Nothing("no acquisition open".into()))?;
        let what = self.export.what;
        let mut out = Vec::new();
        if what.virtual_images {
            let images = self.virtual_images().and_then(|i| i.images.as_ref().ok()).ok_or_else(|| ExportError::Nothing("no virtual image computed yet".into()))?;
            let n = data.n_frames();
            for (d, (_, _, sums)) in self.detectors.iter().zip(&images.detectors) {
                // Exact sums when every frame is in; NaN marks frames a cancelled load never read.
                let values = if sums.len() == n {
                    Values::U64(sums.clone())
                } else {
                    Values::F64((0..n).map(|i| sums.get(i).map_or(f64::NAN, |&v| v as f64)).collect())
                };
                let name = format!("virtual_{}", safe_name(&d.name));
                out.push((ExportArray { name, shape: data.scan, values, display: self.displays.image.clone(), rgba: None }, format!("virtual image of detector {}", d.name)));
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
            out.push((ExportArray { name: name.into(), shape: data.det, values, display: self.displays.dp.clone(), rgba: None }, text.to_owned()));
        }
        if what.com {
            let dpc = self.dpc().ok_or_else(|| ExportError::Nothing("no centre of mass yet (after loading)".into()))?;
            let (a, deg) = (&dpc.aligned, dpc.rotation.degrees);
            let turn = if dpc.rotation.transpose { ", components transposed" } else { "" };
            let signed = Display::new(Colormap::RdBu, Transform::Linear);
            let magnitude: Vec<f64> = a.r.iter().zip(&a.c).map(|(r, c)| r.hypot(*c)).collect();
            let wheel = format!("centre of mass as a colour wheel (hue = direction, full value at |CoM| = {:.4} px) after the DPC rotation {deg:.3}°{turn}; raw arrays: |CoM|, detector pixels", dpc.magnitude_max);
            out.push((ExportArray { name: "com_wheel".into(), shape: data.scan, values: Values::F64(magnitude), display: Display::new(Colormap::Gray, Transform::Linear), rgba: Some(dpc.wheel.clone()) }, wheel));
            for (name, values, axis) in [("com_row", &a.r, "row"), ("com_col", &a.c, "column")] {
                let text = format!("centre of mass, {axis} component after the DPC rotation {deg:.3}°{turn}, mean-subtracted, detector pixels");
                out.push((ExportArray { name: name.into(), shape: data.scan, values: Values::F64(values.clone()), display: signed.clone(), rgba: None }, text));
            }
        }
        if what.idpc {
            match self.dpc().map(|d| &d.idpc) {
                Some(Ok(phase)) => out.push((
                    ExportArray { name: "idpc_phase".into(), shape: data.scan, values: Values::F64(phase.clone()), display: self.displays.idpc.clone(), rgba: None },
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

    /// Exports now: writes into the folder (native) or downloads (web); the result is shown.
    pub fn export_now(&mut self) {
        let dir = std::path::PathBuf::from(self.export.folder.trim());
        if cfg!(not(target_arch = "wasm32")) && self.export.folder.trim().is_empty() {
            self.export.status = Some(Err("type the folder to write into".to_owned()));
            return;
        }
        let result = self.export_files().and_then(|files| write_files(&dir, &files)).map_err(|e| e.to_string());
        self.export.status = Some(result);
    }

    /// The export section (under the open bar).
    pub(crate) fn export_ui(&mut self, ui: &mut egui::Ui) {
        egui::CollapsingHeader::new("Export images").id_salt("stem export").show(ui, |ui| {
            let e = &mut self.export;
            ui.horizontal(|ui| {
                ui.checkbox(&mut e.what.virtual_images, "virtual images");
                ui.checkbox(&mut e.what.pattern, "diffraction pattern (as shown)");
                ui.checkbox(&mut e.what.com, "CoM (wheel + components)");
                ui.checkbox(&mut e.what.idpc, "iDPC phase");
                ui.separator();
                ui.checkbox(&mut e.formats.png, "PNG").on_hover_text("8-bit RGBA, with the colormap, transform and limits on screen");
                ui.checkbox(&mut e.formats.npy, ".npy").on_hover_text("The raw numbers: exact u64 sums or f64");
                ui.checkbox(&mut e.formats.tiff, "TIFF").on_hover_text("The raw numbers as 32-bit float greyscale");
                ui.weak("+ sidecar JSON (provenance)");
            });
            let mut go = false;
            ui.horizontal(|ui| {
                if cfg!(not(target_arch = "wasm32")) {
                    ui.add(egui::TextEdit::singleline(&mut e.folder).hint_text("folder to write into").desired_width(380.0)).on_hover_text("Created if missing").accessible_name("export folder");
                }
                let label = if cfg!(target_arch = "wasm32") { "Download" } else { "Export" };
                go = ui.button(label).clicked();
            });
            if go {
                self.export_now();
            }
            match &self.export.status {
                Some(Ok(files)) => {
                    ui.weak(format!("exported {} files: {}", files.len(), files.join(", ")));
                }
                Some(Err(e)) => {
                    ui.colored_label(ui.visuals().error_fg_color, format!("export failed: {e}"));
                }
                None => {}
            }
        });
    }
}
