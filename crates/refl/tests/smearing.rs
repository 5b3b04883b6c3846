//! The converged smearing scheme against an independent dense quadrature of the full Gaussian
//! convolution (issue 21 deliverable 4): R(q) from the CPU recursion on a uniform grid of step
//! 2e-6 Å⁻¹, composite Simpson over ±10σ around each point (≥ 400 intervals per curve point, ≥ 20
//! per σ, ≥ 1500 per fringe period), mirrored below q = 0 as the convolution of R(|q|). Every
//! case must agree within 1e-4 relative; the refnx17 scheme's error is printed for the record.
//! The GPU in df64 (`Engine::GpuDf64`, R at the nodes from the 4×4 kernel, fold in f64) is held to
//! the same 1e-4; the f32 recursion's error is printed beside it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use scatterlab_refl::resolution::{expand_nodes, Smearing, StackScales, FWHM_PER_SIGMA};
use scatterlab_refl::{compute, compute_smeared, CurveRequest, Engine, Layer, Resolution, SmearedRequest, Stack};

const ENERGY_EV: f64 = 8048.0;
const GRID_STEP: f64 = 2e-6;

/// 20 × [Ni 40 Å / Ti 60 Å] on Si at Cu Kα (absorbing, deep minima between Bragg peaks).
fn multilayer() -> Stack {
    let (ni, ti) = (Layer::isotropic(40.0, 3.0, 2.48e-5, 5.7e-7), Layer::isotropic(60.0, 3.0, 1.36e-5, 1.9e-6));
    let mut layers = vec![Layer::VACUUM];
    for _ in 0..20 {
        layers.extend([ni, ti]);
    }
    layers.push(Layer::isotropic(0.0, 3.0, 7.6e-6, 1.75e-7));
    Stack { layers }
}

/// A 1200 Å weakly absorbing film on Si: two sharp critical edges and dense fringes.
fn thick_film() -> Stack {
    Stack { layers: vec![Layer::VACUUM, Layer::isotropic(1200.0, 4.0, 1.0e-5, 1.5e-8), Layer::isotropic(0.0, 2.0, 7.6e-6, 1.75e-7)] }
}

/// R_s on the uniform reference grid g_k = k·h, k = 0..n (g_0 replaced by h/2: R(0) is 1 in the limit).
fn reference_grid(stack: &Stack, q_top: f64) -> Vec<f64> {
    let n = (q_top / GRID_STEP).ceil() as usize + 1;
    let grid: Vec<f64> = (0..n).map(|k| if k == 0 { 0.5 * GRID_STEP } else { k as f64 * GRID_STEP }).collect();
    let request = CurveRequest { stack, energy_ev: ENERGY_EV, q: &grid };
    pollster::block_on(compute(Engine::Cpu, &[request])).unwrap().remove(0).r_s
}

/// Composite Simpson of R(|ν|) φ((ν − q)/σ)/σ over ν ∈ q ± 10σ on the reference grid (an even
/// number of grid intervals starting on a grid point; the window shifts by < h, where φ < 1e-21).
fn reference_point(r: &[f64], q: f64, sigma: f64) -> f64 {
    let h = GRID_STEP;
    let start = ((q - 10.0 * sigma) / h).floor() as i64;
    let intervals = (((20.0 * sigma) / h).ceil() as i64 + 1) / 2 * 2;
    let mut sum = 0.0;
    for k in 0..=intervals {
        let idx = start + k;
        let nu = idx as f64 * h;
        let value = r[idx.unsigned_abs() as usize];
        let simpson = if k == 0 || k == intervals {
            1.0
        } else if k % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let z = (nu - q) / sigma;
        sum += simpson * value * (-0.5 * z * z).exp();
    }
    sum * h / 3.0 / (sigma * (2.0 * std::f64::consts::PI).sqrt())
}

fn smeared(stack: &Stack, q: &[f64], resolution: &Resolution, smearing: Smearing) -> Vec<f64> {
    smeared_on(Engine::Cpu, stack, q, resolution, smearing)
}

fn smeared_on(engine: Engine<'_>, stack: &Stack, q: &[f64], resolution: &Resolution, smearing: Smearing) -> Vec<f64> {
    let request = SmearedRequest { curve: CurveRequest { stack, energy_ev: ENERGY_EV, q }, resolution, smearing };
    pollster::block_on(compute_smeared(engine, &[request])).unwrap().remove(0).r_s
}

/// The dense reference at every point of `q`.
fn dense_reference(q: &[f64], resolution: &Resolution, r: &[f64]) -> Vec<f64> {
    let sigma = |i: usize| match resolution {
        Resolution::ConstantDqOverQ(f) => f * q[i] / FWHM_PER_SIGMA,
        Resolution::Pointwise(dq) => dq[i] / FWHM_PER_SIGMA,
        Resolution::None => 0.0,
    };
    (0..q.len()).map(|i| reference_point(r, q[i], sigma(i))).collect()
}

