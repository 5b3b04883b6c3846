//! The export encoders, pure functions from numbers to file bytes: `.npy` (NumPy format 1.0),
//! 32-bit float TIFF (the `tiff` crate's baseline encoder: one grey f32 sample per pixel,
//! uncompressed, little-endian) and display-scaled 8-bit RGBA PNG (the `png` crate, with the
//! workspace's colormap mapping).
//!
//! The `.npy` bytes come from the workspace's one writer, [`scatterlab_core::npy`] (the CLI
//! writes its products with it too).

use scatterlab_core::npy::NpyElement;
use scatterlab_stem::reduce::colormap::colorize;

use super::ExportError;
use crate::stem::view::Display;

/// The bytes of a `.npy` file (format 1.0, C order) holding `values` of `shape`.
pub fn npy_bytes<T: NpyElement>(shape: &[usize], values: &[T]) -> Result<Vec<u8>, ExportError> {
    check_len("npy", shape, values.len())?;
    scatterlab_core::npy::npy_bytes(shape, values).map_err(|e| ExportError::Encode { format: "npy", message: e.to_string() })
}

/// The bytes of a single-image, uncompressed 32-bit float greyscale TIFF of `values`
/// (`shape` = rows, cols, row-major). Values are rounded to f32 (u64 sums above 2^24 lose
/// their last digits; the `.npy` keeps them exact).
pub fn tiff_f32_bytes(shape: [usize; 2], values: &[f64]) -> Result<Vec<u8>, ExportError> {
    check_len("tiff", &shape, values.len())?;
    let err = |e: tiff::TiffError| ExportError::Encode { format: "tiff", message: e.to_string() };
    let dim = |n: usize| u32::try_from(n).map_err(|_| ExportError::Encode { format: "tiff", message: format!("dimension {n} too large") });
    let (width, height) = (dim(shape[1])?, dim(shape[0])?);
    let samples: Vec<f32> = values.iter().map(|&v| v as f32).collect();
    let mut out = std::io::Cursor::new(Vec::new());
    let mut encoder = tiff::encoder::TiffEncoder::new(&mut out).map_err(err)?;
    encoder.write_image::<tiff::encoder::colortype::Gray32Float>(width, height, &samples).map_err(err)?;
    Ok(out.into_inner())
}

/// The bytes of an 8-bit RGBA PNG of `values` (`shape` = rows, cols) as the workspace shows
/// them: `display`'s limits (percentiles or manual), transform and colormap.
pub fn png_display_bytes(shape: [usize; 2], values: &[f64], display: &Display) -> Result<Vec<u8>, ExportError> {
    png_rgba_bytes(shape, &display_rgba(shape, values, display)?)
}

/// The RGBA pixels of `values` (`shape` = rows, cols) as the workspace shows them.
pub fn display_rgba(shape: [usize; 2], values: &[f64], display: &Display) -> Result<Vec<[u8; 4]>, ExportError> {
    check_len("png", &shape, values.len())?;
    let (lo, hi) = display.limits_for(values);
    colorize(values, lo, hi, display.scale(), display.colormap).map_err(|e| ExportError::Encode { format: "png", message: e.to_string() })
}

/// The bytes of an 8-bit RGBA PNG of ready-made pixels (`shape` = rows, cols, row-major).
pub fn png_rgba_bytes(shape: [usize; 2], rgba: &[[u8; 4]]) -> Result<Vec<u8>, ExportError> {
    check_len("png", &shape, rgba.len())?;
    let err = |e: png::EncodingError| ExportError::Encode { format: "png", message: e.to_string() };
    let dim = |n: usize| u32::try_from(n).map_err(|_| ExportError::Encode { format: "png", message: format!("dimension {n} too large") });
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, dim(shape[1])?, dim(shape[0])?);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(err)?;
    writer.write_image_data(rgba.as_flattened()).map_err(err)?;
    writer.finish().map_err(err)?;
    Ok(out)
}

/// Checks that `len` values fill `shape` (and that the image is not empty).
fn check_len(format: &'static str, shape: &[usize], len: usize) -> Result<(), ExportError> {
    let want = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    if want != Some(len) || len == 0 {
        return Err(ExportError::Encode { format, message: format!("{len} values for shape {shape:?}") });
    }
    Ok(())
}
