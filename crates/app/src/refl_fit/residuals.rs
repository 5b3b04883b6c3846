//! The normalised residual plot under the curve plot: (R_data − R_model)/σ versus q, per
//! dataset, with the ±1 band and zero marked, as refnx and GenX show it. A good fit scatters
//! about zero with unit spread; structure in it shows what the model misses.

use egui_plot::{HLine, Legend, Plot, PlotPoints, Points};
use scatterlab_refl::model::Model;

/// One dataset's normalised residuals.
#[derive(Clone, Debug, PartialEq)]
pub struct ResidualSeries {
    /// The dataset's name.
    pub name: String,
    /// (q, (R − R_model)/dR) per point with data, a model value and dR > 0.
    pub points: Vec<[f64; 2]>,
}

/// The normalised residuals of every dataset with data and dR; `curves` are the model's
/// `[dataset][q]` (linear R, whatever the fit's transform: the plot is in units of σ of R).
pub fn series(model: &Model, curves: &[Vec<f64>]) -> Vec<ResidualSeries> {
    model
        .datasets()
        .iter()
        .zip(curves)
        .filter_map(|(d, m)| {
            let (r, dr) = (d.r?, d.dr?);
            let points =
                d.q.iter()
                    .zip(r)
                    .zip(dr)
                    .zip(m)
                    .filter(|(((_, _), &e), _)| e > 0.0 && e.is_finite())
                    .map(|(((&q, &r), &e), &rm)| [q, (r - rm) / e])
                    .filter(|p| p[1].is_finite())
                    .collect();
            Some(ResidualSeries { name: d.name.to_owned(), points })
        })
        .collect()
}

/// Draws the residual plot `size` big, colours as in the curve plot; its x axis follows the
/// curve plot's (linked by `link`).
pub fn show(ui: &mut egui::Ui, series: Vec<ResidualSeries>, size: egui::Vec2, link: egui::Id) {
    Plot::new("refl_fit_residuals")
        .legend(Legend::default())
        .width(size.x)
        .height(size.y)
        .link_axis(link, [true, false])
        .x_axis_label("q (Å⁻¹)")
        .y_axis_label("(R − R_model)/σ")
        .allow_scroll(false)
        .show(ui, |plot_ui| {
            for (i, s) in series.into_iter().enumerate() {
                let color = super::plot::color(i);
                plot_ui.points(Points::new(s.name, PlotPoints::from(s.points)).radius(2.0).color(color).id(("refl_fit_residual", i)));
            }
            let grey = egui::Color32::GRAY;
            plot_ui.hline(HLine::new("0", 0.0).color(grey));
            for y in [-1.0, 1.0] {
                plot_ui.hline(HLine::new("±1 σ", y).color(grey.gamma_multiply(0.5)).style(egui_plot::LineStyle::dashed_dense()));
            }
        });
}
