//! Gradients of Bloch-wave intensities against Richardson-extrapolated central differences on
//! the fixture cases (`shared/fixtures/bloch/reference.json`), plan §6: every free position,
//! U, occupancy, the thickness and ω_{x,y,z}, with the optics and beam sets frozen. Gate per
//! parameter: max |J − J_FD| ≤ 1e-6·max(max |J|, 1e-6). Run with `--nocapture` for the table.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

#[path = "support/bloch_models.rs"]
mod support;

use num_complex::Complex64;
use scatterlab_bloch::crystal::AsymmetricUnit;
use scatterlab_bloch::gradient::params::displaced;
use scatterlab_bloch::gradient::structure_factor::structure_factor_jvp;
use scatterlab_bloch::gradient::{GradientModel, Param};
use scatterlab_bloch::pattern::Simulation;
use scatterlab_bloch::StructureFactors;
use support::{asu, case_model, case_model_at, model_of};

const GATE: f64 = 1e-6;

/// The finite-difference step of each kind of parameter. Ten times the plan's (§6: 1e-6 for
/// positions, U, occupancy, 1e-7 rad for ω), measured: the eigensolver rounds I to ~2e-15 (urea,
/// 300 kV) … 2e-12 (800 Å, rocking), and Richardson's noise ≈ 3·δI/h then exceeded the gate on
/// small columns (urea O1 occupancy, max|J| 6e-3: 1.0e-6 relative; rocking ω_z, max|J| 4: 6.5e-6).
/// At 1e-5 the noise is 10× lower and the truncation (h/scale)⁴ stays ≤ 1e-10 for every scale
/// here (positions 1/(2π|h|) ≳ 0.01, U 1/(2π²|g|²) ≳ 3e-3 Å², ω the rocking width ≳ 1e-3 rad).
fn step(param: &Param) -> f64 {
    match param {
        Param::Thickness { .. } => 1e-3,
        // I is a low-order function of occupancy (scale ~1): the larger step costs nothing and
        // resolves hydrogen's tiny columns (urea H1, max|J| 3e-4: 2.0e-6 relative at 1e-5).
        Param::Occupancy { .. } => 1e-4,
        _ => 1e-5,
    }
}

/// Richardson noise bound for a column the model gives as exactly zero (ω_z of a static frame:
/// a rotation about the beam leaves every Sg and M unchanged): I rounding / h with margin.
const ZERO_COLUMN_NOISE: f64 = 1e-5;

/// (4·D(h/2) − D(h))/3 with D(h) the central difference of the intensities.
fn richardson(model: &GradientModel, param: &Param) -> Vec<f64> {
    let h = step(param);
    let central = |h: f64| -> Vec<f64> {
        let plus = model.displaced(param, h).unwrap().intensities().unwrap();
        let minus = model.displaced(param, -h).unwrap().intensities().unwrap();
        plus.iter().zip(&minus).map(|(p, m)| (p - m) / (2.0 * h)).collect()
    };
    let (full, half) = (central(h), central(h / 2.0));
    full.iter().zip(&half).map(|(f, h)| (4.0 * h - f) / 3.0).collect()
}

/// Checks the forward Jacobian of every free parameter against finite differences; returns the
/// worst gated ratio max|J − J_FD| / max(max|J|, 1e-6).
fn check_against_fd(name: &str, model: &GradientModel) -> f64 {
    let params = model.all_params().unwrap();
    let jacobian = model.jacobian(&params).unwrap();
    let mut worst: f64 = 0.0;
    for (param, column) in params.iter().zip(&jacobian) {
        let fd = richardson(model, param);
        let largest = column.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        if largest == 0.0 {
            // The plan's floor 1e-6·1e-6 would ask FD for |J_FD| ≤ 1e-12, below its rounding noise.
            let noise = fd.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
            println!("{name:<24} {param:<40} J ≡ 0, max|J_FD| {noise:.2e} (FD noise)", param = format!("{param:?}"));
            assert!(noise <= ZERO_COLUMN_NOISE, "{name} {param:?}: J ≡ 0 but FD {noise:e}");
            continue;
        }
        let scale = largest.max(1e-6);
        let error = column.iter().zip(&fd).map(|(j, f)| (j - f).abs()).fold(0.0, f64::max) / scale;
        println!("{name:<24} {param:<40} max|J| {scale:9.3e}  rel. error {error:.2e}", param = format!("{param:?}"));
        assert!(error <= GATE, "{name} {param:?}: relative error {error:e}");
        worst = worst.max(error);
    }
    println!("{name}: {} parameters, {} rows, worst relative error {worst:.2e}", params.len(), model.rows().len());
    worst
}

