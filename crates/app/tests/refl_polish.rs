//! Issue 17 items 15 and 19: the Fit view's parameter table in stack order with units, the
//! normalised residuals, the model curve following DE, the empty state; Simulate's q max clamped
//! to 2k0, and χ² drawn in the UI font.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use std::time::{Duration, Instant};

use common::{app, fit_task_path, load, run_to_end};
use egui_kittest::kittest::Queryable as _;
use scatterlab_app::refl_fit::roles::Role;
use scatterlab_app::refl_fit::Stage;
use scatterlab_app::ReflTab;
use scatterlab_refl::Engine;

#[test]
fn parameters_are_listed_in_stack_order_with_units() {
    let mut harness = app(false);
    load(&mut harness, &fit_task_path());
    harness.step();
    let order = harness.state().refl.fit.parameter_order();
    let names: Vec<&str> = order.iter().map(|(n, _)| n.as_str()).collect();
    println!("table order: {names:?}");
    // Top of the stack first: the film, then the oxide, then the substrate, then the instrument.
    let at = |name: &str| names.iter().position(|n| *n == name).unwrap_or_else(|| panic!("{name} not in {names:?}"));
    assert!(at("film_thick") < at("film_rough"));
    assert!(at("film_rough") < at("film_delta_o_250"));
    assert!(at("film_beta_e_285p1") < at("oxide_thick"));
    assert!(at("oxide_thick") < at("oxide_rough"));
    // The fixture's substrate roughness, scale and background are fixed numbers, not parameters.
    assert_eq!(names.len(), 12, "every parameter once");

    // The drawn rows follow that order (row y grows down the table).
    let y = |name: &str| harness.get_by_label(&format!("{name} value")).rect().center().y;
    let ys: Vec<f32> = names.iter().map(|n| y(n)).collect();
    assert!(ys.windows(2).all(|w| w[1] > w[0]), "{ys:?}");

    // Units from each parameter's role in the model.
    for (name, unit, role) in
        [("film_thick", "Å", Role::Thickness), ("oxide_rough", "Å", Role::Roughness), ("film_delta_o_250", "–", Role::Delta), ("film_beta_o_250", "–", Role::Beta)]
    {
        assert_eq!(order[at(name)].1, role, "{name}");
        // The unit cell sits in the parameter's row.
        let row = y(name);
        let in_row = harness.query_all_by_value(unit).any(|n| (n.rect().center().y - row).abs() < 4.0);
        assert!(in_row, "{name}: no '{unit}' in its row");
    }
}

#[test]
fn residuals_are_data_minus_model_over_sigma() {
    let mut harness = app(false);
    load(&mut harness, &fit_task_path());
    harness.step();
    let fit = &harness.state().refl.fit;
    let model = fit.model().expect("model");
    let curves = scatterlab_app::compute_job::run_if_ready(model.evaluate(Engine::Cpu, &[model.values()])).expect("cpu at once").expect("evaluates").remove(0);
    let residuals = fit.residuals();
    assert_eq!(residuals.len(), model.datasets().len());
    for ((s, d), m) in residuals.iter().zip(model.datasets()).zip(&curves) {
        let (r, dr) = (d.r.expect("data"), d.dr.expect("dR"));
        assert_eq!(s.points.len(), d.q.len(), "{}", s.name);
        for (k, p) in s.points.iter().enumerate() {
            let want = (r[k] - m[k]) / dr[k];
            assert_eq!(p[0], d.q[k]);
            assert!((p[1] - want).abs() <= 1e-12 * want.abs().max(1.0), "{p:?} vs {want}");
        }
        // The fixture's start values are off the truth: residuals are far from unit spread.
        let rms = (s.points.iter().map(|p| p[1] * p[1]).sum::<f64>() / s.points.len() as f64).sqrt();
        println!("{}: rms normalised residual {rms:.3}", s.name);
        assert!(rms.is_finite() && rms > 0.0);
    }
}

