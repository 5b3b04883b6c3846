//! Fit runs through the Fit tab's buttons: MCMC with its histograms, Cancel then Resume, and DE
//! batches on the GPU (kittest's wgpu device, lavapipe here).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use std::time::{Duration, Instant};

use common::{app, fit_task_path, load, progress_line, run_to_end};
use egui_kittest::kittest::Queryable as _;
use scatterlab_app::refl_fit::Method;
use scatterlab_app::Device;

#[test]
fn mcmc_after_de_and_lm_gives_medians_intervals_and_histograms() {
    let mut harness = app(false);
    load(&mut harness, &fit_task_path());
    harness.get_by_label(Method::Mcmc.label()).click();
    harness.step();
    let settings = &mut harness.state_mut().refl.fit.settings;
    assert_eq!(settings.method, Method::Mcmc);
    (settings.max_generations, settings.mcmc_steps, settings.seed) = (4, 40, 5);
    harness.get_by_label("Run fit").click();
    let seen = run_to_end(&mut harness, Duration::from_secs(300));
    assert!(seen.iter().any(|l| l.starts_with("MCMC step ") && l.contains(" of 40 ")), "{seen:?}");

    let fit = &harness.state().refl.fit;
    let r = fit.result().unwrap_or_else(|| panic!("{:?}", fit.message()));
    let m = r.mcmc.as_ref().unwrap_or_else(|| panic!("no MCMC: {:?}", r.notes));
    // 4 × 12 walkers, 40 steps, the first 10 burn-in: 30 × 48 kept samples per parameter.
    assert_eq!(m.samples.len(), 12);
    assert!(m.samples.iter().all(|s| s.len() == 30 * 48));
    let stderr = r.stderr.as_ref().expect("half-widths");
    assert_eq!(r.x, m.median);
    for (k, s) in stderr.iter().enumerate() {
        assert!(m.lower_68[k] <= m.median[k] && m.median[k] <= m.upper_68[k]);
        assert_eq!(*s, 0.5 * (m.upper_68[k] - m.lower_68[k]));
    }
    println!("MCMC: acceptance {:.2}, χ² at the medians {:.2} (start {:.1})", m.acceptance_fraction, r.chi2, r.start_chi2);
    assert!(m.acceptance_fraction > 0.0 && m.acceptance_fraction < 1.0);
    assert!(r.chi2 < r.start_chi2);
    harness.get_by_label_contains("Result (MCMC medians");
    harness.get_by_label_contains("MCMC posterior");
    // The corner plot: a histogram per parameter on the diagonal, a scatter per pair below.
    let names = &harness.state().refl.fit.result().expect("result").names.clone();
    for (i, a) in names.iter().enumerate() {
        harness.get_by_label(&format!("corner {a}"));
        for b in &names[..i] {
            harness.get_by_label(&format!("corner {a} vs {b}"));
        }
    }
}

#[test]
fn cancel_keeps_the_best_so_far_and_resume_continues() {
    let mut harness = app(false);
    load(&mut harness, &fit_task_path());
    harness.state_mut().refl.fit.settings.max_generations = 100_000;
    harness.get_by_label("Run fit").click();
    // Wait for DE generation 2, then cancel.
    let deadline = Instant::now() + Duration::from_secs(120);
    harness.step();
    while !progress_line(&harness).is_some_and(|l| l.starts_with("DE generation ") && !l.starts_with("DE generation 1 ")) {
        assert!(Instant::now() < deadline, "no DE progress");
        std::thread::sleep(Duration::from_millis(5));
        harness.step();
    }
    harness.get_by_label("Cancel").click();
    run_to_end(&mut harness, Duration::from_secs(60));
    let fit = &harness.state().refl.fit;
    let first = fit.result().unwrap_or_else(|| panic!("{:?}", fit.message())).clone();
    let de = first.de.clone().expect("DE state");
    println!("cancelled after {} generations, χ² {:.1}", de.generations, first.chi2);
    assert!(first.cancelled);
    assert!(de.generations >= 2 && de.generations < 100_000, "{}", de.generations);
    assert!(first.stderr.is_none(), "no LM polish after a cancel");
    assert_eq!(first.chi2, de.result.chi2, "DE's best on the CPU in f64 (the batches ran there too)");
    harness.get_by_label_contains("Result (cancelled");

    // Resume: 3 more generations from the same population, then the LM polish.
    harness.state_mut().refl.fit.settings.max_generations = 3;
    harness.get_by_label("Resume").click();
    run_to_end(&mut harness, Duration::from_secs(300));
    let fit = &harness.state().refl.fit;
    let r = fit.result().unwrap_or_else(|| panic!("{:?}", fit.message()));
    println!("resumed: χ² {:.1} → {:.3}", first.chi2, r.chi2);
    assert!(!r.cancelled);
    assert_eq!(r.de.as_ref().map(|d| d.generations), Some(de.generations + 3));
    assert!(r.chi2 < first.chi2);
    assert!(r.stderr.is_some());
}

#[test]
fn de_batches_on_the_gpu_then_lm_on_the_cpu() {
    if scatterlab_testkit::skip_gpu("app DE on the GPU") {
        return;
    }
    let mut harness = app(true);
    load(&mut harness, &fit_task_path());
    harness.get_by_label(Device::Gpu.label()).click();
    harness.step();
    harness.state_mut().refl.fit.settings.max_generations = 4;
    assert_eq!(harness.state().refl.fit.settings.device, Device::Gpu);
    harness.get_by_label("Run fit").click();
    run_to_end(&mut harness, Duration::from_secs(300));
    let fit = &harness.state().refl.fit;
    let r = fit.result().unwrap_or_else(|| panic!("{:?}", fit.message()));
    println!("GPU: {} · χ² {:.1} → {:.3} in {:.2} s", r.engine, r.start_chi2, r.chi2, r.seconds);
    assert!(r.engine.starts_with("gpu f32 "), "{}", r.engine);
    assert_eq!(r.de.as_ref().map(|d| d.generations), Some(4));
    assert!(r.chi2 < r.start_chi2);
    assert!(r.stderr.is_some());
    harness.get_by_label_contains("batches on gpu f32");
}
