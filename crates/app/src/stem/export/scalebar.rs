//! The scale bar burnt into exported PNGs: the image enlarged by a whole factor (nearest
//! neighbour, so every data pixel stays one flat block) until it is at least 512 pixels wide,
//! then a white bar with a black rim and its length written above it in a built-in 5 × 7 pixel
//! font, on a darkened backing in the lower-left corner. The bar follows
//! [`ScaleBar::for_image`], the rule of the on-screen bar.

use serde::Serialize;

use crate::stem::scale::ScaleBar;

/// Narrowest PNG that gets a bar: smaller images are enlarged to at least this width.
pub const MIN_WIDTH: usize = 512;
/// Largest enlargement (a 1-column image stays narrow rather than huge).
const MAX_FACTOR: usize = 64;

/// What the sidecar says about the PNG's scale bar.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScaleBarRecord {
    /// The bar's length in `unit`.
    pub length: f64,
    /// `Å`, `nm` or `mrad`.
    pub unit: String,
    /// The bar's length in data pixels.
    pub data_pixels: f64,
    /// The PNG's enlargement (PNG pixels per data pixel, each way).
    pub png_factor: usize,
    /// The bar's length in PNG pixels (`data_pixels × png_factor`, rounded).
    pub png_pixels: usize,
}

/// The enlargement of an image `cols` wide: whole, at least 1, reaching [`MIN_WIDTH`].
pub fn factor(cols: usize) -> usize {
    MIN_WIDTH.div_ceil(cols.max(1)).clamp(1, MAX_FACTOR)
}

/// `rgba` (`shape` = rows, cols) enlarged and with `bar` drawn in; returns the new shape, pixels
/// and the record.
pub fn burn(shape: [usize; 2], rgba: &[[u8; 4]], bar: &ScaleBar) -> ([usize; 2], Vec<[u8; 4]>, ScaleBarRecord) {
    let k = factor(shape[1]);
    let (h, w) = (shape[0] * k, shape[1] * k);
    let mut out = Vec::with_capacity(h * w);
    for r in 0..h {
        // A short pixel list (callers check lengths first) ends the copy instead of panicking.
        let Some(row) = rgba.get((r / k) * shape[1]..(r / k + 1) * shape[1]) else { break };
        out.extend(row.iter().flat_map(|p| std::iter::repeat_n(*p, k)));
    }
    let len = (bar.pixels * k as f64).round() as usize;
    let record = ScaleBarRecord { length: bar.length, unit: bar.unit.to_owned(), data_pixels: bar.pixels, png_factor: k, png_pixels: len };
    out.resize(h * w, [0, 0, 0, 255]);
    let mut canvas = Canvas { w, h, px: &mut out };
    let margin = (w / 48).max(4);
    let thick = (w / 160).max(2);
    let scale = (w / 256).max(1);
    let label = bar.label();
    let text_w = label.chars().count() * 6 * scale;
    let text_h = 7 * scale;
    let gap = 2 * scale;
    let (x0, y0) = (margin, h.saturating_sub(margin + thick));
    let top = y0.saturating_sub(gap + text_h);
    // Darken behind bar and text so both read on bright and dark images alike.
    canvas.darken(x0.saturating_sub(3), top.saturating_sub(3), x0 + len.max(text_w) + 3, y0 + thick + 3);
    canvas.fill(x0.saturating_sub(1), y0.saturating_sub(1), x0 + len + 1, y0 + thick + 1, [0, 0, 0, 255]);
    canvas.fill(x0, y0, x0 + len, y0 + thick, [255, 255, 255, 255]);
    canvas.text(x0, top, scale, &label);
    (shape.map(|n| n * k), out, record)
}

/// Pixels being drawn on.
struct Canvas<'a> {
    w: usize,
    h: usize,
    px: &'a mut [[u8; 4]],
}

impl Canvas<'_> {
    /// Sets `[x0, x1) × [y0, y1)` (clipped) to `c`.
    fn fill(&mut self, x0: usize, y0: usize, x1: usize, y1: usize, c: [u8; 4]) {
        for y in y0..y1.min(self.h) {
            for x in x0..x1.min(self.w) {
                self.px[y * self.w + x] = c;
            }
        }
    }

    /// Darkens `[x0, x1) × [y0, y1)` (clipped) to 40 % of its colour, opaque.
    fn darken(&mut self, x0: usize, y0: usize, x1: usize, y1: usize) {
        for y in y0..y1.min(self.h) {
            for x in x0..x1.min(self.w) {
                let p = &mut self.px[y * self.w + x];
                *p = [(u16::from(p[0]) * 2 / 5) as u8, (u16::from(p[1]) * 2 / 5) as u8, (u16::from(p[2]) * 2 / 5) as u8, 255];
            }
        }
    }

    /// Writes `text` in white, its top-left at (x, y), each font pixel `scale` × `scale`.
    fn text(&mut self, x: usize, y: usize, scale: usize, text: &str) {
        for (i, ch) in text.chars().enumerate() {
            let rows = glyph(ch);
            for (gy, bits) in rows.iter().enumerate() {
                for gx in 0..5 {
                    if bits & (0b10000 >> gx) != 0 {
                        let (px, py) = (x + (i * 6 + gx) * scale, y + gy * scale);
                        self.fill(px, py, px + scale, py + scale, [255, 255, 255, 255]);
                    }
                }
            }
        }
    }
}