#[test]
fn model_curve_follows_de_generation_by_generation() {
    let mut harness = app(false);
    load(&mut harness, &fit_task_path());
    let start: Vec<f64> = harness.state().refl.fit.model().expect("model").values().to_vec();
    let settings = &mut harness.state_mut().refl.fit.settings;
    (settings.max_generations, settings.seed) = (400, 3);
    println!("seed 3");
    harness.get_by_label("Run fit").click();
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut live_frames = 0;
    harness.step();
    while harness.state().refl.fit.is_running() && live_frames < 3 {
        assert!(Instant::now() < deadline, "no DE generation seen");
        std::thread::sleep(Duration::from_millis(5));
        harness.step();
        let Some(p) = harness.state().refl.fit.progress().filter(|p| p.stage == Stage::De) else {
            continue;
        };
        let best = p.best_values.clone().expect("DE reports its best vector");
        // The fit thread may have posted this first generation after the frame had drawn (under
        // load it does): draw once more, so the plot has seen a generation.
        harness.step();
        // The plotted curve is for the best vector of a generation (a later one may have arrived
        // between refresh and this read), never the start values.
        let shown = harness.state().refl.fit.plotted_values().expect("curves").to_vec();
        assert_ne!(shown, start, "the curve still shows the start values");
        assert_eq!(shown.len(), best.len());
        live_frames += 1;
    }
    assert!(live_frames > 0, "the fit ended before a DE frame was drawn");
    harness.state_mut().refl.fit.cancel();
    run_to_end(&mut harness, Duration::from_secs(300));
    // After the fit the curve is the model's again.
    let fit = &harness.state().refl.fit;
    assert_eq!(fit.plotted_values().expect("curves"), fit.model().expect("model").values());
}

#[test]
fn empty_fit_tab_has_no_empty_frames() {
    let mut harness = app(false);
    harness.state_mut().refl.tab = ReflTab::Fit;
    harness.step();
    harness.step();
    harness.get_by_label("no model loaded");
    assert!(harness.query_by_label("Parameters").is_none());
    assert!(harness.query_by_label("Datasets").is_none());
    load(&mut harness, &fit_task_path());
    harness.get_by_label("Parameters");
    harness.get_by_label("Datasets");
}

#[test]
fn q_max_beyond_2k0_is_clamped_with_a_note_and_the_valid_part_plotted() {
    let mut harness = egui_kittest::Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_eframe(|cc| scatterlab_app::ScatterlabApp::new(cc));
    harness.step();
    let limit = harness.state().refl.inputs.q_limit();
    assert!((limit - 0.25335).abs() < 1e-4, "2k0 at 250 eV: {limit}");
    harness.state_mut().refl.inputs.q_max = 0.4;
    harness.step();
    harness.step();
    let panel = &harness.state().refl;
    let curve = panel.curve().unwrap_or_else(|| panic!("clamped, not failed: {}", panel.status_text()));
    // The grid keeps its spacing over [0.005, 0.4]; points at or beyond 2k0 are left out.
    let full = panel.inputs.q_grid();
    let kept = full.iter().filter(|&&q| q < limit).count();
    assert_eq!(curve.q.len(), kept);
    assert_eq!(curve.q[..], full[..kept]);
    assert!(kept > 200 && kept < 400, "{kept}");
    assert!(*curve.q.last().expect("points") < limit);
    assert!(curve.reflectivity.r_s.iter().all(|r| r.is_finite() && *r >= 0.0));
    assert!(harness.state().refl.inputs.is_clamped());
    harness.get_by_value("q max 0.4000 Å⁻¹ is beyond the physical maximum at 250 eV: plotted up to 0.2525 Å⁻¹\nq must stay below 2k0 = 0.2534 Å⁻¹");

    // In range: no note.
    harness.state_mut().refl.inputs.q_max = 0.25;
    harness.step();
    harness.step();
    assert!(!harness.state().refl.inputs.is_clamped());
    assert_eq!(harness.state().refl.curve().expect("curve").q.len(), 400);
}

#[test]
fn chi2_glyph_is_in_the_ui_font() {
    let harness = app(false);
    let ctx = harness.ctx.clone();
    for family in [egui::FontFamily::Proportional, egui::FontFamily::Monospace] {
        let id = egui::FontId::new(14.0, family.clone());
        let has = ctx.fonts_mut(|f| f.has_glyphs(&id, "χ²"));
        assert!(has, "{family:?} lacks χ or ²");
    }
}

#[test]
fn corner_pairs_are_the_samples_thinned_to_the_limit() {
    use scatterlab_app::refl_fit::corner::{pair_points, MAX_SCATTER};
    use scatterlab_app::refl_fit::McmcSummary;
    let n = 5000;
    let a: Vec<f64> = (0..n).map(|k| (k as f64 * 0.1).sin()).collect();
    let b: Vec<f64> = (0..n).map(|k| 2.0 * (k as f64 * 0.1).sin() + 0.01 * k as f64).collect();
    let mcmc = McmcSummary {
        samples: vec![a.clone(), b.clone()],
        median: vec![0.0, 0.0],
        lower_68: vec![-1.0, -1.0],
        upper_68: vec![1.0, 1.0],
        acceptance_fraction: 0.3,
        autocorrelation_time: vec![1.0, 1.0],
    };
    // Row 1 (b, up) against column 0 (a, across): every 3rd sample of 5000 → 1667 points.
    let p = pair_points(&mcmc, 1, 0);
    assert_eq!(p.len(), 1667);
    assert!(p.len() <= MAX_SCATTER);
    for (i, pt) in p.iter().enumerate() {
        assert_eq!(*pt, [a[3 * i], b[3 * i]]);
    }
    assert!(pair_points(&mcmc, 2, 0).is_empty(), "no such parameter");
}

