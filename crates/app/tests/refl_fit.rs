//! The Fit tab in a headless egui harness (CPU engine): the fixture fit task loaded through the
//! path field, its parameter table, a short seeded DE run with live progress, and a layer-table
//! model fitted to data attached from a text file.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use std::time::Duration;

use common::{app, fit_task_path, load, run_to_end, type_into};
use egui_kittest::kittest::Queryable as _;

#[test]
fn fit_task_table_and_short_de_run_with_progress() {
    let mut harness = app(false);
    load(&mut harness, &fit_task_path());

    let fit = &harness.state().refl.fit;
    let model = fit.model().unwrap_or_else(|| panic!("not loaded: {:?}", fit.message()));
    let names = model.parameter_names().to_vec();
    assert_eq!(names.len(), 12, "{names:?}");
    assert_eq!(model.varying().len(), 12);
    for name in &names {
        harness.get_by_label(&format!("{name} value"));
        harness.get_by_label(&format!("{name} vary"));
        harness.get_by_label(&format!("{name} lower"));
        harness.get_by_label(&format!("{name} upper"));
    }
    harness.get_by_label_contains("model: fit_task.json");
    harness.get_by_label_contains("χ² at the current values");

    // A short seeded run: 6 generations of DE, then the LM polish.
    type_into(&mut harness, "DE generations", "6");
    type_into(&mut harness, "seed", "7");
    assert_eq!(harness.state().refl.fit.settings.max_generations, 6);
    assert_eq!(harness.state().refl.fit.settings.seed, 7);
    harness.get_by_label("Run fit").click();
    let seen = run_to_end(&mut harness, Duration::from_secs(300));

    println!("progress lines seen: {}", seen.len());
    for line in seen.iter().take(3).chain(seen.last()) {
        println!("  {line}");
    }
    let de_lines: Vec<&String> = seen.iter().filter(|l| l.starts_with("DE generation ")).collect();
    assert!(!de_lines.is_empty(), "no DE progress line seen: {seen:?}");
    for line in &de_lines {
        assert!(line.contains(" of 6 · best χ² ") && line.contains("evaluations/s"), "{line}");
    }
    let fit = &harness.state().refl.fit;
    let r = fit.result().unwrap_or_else(|| panic!("no result: {:?}", fit.message()));
    println!("start χ² {:.1} → {:.3} (χ²/N {:.3}) in {:.2} s, {} evaluations", r.start_chi2, r.chi2, r.chi2_per_point(), r.seconds, r.evaluations);
    assert!(!r.cancelled);
    assert_eq!(r.de.as_ref().map(|d| d.generations), Some(6));
    assert_eq!(r.n_points, 720);
    assert!(r.chi2 < r.start_chi2, "χ² {} not below the start {}", r.chi2, r.start_chi2);
    // The table shows it, with one row (value and ± σ) per free parameter.
    harness.get_by_label(&format!("χ² = {}", scatterlab_app::refl_fit::fmt_chi2(r.chi2)));
    harness.get_by_label_contains("χ²/N = ");
    let stderr = r.stderr.as_ref().expect("LM standard errors");
    assert_eq!(stderr.len(), 12);
    assert!(stderr.iter().all(|s| s.is_finite() && *s > 0.0), "{stderr:?}");
    // The fitted values went into the table: the model now evaluates to the fit's χ².
    assert_eq!(fit.model().expect("model").values(), &r.values[..]);
    harness.get_by_label("Resume");
}

#[test]
fn layer_table_model_fits_attached_text_data() {
    let mut harness = app(false);
    harness.get_by_label("Fit").click();
    harness.step();
    harness.get_by_label("New model from the layer table").click();
    harness.step();
    harness.step();
    let fit = &harness.state().refl.fit;
    let model = fit.model().unwrap_or_else(|| panic!("no model: {:?}", fit.message()));
    assert_eq!(model.datasets().len(), 2);
    let truth = model.values().to_vec();
    let names = model.parameter_names().to_vec();

    // Data = the model's own s curve (dR = 1 % of R), as a text file with q R dR columns.
    let q = model.datasets()[0].q.to_vec();
    let r = harness.state().refl.fit.curves_csv().expect("curves");
    let r_model: Vec<f64> = r.lines().filter(|l| l.starts_with("0,")).map(|l| l.split(',').nth(4).expect("R_model").parse().expect("number")).collect();
    assert_eq!(r_model.len(), q.len());
    let text: String = q.iter().zip(&r_model).map(|(q, r)| format!("{q:e} {r:e} {:e}\n", 0.01 * r)).collect();
    let dir = common::temp_dir("fit-attach");
    let file = dir.join("film_s.dat");
    std::fs::write(&file, text).expect("write data");
    load(&mut harness, &file);
    assert_eq!(harness.state().refl.fit.pending.len(), 1);

    // Replace the data of dataset 0 (250 eV s), then drop dataset 1 (p, no data).
    harness.state_mut().refl.fit.pending[0].target = scatterlab_app::refl_fit::Target::Replace(0);
    harness.get_by_label("Attach").click();
    harness.step();
    harness.step(); // the layout without the attached row
    harness.get_all_by_label("remove").nth(1).expect("second remove").click();
    harness.step();
    harness.step();
    let fit = &harness.state().refl.fit;
    assert!(fit.pending.is_empty(), "{:?}", fit.message());
    assert_eq!(fit.model().expect("model").datasets().len(), 1, "{:?}", fit.message());
    harness.get_by_label("χ² at the current values: 0.00");

    // Move the film thickness off, then Polish (LM) brings it back.
    let thick = names.iter().position(|n| n == "film1_thick").expect("film1_thick");
    type_into(&mut harness, "film1_thick value", &format!("{}", truth[thick] + 6.0));
    assert_eq!(harness.state().refl.fit.model().expect("model").values()[thick], truth[thick] + 6.0);
    harness.get_by_label("Polish").click();
    run_to_end(&mut harness, Duration::from_secs(120));
    let fit = &harness.state().refl.fit;
    let r = fit.result().unwrap_or_else(|| panic!("no result: {:?}", fit.message()));
    let got = fit.model().expect("model").values().to_vec();
    println!("polish: χ² {:.3e} → {:.3e}; thickness {} (truth {})", r.start_chi2, r.chi2, got[thick], truth[thick]);
    assert!(r.start_chi2 > 100.0, "{}", r.start_chi2);
    assert!(r.chi2 < 1e-6, "{}", r.chi2);
    for (k, name) in names.iter().enumerate() {
        let tol = 1e-5 * truth[k].abs().max(1.0);
        assert!((got[k] - truth[k]).abs() <= tol, "{name}: {} vs {}", got[k], truth[k]);
    }
    std::fs::remove_dir_all(&dir).ok();
}