/// Adjacent eigenvalue pairs closer than 1e-10·max|μ| in the first tilt of frame 0.
fn degenerate_pairs(model: &GradientModel) -> usize {
    let tilt = &model.solve_frame(0).unwrap()[0];
    let mu = tilt.propagator.eigenvalues().expect("eigen path");
    let scale = mu.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
    mu.windows(2).filter(|w| (w[1] - w[0]).abs() < 1e-10 * scale).count()
}

#[test]
fn structure_factor_derivatives_vs_fd() {
    for (crystal, absorption) in [("quartz_aniso", false), ("urea", false), ("SrTiO3", true)] {
        let asu = asu(crystal);
        let energy = 200e3;
        let table = |asu: &AsymmetricUnit| StructureFactors::compute(&asu.expand().0, 2.5, energy, absorption).unwrap();
        let base = table(&asu);
        let support: Vec<[i32; 3]> = base.hkl().to_vec();
        let max_f = base.values().iter().fold(0.0_f64, |m, v| m.max(v.norm()));
        let params: Vec<Param> = {
            let model_params = |site: usize| {
                let mut p: Vec<Param> = (0..asu.position_basis(site).unwrap().len()).map(|dir| Param::Position { site, dir }).collect();
                match asu.sites[site].displacement {
                    scatterlab_bloch::Displacement::Iso(_) => p.push(Param::Uiso { site }),
                    scatterlab_bloch::Displacement::Aniso(_) => p.extend((0..asu.adp_basis(site).unwrap().len()).map(|dir| Param::Uaniso { site, dir })),
                }
                p.push(Param::Occupancy { site });
                p
            };
            (0..asu.sites.len()).flat_map(model_params).collect()
        };
        let analytic = structure_factor_jvp(&asu, &base, energy, absorption, &params, &support).unwrap();
        let mut worst: f64 = 0.0;
        for (param, row) in params.iter().zip(&analytic) {
            let central = |h: f64| -> Vec<Complex64> {
                let plus = table(&displaced(&asu, param, h).unwrap());
                let minus = table(&displaced(&asu, param, -h).unwrap());
                plus.values().iter().zip(minus.values()).map(|(p, m)| (p - m) / (2.0 * h)).collect()
            };
            let (full, half) = (central(1e-6), central(5e-7));
            let error = row.iter().zip(full.iter().zip(&half)).map(|(a, (f, h))| (a - (4.0 * h - f) / 3.0).norm()).fold(0.0, f64::max) / max_f;
            assert!(error <= 1e-8, "{crystal} {param:?}: {error:e}");
            worst = worst.max(error);
        }
        println!("dF {crystal} (absorption {absorption}): {} parameters × {} hkl, worst |ΔF|/max|F| {worst:.2e}", params.len(), support.len());
    }
}

#[test]
fn static_cases_vs_fd() {
    for id in ["quartz_aniso-200kV-05", "urea-300kV-11", "Si-200kV-03"] {
        check_against_fd(id, &case_model(id));
    }
}

#[test]
fn degenerate_zone_axes_vs_fd() {
    // Si [001] (4-fold, 2-D irreps); the fixture's Si-200kV-00 is [110] (2mm, 1-D irreps only).
    let si = asu("Si");
    let simulation = Simulation {
        name: "Si [001]".to_owned(),
        direct: si.cell.direct_matrix(),
        orientation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        energy_ev: 200e3,
        g_solve_inv_a: 1.6,
        sg_max_inv_a: 0.04,
        thicknesses_a: vec![50.0, 100.0, 200.0, 400.0, 800.0],
        absorption: false,
        rocking: None,
    };
    let mut cases = vec![("Si [001]".to_owned(), model_of("Si", &simulation, 3.7))];
    cases.push(("SrTiO3-200kV-07".to_owned(), case_model("SrTiO3-200kV-07")));
    // The two 185- and 163-beam zone axes with 22 and 20 parameters: release builds, or any build
    // with SCATTERLAB_SLOW_TESTS set (kept out of the 2-core debug CI run).
    if cfg!(not(debug_assertions)) || std::env::var_os("SCATTERLAB_SLOW_TESTS").is_some() {
        for id in ["urea-200kV-10", "quartz_aniso-200kV-04"] {
            cases.push((id.to_owned(), case_model(id)));
        }
    }
    for (name, model) in &cases {
        let pairs = degenerate_pairs(model);
        let a = &model.solve_frame(0).unwrap()[0].geometry.matrix.a;
        let real = (0..a.nrows()).all(|i| (0..a.ncols()).all(|j| a[(i, j)].im == 0.0));
        println!("{name}: {pairs} degenerate eigenvalue pairs, real symmetric A: {real}");
        // SrTiO3 (m-3m at the origin) exercises the real-symmetric eigen path.
        assert!(real || !name.starts_with("SrTiO3"), "{name}: A should be real");
        assert!(pairs >= 5, "{name}: only {pairs} degenerate eigenvalue pairs; the test would not exercise degeneracy");
        check_against_fd(name, model);
    }
}

