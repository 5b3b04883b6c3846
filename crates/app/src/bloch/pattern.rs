//! The diffraction pattern as spots: each beam at its lab (g_x, g_y), spot area ∝ intensity (or
//! ∝ log(1 + I/I_floor) with the log option), the direct beam outlined; hovering a spot shows its
//! hkl and intensity.

use egui::{Color32, Pos2, Sense, Stroke, Vec2};

use super::simulate::SimResult;

/// Smallest intensity the log scale resolves (relative to the strongest beam).
const LOG_FLOOR: f64 = 1e-6;

/// Spot radii (points) for `intensities`, the strongest spot `max_radius`: area ∝ I, or ∝
/// log(1 + I/floor) with `log` (floor = 10⁻⁶ of the strongest).
pub fn spot_radii(intensities: &[f64], log: bool, max_radius: f32) -> Vec<f32> {
    let peak = intensities.iter().copied().filter(|v| v.is_finite()).fold(0.0_f64, f64::max);
    if peak <= 0.0 {
        return vec![0.0; intensities.len()];
    }
    let floor = peak * LOG_FLOOR;
    let weight = |i: f64| if log { (1.0 + i.max(0.0) / floor).ln() / (1.0 + peak / floor).ln() } else { i.max(0.0) / peak };
    intensities.iter().map(|&i| if i.is_finite() { max_radius * (weight(i).sqrt() as f32) } else { 0.0 }).collect()
}

/// Draws the pattern of `result` at thickness `index`; returns the hovered beam, if any.
pub fn show(ui: &mut egui::Ui, result: &SimResult, index: usize, log: bool) -> Option<usize> {
    let intensities = result.intensities.get(index)?;
    let side = ui.available_width().min(ui.available_height()).clamp(200.0, 900.0);
    let (response, painter) = ui.allocate_painter(Vec2::splat(side), Sense::hover());
    crate::landmarks::mark(&response, "bloch pattern");
    let rect = response.rect;
    painter.rect_filled(rect, 4.0, Color32::from_gray(12));
    let extent = result.g_xy.iter().map(|g| g[0].abs().max(g[1].abs())).fold(0.0_f64, f64::max).max(1e-6);
    let scale = 0.45 * side / extent as f32;
    let centre = rect.center();
    // Lab +x to the right, lab +y up.
    let at = |g: [f64; 2]| Pos2::new(centre.x + g[0] as f32 * scale, centre.y - g[1] as f32 * scale);
    let radii = spot_radii(intensities, log, (0.04 * side).max(4.0));
    for ((g, r), h) in result.g_xy.iter().zip(&radii).zip(&result.hkl) {
        if *h == [0, 0, 0] {
            painter.circle_stroke(at(*g), r.max(2.0), Stroke::new(1.5, Color32::LIGHT_BLUE));
        } else if *r > 0.0 {
            painter.circle_filled(at(*g), r.max(0.75), Color32::WHITE);
        }
    }
    let pointer = response.hover_pos()?;
    let (nearest, distance) = result.g_xy.iter().enumerate().map(|(j, g)| (j, at(*g).distance(pointer))).min_by(|a, b| a.1.total_cmp(&b.1))?;
    if distance > radii.get(nearest).copied().unwrap_or(0.0).max(6.0) {
        return None;
    }
    let h = result.hkl[nearest];
    let text = format!("({} {} {})  I = {:.4e}", h[0], h[1], h[2], intensities[nearest]);
    painter.circle_stroke(at(result.g_xy[nearest]), radii[nearest].max(4.0) + 2.0, Stroke::new(1.0, Color32::YELLOW));
    painter.text(pointer + Vec2::new(12.0, -12.0), egui::Align2::LEFT_BOTTOM, text, egui::FontId::proportional(14.0), Color32::YELLOW);
    Some(nearest)
}

#[cfg(test)]
mod tests {
    #[test]
    fn spot_area_is_proportional_to_intensity() {
        let r = super::spot_radii(&[1.0, 0.25, 0.0, f64::NAN], false, 10.0);
        assert_eq!(r[0], 10.0);
        assert!((r[1] - 5.0).abs() < 1e-6, "area ∝ I: a quarter of the intensity, half the radius");
        assert_eq!((r[2], r[3]), (0.0, 0.0));
        let log = super::spot_radii(&[1.0, 1e-6], true, 10.0);
        assert!(log[1] > 2.0 && log[0] == 10.0, "{log:?}");
    }
}