/// The 5 × 7 rows (bit 4 = left) of the characters a scale-bar label uses; others are blank.
fn glyph(c: char) -> [u8; 7] {
    match c {
        '0' => [0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110],
        '1' => [0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110],
        '2' => [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111],
        '3' => [0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110],
        '4' => [0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010],
        '5' => [0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110],
        '6' => [0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110],
        '7' => [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000],
        '8' => [0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110],
        '9' => [0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100],
        '.' => [0, 0, 0, 0, 0, 0b01100, 0b01100],
        '-' => [0, 0, 0, 0b11111, 0, 0, 0],
        '+' => [0, 0b00100, 0b00100, 0b11111, 0b00100, 0b00100, 0],
        'e' => [0, 0, 0b01110, 0b10001, 0b11111, 0b10000, 0b01110],
        'n' => [0, 0, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001],
        'm' => [0, 0, 0b11010, 0b10101, 0b10101, 0b10001, 0b10001],
        'r' => [0, 0, 0b10110, 0b11001, 0b10000, 0b10000, 0b10000],
        'a' => [0, 0, 0b01110, 0b00001, 0b01111, 0b10001, 0b01111],
        'd' => [0b00001, 0b00001, 0b01101, 0b10011, 0b10001, 0b10001, 0b01111],
        'Å' => [0b00100, 0b01010, 0b00100, 0b01110, 0b10001, 0b11111, 0b10001],
        _ => [0; 7],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stem::scale::PixelSize;

    #[test]
    fn the_bar_has_its_computed_length_and_the_image_is_enlarged_exactly() {
        // 32 × 32 of 1.5 Å: 1 nm = 6.667 data px; enlarged 16× to 512 → 107 PNG px.
        let grey = [100u8, 100, 100, 255];
        let rgba: Vec<[u8; 4]> = (0..32 * 32).map(|i| if i % 2 == 0 { grey } else { [10, 200, 30, 255] }).collect();
        let bar = ScaleBar::for_image(32, PixelSize::Angstrom(1.5)).unwrap();
        let (shape, out, record) = burn([32, 32], &rgba, &bar);
        assert_eq!((shape, record.png_factor, record.png_pixels), ([512, 512], 16, 107));
        assert_eq!((record.length, record.unit.as_str()), (1.0, "nm"));
        // The bar's middle row: exactly 107 white pixels from the margin, black rim either side.
        let (margin, thick) = (512 / 48, 512 / 160);
        let y = 512 - margin - thick + thick / 2;
        let row = &out[y * 512..(y + 1) * 512];
        let white: Vec<usize> = (0..512).filter(|&x| row[x] == [255, 255, 255, 255]).collect();
        assert_eq!(white.len(), 107);
        assert_eq!((white[0], white[106]), (margin, margin + 106));
        assert_eq!((row[margin - 1], row[margin + 107]), ([0, 0, 0, 255], [0, 0, 0, 255]));
        // Away from the corner every PNG pixel is its data pixel (nearest neighbour, 16 × 16 blocks).
        for y in 0..300 {
            for x in 0..512 {
                assert_eq!(out[y * 512 + x], rgba[(y / 16) * 32 + x / 16], "({y}, {x})");
            }
        }
        // The label is drawn: white pixels above the bar.
        let above = (512 - margin - thick - 4 - 14..512 - margin - thick - 4).flat_map(|y| (margin..margin + 80).map(move |x| (y, x)));
        assert!(above.filter(|&(y, x)| out[y * 512 + x] == [255, 255, 255, 255]).count() > 20);
    }

    #[test]
    fn wide_images_keep_their_size() {
        assert_eq!(factor(600), 1);
        assert_eq!(factor(512), 1);
        assert_eq!(factor(100), 6);
        assert_eq!(factor(1), 64);
        assert_eq!(factor(0), 64);
    }
}
