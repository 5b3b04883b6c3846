//! The Refine page's frame browser: one PETS frame at a time (slider, ◀ ▶), its wR2 and scale,
//! observed against calculated intensity (calculated at the frame's wR2 scale, the y = x line for
//! reference, log axes on demand) and the reflection table with (I_obs − I_calc)/σ. Everything
//! comes from `observed_vs_calculated.csv`, so the view shows exactly what the export holds.

use egui_plot::{Line, Plot, PlotPoints, Points};

use super::refine::RefineState;

/// Draws the frame browser (after a run).
pub fn ui(state: &mut RefineState, ui: &mut egui::Ui) {
    ui.strong("frames: observed vs calculated");
    let Some(o) = &state.outputs else {
        ui.weak("after a run");
        return;
    };
    let ids: Vec<i64> = o.frames.keys().copied().collect();
    let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
        ui.weak("no scored reflections");
        return;
    };
    let mut index = state.frame.and_then(|f| ids.iter().position(|&i| i == f)).unwrap_or(0);
    ui.horizontal(|ui| {
        if ui.small_button("◀").clicked() {
            index = index.saturating_sub(1);
        }
        let mut id = ids[index];
        if ui.add(egui::Slider::new(&mut id, first..=last).text("frame")).changed() {
            // The nearest frame that has scored reflections.
            index = ids.iter().enumerate().min_by_key(|(_, &f)| f.abs_diff(id)).map_or(index, |(i, _)| i);
        }
        if ui.small_button("▶").clicked() {
            index = (index + 1).min(ids.len() - 1);
        }
        ui.checkbox(&mut state.frames_log, "log axes");
    });
    let id = ids[index];
    state.frame = Some(id);
    let Some(rows) = o.frames.get(&id) else { return };
    if let Some(f) = o.result.per_frame.iter().find(|f| f.id == id) {
        ui.label(format!("frame {id}: {} reflections · wR2 {:.5} · R_obs {:.5} · scale {:.4e}", f.n, f.wr2, f.r_obs, f.scale));
    }
    let log = state.frames_log;
    let axis = |v: f64| if log { v.max(1e-12).log10() } else { v };
    let points: Vec<[f64; 2]> = rows.iter().map(|r| [axis(r.observed), axis(r.calculated)]).collect();
    let (lo, hi) = points.iter().flatten().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    ui.columns(2, |cols| {
        Plot::new("bloch frame obs calc").height(220.0).x_axis_label(if log { "log10 I_obs" } else { "I_obs" }).y_axis_label(if log { "log10 I_calc" } else { "I_calc" }).show(
            &mut cols[0],
            |p| {
                if lo.is_finite() && hi.is_finite() {
                    p.line(Line::new("y = x", PlotPoints::from(vec![[lo, lo], [hi, hi]])));
                }
                p.points(Points::new("reflections", PlotPoints::from(points)).radius(2.5));
            },
        );
        egui::ScrollArea::vertical().id_salt("bloch frame rows").max_height(220.0).show(&mut cols[1], |ui| {
            egui::Grid::new("bloch frame grid").striped(true).show(ui, |ui| {
                for h in ["h k l", "I_obs", "σ", "I_calc", "Δ/σ"] {
                    ui.strong(h);
                }
                ui.end_row();
                for r in rows {
                    ui.label(format!("{} {} {}", r.hkl[0], r.hkl[1], r.hkl[2]));
                    ui.label(format!("{:.4e}", r.observed));
                    ui.label(format!("{:.2e}", r.sigma));
                    ui.label(format!("{:.4e}", r.calculated));
                    ui.label(if r.sigma > 0.0 { format!("{:+.2}", (r.observed - r.calculated) / r.sigma) } else { "–".to_owned() });
                    ui.end_row();
                }
            });
        });
    });
}