#[test]
fn rocking_cases_vs_fd() {
    for id in ["quartz_aniso-200kV-13", "Si-200kV-12"] {
        check_against_fd(id, &case_model(id));
    }
}

#[test]
fn reverse_equals_forward() {
    // SrTiO3 (inversion at the origin): the real-symmetric path, Im Ā skipped.
    for id in ["quartz_aniso-200kV-13", "urea-300kV-11", "SrTiO3-200kV-07"] {
        let model = case_model(id);
        let params = model.all_params().unwrap();
        let rows = model.rows().len();
        // Deterministic pseudo-random cotangents in [−1, 1).
        let cotangent: Vec<f64> = (0..rows).map(|i| ((i as f64 * 0.618_033_988_75).fract() * 2.0) - 1.0).collect();
        let jacobian = model.jacobian(&params).unwrap();
        let reverse = model.loss_gradient(&cotangent, &params).unwrap();
        let mut worst: f64 = 0.0;
        for ((param, column), r) in params.iter().zip(&jacobian).zip(&reverse) {
            let forward: f64 = column.iter().zip(&cotangent).map(|(j, c)| j * c).sum();
            let scale: f64 = column.iter().zip(&cotangent).map(|(j, c)| (j * c).abs()).sum::<f64>().max(1e-12);
            let error = (forward - r).abs() / scale;
            assert!(error <= 1e-10, "{id} {param:?}: forward {forward} reverse {r}");
            worst = worst.max(error);
        }
        println!("{id}: reverse vs forward over {} parameters, worst relative difference {worst:.2e}", params.len());
    }
}

#[test]
fn absorptive_case_vs_fd() {
    // SrTiO3 [001] with absorption through the Taylor path (forward duals and discrete adjoint);
    // 50 and 100 Å by default (the Taylor cost grows with t), all five thicknesses when slow.
    let slow = cfg!(not(debug_assertions)) || std::env::var_os("SCATTERLAB_SLOW_TESTS").is_some();
    let model = case_model_at("SrTiO3-200kV-09", if slow { None } else { Some(&[50.0, 100.0]) });
    check_against_fd("SrTiO3-200kV-09 (absorptive)", &model);
    let params = model.all_params().unwrap();
    let cotangent: Vec<f64> = (0..model.rows().len()).map(|i| ((i as f64 * 0.618_033_988_75).fract() * 2.0) - 1.0).collect();
    let jacobian = model.jacobian(&params).unwrap();
    let reverse = model.loss_gradient(&cotangent, &params).unwrap();
    for ((param, column), r) in params.iter().zip(&jacobian).zip(&reverse) {
        let forward: f64 = column.iter().zip(&cotangent).map(|(j, c)| j * c).sum();
        let scale: f64 = column.iter().zip(&cotangent).map(|(j, c)| (j * c).abs()).sum::<f64>().max(1e-12);
        assert!((forward - r).abs() <= 1e-10 * scale, "{param:?}: forward {forward} reverse {r}");
    }
}

#[test]
fn eigen_and_taylor_gradients_agree() {
    for id in ["quartz_aniso-200kV-13", "urea-300kV-11"] {
        let eigen = case_model(id);
        let taylor = eigen.clone().with_taylor(true);
        let params = eigen.all_params().unwrap();
        let (je, jt) = (eigen.jacobian(&params).unwrap(), taylor.jacobian(&params).unwrap());
        let mut worst: f64 = 0.0;
        for (param, (ce, ct)) in params.iter().zip(je.iter().zip(&jt)) {
            let scale = ce.iter().fold(0.0_f64, |m, v| m.max(v.abs())).max(1e-6);
            let error = ce.iter().zip(ct).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max) / scale;
            assert!(error <= 1e-9, "{id} {param:?}: eigen vs Taylor {error:e}");
            worst = worst.max(error);
        }
        println!("{id}: eigen vs Taylor Jacobians over {} parameters, worst relative difference {worst:.2e}", params.len());
    }
}