#[test]
fn formula_layers_take_henke_constants_at_the_energy() {
    use scatterlab_app::refl_panel::materials::LayerMaterial;
    use scatterlab_refl::materials::Compound;
    let mut harness = egui_kittest::Harness::builder().with_size(egui::vec2(1600.0, 800.0)).build_eframe(|cc| scatterlab_app::ScatterlabApp::new(cc));
    harness.step();
    // The oxide (row 2) by formula through the table's formula field and density.
    harness.get_by_label("film 2 formula").click();
    harness.step();
    harness.get_by_label("film 2 formula").type_text("SiO2");
    harness.step();
    harness.state_mut().refl.inputs.materials[2].density_g_cm3 = 2.2;
    harness.step();
    harness.step();
    let want = |e: f64| Compound::new("SiO2", 2.2).expect("SiO2").optical_constants(e).expect("in table");
    let panel = &harness.state().refl;
    assert_eq!(panel.inputs.materials[2], LayerMaterial::compound("SiO2", 2.2));
    let layer = panel.inputs.stack.layers[2];
    let c = want(250.0);
    println!("SiO2 2.2 g/cm³ at 250 eV: δ {:.4e} β {:.4e}", c.delta_o, c.beta_o);
    assert_eq!((layer.delta_o, layer.beta_o, layer.delta_e, layer.beta_e), (c.delta_o, c.beta_o, c.delta_e, c.beta_e));
    // Henke SiO2 at 250 eV: δ ≈ 5.8e-3 (the fixture's tabulated value 5.78e-3).
    assert!((c.delta_o - 5.78e-3).abs() < 0.3e-3, "{}", c.delta_o);
    // The curve is computed for that stack, and the typed δ cells are disabled.
    assert_eq!(panel.curve().expect("curve").inputs.stack.layers[2], layer);
    // A new energy moves the constants with it.
    harness.state_mut().refl.inputs.energy_ev = 500.0;
    harness.step();
    harness.step();
    let layer = harness.state().refl.inputs.stack.layers[2];
    assert_eq!(layer.delta_o, want(500.0).delta_o);
    // A bad formula is reported by layer and leaves the last values.
    harness.state_mut().refl.inputs.materials[2].formula = "Xx2".into();
    harness.step();
    harness.step();
    let panel = &harness.state().refl;
    assert_eq!(panel.material_errors().len(), 1, "{:?}", panel.material_errors());
    assert!(panel.material_errors()[0].starts_with("layer 2"), "{:?}", panel.material_errors());
    assert_eq!(panel.inputs.stack.layers[2].delta_o, want(500.0).delta_o);
}

#[test]
fn q_units_convert_once_on_attach() {
    use scatterlab_app::refl_fit::q_units::QUnit;
    let mut harness = app(false);
    load(&mut harness, &fit_task_path());
    // Two points given as 2θ in degrees at 250 eV (λ = 49.594 Å).
    let fit = &mut harness.state_mut().refl.fit;
    assert!(fit.load_bytes("scan.dat", b"2.0 0.5 0.01\n10.0 0.01 0.001\n"));
    fit.pending[0].energy_ev = 250.0;
    fit.pending[0].q_unit = QUnit::TwoThetaDeg;
    harness.step();
    harness.get_by_label("scan.dat q unit");
    harness.state_mut().refl.fit.attach_pending(0);
    harness.step();
    let model = harness.state().refl.fit.model().expect("model");
    let d = model.datasets().into_iter().find(|d| d.name == "scan.dat").expect("attached");
    let lambda = 12398.4193 / 250.0;
    for (q, tth) in d.q.iter().zip([2.0f64, 10.0]) {
        let want = 4.0 * std::f64::consts::PI / lambda * (0.5 * tth).to_radians().sin();
        assert!((q - want).abs() < 1e-6 * want, "{q} vs {want}");
    }
    // nm⁻¹: a tenth.
    let fit = &mut harness.state_mut().refl.fit;
    assert!(fit.load_bytes("nm.dat", b"0.2 0.5 0.01\n0.5 0.01 0.001\n"));
    fit.pending[0].q_unit = QUnit::InverseNanometre;
    fit.attach_pending(0);
    let model = harness.state().refl.fit.model().expect("model");
    let d = model.datasets().into_iter().find(|d| d.name == "nm.dat").expect("attached");
    assert_eq!(d.q, [0.2 / 10.0, 0.5 / 10.0]);
}
