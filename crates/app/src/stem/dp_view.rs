//! The diffraction view: the pattern with every detector drawn over it. Dragging inside a
//! detector moves it, dragging its edge resizes it (inner or outer circle, rectangle edges);
//! a click selects the detector under the pointer; arrow keys nudge the selected one (1 px,
//! 0.1 px with Shift) while the view has keyboard focus or nothing else has.

use egui::{Color32, Key, Modifiers, Pos2, Rect, Response, Stroke};

use super::detectors::{Detector, Handle, Shape};
use super::readout::{hover, Place};
use super::scale::PixelSize;
use super::view::scale_bar;
use super::{DpSource, Drag, StemPanel};

/// Detector outline colours, by index.
const COLOURS: [Color32; 6] = [
    Color32::from_rgb(80, 220, 255),
    Color32::from_rgb(255, 170, 60),
    Color32::from_rgb(140, 255, 120),
    Color32::from_rgb(255, 110, 200),
    Color32::from_rgb(255, 255, 110),
    Color32::from_rgb(190, 150, 255),
];

/// Pointer distance (points) within which an edge is grabbed.
const GRAB: f32 = 6.0;

/// The outline colour of detector `i`.
pub fn colour(i: usize) -> Color32 {
    COLOURS[i % COLOURS.len()]
}

/// Maps detector pixel coordinates (row, col; centres at integers) to the screen and back.
#[derive(Clone, Copy)]
pub struct PixelMap {
    rect: Rect,
    shape: [usize; 2],
}

impl PixelMap {
    /// The map of a `shape` image drawn in `rect`.
    pub fn new(rect: Rect, shape: [usize; 2]) -> Self {
        Self { rect, shape }
    }

    /// Screen points per pixel (columns).
    pub fn scale(self) -> f32 {
        self.rect.width() / self.shape[1].max(1) as f32
    }

    /// Screen position of (row, col).
    pub fn to_screen(self, p: [f64; 2]) -> Pos2 {
        let sy = self.rect.height() / self.shape[0].max(1) as f32;
        egui::pos2(self.rect.left() + (p[1] as f32 + 0.5) * self.scale(), self.rect.top() + (p[0] as f32 + 0.5) * sy)
    }

    /// (row, col) under screen position `pos`.
    pub fn to_pixel(self, pos: Pos2) -> [f64; 2] {
        let sy = self.rect.height() / self.shape[0].max(1) as f32;
        [f64::from((pos.y - self.rect.top()) / sy - 0.5), f64::from((pos.x - self.rect.left()) / self.scale() - 0.5)]
    }
}

