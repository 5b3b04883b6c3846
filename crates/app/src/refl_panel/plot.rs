//! The main plot of R_s and R_p: log10 R, log10 R·q⁴ or the anisotropy ratio versus q.

use egui_plot::{Legend, Line, Plot, PlotPoints};

use super::Computed;

/// Colours that stay apart in both the dark and the light theme.
const COLOR_S: egui::Color32 = egui::Color32::from_rgb(64, 156, 255);
const COLOR_P: egui::Color32 = egui::Color32::from_rgb(255, 140, 40);
const COLOR_A: egui::Color32 = egui::Color32::from_rgb(120, 200, 90);

/// What the main plot shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PlotView {
    /// log10 R_s and log10 R_p.
    #[default]
    LogR,
    /// log10 (R·q⁴): removes the Fresnel q⁻⁴ decay so fringes far out stay visible.
    RQ4,
    /// (R_p − R_s)/(R_p + R_s) on a linear axis.
    Anisotropy,
}

impl PlotView {
    /// Every view, in selector order.
    pub const ALL: [PlotView; 3] = [PlotView::LogR, PlotView::RQ4, PlotView::Anisotropy];

    /// The selector's label.
    pub fn label(self) -> &'static str {
        match self {
            PlotView::LogR => "log R",
            PlotView::RQ4 => "R·q⁴",
            PlotView::Anisotropy => "anisotropy",
        }
    }

    /// The y axis label.
    pub fn y_label(self) -> &'static str {
        match self {
            PlotView::LogR => "log10 R",
            PlotView::RQ4 => "log10 (R·q⁴) (Å⁻⁴)",
            PlotView::Anisotropy => "(R_p − R_s)/(R_p + R_s)",
        }
    }
}

/// One named line of the plot.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend name.
    pub name: &'static str,
    /// (q, y) points.
    pub points: Vec<[f64; 2]>,
}

/// The lines `view` draws for `computed`: R_s and R_p, or the single anisotropy line.
pub fn series(view: PlotView, computed: &Computed) -> Vec<Series> {
    let (q, r) = (&computed.q, &computed.reflectivity);
    match view {
        PlotView::LogR => vec![Series { name: "R_s", points: log_points(q, &r.r_s) }, Series { name: "R_p", points: log_points(q, &r.r_p) }],
        PlotView::RQ4 => {
            let q4 = |r: &[f64]| -> Vec<f64> { q.iter().zip(r).map(|(q, r)| r * q.powi(4)).collect() };
            vec![Series { name: "R_s", points: log_points(q, &q4(&r.r_s)) }, Series { name: "R_p", points: log_points(q, &q4(&r.r_p)) }]
        }
        PlotView::Anisotropy => {
            let points = q.iter().zip(r.anisotropy()).filter(|(_, a)| a.is_finite()).map(|(&q, a)| [q, a]).collect();
            vec![Series { name: "anisotropy", points }]
        }
    }
}

/// Draws the curves of `computed` in `view` (an empty plot when there is none), `width` wide.
pub fn show(ui: &mut egui::Ui, view: PlotView, computed: Option<&Computed>, width: f32) {
    let lines = computed.map(|c| series(view, c)).unwrap_or_default();
    Plot::new("refl_plot").legend(Legend::default()).width(width).height(ui.available_height()).x_axis_label("q (Å⁻¹)").y_axis_label(view.y_label()).show(ui, |plot_ui| {
        for s in lines {
            let color = match s.name {
                "R_s" => COLOR_S,
                "R_p" => COLOR_P,
                _ => COLOR_A,
            };
            plot_ui.line(Line::new(s.name, PlotPoints::from(s.points)).color(color).width(1.5));
        }
    });
}

/// (q, log10 R) pairs; R ≤ 0 (underflow) has no logarithm and is left out rather than drawn at −∞.
pub fn log_points(q: &[f64], r: &[f64]) -> Vec<[f64; 2]> {
    q.iter().zip(r).filter(|(_, &r)| r > 0.0 && r.is_finite()).map(|(&q, &r)| [q, r.log10()]).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn zero_reflectance_is_skipped() {
        let points = super::log_points(&[0.1, 0.2, 0.3], &[1.0, 0.0, 1e-3]);
        assert_eq!(points, vec![[0.1, 0.0], [0.3, -3.0]]);
    }
}
