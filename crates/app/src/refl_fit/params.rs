//! The parameter table (name, value, vary, lower and upper bound, all editable) and the result
//! table (value ± 1σ, MCMC intervals, χ²).

use std::collections::BTreeMap;

use scatterlab_refl::model::ParamSpec;

use super::roles::{role_of, stack_order, Role};
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
    let speed = if scale.is_finite() && scale > 0.0 { scale * 1e-3 } else { 1e-3 };
    egui::DragValue::new(value)
        .speed(speed)
        .custom_formatter(|v, _| fmt_value(v))
        // Only finite numbers: a NaN would never compare equal and would rebuild every frame.
        .custom_parser(|s| s.trim().parse::<f64>().ok().filter(|v| v.is_finite()))
}

/// The unit cell of a parameter row: the unit, what the parameter is on hover, and an
/// accessible name "<parameter> unit".
fn unit_cell(ui: &mut egui::Ui, name: &str, role: Role) {
    ui.label(role.unit()).on_hover_text(role.describe()).accessible_name(format!("{name} unit"));
}

/// Shows the editable table in `order` (stack order, with each parameter's role); edits go
/// straight into `edits`.
pub fn table(ui: &mut egui::Ui, edits: &mut BTreeMap<String, ParamSpec>, order: &[(String, Role)]) {
    egui::Grid::new("refl_fit_params").striped(true).num_columns(6).show(ui, |ui| {
        for header in ["parameter", "value", "unit", "vary", "lower", "upper"] {
            ui.strong(header);
        }
        ui.end_row();
        for (name, role) in order {
            let Some(spec) = edits.get_mut(name) else {
                continue;
            };
            ui.label(name);
            let range = spec.bounds.map_or(spec.value.abs(), |[lo, hi]| hi - lo);
            // Cells are named "<parameter> <column>" for screen readers and tests.
            ui.add(number(&mut spec.value, range)).accessible_name(format!("{name} value"));
            unit_cell(ui, name, *role);
            ui.checkbox(&mut spec.vary, "").accessible_name(format!("{name} vary"));
            match &mut spec.bounds {
                Some([lo, hi]) => {
                    ui.add(number(lo, range)).accessible_name(format!("{name} lower"));
                    ui.add(number(hi, range)).accessible_name(format!("{name} upper"));
                }
                None => {
                    if ui.small_button("set bounds").on_hover_text("Bounds are needed to vary a parameter").clicked() {
                        let half = if spec.value == 0.0 { 1.0 } else { 0.5 * spec.value.abs() };
                        spec.bounds = Some([spec.value - half, spec.value + half]);
                    }
                    ui.label("");
                }
            }
            ui.end_row();
        }
    });
}

/// The result table (free parameters in stack order, with units) and its summary lines.
pub fn results(ui: &mut egui::Ui, r: &FitResult, order: &[(String, Role)]) {
    let title = match (r.method, r.cancelled) {
        (_, true) => "Result (cancelled: best values so far)",
        (Method::Mcmc, _) if r.mcmc.is_some() => "Result (MCMC medians ± 68 % half-widths)",
        _ => "Result (value ± 1σ from the LM covariance)",
    };
    ui.strong(title);
    egui::Grid::new("refl_fit_results").striped(true).num_columns(4).show(ui, |ui| {
        for header in ["parameter", "value", "± σ", "unit"] {
            ui.strong(header);
        }
        ui.end_row();
        for k in result_order(&r.names, order) {
            let name = &r.names[k];
            ui.label(name);
            ui.label(fmt_value(r.x[k]));
            let sigma = r.stderr.as_ref().and_then(|s| s.get(k));
            ui.label(sigma.map_or("—".into(), |s| fmt_value(*s)));
            let role = role_of(order, name);
            ui.label(role.unit()).on_hover_text(role.describe());
            ui.end_row();
        }
    });
    ui.label(format!("χ² = {}", fmt_chi2(r.chi2)));
    ui.label(format!("χ²/N = {:.4} (N = {} points; start χ² = {})", r.chi2_per_point(), r.n_points, fmt_chi2(r.start_chi2)));
    let de = r.de.as_ref().map_or(String::new(), |d| {
        let how = if d.converged { "converged" } else { "not converged" };
        format!(" · DE {} generations, {how}", d.generations)
    });
    ui.weak(format!("{} evaluations in {:.2} s{de} · batches on {}, LM on cpu f64", r.evaluations, r.seconds, r.engine));
    if let Some(m) = &r.mcmc {
        let tau = m.autocorrelation_time.iter().copied().fold(0.0, f64::max);
        ui.weak(format!("MCMC: acceptance {:.2}, longest autocorrelation time {tau:.1} steps", m.acceptance_fraction));
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
        let order = self.model.as_ref().map(|m| stack_order(m.file())).unwrap_or_default();
        ui.add_enabled_ui(!self.is_running(), |ui| table(ui, &mut self.edits, &order));
        self.apply_edits();
        if let Some(e) = self.edit_error() {
            ui.colored_label(ui.visuals().error_fg_color, format!("edit not applied: {e}"));
        }
    }
}

/// Indices into `names` (a result's free parameters) sorted by their place in `order`; names
/// not in `order` keep their relative order at the end.
pub fn result_order(names: &[String], order: &[(String, Role)]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..names.len()).collect();
    idx.sort_by_key(|&k| order.iter().position(|(n, _)| *n == names[k]).unwrap_or(usize::MAX));
    idx
}
