//! The one scale-bar rule of the 4D-STEM views, on screen and in exported PNGs: a round length
//! (1, 2 or 5 × 10ⁿ) no longer than a quarter of the image's width, in nm once it reaches 1 nm
//! (scan images) or in mrad (diffraction patterns). Pure, so tests check the arithmetic.

/// What one image pixel measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PixelSize {
    /// A scan step in Å (virtual images, CoM, iDPC, SSB phase).
    Angstrom(f64),
    /// A detector sampling in mrad per pixel (diffraction patterns).
    Mrad(f64),
}

impl PixelSize {
    /// The size in its base unit (Å or mrad).
    pub fn value(self) -> f64 {
        match self {
            PixelSize::Angstrom(v) | PixelSize::Mrad(v) => v,
        }
    }

    /// A position `pixels` from the origin in readable units (`"12.5 Å"`, `"3.2 nm"`, `"4.1 mrad"`).
    pub fn describe(self, pixels: f64) -> String {
        let v = pixels * self.value();
        match self {
            PixelSize::Angstrom(_) if v.abs() >= 10.0 => format!("{} nm", super::view::fmt(v / 10.0)),
            PixelSize::Angstrom(_) => format!("{} Å", super::view::fmt(v)),
            PixelSize::Mrad(_) => format!("{} mrad", super::view::fmt(v)),
        }
    }
}

/// A scale bar: its length in `unit` and in image pixels.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleBar {
    /// The round length, in `unit`.
    pub length: f64,
    /// `"Å"`, `"nm"` or `"mrad"`.
    pub unit: &'static str,
    /// The bar's length in image pixels (`length` over the pixel size).
    pub pixels: f64,
}

impl ScaleBar {
    /// The bar for an image `cols` pixels wide: the largest 1, 2 or 5 × 10ⁿ not longer than a
    /// quarter of the width; `None` for an empty image or a pixel size that is not finite and
    /// positive (a file without calibration gets no bar rather than a wrong one).
    pub fn for_image(cols: usize, size: PixelSize) -> Option<ScaleBar> {
        let per_px = size.value();
        if cols == 0 || !(per_px.is_finite() && per_px > 0.0) {
            return None;
        }
        let want = 0.25 * cols as f64 * per_px;
        // Scan lengths of 1 nm and more read in nm, as microscopists quote fields of view.
        let (unit, factor) = match size {
            PixelSize::Angstrom(_) if want >= 10.0 => ("nm", 10.0),
            PixelSize::Angstrom(_) => ("Å", 1.0),
            PixelSize::Mrad(_) => ("mrad", 1.0),
        };
        let want = want / factor;
        let pow = 10f64.powf(want.log10().floor());
        let length = [5.0, 2.0, 1.0].iter().map(|m| m * pow).find(|&l| l <= want * (1.0 + 1e-12)).unwrap_or(pow);
        Some(ScaleBar { length, unit, pixels: length * factor / per_px })
    }

    /// The bar's text, `"2 nm"`.
    pub fn label(&self) -> String {
        format!("{} {}", super::view::fmt(self.length), self.unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_are_round_lengths_up_to_a_quarter_width() {
        // 32 columns of 1.5 Å: a quarter is 12 Å = 1.2 nm → 1 nm = 6.67 px.
        let b = ScaleBar::for_image(32, PixelSize::Angstrom(1.5)).unwrap();
        assert_eq!((b.length, b.unit), (1.0, "nm"));
        assert!((b.pixels - 10.0 / 1.5).abs() < 1e-12, "{b:?}");
        // 256 × 0.5 Å: 32 Å → 2 nm = 40 px.
        let b = ScaleBar::for_image(256, PixelSize::Angstrom(0.5)).unwrap();
        assert_eq!((b.length, b.unit, b.pixels), (2.0, "nm", 40.0));
        // 16 × 0.2 Å: 0.8 Å → 0.5 Å = 2.5 px.
        let b = ScaleBar::for_image(16, PixelSize::Angstrom(0.2)).unwrap();
        assert_eq!((b.length, b.unit), (0.5, "Å"));
        assert!((b.pixels - 2.5).abs() < 1e-12);
        // Exactly a quarter stays: 16 × 2.5 Å = 40 Å, a quarter 10 Å = 1 nm = 4 px.
        let b = ScaleBar::for_image(16, PixelSize::Angstrom(2.5)).unwrap();
        assert_eq!((b.length, b.unit, b.pixels), (1.0, "nm", 4.0));
        // Detector: 64 px × 2.105 mrad = 134.7 mrad, a quarter 33.7 → 20 mrad = 9.50 px.
        let b = ScaleBar::for_image(64, PixelSize::Mrad(2.105)).unwrap();
        assert_eq!((b.length, b.unit, b.label()), (20.0, "mrad", "20 mrad".to_owned()));
        assert!((b.pixels - 20.0 / 2.105).abs() < 1e-12);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(ScaleBar::for_image(32, PixelSize::Angstrom(bad)), None, "{bad}");
        }
        assert_eq!(ScaleBar::for_image(0, PixelSize::Mrad(1.0)), None);
    }

    #[test]
    fn positions_read_in_angstrom_or_nm() {
        assert_eq!(PixelSize::Angstrom(1.5).describe(3.0), "4.5 Å");
        assert_eq!(PixelSize::Angstrom(1.5).describe(10.0), "1.5 nm");
        assert_eq!(PixelSize::Mrad(2.0).describe(-1.5), "-3 mrad");
    }
}
