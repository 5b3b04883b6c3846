//! Showing an image: display settings (colormap, transform, percentile or manual limits), the
//! STEM crate's display mapping ([`colorize`], [`histogram256`], [`percentile_limits`]) into a
//! texture that is rebuilt only when the data or the settings change, the histogram under the
//! image and a scale bar when the pixel size is known.

use egui::{Color32, ColorImage, Rect, Response, Sense, TextureHandle, TextureOptions, Vec2};
use scatterlab_stem::reduce::colormap::{colorize, lut_index, Colormap};
use scatterlab_stem::reduce::display::{histogram256, normalise, percentile_limits, Scale};

use super::scale::{PixelSize, ScaleBar};

/// The value transform before normalising.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    /// As is.
    Linear,
    /// `sign(v)·ln(1 + |v|)`.
    Log,
    /// `sign(v)·sqrt(|v|)`.
    Sqrt,
    /// `sign(v)·|v|^γ`.
    Gamma,
}

impl Transform {
    /// Every transform, in menu order.
    pub const ALL: [Transform; 4] = [Transform::Linear, Transform::Log, Transform::Sqrt, Transform::Gamma];

    /// The menu's text.
    pub fn name(self) -> &'static str {
        match self {
            Transform::Linear => "linear",
            Transform::Log => "log",
            Transform::Sqrt => "sqrt",
            Transform::Gamma => "gamma",
        }
    }
}

/// How one image is displayed.
#[derive(Clone, Debug, PartialEq)]
pub struct Display {
    /// Colormap.
    pub colormap: Colormap,
    /// Transform.
    pub transform: Transform,
    /// γ of [`Transform::Gamma`].
    pub gamma: f64,
    /// Limits from percentiles (true) or [`Self::limits`] (false).
    pub auto: bool,
    /// Lower and upper percentile of the auto range.
    pub percentiles: [f64; 2],
    /// Manual limits (in data units); auto mode keeps the last range here.
    pub limits: [f64; 2],
    /// Signed data (CoM components): auto limits are symmetric about 0 (± the upper
    /// percentile of |v|), so 0 is the diverging colormap's centre colour.
    pub centred: bool,
}

impl Display {
    /// Auto range 0.5–99.5 % with `transform` and `colormap`.
    pub fn new(colormap: Colormap, transform: Transform) -> Self {
        Self { colormap, transform, gamma: 0.5, auto: true, percentiles: [0.5, 99.5], limits: [0.0, 1.0], centred: false }
    }

    /// Signed components: diverging RdBu, linear, auto limits symmetric about 0.
    pub fn signed() -> Self {
        Self { centred: true, ..Self::new(Colormap::RdBu, Transform::Linear) }
    }

    /// The STEM crate's transform.
    pub fn scale(&self) -> Scale {
        match self.transform {
            Transform::Linear => Scale::Linear,
            Transform::Log => Scale::Log1pSigned,
            Transform::Sqrt => Scale::Sqrt,
            Transform::Gamma => Scale::Gamma(self.gamma),
        }
    }

    /// The limits for `values`: percentiles of the finite values (auto) or the manual ones,
    /// widened when they coincide so that a flat image still shows.
    pub fn limits_for(&self, values: &[f64]) -> (f64, f64) {
        let (lo, hi) = if self.auto && self.centred {
            symmetric_limits(values, self.percentiles[1])
        } else if self.auto {
            percentile_limits(values, self.percentiles[0], self.percentiles[1]).unwrap_or((0.0, 1.0))
        } else {
            (self.limits[0], self.limits[1])
        };
        if hi > lo {
            return (lo, hi);
        }
        // A constant image (a mask of zeros, a flat region): centre the value in a range of its
        // own size (at least 1), not a sliver of 1e-6 that maps every value to an end colour.
        let (min, max) = values.iter().filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        if self.auto && max > min {
            return (min, max);
        }
        let half = 0.5 * lo.abs().max(1.0);
        (lo - half, lo + half)
    }
}

