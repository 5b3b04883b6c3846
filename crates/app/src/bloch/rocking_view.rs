//! The Simulate page's rocking-curve parts: the sweep controls (axis, range, tilts, Run / Cancel
//! with progress) beside the case inputs, and the curves — intensity against tilt offset for the
//! picked reflections (or the strongest few), at one thickness — with the CSV export.

use egui_plot::{Legend, Line, Plot, PlotPoints};
use scatterlab_bloch::tilt_series::TiltAxis;

use super::crystal::CrystalState;
use super::simulate::SimulateState;

/// How many curves are drawn when none are picked.
const STRONGEST: usize = 6;

/// The sweep controls (in the inputs panel).
pub fn controls(state: &mut SimulateState, crystal: &CrystalState, ui: &mut egui::Ui) {
    ui.separator();
    ui.strong("rocking curves");
    let running = state.rocking.is_running();
    let s = &mut state.rocking.sweep;
    ui.horizontal(|ui| {
        ui.label("about lab");
        ui.selectable_value(&mut s.axis, TiltAxis::X, "x");
        ui.selectable_value(&mut s.axis, TiltAxis::Y, "y");
    });
    ui.horizontal(|ui| {
        ui.add(egui::DragValue::new(&mut s.from_deg).speed(0.01).range(-90.0..=90.0).max_decimals(4).suffix("°"));
        ui.label("to");
        ui.add(egui::DragValue::new(&mut s.to_deg).speed(0.01).range(-90.0..=90.0).max_decimals(4).suffix("°"));
        ui.add(egui::DragValue::new(&mut s.n).range(1..=2000).suffix(" tilts"));
    });
    ui.horizontal(|ui| {
        let run = ui.add_enabled(!running && crystal.asu.is_some(), egui::Button::new("Run sweep"));
        crate::landmarks::mark(&run, "bloch rocking run");
        if run.clicked() {
            let (inputs, gpu) = (state.inputs.clone(), state.gpu.clone());
            let _ = state.rocking.start(&inputs, crystal, gpu);
        }
        if ui.add_enabled(running, egui::Button::new("Cancel sweep")).clicked() {
            state.rocking.cancel();
        }
    });
    if running {
        let (done, total) = state.rocking.progress();
        ui.add(egui::ProgressBar::new(if total > 0 { done as f32 / total as f32 } else { 0.0 }).text(format!("{done} / {total} tilts")));
    }
    if let Some(e) = &state.rocking.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
}

/// The curves of the last sweep (in the central area).
pub fn curves(state: &mut SimulateState, ui: &mut egui::Ui) {
    let r = &mut state.rocking;
    let Some(result) = &r.result else {
        ui.label("No sweep yet: set the rocking range in the inputs and press Run sweep.");
        return;
    };
    let last = result.thicknesses.len().saturating_sub(1);
    r.thickness_index = r.thickness_index.min(last);
    let device = if result.device == crate::Device::Gpu { "GPU f32" } else { "CPU f64" };
    ui.label(format!(
        "{} · {} tilts · {} beams · {device} · {:.2} s{}",
        result.id,
        result.series.len(),
        result.series.n_beams(),
        result.seconds,
        if result.cancelled { " (cancelled)" } else { "" }
    ));
    ui.horizontal(|ui| {
        let t = result.thicknesses.get(r.thickness_index).copied().unwrap_or(f64::NAN);
        ui.add_enabled(last > 0, egui::Slider::new(&mut r.thickness_index, 0..=last).show_value(false).text("thickness"));
        ui.label(format!("t = {t} Å"));
        ui.label("curves of h k l:");
        let edit = ui.add(egui::TextEdit::singleline(&mut r.pick_text).desired_width(160.0).hint_text("e.g. 2 0 0; 0 2 0"));
        if edit.changed() {
            r.picked = parse_picks(&r.pick_text);
        }
        if ui.button("Export CSV").clicked() {
            let name = format!("{}-rocking.csv", result.id.replace(['[', ']', ','], "_"));
            state.message = Some(super::files::save(&state.export_dir, &name, rocking_csv(result).as_bytes(), "text/csv"));
        }
    });
    let tilts = result.series.tilts();
    let (nt, nb) = (result.thicknesses.len(), result.series.n_beams());
    let flat = result.series.intensities();
    let shown = r.shown_beams(STRONGEST);
    Plot::new("bloch rocking curves").height(ui.available_height().max(200.0)).legend(Legend::default()).x_axis_label("tilt offset (°)").y_axis_label("I").show(ui, |p| {
        for (j, h) in shown {
            let points: Vec<[f64; 2]> = tilts.iter().enumerate().map(|(i, &a)| [a, flat.get((i * nt + r.thickness_index) * nb + j).copied().unwrap_or(f64::NAN)]).collect();
            p.line(Line::new(format!("{} {} {}", h[0], h[1], h[2]), PlotPoints::from(points)));
        }
    });
}

/// Parses "h k l; h k l" (commas or spaces inside a triple); triples that do not parse are skipped.
pub fn parse_picks(text: &str) -> Vec<[i32; 3]> {
    text.split(';')
        .filter_map(|t| {
            let v: Vec<i32> = t.split(|c: char| c == ',' || c.is_whitespace()).filter(|s| !s.is_empty()).map(str::parse).collect::<Result<_, _>>().ok()?;
            <[i32; 3]>::try_from(v).ok()
        })
        .collect()
}

/// The sweep as CSV: one row per (tilt, thickness), `tilt_deg,thickness_A`, then one column per beam.
pub fn rocking_csv(result: &super::rocking::RockingResult) -> String {
    let hkl = result.series.hkl();
    let mut out = String::from("tilt_deg,thickness_A");
    for h in &hkl {
        out.push_str(&format!(",I_{}_{}_{}", h[0], h[1], h[2]));
    }
    out.push('\n');
    let flat = result.series.intensities();
    let (nt, nb) = (result.thicknesses.len(), hkl.len());
    for (i, a) in result.series.tilts().iter().enumerate() {
        for (k, t) in result.thicknesses.iter().enumerate() {
            out.push_str(&format!("{a},{t}"));
            for j in 0..nb {
                out.push_str(&format!(",{}", flat.get((i * nt + k) * nb + j).copied().unwrap_or(f64::NAN)));
            }
            out.push('\n');
        }
    }
    out
}
