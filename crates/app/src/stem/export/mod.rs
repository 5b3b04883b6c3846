//! Export of the workspace's images: virtual images, the diffraction pattern on display, the
//! centre of mass (colour wheel, components) and the iDPC phase as PNG (display-scaled, as on
//! screen; the wheel as shown), `.npy` (the raw numbers: exact u64 sums or
//! f64) and 32-bit float TIFF, each with a sidecar JSON of its provenance (source files and
//! hashes, shape and type, detectors, centre and radii, rotation, device, accumulation, version).
//!
//! Building the files is pure ([`ExportArray::files`], the encoders in [`encode`]); natively they
//! are written into a folder the user types, in the browser each is offered as a download.

pub mod archive;
pub mod encode;
pub mod scalebar;
mod sidecar;
mod ui;

use std::path::Path;

use serde::Serialize;

pub use sidecar::{provenance, CalibrationRecord, DetectorRecord, DisplayRecord, Sidecar};
pub use ui::{ExportState, ExportWhat};

use super::scale::{PixelSize, ScaleBar};
use super::view::Display;

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Encoding `format` failed.
    #[error("cannot encode {format}: {message}")]
    Encode {
        /// `npy`, `tiff`, `png` or `json`.
        format: &'static str,
        /// What went wrong.
        message: String,
    },
    /// Nothing to export (no data, image not computed yet).
    #[error("nothing to export: {0}")]
    Nothing(String),
    /// Writing a file failed.
    #[error("cannot write {path}: {message}")]
    Write {
        /// The file.
        path: String,
        /// The system's message.
        message: String,
    },
    /// The browser refused the download.
    #[error("cannot download {name}: {message}")]
    Download {
        /// The file name.
        name: String,
        /// The browser's message.
        message: String,
    },
}

/// The raw numbers of an exported image.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    /// Exact integer sums (virtual images of fully loaded data, the max pattern).
    U64(Vec<u64>),
    /// Reals (mean patterns, iDPC phase, partial loads with NaN for frames not read).
    F64(Vec<f64>),
}

impl Values {
    /// The values as f64 (for the PNG and the TIFF).
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Values::U64(v) => v.iter().map(|&x| x as f64).collect(),
            Values::F64(v) => v.clone(),
        }
    }

    /// NumPy's name of the element type.
    pub fn dtype(&self) -> &'static str {
        match self {
            Values::U64(_) => "uint64",
            Values::F64(_) => "float64",
        }
    }
}

/// The file formats of an export (the sidecar JSON is always written).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Formats {
    /// Display-scaled 8-bit RGBA PNG.
    pub png: bool,
    /// Raw numbers as `.npy`.
    pub npy: bool,
    /// Raw numbers as 32-bit float TIFF.
    pub tiff: bool,
    /// A scale bar in the PNG where the pixel size is known (the image then enlarged to at
    /// least [`scalebar::MIN_WIDTH`] pixels, each data pixel a flat block).
    pub scale_bar: bool,
}

impl Default for Formats {
    fn default() -> Self {
        Self { png: true, npy: true, tiff: true, scale_bar: true }
    }
}

/// One image to export.
#[derive(Clone, Debug)]
pub struct ExportArray {
    /// File-name part (`virtual_BF`, `dp_mean`, `idpc_phase`).
    pub name: String,
    /// Shape (rows, cols).
    pub shape: [usize; 2],
    /// The numbers.
    pub values: Values,
    /// How the PNG shows them.
    pub display: Display,
    /// Ready-made PNG pixels (the CoM colour wheel) instead of the display mapping.
    pub rgba: Option<Vec<[u8; 4]>>,
    /// What one pixel measures (scan step or detector sampling), for the PNG's scale bar.
    pub pixel: Option<PixelSize>,
}