/// Largest relative error of `got` against `reference`, and where.
fn worst_rel(got: &[f64], reference: &[f64]) -> (f64, usize) {
    got.iter().zip(reference).enumerate().map(|(i, (g, r))| (((g - r) / r).abs(), i)).fold((0.0, 0), |a, b| if b.0 > a.0 || b.0.is_nan() { b } else { a })
}

/// Largest relative error of each scheme against the reference, and the converged node counts.
fn check(name: &str, stack: &Stack, q: &[f64], resolution: &Resolution, r: &[f64]) {
    let reference = dense_reference(q, resolution, r);
    let worst = |got: &[f64]| worst_rel(got, &reference);
    let converged = smeared(stack, q, resolution, Smearing::Converged);
    let (err, at) = worst(&converged);
    let (old, old_at) = worst(&smeared(stack, q, resolution, Smearing::Refnx17));
    let nodes = expand_nodes(q, resolution, ENERGY_EV, Smearing::Converged, &StackScales::of_stack(stack, ENERGY_EV)).unwrap();
    eprintln!(
        "{name}: converged {err:.2e} (q = {:.4}), refnx17 {old:.2e} (q = {:.4}); nodes per point {}..{} (mean {:.0})",
        q[at],
        q[old_at],
        nodes.offsets.windows(2).map(|w| w[1] - w[0]).min().unwrap(),
        nodes.max_per_point(),
        nodes.q.len() as f64 / q.len() as f64
    );
    assert!(err <= 1e-4, "{name}: converged smearing is {err:.3e} off the dense reference at q = {} (R = {})", q[at], reference[at]);
}

fn grid(from: f64, to: f64, n: usize) -> Vec<f64> {
    (0..n).map(|i| from + (to - from) * i as f64 / (n - 1) as f64).collect()
}

#[test]
fn multilayer_deep_minima_equal_dense_convolution() {
    let stack = multilayer();
    // Through the critical edge, the Bragg peaks and the deep minima between them.
    let q: Vec<f64> = grid(0.01, 0.06, 40).into_iter().chain(grid(0.061, 0.5, 90)).collect();
    let r = reference_grid(&stack, 0.5 * 1.45 + 0.01);
    for percent in [1.0, 5.0, 10.0] {
        check(&format!("Ni/Ti multilayer, dQ/Q {percent} %"), &stack, &q, &Resolution::ConstantDqOverQ(percent / 100.0), &r);
    }
    let dq: Vec<f64> = q.iter().map(|q| 3e-4 + 0.03 * q).collect();
    check("Ni/Ti multilayer, pointwise dQ", &stack, &q, &Resolution::Pointwise(dq), &r);
}

#[test]
fn thick_film_through_critical_edge_equals_dense_convolution() {
    let stack = thick_film();
    let q: Vec<f64> = grid(0.005, 0.05, 60).into_iter().chain(grid(0.051, 0.3, 60)).collect();
    let r = reference_grid(&stack, 0.3 * 1.45 + 0.01);
    for percent in [1.0, 5.0, 10.0] {
        check(&format!("1200 Å film, dQ/Q {percent} %"), &stack, &q, &Resolution::ConstantDqOverQ(percent / 100.0), &r);
    }
    let dq: Vec<f64> = q.iter().map(|q| 2e-4 + 0.02 * q).collect();
    check("1200 Å film, pointwise dQ", &stack, &q, &Resolution::Pointwise(dq), &r);
}

/// The converged scheme on the GPU in df64 against the dense reference (same 1e-4 gate as the
/// CPU), with the f32 recursion's error printed for the record.
fn check_gpu(name: &str, pipeline: &scatterlab_refl::gpu::ParrattGpu, stack: &Stack, q: &[f64], resolution: &Resolution, r: &[f64]) {
    let reference = dense_reference(q, resolution, r);
    let (err, at) = worst_rel(&smeared_on(Engine::GpuDf64(pipeline), stack, q, resolution, Smearing::Converged), &reference);
    let (f32_err, f32_at) = worst_rel(&smeared_on(Engine::Gpu(pipeline), stack, q, resolution, Smearing::Converged), &reference);
    eprintln!("{name}: GPU df64 {err:.2e} (q = {:.4}), GPU f32 {f32_err:.2e} (q = {:.4})", q[at], q[f32_at]);
    assert!(err <= 1e-4, "{name}: GPU df64 smearing is {err:.3e} off the dense reference at q = {} (R = {})", q[at], reference[at]);
}