/// A texture of one image, rebuilt when its key (data version, settings) changes.
#[derive(Default)]
pub struct ImageView {
    texture: Option<TextureHandle>,
    key: Option<(u64, Option<Display>)>,
    /// The histogram of the displayed values between the limits (scalar images).
    pub histogram: Option<[u32; 256]>,
    /// The limits in use (data units).
    pub limits: Option<(f64, f64)>,
    /// Why the image cannot be shown, if it cannot.
    pub error: Option<String>,
    /// Image shape (rows, cols).
    pub shape: [usize; 2],
    /// FNV-1a (64 bit) of the colormap (LUT) indices on display, row-major (scalar images): what
    /// end-to-end tests compare with the fixtures' display pipeline.
    pub lut_digest: Option<u64>,
    /// The values on display (scalar images; set by hand for RGBA ones), row-major: what the
    /// hover read-out reports.
    pub values: Vec<f64>,
}

/// FNV-1a, 64 bit, of `bytes` (the e2e tests compute the same in JavaScript).
pub fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

impl ImageView {
    /// Colours `values` (`shape` row-major; NaN = not loaded yet) with `display` unless this
    /// `version` was already shown with the same settings. Auto mode writes the limits back.
    pub fn set_scalar(&mut self, ctx: &egui::Context, name: &str, values: &[f64], shape: [usize; 2], version: u64, display: &mut Display) {
        let key = (version, Some(display.clone()));
        if self.key.as_ref() == Some(&key) && self.texture.is_some() {
            return;
        }
        let (lo, hi) = display.limits_for(values);
        self.values = values.to_vec();
        if display.auto {
            display.limits = [lo, hi];
        }
        let scale = display.scale();
        let rgba = colorize(values, lo, hi, scale, display.colormap);
        let shown: Vec<f64> = values.iter().filter(|v| v.is_finite()).map(|&v| scale.apply(v)).collect();
        self.histogram = histogram256(&shown, scale.apply(lo), scale.apply(hi)).ok();
        self.limits = Some((lo, hi));
        let (slo, shi) = (scale.apply(lo), scale.apply(hi));
        self.lut_digest = Some(fnv1a64(values.iter().map(|&v| lut_index(normalise(scale.apply(v), slo, shi)))));
        match rgba {
            Ok(rgba) => self.upload(ctx, name, &rgba, shape),
            Err(e) => self.error = Some(e.to_string()),
        }
        self.key = Some((version, Some(display.clone())));
    }

    /// Shows ready-made RGBA pixels (`shape` row-major) unless this `version` is on display.
    pub fn set_rgba(&mut self, ctx: &egui::Context, name: &str, rgba: &[[u8; 4]], shape: [usize; 2], version: u64) {
        if self.key == Some((version, None)) && self.texture.is_some() {
            return;
        }
        self.histogram = None;
        self.limits = None;
        self.lut_digest = None;
        self.values.clear();
        self.upload(ctx, name, rgba, shape);
        self.key = Some((version, None));
    }

    fn upload(&mut self, ctx: &egui::Context, name: &str, rgba: &[[u8; 4]], shape: [usize; 2]) {
        if rgba.len() != shape[0] * shape[1] || rgba.is_empty() {
            self.error = Some(format!("{name}: {} pixels for a {}×{} image", rgba.len(), shape[0], shape[1]));
            return;
        }
        let pixels = rgba.iter().map(|&[r, g, b, a]| Color32::from_rgba_unmultiplied(r, g, b, a)).collect();
        let image = ColorImage::new([shape[1], shape[0]], pixels);
        match &mut self.texture {
            Some(t) => t.set(image, TextureOptions::NEAREST),
            None => self.texture = Some(ctx.load_texture(name, image, TextureOptions::NEAREST)),
        }
        self.error = None;
        self.shape = shape;
    }

    /// The height of the image shown `width` points wide (by its aspect).
    pub fn height(&self, width: f32) -> f32 {
        let [rows, cols] = self.shape;
        if cols > 0 {
            width * rows as f32 / cols as f32
        } else {
            width
        }
    }

