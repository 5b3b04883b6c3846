//! What a user reads off an image: a colour bar beside it (the colormap with its limits in the
//! data's units) and, under the pointer, the pixel's (row, col), value and units, with its
//! position in Å/nm (scan images) or its scattering angle in mrad from the beam centre
//! (diffraction patterns) when the file calibrates them.

use egui::{Color32, Rect, Response, Sense, Vec2};
use scatterlab_stem::reduce::colormap::colorize;
use scatterlab_stem::reduce::display::Scale;
use serde::Serialize;

use super::dp_view::PixelMap;
use super::scale::PixelSize;
use super::view::{fmt, Display, ImageView};

/// Width of a colour bar with its labels, points.
pub const BAR_WIDTH: f32 = 66.0;

/// The pixel under the pointer of one image.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Hover {
    /// Which image (`"virtual image"`, `"diffraction pattern"`, `"CoM row"`, …).
    pub image: String,
    /// Pixel row.
    pub row: usize,
    /// Pixel column.
    pub col: usize,
    /// The value there (NaN where there is none: frames not read, missing files).
    pub value: f64,
    /// The value's units.
    pub unit: String,
    /// Where the pixel is in physical units (`"y 1.2 nm, x 4.5 Å"`, `"θ 12.3 mrad"`), when known.
    pub position: Option<String>,
}

impl Hover {
    /// One line: `row 3, col 7 · 1234 counts · y 4.5 Å, x 1.05 nm`.
    pub fn text(&self) -> String {
        let value = if self.value.is_finite() { format!("{} {}", fmt(self.value), self.unit).trim_end().to_owned() } else { "no data".to_owned() };
        let mut s = format!("row {}, col {} · {value}", self.row, self.col);
        if let Some(p) = &self.position {
            s.push_str(" · ");
            s.push_str(p);
        }
        s
    }
}

/// The (row, col) of the pixel containing screen position `pos` of a `shape` image drawn in
/// `rect` (pixel centres at integers, CONVENTIONS.md), or `None` outside it.
pub fn pixel_under(rect: Rect, shape: [usize; 2], pos: egui::Pos2) -> Option<[usize; 2]> {
    if !rect.contains(pos) || shape[0] == 0 || shape[1] == 0 {
        return None;
    }
    let [r, c] = PixelMap::new(rect, shape).to_pixel(pos);
    let clamp = |v: f64, n: usize| v.round().clamp(0.0, (n - 1) as f64) as usize;
    Some([clamp(r, shape[0]), clamp(c, shape[1])])
}

/// Where a pixel lies: scan images by their step from the first position, patterns by the angle
/// from the beam centre `centre` (row, col).
#[derive(Clone, Copy, Debug)]
pub enum Place {
    /// No calibration: row and column only.
    None,
    /// A scan image with this pixel size.
    Scan(PixelSize),
    /// A diffraction pattern with this pixel size and beam centre.
    Pattern(PixelSize, [f64; 2]),
}

impl Place {
    fn describe(self, row: usize, col: usize) -> Option<String> {
        match self {
            Place::None => None,
            Place::Scan(size) => Some(format!("y {}, x {}", size.describe(row as f64), size.describe(col as f64))),
            Place::Pattern(size, [cr, cc]) => Some(format!("θ {}", size.describe((row as f64 - cr).hypot(col as f64 - cc)))),
        }
    }
}

/// The hover record of `view` when the pointer is over `response` (its values as last set),
/// and the same text drawn over the image's top edge.
pub fn hover(ui: &egui::Ui, response: &Response, view: &ImageView, image: &str, unit: &str, place: Place) -> Option<Hover> {
    let pos = response.hover_pos()?;
    let [row, col] = pixel_under(response.rect, view.shape, pos)?;
    let value = view.values.get(row * view.shape[1] + col).copied().unwrap_or(f64::NAN);
    let h = Hover { image: image.to_owned(), row, col, value, unit: unit.to_owned(), position: place.describe(row, col) };
    let painter = ui.painter_at(response.rect);
    let galley = painter.layout_no_wrap(h.text(), egui::FontId::proportional(11.0), Color32::WHITE);
    let at = response.rect.left_top() + egui::vec2(3.0, 3.0);
    painter.rect_filled(Rect::from_min_size(at, galley.size()).expand(2.0), 2.0, Color32::from_black_alpha(180));
    painter.galley(at, galley, Color32::WHITE);
    Some(h)
}