#[test]
fn gpu_df64_smearing_equals_dense_convolution() {
    let Some(pipeline) = common::general_pipeline() else { return };
    let film = thick_film();
    let q: Vec<f64> = grid(0.005, 0.05, 30).into_iter().chain(grid(0.051, 0.3, 30)).collect();
    let r = reference_grid(&film, 0.3 * 1.45 + 0.01);
    for percent in [1.0, 5.0, 10.0] {
        check_gpu(&format!("1200 Å film, dQ/Q {percent} %"), pipeline, &film, &q, &Resolution::ConstantDqOverQ(percent / 100.0), &r);
    }
    let dq: Vec<f64> = q.iter().map(|q| 2e-4 + 0.02 * q).collect();
    check_gpu("1200 Å film, pointwise dQ", pipeline, &film, &q, &Resolution::Pointwise(dq), &r);
    // The multilayer's deep minima, through the critical edge and the first Bragg peaks.
    let multilayer = multilayer();
    let q: Vec<f64> = grid(0.01, 0.06, 20).into_iter().chain(grid(0.061, 0.3, 30)).collect();
    let r = reference_grid(&multilayer, 0.3 * 1.45 + 0.01);
    check_gpu("Ni/Ti multilayer, dQ/Q 5 %", pipeline, &multilayer, &q, &Resolution::ConstantDqOverQ(0.05), &r);
}

#[test]
fn a_point_needing_too_many_nodes_is_a_named_error() {
    // 10 µm film at 10 % dQ/Q: at q = 0.05 already 12σD ≈ 2550 panels (25 500 nodes), past the cap.
    let stack = Stack { layers: vec![Layer::VACUUM, Layer::isotropic(1e5, 0.0, 1e-5, 1e-7), Layer::isotropic(0.0, 0.0, 7.6e-6, 1.75e-7)] };
    let resolution = Resolution::ConstantDqOverQ(0.1);
    let request = SmearedRequest { curve: CurveRequest { stack: &stack, energy_ev: ENERGY_EV, q: &[0.05, 0.1] }, resolution: &resolution, smearing: Smearing::Converged };
    match pollster::block_on(compute_smeared(Engine::Cpu, &[request])) {
        Err(scatterlab_refl::ReflError::Input(e)) => {
            assert_eq!(e.object, "curve 0: q[0]");
            assert!(e.to_string().contains("refnx17"), "{e}");
        }
        other => panic!("expected an input error, got {other:?}"),
    }
    // The refnx scheme has a fixed 17 nodes and still evaluates it.
    let request = SmearedRequest { smearing: Smearing::Refnx17, ..request };
    assert!(pollster::block_on(compute_smeared(Engine::Cpu, &[request])).is_ok());
}

#[test]
fn model_json_selects_the_scheme_per_dataset() {
    use scatterlab_refl::model::{BuiltStack, Model};
    let mut v: serde_json::Value = serde_json::from_str(include_str!("data/models/film_two_energies.json")).unwrap();
    v["datasets"][0]["instrument"]["smearing"] = "refnx17".into();
    let model = Model::from_json(&v.to_string()).unwrap();
    let values = model.values().to_vec();
    let curves = pollster::block_on(model.evaluate(Engine::Cpu, &[&values])).unwrap().remove(0);
    let BuiltStack::Uniaxial(stack) = model.stack(0, &values).unwrap() else { panic!("uniaxial expected") };
    let names = model.parameter_names();
    let get = |n: &str| values[names.iter().position(|x| x == n).unwrap()];
    let q: Vec<f64> = model.datasets()[0].q.iter().map(|q| q + get("q_shift")).collect();
    let resolution = Resolution::ConstantDqOverQ(get("res"));
    let curve = CurveRequest { stack: &stack, energy_ev: 250.0 + get("e_shift"), q: &q };
    let direct = |smearing| pollster::block_on(compute_smeared(Engine::Cpu, &[SmearedRequest { curve, resolution: &resolution, smearing }])).unwrap().remove(0).r_s;
    let (old, new) = (direct(Smearing::Refnx17), direct(Smearing::Converged));
    for (m, r) in curves[0].iter().zip(&old) {
        let expect = get("scale") * r + get("bkg");
        assert!((m - expect).abs() <= 1e-15 * expect, "{m} vs refnx17 {expect}");
    }
    assert!(old != new, "the scheme made no difference");
    // The other dataset keeps the default (converged) scheme; the choice survives a round trip.
    let text = model.to_json(&values).unwrap();
    assert_eq!(text.matches("refnx17").count(), 1, "{text}");
    let err = Model::from_json(&v.to_string().replace("refnx17", "refnx18")).unwrap_err().to_string();
    assert!(err.contains("refnx18"), "{err}");
}