    /// Paints the image `width` points wide (height by its aspect), labelled `label` for screen
    /// readers and tests; returns its response (clicks and drags sensed).
    pub fn show(&self, ui: &mut egui::Ui, width: f32, label: &str) -> Response {
        let [rows, cols] = self.shape;
        let aspect = if cols > 0 { rows as f32 / cols as f32 } else { 1.0 };
        let (rect, response) = ui.allocate_exact_size(Vec2::new(width, width * aspect), Sense::click_and_drag());
        let text = label.to_owned();
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, &text));
        match (&self.texture, &self.error) {
            (_, Some(e)) => {
                ui.painter().rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
                ui.painter().text(rect.center(), egui::Align2::CENTER_CENTER, e, egui::FontId::proportional(12.0), ui.visuals().error_fg_color);
            }
            (Some(t), None) => {
                ui.painter().image(t.id(), rect, Rect::from_min_max(egui::pos2(0.0, 0.0), egui::pos2(1.0, 1.0)), Color32::WHITE);
            }
            (None, None) => {
                ui.painter().rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
            }
        }
        response
    }

    /// The 256-bin histogram as bars `width` points wide, with the limits underneath.
    pub fn histogram_ui(&self, ui: &mut egui::Ui, width: f32, label: &str) {
        let Some(h) = &self.histogram else { return };
        let (rect, response) = ui.allocate_exact_size(Vec2::new(width, 36.0), Sense::hover());
        let text = format!("{label} histogram");
        response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, &text));
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
        // Log heights: one huge bin (zeros, a saturated disc) would flatten the rest.
        let top = h.iter().map(|&n| f64::from(n).ln_1p()).fold(0.0, f64::max).max(1e-9);
        let bar = rect.width() / 256.0;
        let colour = ui.visuals().text_color();
        for (i, &n) in h.iter().enumerate() {
            if n > 0 {
                let height = (f64::from(n).ln_1p() / top) as f32 * rect.height();
                let x = rect.left() + i as f32 * bar;
                painter.rect_filled(Rect::from_min_max(egui::pos2(x, rect.bottom() - height), egui::pos2(x + bar.max(1.0), rect.bottom())), 0.0, colour);
            }
        }
        if let Some((lo, hi)) = self.limits {
            ui.weak(format!("{} … {}", fmt(lo), fmt(hi)));
        }
    }
}

/// A number with about four significant digits.
pub fn fmt(v: f64) -> String {
    if v == 0.0 || (1e-3..1e5).contains(&v.abs()) {
        format!("{}", (v * 1e4).round() / 1e4)
    } else {
        format!("{v:.3e}")
    }
}

/// Draws a scale bar in the lower left of `rect` for an image of `cols` columns of pixel size
/// `size` ([`ScaleBar::for_image`]: a round length near a quarter of the width).
pub fn scale_bar(painter: &egui::Painter, rect: Rect, cols: usize, size: PixelSize) {
    let Some(bar) = ScaleBar::for_image(cols, size) else { return };
    let px = bar.pixels as f32 * rect.width() / cols as f32;
    let y = rect.bottom() - 8.0;
    let x0 = rect.left() + 8.0;
    let stroke = egui::Stroke::new(3.0, Color32::WHITE);
    painter.line_segment([egui::pos2(x0, y), egui::pos2(x0 + px, y)], egui::Stroke::new(5.0, Color32::BLACK));
    painter.line_segment([egui::pos2(x0, y), egui::pos2(x0 + px, y)], stroke);
    let galley = painter.layout_no_wrap(bar.label(), egui::FontId::proportional(12.0), Color32::WHITE);
    let at = egui::pos2(x0, y - 5.0 - galley.size().y);
    // A dark backing keeps the label legible on bright images.
    painter.rect_filled(Rect::from_min_size(at, galley.size()).expand(1.0), 2.0, Color32::from_black_alpha(160));
    painter.galley(at, galley, Color32::WHITE);
}

/// Limits symmetric about 0 for signed images (CoM components, DPC): ±the `percentile` of |v|
/// over the finite values, so 0 sits at the diverging colormap's centre; ±1 when all are 0.
pub fn symmetric_limits(values: &[f64], percentile: f64) -> (f64, f64) {
    let magnitudes: Vec<f64> = values.iter().filter(|v| v.is_finite()).map(|v| v.abs()).collect();
    let m = percentile_limits(&magnitudes, 0.0, percentile).map_or(0.0, |(_, hi)| hi);
    let m = if m.is_finite() && m > 0.0 { m } else { 1.0 };
    (-m, m)
}