/// A number in at most ~6 characters for the colour bar's labels: 4 significant digits,
/// exponent form outside 0.01 … 99 999.
pub fn bar_number(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    if !(1e-2..1e5).contains(&a) {
        return format!("{v:.2e}");
    }
    let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    // 0.5000 → 0.5: trailing zeros say nothing.
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A vertical colour bar `height` points tall: `display`'s colormap from `limits.0` (bottom) to
/// `limits.1` (top), both written in `unit`, and 0 marked on centred (signed) displays. Labelled
/// `"<label> colour bar: lo … hi unit"` for screen readers and tests.
pub fn colour_bar(ui: &mut egui::Ui, display: &Display, limits: Option<(f64, f64)>, unit: &str, height: f32, label: &str) -> Response {
    let (rect, response) = ui.allocate_exact_size(Vec2::new(BAR_WIDTH, height), Sense::hover());
    let Some((lo, hi)) = limits else { return response };
    let text = format!("{label} colour bar: {} … {} {unit}", bar_number(lo), bar_number(hi));
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, &text));
    let painter = ui.painter_at(rect);
    let bar = Rect::from_min_size(rect.min, Vec2::new(12.0, height));
    // The colormap itself, evenly over its index range (the transform acts before it).
    const STEPS: usize = 64;
    let t: Vec<f64> = (0..STEPS).map(|i| i as f64 / (STEPS - 1) as f64).collect();
    if let Ok(rgba) = colorize(&t, 0.0, 1.0, Scale::Linear, display.colormap) {
        let h = height / STEPS as f32;
        for (i, [r, g, b, _]) in rgba.iter().enumerate() {
            let y = bar.bottom() - (i + 1) as f32 * h;
            painter.rect_filled(Rect::from_min_size(egui::pos2(bar.left(), y), Vec2::new(bar.width(), h + 0.5)), 0.0, Color32::from_rgb(*r, *g, *b));
        }
    }
    let stroke = ui.visuals().widgets.noninteractive.fg_stroke;
    painter.rect_stroke(bar, 0.0, egui::Stroke::new(1.0, stroke.color), egui::StrokeKind::Inside);
    let font = egui::FontId::proportional(11.0);
    let colour = ui.visuals().text_color();
    let x = bar.right() + 3.0;
    painter.text(egui::pos2(x, bar.top()), egui::Align2::LEFT_TOP, bar_number(hi), font.clone(), colour);
    painter.text(egui::pos2(x, bar.bottom()), egui::Align2::LEFT_BOTTOM, bar_number(lo), font.clone(), colour);
    let mid = if display.centred && lo < 0.0 && hi > 0.0 {
        // 0 sits where the transform puts it (the middle for linear symmetric limits).
        let s = display.scale();
        let f = (s.apply(0.0) - s.apply(lo)) / (s.apply(hi) - s.apply(lo));
        painter.text(egui::pos2(x, bar.bottom() - f as f32 * height), egui::Align2::LEFT_CENTER, "0", font.clone(), colour);
        bar.top() + 0.25 * height
    } else {
        bar.center().y
    };
    // "counts/frame" on two lines: the bar's labels have ~50 points.
    painter.text(egui::pos2(x, mid), egui::Align2::LEFT_CENTER, unit.replace('/', "\n/"), font, ui.visuals().weak_text_color());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pixel_under_the_pointer_rounds_to_centres() {
        // A 4 × 8 image drawn 80 × 40 points: 10 points per pixel.
        let rect = Rect::from_min_size(egui::pos2(100.0, 50.0), Vec2::new(80.0, 40.0));
        assert_eq!(pixel_under(rect, [4, 8], egui::pos2(100.5, 50.5)), Some([0, 0]));
        assert_eq!(pixel_under(rect, [4, 8], egui::pos2(135.0, 75.0)), Some([2, 3]));
        assert_eq!(pixel_under(rect, [4, 8], egui::pos2(179.9, 89.9)), Some([3, 7]));
        assert_eq!(pixel_under(rect, [4, 8], egui::pos2(99.0, 60.0)), None);
        assert_eq!(pixel_under(rect, [0, 8], egui::pos2(120.0, 60.0)), None);
    }

    #[test]
    fn readouts_name_value_units_and_place() {
        let h = Hover { image: "virtual image".into(), row: 3, col: 7, value: 1234.0, unit: "counts".into(), position: Place::Scan(PixelSize::Angstrom(1.5)).describe(3, 7) };
        assert_eq!(h.text(), "row 3, col 7 · 1234 counts · y 4.5 Å, x 1.05 nm");
        let p = Place::Pattern(PixelSize::Mrad(2.0), [10.0, 10.0]).describe(13, 14);
        assert_eq!(p.as_deref(), Some("θ 10 mrad"));
        let none = Hover { value: f64::NAN, position: None, ..h };
        assert_eq!(none.text(), "row 3, col 7 · no data");
    }

    #[test]
    fn bar_numbers_stay_short() {
        let cases =
            [(17168.525, "17169"), (71.4359, "71.44"), (-0.8712, "-0.8712"), (0.5, "0.5"), (4790.255, "4790"), (2.0, "2"), (123456.0, "1.23e5"), (0.001234, "1.23e-3"), (0.0, "0")];
        for (v, want) in cases {
            assert_eq!(bar_number(v), want, "{v}");
        }
    }
}
