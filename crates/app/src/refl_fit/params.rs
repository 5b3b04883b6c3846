//! The parameter table (name, value, vary, lower and upper bound, all editable) and the result
//! table (value ± 1σ, MCMC intervals, χ²).

use std::collections::BTreeMap;

use scatterlab_refl::model::ParamSpec;

use super::update::fmt_chi2;
use super::{FitPanel, FitResult, Method};

/// A number as the tables show it: scientific when small or large, else four decimals.
pub fn fmt_value(v: f64) -> String {
    if v != 0.0 && (v.abs() < 1e-2 || v.abs() >= 1e5) {
        format!("{v:.4e}")
    } else {
        format!("{v:.4}")
    }
}

/// A drag value for a parameter number; `scale` sets the drag speed (a bound range or the value).
fn number(value: &mut f64, scale: f64) -> egui::DragValue<'_> {
    let speed = if scale.is_finite() && scale > 0.0 {
        scale * 1e-3
    } else {
        1e-3
    };
    egui::DragValue::new(value)
        .speed(speed)
        .custom_formatter(|v, _| fmt_value(v))
        // Only finite numbers: a NaN would never compare equal and would rebuild every frame.
        .custom_parser(|s| s.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
}

/// Shows the editable table; edits go straight into `edits`.
pub fn table(ui: &mut egui::Ui, edits: &mut BTreeMap<String, ParamSpec>) {
    egui::Grid::new("refl_fit_params")
        .striped(true)
        .num_columns(5)
        .show(ui, |ui| {
            for header in ["parameter", "value", "vary", "lower", "upper"] {
                ui.strong(header);
            }
            ui.end_row();
            for (name, spec) in edits.iter_mut() {
                ui.label(name);
                let range = spec.bounds.map_or(spec.value.abs(), |[lo, hi]| hi - lo);
                // Cells are named "<parameter> <column>" for screen readers and tests.
                ui.add(number(&mut spec.value, range))
                    .accessible_name(format!("{name} value"));
                ui.checkbox(&mut spec.vary, "")
                    .accessible_name(format!("{name} vary"));
                match &mut spec.bounds {
                    Some([lo, hi]) => {
                        ui.add(number(lo, range))
                            .accessible_name(format!("{name} lower"));
                        ui.add(number(hi, range))
                            .accessible_name(format!("{name} upper"));
                    }
                    None => {
                        if ui
                            .small_button("set bounds")
                            .on_hover_text("Bounds are needed to vary a parameter")
                            .clicked()
                        {
                            let half = if spec.value == 0.0 {
                                1.0
                            } else {
                                0.5 * spec.value.abs()
                            };
                            spec.bounds = Some([spec.value - half, spec.value + half]);
                        }
                        ui.label("");
                    }
                }
                ui.end_row();
            }
        });
}

/// The result table and its summary lines.
pub fn results(ui: &mut egui::Ui, r: &FitResult) {
    let title = match (r.method, r.cancelled) {
        (_, true) => "Result (cancelled: best values so far)",
        (Method::Mcmc, _) if r.mcmc.is_some() => "Result (MCMC medians ± 68 % half-widths)",
        _ => "Result (value ± 1σ from the LM covariance)",
    };
    ui.strong(title);
    egui::Grid::new("refl_fit_results")
        .striped(true)
        .num_columns(3)
        .show(ui, |ui| {
            for header in ["parameter", "value", "± σ"] {
                ui.strong(header);
            }
            ui.end_row();
            for (k, name) in r.names.iter().enumerate() {
                ui.label(name);
                ui.label(fmt_value(r.x[k]));
                ui.label(r.stderr.as_ref().map_or("—".into(), |s| fmt_value(s[k])));
                ui.end_row();
            }
        });
    ui.label(format!("χ² = {}", fmt_chi2(r.chi2)));
    ui.label(format!(
        "χ²/N = {:.4} (N = {} points; start χ² = {})",
        r.chi2_per_point(),
        r.n_points,
        fmt_chi2(r.start_chi2)
    ));
    let de = r.de.as_ref().map_or(String::new(), |d| {
        let how = if d.converged {
            "converged"
        } else {
            "not converged"
        };
        format!(" · DE {} generations, {how}", d.generations)
    });
    ui.weak(format!(
        "{} evaluations in {:.2} s{de} · batches on {}, LM on cpu f64",
        r.evaluations, r.seconds, r.engine
    ));
    if let Some(m) = &r.mcmc {
        let tau = m.autocorrelation_time.iter().copied().fold(0.0, f64::max);
        ui.weak(format!(
            "MCMC: acceptance {:.2}, longest autocorrelation time {tau:.1} steps",
            m.acceptance_fraction
        ));
    }
    for note in &r.notes {
        ui.colored_label(ui.visuals().warn_fg_color, note);
    }
}

impl FitPanel {
    /// The parameter table, applied through `Model::new` after the frame's edits.
    pub(super) fn params_ui(&mut self, ui: &mut egui::Ui) {
        ui.strong("Parameters");
        // No edits while a fit runs: its result is applied to the model it started from.
        ui.add_enabled_ui(!self.is_running(), |ui| table(ui, &mut self.edits));
        self.apply_edits();
        if let Some(e) = self.edit_error() {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("edit not applied: {e}"),
            );
        }
    }
}
