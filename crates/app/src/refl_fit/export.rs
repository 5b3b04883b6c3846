//! Exports of the Fit tab: the model JSON with the current (fitted) values, the data and model
//! curves as CSV, the depth profile as CSV, and the plots as PNG (a screenshot of the app
//! cropped to the plots). The desktop writes into `export_dir`; the web offers downloads.

use std::sync::Arc;

use scatterlab_refl::model::{BuiltStack, Model};
use scatterlab_refl::{Layer, Stack};

use super::loading::polarization_name;
use super::FitPanel;
use crate::DepthProfile;

/// What to export.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Export {
    /// The model file with the current values.
    ModelJson,
    /// q, R_data, dR, R_model of every dataset.
    CurvesCsv,
    /// δ, β versus depth.
    ProfileCsv,
    /// The last MCMC run's kept samples, one row per sample.
    SamplesCsv,
}

impl Export {
    /// File name suffix and MIME type.
    fn suffix_and_mime(self) -> (&'static str, &'static str) {
        match self {
            Export::ModelJson => ("model.json", "application/json"),
            Export::CurvesCsv => ("curves.csv", "text/csv"),
            Export::ProfileCsv => ("profile.csv", "text/csv"),
            Export::SamplesCsv => ("samples.csv", "text/csv"),
        }
    }
}

/// The curves as CSV: comment lines naming each dataset, then
/// `dataset,q_inv_A,R_data,dR,R_model` rows (empty fields where a dataset has no data).
pub fn curves_csv(model: &Model, curves: &[Vec<f64>]) -> String {
    let mut out = format!("# scatterlab fitted curves of model '{}'\n", model.file().name);
    let datasets = model.datasets();
    for (i, d) in datasets.iter().enumerate() {
        out += &format!("# dataset {i}: '{}', {} eV, polarization {}\n", d.name, d.energy_ev, polarization_name(d.polarization));
    }
    out += "dataset,q_inv_A,R_data,dR,R_model\n";
    let field = |column: Option<&[f64]>, k: usize| column.map_or(String::new(), |c| format!("{:e}", c[k]));
    for (i, (d, m)) in datasets.iter().zip(curves).enumerate() {
        for (k, (q, r_model)) in d.q.iter().zip(m).enumerate() {
            out += &format!("{i},{q:e},{},{},{r_model:e}\n", field(d.r, k), field(d.dr, k));
        }
    }
    out
}

/// The depth profile as CSV: `z_A,delta_o,beta_o,delta_e,beta_e`, after a comment `title`.
pub fn profile_csv(profile: &DepthProfile, title: &str) -> String {
    let mut out = format!("# {title}\nz_A,delta_o,beta_o,delta_e,beta_e\n");
    for (z, c) in profile.z.iter().zip(&profile.constants) {
        out += &format!("{z:e},{:e},{:e},{:e},{:e}\n", c.delta_o, c.beta_o, c.delta_e, c.beta_e);
    }
    out
}

/// The depth profile of dataset `index` (its energy) at `values`. Tilted/biaxial layers are
/// drawn with their principal values a → o and c → e, before rotation.
pub fn model_profile(model: &Model, index: usize, values: &[f64]) -> Result<DepthProfile, String> {
    let stack = match model.stack(index, values).map_err(|e| e.to_string())? {
        BuiltStack::Uniaxial(stack) => stack,
        BuiltStack::General(g) => Stack {
            layers: g
                .layers
                .iter()
                .map(|l| Layer { thickness: l.thickness, roughness: l.roughness, delta_o: l.delta[0], beta_o: l.beta[0], delta_e: l.delta[2], beta_e: l.beta[2] })
                .collect(),
        },
    };
    Ok(DepthProfile::new(&stack))
}

/// Blank border kept around the plots in the PNG export, points.
pub const PNG_MARGIN: f32 = 8.0;

/// The part of a screenshot inside `rect` (points; `pixels_per_point` converts), clipped to it.
pub fn crop(image: &egui::ColorImage, rect: egui::Rect, pixels_per_point: f32) -> Option<egui::ColorImage> {
    let [w, h] = image.size;
    let px = |v: f32, max: usize| ((v * pixels_per_point).round().max(0.0) as usize).min(max);
    let (x0, x1) = (px(rect.min.x, w), px(rect.max.x, w));
    let (y0, y1) = (px(rect.min.y, h), px(rect.max.y, h));
    (x1 > x0 && y1 > y0).then(|| image.region_by_pixels([x0, y0], [x1 - x0, y1 - y0]))
}

/// An 8-bit RGBA PNG of `image`.
pub fn encode_png(image: &egui::ColorImage) -> Result<Vec<u8>, String> {
    let [w, h] = image.size;
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, w as u32, h as u32);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    let rgba: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_srgba_unmultiplied()).collect();
    writer.write_image_data(&rgba).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