impl StemPanel {
    /// Draws the diffraction view `width` points wide and handles its pointer and keys.
    pub(super) fn dp_view(&mut self, ui: &mut egui::Ui, width: f32) {
        let Some(data) = &self.data else { return };
        let det = data.det;
        let calibration = data.calibration.clone();
        let values: Option<Vec<f64>> = match self.dp_source {
            DpSource::Mean => self.fused.as_ref().map(|f| f.mean_dp()),
            DpSource::Max => self.fused.as_ref().map(|f| f.max_dp.iter().map(|&v| v as f64).collect()),
            DpSource::Selection => self.region_dp.as_ref().and_then(|r| r.2.as_ref().ok().cloned()),
        };
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&(self.version, self.dp_source, self.selection.map(|s| (s.rows, s.cols))), &mut h);
        let key = std::hash::Hasher::finish(&h);
        match values {
            Some(v) => self.views.dp.set_scalar(ui.ctx(), "stem dp", &v, det, key, &mut self.displays.dp),
            None => {
                let why = match (self.dp_source, self.region_dp.as_ref().map(|r| &r.2)) {
                    (DpSource::Selection, Some(Err(e))) => e.clone(),
                    (DpSource::Selection, _) => "click or drag on the virtual image to select a scan region".to_owned(),
                    _ => "no frame loaded yet".to_owned(),
                };
                self.views.dp.error = Some(why);
                self.views.dp.shape = det;
            }
        }
        let response = self.views.dp.show(ui, width, "diffraction pattern");
        crate::landmarks::mark(&response, "stem dp");
        let map = PixelMap::new(response.rect, det);
        self.dp_pointer(&response, map, det);
        self.dp_keys(ui, &response, det);
        let painter = ui.painter_at(response.rect);
        for (i, d) in self.detectors.iter().enumerate() {
            draw(&painter, map, d, colour(i), i == self.selected);
        }
        if let Some(p) = self.probe {
            let c = map.to_screen(p.center);
            let s = Stroke::new(1.0, Color32::WHITE);
            painter.line_segment([c - egui::vec2(4.0, 0.0), c + egui::vec2(4.0, 0.0)], s);
            painter.line_segment([c - egui::vec2(0.0, 4.0), c + egui::vec2(0.0, 4.0)], s);
            if let Some(mrad) = calibration.mrad_per_px(p.radius) {
                scale_bar(&painter, response.rect, det[1], PixelSize::Mrad(mrad));
            }
        }
        let place = match self.probe.and_then(|p| Some((calibration.mrad_per_px(p.radius)?, p.center))) {
            Some((mrad, centre)) => Place::Pattern(PixelSize::Mrad(mrad), centre),
            None => Place::None,
        };
        let unit = if self.dp_source == DpSource::Max { "counts" } else { "counts/frame" };
        if let Some(h) = hover(ui, &response, &self.views.dp, "diffraction pattern", unit, place) {
            self.hover = Some(h);
        }
    }

    fn dp_pointer(&mut self, response: &Response, map: PixelMap, det: [usize; 2]) {
        let tol = f64::from(GRAB / map.scale().max(1e-3));
        let pointer = response.interact_pointer_pos().map(|p| map.to_pixel(p));
        if response.drag_started() || response.clicked() {
            response.request_focus();
            // A drag is recognised once the pointer has moved: hit-test where it was pressed.
            let origin = response.ctx.input(|i| i.pointer.press_origin()).map(|p| map.to_pixel(p));
            if let Some(p) = origin.or(pointer) {
                if let Some((index, handle)) = self.hit(p, tol) {
                    self.selected = index;
                    if response.drag_started() {
                        let start = self.detectors[index].shape.clone();
                        self.drag = Some(Drag { index, handle, start, from: p });
                    }
                }
            }
        }
        if let (Some(drag), Some(p)) = (&self.drag, pointer) {
            if response.dragged() {
                let shape = Detector::dragged(&drag.start, drag.handle, drag.from, p, det);
                if let Some(d) = self.detectors.get_mut(drag.index) {
                    d.shape = shape;
                    self.user_placed = true;
                }
            }
        }
        if response.drag_stopped() {
            self.drag = None;
        }
        if response.hovered() {
            if let Some(p) = response.hover_pos().map(|p| map.to_pixel(p)) {
                if self.hit(p, tol).is_some() {
                    response.ctx.set_cursor_icon(egui::CursorIcon::Grab);
                }
            }
        }
    }

    /// The detector and handle at `p`: edges first (the selected detector before the others),
    /// then interiors in the same order.
    fn hit(&self, p: [f64; 2], tol: f64) -> Option<(usize, Handle)> {
        let n = self.detectors.len();
        let order: Vec<usize> = std::iter::once(self.selected).filter(|&i| i < n).chain((0..n).filter(|&i| i != self.selected)).collect();
        for edges_only in [true, false] {
            for &i in &order {
                if let Some(h) = self.detectors.get(i).and_then(|d| d.hit(p, tol, edges_only)) {
                    return Some((i, h));
                }
            }
        }
        None
    }

    fn dp_keys(&mut self, ui: &mut egui::Ui, response: &Response, det: [usize; 2]) {
        if response.has_focus() {
            // Arrows act on the pattern instead of moving keyboard focus to a neighbour.
            let filter = egui::EventFilter { horizontal_arrows: true, vertical_arrows: true, ..Default::default() };
            ui.memory_mut(|m| m.set_focus_lock_filter(response.id, filter));
        }
        let free = response.has_focus() || ui.memory(|m| m.focused().is_none());
        if !free || self.detectors.is_empty() {
            return;
        }
        let mut delta = [0.0, 0.0];
        ui.input_mut(|i| {
            for (mods, step) in [(Modifiers::NONE, 1.0), (Modifiers::SHIFT, 0.1)] {
                for (key, d) in [(Key::ArrowUp, [-step, 0.0]), (Key::ArrowDown, [step, 0.0]), (Key::ArrowLeft, [0.0, -step]), (Key::ArrowRight, [0.0, step])] {
                    while i.consume_key(mods, key) {
                        delta[0] += d[0];
                        delta[1] += d[1];
                    }
                }
            }
        });
        if delta != [0.0, 0.0] {
            let index = self.selected;
            if let Some(d) = self.detectors.get_mut(index) {
                d.nudge(delta, det);
                self.user_placed = true;
            }
        }
    }
}

/// Draws one detector's outline (thicker when selected) and its name.
fn draw(painter: &egui::Painter, map: PixelMap, d: &Detector, colour: Color32, selected: bool) {
    let stroke = Stroke::new(if selected { 2.5 } else { 1.2 }, colour);
    let s = f64::from(map.scale());
    let label_at = match d.shape {
        Shape::Disc { center, radius } => {
            let c = map.to_screen(center);
            painter.circle_stroke(c, (radius * s) as f32, stroke);
            c + egui::vec2(0.0, -(radius * s) as f32 - 2.0)
        }
        Shape::Annulus { center, inner, outer } => {
            let c = map.to_screen(center);
            painter.circle_stroke(c, (inner * s) as f32, stroke);
            if outer.is_finite() {
                painter.circle_stroke(c, (outer * s) as f32, stroke);
            }
            c + egui::vec2(0.0, -(inner * s) as f32 - 2.0)
        }
        Shape::Rect { rows, cols } => {
            let a = map.to_screen([rows[0] as f64 - 0.5, cols[0] as f64 - 0.5]);
            let b = map.to_screen([rows[1] as f64 - 0.5, cols[1] as f64 - 0.5]);
            painter.rect_stroke(Rect::from_two_pos(a, b), 0.0, stroke, egui::StrokeKind::Middle);
            a + egui::vec2(2.0, -2.0)
        }
    };
    painter.text(label_at, egui::Align2::CENTER_BOTTOM, &d.name, egui::FontId::proportional(11.0), colour);
}
