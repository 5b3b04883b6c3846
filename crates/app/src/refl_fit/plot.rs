//! The Fit tab's curve plot: measured R with error bars over the model curves (log R or R·q⁴);
//! the histogram binning the corner plot uses.

use egui_plot::{Arrows, ColorConflictHandling, Legend, Line, Plot, PlotPoints, Points};
use scatterlab_refl::model::Model;

/// What the data plot shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FitView {
    /// log10 R.
    #[default]
    LogR,
    /// log10 (R·q⁴).
    RQ4,
}

impl FitView {
    /// Both views, in selector order.
    pub const ALL: [FitView; 2] = [FitView::LogR, FitView::RQ4];

    /// The selector's label.
    pub fn label(self) -> &'static str {
        match self {
            FitView::LogR => "log R",
            FitView::RQ4 => "R·q⁴",
        }
    }

    fn y_label(self) -> &'static str {
        match self {
            FitView::LogR => "log10 R",
            FitView::RQ4 => "log10 (R·q⁴) (Å⁻⁴)",
        }
    }

    /// log10 of R (times q⁴ in the R·q⁴ view); `None` where R ≤ 0.
    fn y(self, q: f64, r: f64) -> Option<f64> {
        let v = match self {
            FitView::LogR => r,
            FitView::RQ4 => r * q.powi(4),
        };
        (v > 0.0 && v.is_finite()).then(|| v.log10())
    }
}

/// One dataset as plotted.
#[derive(Clone, Debug, PartialEq)]
pub struct DataSeries {
    /// Legend name (the dataset's name).
    pub name: String,
    /// Measured points (q, y).
    pub points: Vec<[f64; 2]>,
    /// Error bars: (q, y of R − dR) to (q, y of R + dR); where R − dR ≤ 0 the bar stops one
    /// decade below R.
    pub bars: Vec<([f64; 2], [f64; 2])>,
    /// The model curve (q, y).
    pub model: Vec<[f64; 2]>,
}

/// The series of every dataset in `view`; `curves` are the model's `[dataset][q]`.
pub fn series(view: FitView, model: &Model, curves: &[Vec<f64>]) -> Vec<DataSeries> {
    model
        .datasets()
        .iter()
        .zip(curves)
        .map(|(d, m)| {
            let mut s =
                DataSeries { name: d.name.to_owned(), points: Vec::new(), bars: Vec::new(), model: d.q.iter().zip(m).filter_map(|(&q, &r)| Some([q, view.y(q, r)?])).collect() };
            if let Some(r) = d.r {
                for (k, (&q, &r)) in d.q.iter().zip(r).enumerate() {
                    let Some(y) = view.y(q, r) else { continue };
                    s.points.push([q, y]);
                    if let Some(&e) = d.dr.and_then(|dr| dr.get(k)) {
                        let low = view.y(q, r - e).unwrap_or(y - 1.0);
                        let high = view.y(q, r + e).unwrap_or(y);
                        s.bars.push(([q, low], [q, high]));
                    }
                }
            }
            s
        })
        .collect()
}

/// Colours per dataset, apart in both themes.
const PALETTE: [egui::Color32; 6] = [
    egui::Color32::from_rgb(64, 156, 255),
    egui::Color32::from_rgb(255, 140, 40),
    egui::Color32::from_rgb(120, 200, 90),
    egui::Color32::from_rgb(230, 70, 90),
    egui::Color32::from_rgb(150, 110, 255),
    egui::Color32::from_rgb(200, 180, 60),
];

/// The colour of dataset `i` in every Fit plot.
pub fn color(i: usize) -> egui::Color32 {
    PALETTE[i % PALETTE.len()]
}

/// The id linking the x axes of the curve plot and the residual plot under it.
pub fn x_link() -> egui::Id {
    egui::Id::unique("refl_fit_x_link")
}

/// Draws the data plot; returns its screen rectangle and the bounds shown, `[q min, q max,
/// y min, y max]` (what a pan or zoom changes).
pub fn show(ui: &mut egui::Ui, view: FitView, series: Vec<DataSeries>, size: egui::Vec2) -> (egui::Rect, [f64; 4]) {
    // Bars, points and the model curve of a dataset share its legend entry (and its colour).
    let shown = Plot::new("refl_fit_plot")
        .legend(Legend::default().color_conflict_handling(ColorConflictHandling::PickLast))
        .width(size.x)
        .height(size.y)
        .link_axis(x_link(), [true, false])
        .x_axis_label("q (Å⁻¹)")
        .y_axis_label(view.y_label())
        // The wheel scrolls the page; Ctrl + wheel zooms, drag pans, double-click resets.
        .allow_scroll(false)
        .show(ui, |plot_ui| {
            for (i, s) in series.into_iter().enumerate() {
                let color = color(i);
                let (origins, tips): (Vec<[f64; 2]>, Vec<[f64; 2]>) = s.bars.into_iter().unzip();
                plot_ui.arrows(Arrows::new(s.name.clone(), origins, tips).tip_length(0.0).color(color.gamma_multiply(0.6)).id(("refl_fit_bars", i)));
                plot_ui.points(Points::new(s.name.clone(), PlotPoints::from(s.points)).radius(2.0).color(color).id(("refl_fit_points", i)));
                plot_ui.line(Line::new(s.name, PlotPoints::from(s.model)).color(color).width(1.5).id(("refl_fit_model", i)));
            }
        });
    let bounds = shown.transform.bounds();
    let ([x0, y0], [x1, y1]) = (bounds.min(), bounds.max());
    (shown.response.rect, [x0, x1, y0, y1])
}

/// `bins` equal bins spanning the samples: (centre, width, count) each; empty for no samples.
pub fn histogram(samples: &[f64], bins: usize) -> Vec<(f64, f64, usize)> {
    let (lo, hi) = samples.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    if samples.is_empty() || bins == 0 || !(lo.is_finite() && hi.is_finite()) {
        return Vec::new();
    }
    // All samples equal: one bin of nominal width around them.
    let width = if hi > lo { (hi - lo) / bins as f64 } else { lo.abs().max(1e-12) * 1e-6 };
    let mut counts = vec![0usize; bins];
    for &v in samples {
        let b = (((v - lo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    counts.into_iter().enumerate().map(|(b, n)| (lo + (b as f64 + 0.5) * width, width, n)).collect()
}
