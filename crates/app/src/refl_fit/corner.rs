//! The MCMC corner plot: each free parameter's histogram on the diagonal, the samples of every
//! pair as a scatter below it (thinned to at most [`MAX_SCATTER`] points), as corner.py draws it.
//! Correlations between parameters (thickness against roughness, δ against density) show as
//! tilted clouds.

use egui_plot::{Bar, BarChart, Plot, PlotPoints, Points, VLine};

use super::plot::{color, histogram};
use super::McmcSummary;

/// Most points drawn per pair panel (every n-th sample beyond that).
pub const MAX_SCATTER: usize = 2000;

/// The (x, y) samples of the pair (i, j) drawn in the panel at row i, column j: parameter j
/// across, parameter i up; every `stride`-th sample so that at most [`MAX_SCATTER`] remain.
pub fn pair_points(mcmc: &McmcSummary, i: usize, j: usize) -> Vec<[f64; 2]> {
    let (Some(y), Some(x)) = (mcmc.samples.get(i), mcmc.samples.get(j)) else {
        return Vec::new();
    };
    let n = x.len().min(y.len());
    let stride = n.div_ceil(MAX_SCATTER).max(1);
    (0..n).step_by(stride).map(|k| [x[k], y[k]]).collect()
}

/// Draws the corner plot of `names` (the result's free parameters) in the available width.
pub fn show(ui: &mut egui::Ui, names: &[String], mcmc: &McmcSummary) {
    ui.strong(format!("MCMC posterior (acceptance {:.2}; median and 68 % interval marked): corner plot", mcmc.acceptance_fraction));
    let n = names.len().min(mcmc.samples.len());
    if n == 0 {
        return;
    }
    let cell = ((ui.available_width() - 20.0) / n as f32).clamp(60.0, 180.0);
    egui::Grid::new("refl_fit_corner").spacing(egui::vec2(2.0, 2.0)).num_columns(n).show(ui, |ui| {
        for i in 0..n {
            for j in 0..n {
                if j > i {
                    ui.allocate_space(egui::vec2(cell, cell));
                    continue;
                }
                let plot = Plot::new(("refl_fit_corner", i, j))
                    .width(cell)
                    .height(cell)
                    .show_axes([i + 1 == n, false])
                    .show_grid(false)
                    .allow_scroll(false)
                    .allow_drag(false)
                    .allow_zoom(false)
                    .show_x(false)
                    .show_y(false);
                let response = if i == j {
                    diagonal(ui, plot, &names[i], mcmc, i)
                } else {
                    plot.show(ui, |plot_ui| {
                        plot_ui.points(
                            Points::new(format!("{} vs {}", names[i], names[j]), PlotPoints::from(pair_points(mcmc, i, j))).radius(1.0).color(color(0).gamma_multiply(0.5)),
                        );
                    })
                    .response
                };
                // Names on the hover and for tests: the panel's parameter(s).
                let name = if i == j { format!("corner {}", names[i]) } else { format!("corner {} vs {}", names[i], names[j]) };
                response.on_hover_text(name.as_str()).accessible_name(name);
            }
            ui.end_row();
        }
    });
}

/// The diagonal panel: the histogram of parameter k with its median and 68 % interval.
fn diagonal(ui: &mut egui::Ui, plot: Plot<'_>, name: &str, mcmc: &McmcSummary, k: usize) -> egui::Response {
    let bars = mcmc.samples.get(k).map(|s| histogram(s, 30)).unwrap_or_default().into_iter().map(|(c, w, count)| Bar::new(c, count as f64).width(w)).collect();
    let marks = [mcmc.lower_68.get(k), mcmc.median.get(k), mcmc.upper_68.get(k)];
    plot.show(ui, |plot_ui| {
        plot_ui.bar_chart(BarChart::new(name.to_owned(), bars).color(color(0)));
        for (j, x) in marks.into_iter().flatten().enumerate() {
            plot_ui.vline(VLine::new(format!("{name} mark {j}"), *x).color(color(1)));
        }
    })
    .response
}
