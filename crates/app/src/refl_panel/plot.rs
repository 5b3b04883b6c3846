//! The log10 R(q) plot of R_s and R_p.

use egui_plot::{Legend, Line, Plot, PlotPoints};

use super::Computed;

/// Colours that stay apart in both the dark and the light theme.
const COLOR_S: egui::Color32 = egui::Color32::from_rgb(64, 156, 255);
const COLOR_P: egui::Color32 = egui::Color32::from_rgb(255, 140, 40);

/// Draws the curves of `computed` (an empty plot when there is none).
pub fn show(ui: &mut egui::Ui, computed: Option<&Computed>) {
    let (rs, rp) = match computed {
        Some(c) => (
            log_points(&c.q, &c.reflectivity.r_s),
            log_points(&c.q, &c.reflectivity.r_p),
        ),
        None => (Vec::new(), Vec::new()),
    };
    Plot::new("refl_plot")
        .legend(Legend::default())
        .x_axis_label("q (Å⁻¹)")
        .y_axis_label("log10 R")
        .show(ui, |plot_ui| {
            plot_ui.line(
                Line::new("R_s", PlotPoints::from(rs))
                    .color(COLOR_S)
                    .width(1.5),
            );
            plot_ui.line(
                Line::new("R_p", PlotPoints::from(rp))
                    .color(COLOR_P)
                    .width(1.5),
            );
        });
}

/// (q, log10 R) pairs; R ≤ 0 (underflow) has no logarithm and is left out rather than drawn at −∞.
pub fn log_points(q: &[f64], r: &[f64]) -> Vec<[f64; 2]> {
    q.iter()
        .zip(r)
        .filter(|(_, &r)| r > 0.0 && r.is_finite())
        .map(|(&q, &r)| [q, r.log10()])
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn zero_reflectance_is_skipped() {
        let points = super::log_points(&[0.1, 0.2, 0.3], &[1.0, 0.0, 1e-3]);
        assert_eq!(points, vec![[0.1, 0.0], [0.3, -3.0]]);
    }
}
