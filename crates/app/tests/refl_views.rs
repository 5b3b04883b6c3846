//! The reflectivity panel's resolution control, plot views and depth profile, in a headless
//! egui harness (CPU engine; kittest's default has no GPU device).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::time::{Duration, Instant};

use egui_kittest::kittest::Queryable as _;
use egui_kittest::Harness;
use scatterlab_app::{PlotView, ReflInputs, ScatterlabApp};
use scatterlab_refl::{compute_smeared, CurveRequest, Engine, Reflectivity, SmearedRequest};

/// The app as eframe would create it, in a window the size of the desktop default.
fn app() -> Harness<'static, ScatterlabApp> {
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_eframe(|cc| ScatterlabApp::new(cc))
}

/// Steps the harness until the panel has a result for its current inputs.
fn settle(harness: &mut Harness<'_, ScatterlabApp>) {
    let deadline = Instant::now() + Duration::from_secs(5);
    harness.step();
    while harness.state().refl.is_busy() {
        assert!(Instant::now() < deadline, "{}", harness.state().refl.status_text());
        std::thread::sleep(Duration::from_millis(5));
        harness.step();
    }
    harness.step();
}

/// The CPU `compute_smeared` reference for `inputs`.
fn smeared_reference(inputs: &ReflInputs) -> Reflectivity {
    let q = inputs.q_grid();
    let resolution = inputs.resolution();
    let request = SmearedRequest { curve: CurveRequest { stack: &inputs.stack, energy_ev: inputs.energy_ev, q: &q }, resolution: &resolution, smearing: Default::default() };
    pollster::block_on(compute_smeared(Engine::Cpu, &[request])).expect("valid smeared request").pop().expect("one curve")
}

#[test]
fn resolution_5_percent_smears_like_compute_smeared() {
    let mut harness = app();
    // At 250 eV, 2k0 ≈ 0.2534 Å⁻¹: keep the 5 % window (3.5σ ≈ 0.074·q) below it.
    harness.state_mut().refl.inputs.q_max = 0.2;
    settle(&mut harness);
    let sharp = harness.state().refl.curve().expect("sharp curve").reflectivity.clone();

    // Typed into the control, as a user would.
    harness.get_by_label("dQ/Q (FWHM, %)").click();
    harness.step();
    harness.get_by_label("dQ/Q (FWHM, %)").type_text("5");
    harness.key_press(egui::Key::Enter);
    settle(&mut harness);

    let panel = &harness.state().refl;
    assert_eq!(panel.inputs.resolution_pct, 5.0);
    let smeared = panel.curve().unwrap_or_else(|| panic!("{}", panel.status_text()));
    assert_ne!(smeared.reflectivity, sharp, "smearing must change the curve");
    let want = smeared_reference(&panel.inputs);
    for i in [0, 100, 250, 399] {
        assert_eq!(smeared.reflectivity.r_s[i], want.r_s[i], "R_s at q[{i}]");
        assert_eq!(smeared.reflectivity.r_p[i], want.r_p[i], "R_p at q[{i}]");
    }
    // Smearing damps the fringes: the curve is smoother than the sharp one.
    let roughness = |r: &[f64]| -> f64 { r.windows(3).map(|w| (w[0].log10() - 2.0 * w[1].log10() + w[2].log10()).abs()).sum() };
    assert!(roughness(&smeared.reflectivity.r_s) < roughness(&sharp.r_s));
}

#[test]
fn anisotropy_view_plots_the_anisotropy_ratio() {
    let mut harness = app();
    settle(&mut harness);
    assert_eq!(harness.state().refl.view, PlotView::LogR);
    harness.get_by_label(PlotView::Anisotropy.label()).click();
    harness.step();
    harness.step();

    let panel = &harness.state().refl;
    assert_eq!(panel.view, PlotView::Anisotropy);
    let curve = panel.curve().expect("curve");
    let want = curve.reflectivity.anisotropy();
    let series = panel.plotted_series();
    assert_eq!(series.len(), 1);
    assert_eq!(series[0].points.len(), curve.q.len());
    for (i, (p, (q, a))) in series[0].points.iter().zip(curve.q.iter().zip(&want)).enumerate() {
        assert_eq!(*p, [*q, *a], "point {i}");
        assert!(a.abs() <= 1.0);
    }
    // R·q⁴ is log10 of R·q⁴, for both polarisations.
    harness.get_by_label(PlotView::RQ4.label()).click();
    harness.step();
    let panel = &harness.state().refl;
    let curve = panel.curve().expect("curve");
    let series = panel.plotted_series();
    let (q, r) = (curve.q[123], curve.reflectivity.r_p[123]);
    assert_eq!(series[1].name, "R_p");
    assert!((series[1].points[123][1] - (r * q.powi(4)).log10()).abs() < 1e-12);
}

#[test]
fn depth_profile_ends_in_the_substrate_and_follows_the_stack() {
    let mut harness = app();
    settle(&mut harness);
    let panel = &harness.state().refl;
    let profile = panel.profile();
    assert_eq!(profile.z.len(), 400);
    let substrate = *panel.inputs.stack.layers.last().expect("substrate");
    let bottom = profile.constants.last().expect("samples");
    assert!((bottom.delta_o - substrate.delta_o).abs() < 1e-15, "{bottom:?}");
    assert!((bottom.beta_e - substrate.beta_e).abs() < 1e-15, "{bottom:?}");
    // Vacuum on top, up to the erf tail of the first interface (4σ + 10 Å above it).
    assert!(profile.constants[0].delta_o.abs() < 1e-12, "{:?}", profile.constants[0]);
    // The profile's legend names δ_e (besides the layer table's column header).
    assert!(harness.get_all_by_label("δ_e").count() >= 2);

    harness.state_mut().refl.inputs.stack.layers[3].delta_o = 7.0e-3;
    settle(&mut harness);
    let bottom = *harness.state().refl.profile().constants.last().expect("samples");
    assert!((bottom.delta_o - 7.0e-3).abs() < 1e-15, "{bottom:?}");
}

#[test]
fn too_wide_resolution_near_2k0_clamps_the_grid_not_a_panic() {
    let mut harness = app();
    settle(&mut harness);
    harness.state_mut().refl.inputs.resolution_pct = 20.0;
    settle(&mut harness);

    // The smearing window of the last points would reach past 2k0: those points are left out
    // (q < 2k0 / (1 + 6σ/q)), the rest is smeared and plotted, and the note says so.
    let panel = &harness.state().refl;
    let cutoff = panel.inputs.q_cutoff();
    let want = 0.25335 / (1.0 + 6.0 * 0.2 / 2.354_820_045);
    assert!((cutoff - want).abs() < 1e-4, "{cutoff} vs {want}");
    match panel.curve() {
        Some(curve) => {
            assert!(*curve.q.last().expect("points") < cutoff);
            assert_eq!(curve.q, panel.inputs.valid_q_grid());
            assert!(curve.reflectivity.r_s.iter().all(|r| r.is_finite()));
        }
        // The converged rule may still refuse a 20 % window for its node count: an error
        // naming that, never the 2k0 window.
        None => {
            let error = panel.error().unwrap_or_default();
            assert!(!error.contains("beyond 2k0"), "{error}");
            assert!(error.contains("nodes"), "{error}");
        }
    }
    assert!(harness.state().refl.inputs.is_clamped());

    harness.state_mut().refl.inputs.resolution_pct = 0.0;
    settle(&mut harness);
    assert!(harness.state().refl.curve().is_some());
}