/// A file-name stem from a source name: `fit_task.json` → `fit_task`.
pub fn file_stem(source: &str) -> String {
    let base = source.rsplit(['/', '\\']).next().unwrap_or(source);
    let base = base.rsplit_once('.').map_or(base, |(stem, _)| stem);
    let stem: String = base.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if stem.is_empty() {
        "model".into()
    } else {
        stem
    }
}

impl FitPanel {
    /// The model JSON with the current (after a fit: fitted) values.
    pub fn model_json(&self) -> Result<String, String> {
        let model = self.model().ok_or("no model loaded")?;
        model.to_json(model.values()).map_err(|e| e.to_string())
    }

    /// The data and model curves at the current values as CSV.
    pub fn curves_csv(&self) -> Result<String, String> {
        let model = self.model().ok_or("no model loaded")?;
        let curves = self.curves().ok_or("no curves yet")?.curves.as_ref().map_err(Clone::clone)?;
        Ok(curves_csv(model, curves))
    }

    /// The depth profile at the energy of the chosen dataset as CSV.
    pub fn profile_csv(&self) -> Result<String, String> {
        let model = self.model().ok_or("no model loaded")?;
        let profile = model_profile(model, self.profile_dataset, model.values())?;
        let d = model.datasets().get(self.profile_dataset).map_or(String::new(), |d| format!(" at {} eV ('{}')", d.energy_ev, d.name));
        Ok(profile_csv(&profile, &format!("depth profile of model '{}'{d}", model.file().name)))
    }

    /// The last MCMC run's samples as CSV: a header of the free-parameter names, then one row
    /// per kept sample (the CLI's `--samples` format).
    pub fn samples_csv(&self) -> Result<String, String> {
        let result = self.result().ok_or("no fit yet")?;
        let m = result.mcmc.as_ref().ok_or("the last fit was not an MCMC run")?;
        let rows = m.samples.first().map_or(0, Vec::len);
        let mut out = result.names.join(",");
        out.push('\n');
        for i in 0..rows {
            let row: Vec<String> = m.samples.iter().map(|column| column.get(i).map_or(String::new(), |v| format!("{v:e}"))).collect();
            out.push_str(&row.join(","));
            out.push('\n');
        }
        Ok(out)
    }

    /// Saves one export (a file in `export_dir` on the desktop, a download on the web).
    pub fn export(&mut self, what: Export) {
        let text = match what {
            Export::ModelJson => self.model_json(),
            Export::CurvesCsv => self.curves_csv(),
            Export::ProfileCsv => self.profile_csv(),
            Export::SamplesCsv => self.samples_csv(),
        };
        let (suffix, mime) = what.suffix_and_mime();
        match text {
            Ok(text) => self.save(&format!("{}_{suffix}", file_stem(&self.source)), text.as_bytes(), mime),
            Err(e) => self.message = Some(Err(format!("cannot export: {e}"))),
        }
    }

    /// Asks for a screenshot; the next frames crop it to the plots and save it as PNG.
    pub fn request_png(&self, ctx: &egui::Context) {
        let (tx, repaint) = (self.shots.0.clone(), ctx.clone());
        ctx.request_screenshot(move |image: Arc<egui::ColorImage>| {
            let _ = tx.send(image);
            repaint.request_repaint();
        });
    }

    /// Crops a screenshot to the plots and saves it.
    pub(super) fn save_screenshot(&mut self, image: &egui::ColorImage, pixels_per_point: f32) {
        // A margin around the plots: the y axis labels sit at their left edge and were cut.
        let cropped = self.plot_rect.and_then(|r| crop(image, r.expand(PNG_MARGIN), pixels_per_point));
        let Some(cropped) = cropped else {
            self.message = Some(Err("cannot export the plots: they are not on screen".into()));
            return;
        };
        match encode_png(&cropped) {
            Ok(bytes) => self.save(&format!("{}_plots.png", file_stem(&self.source)), &bytes, "image/png"),
            Err(e) => self.message = Some(Err(format!("cannot encode the PNG: {e}"))),
        }
    }

    #[cfg(not(target_arch = "wasm32"))]
    fn save(&mut self, name: &str, bytes: &[u8], _mime: &str) {
        let dir = std::path::Path::new(self.export_dir.trim());
        let path = dir.join(name);
        let written = std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, bytes));
        self.message = Some(match written {
            Ok(()) => Ok(format!("wrote {}", path.display())),
            Err(e) => Err(format!("cannot write {}: {e}", path.display())),
        });
    }

    #[cfg(target_arch = "wasm32")]
    fn save(&mut self, name: &str, bytes: &[u8], mime: &str) {
        self.message = Some(match super::web_io::download(name, bytes, mime) {
            Ok(()) => Ok(format!("downloading {name}")),
            Err(e) => Err(format!("cannot download {name}: {e}")),
        });
    }
}
