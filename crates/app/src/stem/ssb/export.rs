//! Export of the SSB phase as the other images are exported: PNG as shown, `.npy` (f64
//! radians), TIFF, and the sidecar JSON with the workspace's provenance plus the SSB record
//! (centre, radius, rotation and its source, optics and sampling rule, aberrations and whether
//! fitted, BF pixels, device).

use scatterlab_stem::ssb::{SsbRecord, GAMMA_FLOOR};

use crate::stem::export::{deliver, safe_name, ExportArray, ExportError, Values};
use crate::stem::StemPanel;

impl StemPanel {
    /// The SSB phase's files (PNG / `.npy` / TIFF as the export formats ask, then the sidecar).
    pub fn ssb_export_files(&mut self) -> Result<Vec<(String, Vec<u8>)>, ExportError> {
        let r = self.ssb.result.as_ref().ok_or_else(|| ExportError::Nothing("no SSB reconstruction yet".into()))?;
        let phase = r.phase.as_ref().map_err(|e| ExportError::Nothing(e.clone()))?;
        let i = &r.inputs;
        // The fit's report when the sliders still hold its result (moved since: not fitted).
        let fit = self.ssb.last_fit.as_ref().and_then(|f| f.as_ref().ok()).filter(|f| f.aberrations == r.aberrations).cloned();
        let fitted = fit.is_some();
        // The same record `scatterlab stem ssb` writes (one result type for every front end).
        let record = SsbRecord {
            center_row_col: i.center,
            bf_radius_px: i.bf_radius,
            auto_probe: i.auto_probe,
            bf_pixels: self.ssb.stack().map_or(0, |s| s.pixels.len()),
            aberrations: r.aberrations,
            fitted,
            fit,
            rotation_deg: i.rotation_deg,
            rotation_source: i.rotation_source.clone(),
            transposed: i.transposed,
            optics: i.optics,
            convergence_mrad: i.convergence_mrad,
            scan_step_a: i.scan_step_a,
            sampling_rule: i.sampling_rule.clone(),
            detector_sampling: None,
            gamma_floor: GAMMA_FLOOR,
            notes: Vec::new(),
            device: r.device.name().to_owned(),
            version: format!("scatterlab-stem {}", scatterlab_stem::VERSION),
        };
        let array = ExportArray {
            name: "ssb_phase".into(),
            shape: r.scan,
            values: Values::F64(phase.clone()),
            display: self.ssb.display.clone(),
            rgba: None,
            pixel: Some(crate::stem::scale::PixelSize::Angstrom(i.scan_step_a)),
        };
        let ab = r.aberrations;
        let text = format!("SSB phase, radians (C10 {} nm, C12 {} nm, φ12 {} rad{})", ab.c10_nm, ab.c12_nm, ab.phi12_rad, if fitted { ", fitted" } else { "" });
        let data = self.data().ok_or_else(|| ExportError::Nothing("no acquisition open".into()))?;
        let base = safe_name(data.name.rsplit_once('.').map_or(data.name.as_str(), |(stem, _)| stem));
        if self.export.provenance.is_none() {
            self.export.provenance = Some(crate::stem::export::provenance(data, self.source_path.as_deref()));
        }
        let provenance = self.export.provenance.clone().unwrap_or_else(|| Err("not computed".into()));
        let mut sidecar = self.sidecar(text, provenance).map_err(ExportError::Nothing)?;
        sidecar.backend = format!("scatterlab_stem::ssb::reconstruct on {}", record.device);
        sidecar.ssb = Some(serde_json::to_value(&record).map_err(|e| ExportError::Encode { format: "json", message: e.to_string() })?);
        array.files(&base, self.export.formats, sidecar)
    }

    /// Exports the SSB phase now into the export folder (native) or as downloads (web).
    pub fn ssb_export_now(&mut self) {
        let dir = std::path::PathBuf::from(self.export.folder.trim());
        if cfg!(not(target_arch = "wasm32")) && self.export.folder.trim().is_empty() {
            self.ssb.export_status = Some(Err("type the folder to write into (Export images, above)".to_owned()));
            return;
        }
        // The browser gets one zip download; the desktop writes the files.
        let zip =
            self.data().map_or_else(|| "ssb_phase.zip".to_owned(), |d| format!("{}_ssb_phase.zip", safe_name(d.name.rsplit_once('.').map_or(d.name.as_str(), |(stem, _)| stem))));
        let result = self.ssb_export_files().and_then(|files| deliver(&dir, &zip, &files, false)).map_err(|e| e.to_string());
        self.ssb.export_status = Some(result);
    }
}