impl ExportArray {
    /// The files of this image as (file name, bytes): `<base>_<name>.png/.npy/.tiff` as
    /// `formats` asks, then the sidecar `<base>_<name>.json` (with the file names filled in).
    pub fn files(&self, base: &str, formats: Formats, mut sidecar: Sidecar) -> Result<Vec<(String, Vec<u8>)>, ExportError> {
        let stem = format!("{base}_{}", self.name);
        let reals = self.values.to_f64();
        let mut out = Vec::new();
        let mut bar_record = None;
        if formats.png {
            let rgba = match &self.rgba {
                Some(rgba) => rgba.clone(),
                None => encode::display_rgba(self.shape, &reals, &self.display)?,
            };
            let bar = self.pixel.filter(|_| formats.scale_bar).and_then(|p| ScaleBar::for_image(self.shape[1], p));
            let png = match bar {
                Some(bar) if rgba.len() == self.shape[0] * self.shape[1] => {
                    let (shape, rgba, record) = scalebar::burn(self.shape, &rgba, &bar);
                    bar_record = Some(record);
                    encode::png_rgba_bytes(shape, &rgba)?
                }
                _ => encode::png_rgba_bytes(self.shape, &rgba)?,
            };
            out.push((format!("{stem}.png"), png));
        }
        if formats.npy {
            let bytes = match &self.values {
                Values::U64(v) => encode::npy_bytes(&self.shape, v)?,
                Values::F64(v) => encode::npy_bytes(&self.shape, v)?,
            };
            out.push((format!("{stem}.npy"), bytes));
        }
        if formats.tiff {
            out.push((format!("{stem}.tiff"), encode::tiff_f32_bytes(self.shape, &reals)?));
        }
        let (lo, hi) = self.display.limits_for(&reals);
        sidecar.product = self.name.clone();
        sidecar.shape = self.shape;
        sidecar.dtype = self.values.dtype().to_owned();
        sidecar.files = out.iter().map(|(n, _)| n.clone()).collect();
        sidecar.display = DisplayRecord::new(&self.display, [lo, hi]);
        sidecar.scale_bar = bar_record;
        let json = serde_json::to_vec_pretty(&sidecar).map_err(|e| ExportError::Encode { format: "json", message: e.to_string() })?;
        out.push((format!("{stem}.json"), json));
        Ok(out)
    }
}

/// Writes `files` into the folder `dir` (created if needed); returns the paths written.
#[cfg(not(target_arch = "wasm32"))]
pub fn write_files(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<Vec<String>, ExportError> {
    let write_err = |p: &Path, e: std::io::Error| ExportError::Write { path: p.display().to_string(), message: e.to_string() };
    std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
    files
        .iter()
        .map(|(name, bytes)| {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(|e| write_err(&path, e))?;
            Ok(path.display().to_string())
        })
        .collect()
}

/// Delivers an export: natively `files` one by one into `dir`, or as one zip `zip_name` there
/// when `zip`; in the browser always as one zip download (one "Download", not a dozen).
/// Returns the paths (names) written.
pub fn deliver(dir: &Path, zip_name: &str, files: &[(String, Vec<u8>)], zip: bool) -> Result<Vec<String>, ExportError> {
    if zip || cfg!(target_arch = "wasm32") {
        write_files(dir, &[(zip_name.to_owned(), archive::zip_bytes(files)?)])
    } else {
        write_files(dir, files)
    }
}

/// Offers each of `files` as a browser download; returns their names.
#[cfg(target_arch = "wasm32")]
pub fn write_files(_dir: &Path, files: &[(String, Vec<u8>)]) -> Result<Vec<String>, ExportError> {
    files
        .iter()
        .map(|(name, bytes)| {
            let mime = mime(name);
            crate::refl_fit::web_io::download(name, bytes, mime).map_err(|message| ExportError::Download { name: name.clone(), message })?;
            Ok(name.clone())
        })
        .collect()
}

/// The MIME type of an exported file by its extension.
pub fn mime(name: &str) -> &'static str {
    match name.rsplit('.').next() {
        Some("png") => "image/png",
        Some("tiff") => "image/tiff",
        Some("json") => "application/json",
        Some("zip") => "application/zip",
        _ => "application/octet-stream",
    }
}

/// A file-name-safe form of `text` (letters, digits, `-`, `_`; the rest become `_`).
pub fn safe_name(text: &str) -> String {
    let s: String = text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if s.is_empty() {
        "export".to_owned()
    } else {
        s
    }
}
