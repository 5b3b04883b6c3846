//! Browser tests (headless Chromium, WebGPU on SwiftShader), run by `scripts/test-browser.sh`:
//! the WGSL reflectivity kernel on WebGPU against the f64 CPU twin in the same wasm, on fresh
//! pseudo-random stacks and on the 40 fixture cases; bad inputs reject instead of panicking.
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use js_sys::{Float64Array, Reflect};
use scatterlab_core::DeviceKind;
use scatterlab_refl::cases::parse_cases;
use scatterlab_refl::{Layer, Reflectivity, Stack};
use scatterlab_web::{Scatterlab, Session};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

mod common;
use common::Rng;

wasm_bindgen_test_configure!(run_in_browser);

/// `shared/fixtures` sits beside the repository (here and in CI's fresh clone).
const FIXTURE: &str = include_str!("../../../../shared/fixtures/refl/reference.json");

/// The README's gate for the f32 GPU kernel, and for the same comparison on random stacks.
const GPU_REL_TOL: f64 = 2e-3;
/// Random stacks only: an absolute floor for reflectances below ~1e-7, where f32 interference
/// cancellation dominates (the same rule as the native twin test, crates/refl/tests/gpu_twin.rs).
const GPU_ABS_FLOOR: f64 = 1e-10;
/// The f64 CPU twin against the 40-digit reference.
const CPU_REL_TOL: f64 = 1e-9;

async fn gpu_session() -> Session {
    let session = Session::new(DeviceKind::Gpu).await.unwrap_or_else(|e| panic!("no WebGPU session: {e}"));
    let info = session.adapter_info().expect("gpu session has an adapter");
    console_log!(
        "WebGPU adapter: name {:?}, vendor {:#x}, device {:#x}, type {:?}, driver {:?} {:?}, backend {:?} ({})",
        info.name,
        info.vendor,
        info.device,
        info.device_type,
        info.driver,
        info.driver_info,
        info.backend,
        session.backend()
    );
    session
}

/// Largest |got − want| / (|want| + floor / tol), i.e. the relative deviation with an absolute
/// floor, and its index.
fn max_rel(got: &[f64], want: &[f64], tol: f64, floor: f64) -> (f64, usize) {
    assert_eq!(got.len(), want.len());
    got.iter().zip(want).enumerate().map(|(i, (g, w))| ((g - w).abs() / (w.abs() + floor / tol), i)).fold((0.0, 0), |m, v| if v.0 > m.0 || v.0.is_nan() { v } else { m })
}

/// Compares R_s and R_p: |got − want| ≤ tol·|want| + floor. Returns the worst deviation (relative,
/// floor included) and appends failure lines.
#[allow(clippy::too_many_arguments)]
fn compare(label: &str, q: &[f64], got: &Reflectivity, want_s: &[f64], want_p: &[f64], tol: f64, floor: f64, failures: &mut Vec<String>) -> f64 {
    let mut worst = 0.0f64;
    for (pol, g, w) in [("R_s", &got.r_s, want_s), ("R_p", &got.r_p, want_p)] {
        let (rel, i) = max_rel(g, w, tol, floor);
        worst = if rel.is_nan() { f64::NAN } else { worst.max(rel) };
        // NaN counts as a failure.
        if rel.is_nan() || rel > tol {
            failures.push(format!("{label} {pol}: rel {rel:.3e} at q[{i}] = {} (got {:e}, want {:e})", q[i], g[i], w[i]));
        }
    }
    worst
}

/// A random curve in the fixture's regimes: soft X-ray uniaxial films near the carbon edge, or
/// hard X-ray stacks; vacuum on top, 1–6 films, anisotropic layers, q within (0, 2k0).
fn random_curve(rng: &mut Rng) -> (f64, Vec<f64>, Stack) {
    let soft = rng.unit() < 0.5;
    let (energy, delta_range, q_frac_max) = if soft { (rng.range(250.0, 320.0), (1e-3, 7e-3), 0.9) } else { (rng.range(5_000.0, 18_000.0), (5e-6, 5e-5), 0.06) };
    let k0 = scatterlab_core::units::photon_k0(energy);
    let n_films = 1 + (rng.next_u64() % 6) as usize;
    let mut layers = vec![Layer::VACUUM];
    for j in 0..=n_films {
        let substrate = j == n_films;
        let delta_o = rng.log_range(delta_range.0, delta_range.1);
        let beta_o = delta_o * rng.log_range(0.01, 0.5);
        let (delta_e, beta_e) = if rng.unit() < 0.5 { (delta_o, beta_o) } else { (delta_o * rng.range(0.7, 1.3), beta_o * rng.range(0.7, 1.3)) };
        layers.push(Layer { thickness: if substrate { 0.0 } else { rng.range(10.0, 400.0) }, roughness: rng.range(0.0, 8.0), delta_o, beta_o, delta_e, beta_e });
    }
    let n_q = 50 + (rng.next_u64() % 150) as usize;
    let q_max = q_frac_max * 2.0 * k0;
    let q_min = 0.004;
    let q = (0..n_q).map(|i| q_min + (q_max - q_min) * i as f64 / (n_q - 1) as f64).collect();
    (energy, q, Stack { layers })
}

#[wasm_bindgen_test]
async fn webgpu_kernel_matches_cpu_twin_on_random_stacks() {
    let gpu = gpu_session().await;
    let cpu = Session::new(DeviceKind::Cpu).await.unwrap();
    // Fresh stacks every run; the seed is printed so that a failure can be replayed.
    let seed = js_sys::Date::now() as u64;
    console_log!("random stacks: seed {seed}");
    let mut rng = Rng(seed);
    let mut failures = Vec::new();
    let mut worst = 0.0f64;
    let n_curves = 24;
    for c in 0..n_curves {
        let (energy, q, stack) = random_curve(&mut rng);
        let want = cpu.reflectivity(energy, &q, &stack).await.unwrap();
        let got = gpu.reflectivity(energy, &q, &stack).await.unwrap();
        let label = format!("seed {seed} curve {c} ({energy:.1} eV, {} layers)", stack.layers.len());
        let w = compare(&label, &q, &got, &want.r_s, &want.r_p, GPU_REL_TOL, GPU_ABS_FLOOR, &mut failures);
        worst = if w.is_nan() { w } else { worst.max(w) };
    }
    console_log!("random stacks: {n_curves} curves, worst GPU/CPU relative deviation {worst:.3e} on {}", gpu.backend());
    assert!(failures.is_empty(), "{} curves beyond {GPU_REL_TOL:e}·R + {GPU_ABS_FLOOR:e}:\n{}", failures.len(), failures.join("\n"));
}

/// One fixture case: id, energy, q, stack, expected_hp R_s and R_p.
type FixtureCase = (String, f64, Vec<f64>, Stack, Vec<f64>, Vec<f64>);

/// The fixture's inputs plus the `expected_hp` columns.
fn fixture_cases() -> Vec<FixtureCase> {
    let raw: serde_json::Value = serde_json::from_str(FIXTURE).unwrap();
    let parsed = parse_cases(FIXTURE).unwrap();
    assert_eq!(parsed.len(), 40, "reference.json should hold 40 cases");
    parsed
        .into_iter()
        .zip(raw["cases"].as_array().unwrap())
        .map(|(p, v)| {
            let input = p.input.unwrap();
            let col = |k: &str| v["expected_hp"][k].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect::<Vec<_>>();
            let stack = input.stack().unwrap();
            (p.id, input.energy_ev, input.q, stack, col("R_s"), col("R_p"))
        })
        .collect()
}

#[wasm_bindgen_test]
async fn webgpu_and_cpu_match_fixture_expected_hp() {
    let gpu = gpu_session().await;
    let cpu = Session::new(DeviceKind::Cpu).await.unwrap();
    let mut failures = Vec::new();
    let (mut worst_gpu, mut worst_cpu) = (0.0f64, 0.0f64);
    for (id, energy, q, stack, want_s, want_p) in fixture_cases() {
        let got = gpu.reflectivity(energy, &q, &stack).await.unwrap_or_else(|e| panic!("{id} on gpu: {e}"));
        worst_gpu = worst_gpu.max(compare(&format!("{id} gpu"), &q, &got, &want_s, &want_p, GPU_REL_TOL, 0.0, &mut failures));
        let got = cpu.reflectivity(energy, &q, &stack).await.unwrap_or_else(|e| panic!("{id} on cpu: {e}"));
        worst_cpu = worst_cpu.max(compare(&format!("{id} cpu"), &q, &got, &want_s, &want_p, CPU_REL_TOL, 0.0, &mut failures));
    }
    console_log!("fixture: 40 cases, worst relative deviation from expected_hp: gpu f32 {worst_gpu:.3e} ({}), cpu f64 {worst_cpu:.3e}", gpu.backend());
    assert!(failures.is_empty(), "{} curves beyond tolerance:\n{}", failures.len(), failures.join("\n"));
}

/// Reads `{R_s, R_p, device}` from the JS object the exported handle resolves to.
fn read_result(value: &JsValue) -> (Reflectivity, String) {
    let column = |k: &str| Reflect::get(value, &k.into()).unwrap().dyn_into::<Float64Array>().unwrap().to_vec();
    let device = Reflect::get(value, &"device".into()).unwrap().as_string().unwrap();
    (Reflectivity { r_s: column("R_s"), r_p: column("R_p") }, device)
}

/// The `message` of the JS `Error` a rejected call produced.
fn error_message(error: wasm_bindgen::JsError) -> String {
    let value: JsValue = error.into();
    value.dyn_into::<js_sys::Error>().expect("a JS Error").message().into()
}

#[wasm_bindgen_test]
async fn exported_handle_computes_and_rejects_bad_inputs() {
    let lab = Scatterlab::create("gpu".into(), None).await.map_err(error_message).expect("gpu handle");
    assert_eq!(lab.device(), "gpu");
    console_log!("exported handle: device {}, backend {}", lab.device(), lab.backend());
    let cases = fixture_cases();
    let (id, energy, q, stack, want_s, want_p) = &cases[25];
    let col = |f: fn(&Layer) -> f64| stack.layers.iter().map(f).collect::<Vec<_>>();
    let call = |q: Vec<f64>, thickness: Vec<f64>| {
        lab.reflectivity(*energy, q, thickness, col(|l| l.roughness), col(|l| l.delta_o), col(|l| l.beta_o), col(|l| l.delta_e), col(|l| l.beta_e))
    };
    let thickness = col(|l| l.thickness);

    let value = call(q.clone(), thickness.clone()).await.map_err(error_message).unwrap();
    let (got, device) = read_result(&value);
    assert_eq!(device, "gpu");
    // Plumbing: the handle returns exactly what the same kernel gives through `Session` (the
    // kernel's precision is the business of the two tests above).
    let direct = gpu_session().await.reflectivity(*energy, q, stack).await.unwrap();
    assert_eq!(got, direct, "{id}: handle and Session disagree");
    assert_eq!((got.r_s.len(), want_s.len(), want_p.len()), (q.len(), q.len(), q.len()));

    // q ≥ 2k0: rejected, named.
    let two_k0 = 2.0 * scatterlab_core::units::photon_k0(*energy);
    let mut bad_q = q.clone();
    bad_q[3] = two_k0;
    let message = error_message(call(bad_q, thickness.clone()).await.expect_err("q = 2k0 must be rejected"));
    console_log!("q = 2k0 -> Error: {message}");
    assert!(message.contains("q[3]") && message.contains("2k0"), "{message}");

    // NaN thickness: rejected, named.
    let mut bad_thickness = thickness.clone();
    bad_thickness[1] = f64::NAN;
    let message = error_message(call(q.clone(), bad_thickness).await.expect_err("NaN thickness must be rejected"));
    console_log!("NaN thickness -> Error: {message}");
    assert!(message.contains("layer 1 thickness"), "{message}");

    // Ragged columns: rejected, named.
    let message = error_message(call(q.clone(), thickness[1..].to_vec()).await.expect_err("ragged columns must be rejected"));
    assert!(message.contains("roughness"), "{message}");

    // The handle still works after the rejections (no panic, no poisoned state).
    let (again, _) = read_result(&call(q.clone(), thickness).await.map_err(error_message).unwrap());
    assert_eq!(again, got);

    // Unknown device: an Error, not a fallback.
    let message = error_message(Scatterlab::create("tpu".into(), None).await.expect_err("unknown device must be rejected"));
    assert!(message.contains("tpu"), "{message}");

    // The CPU handle over the same exported surface.
    let cpu = Scatterlab::create("cpu".into(), None).await.map_err(error_message).unwrap();
    assert_eq!((cpu.device().as_str(), cpu.backend().as_str(), cpu.precision().as_str()), ("cpu", "cpu f64", "f64"));
    assert_eq!(lab.precision(), "f32");

    // precision "df64" on the GPU (issue 21): the same case within 1e-6·R + 1e-13 of the CPU's f64.
    let df64 = Scatterlab::create("gpu".into(), Some("df64".into())).await.map_err(error_message).expect("df64 handle");
    assert_eq!((df64.device().as_str(), df64.precision().as_str()), ("gpu", "df64"));
    let thickness = col(|l| l.thickness);
    let (fine, _) = read_result(
        &df64
            .reflectivity(*energy, q.clone(), thickness.clone(), col(|l| l.roughness), col(|l| l.delta_o), col(|l| l.beta_o), col(|l| l.delta_e), col(|l| l.beta_e))
            .await
            .map_err(error_message)
            .unwrap(),
    );
    let (exact, _) = read_result(
        &cpu.reflectivity(*energy, q.clone(), thickness, col(|l| l.roughness), col(|l| l.delta_o), col(|l| l.beta_o), col(|l| l.delta_e), col(|l| l.beta_e))
            .await
            .map_err(error_message)
            .unwrap(),
    );
    let excess = fine.r_s.iter().chain(&fine.r_p).zip(exact.r_s.iter().chain(&exact.r_p)).map(|(a, b)| (a - b).abs() / (1e-6 * b.abs() + 1e-13)).fold(0.0f64, f64::max);
    console_log!("{id} df64 handle: worst |gpu − cpu| / (1e-6·R + 1e-13) = {excess:.3}");
    assert!(excess <= 1.0, "{id}: df64 handle {excess} of its allowance");

    // A precision the device does not have, or none at all: an Error naming it, not a substitute.
    for (device, precision, expect) in [("cpu", "df64", "needs device \"gpu\""), ("gpu", "f64", "has no f64"), ("cpu", "f16", "unknown precision")] {
        let message = error_message(Scatterlab::create(device.into(), Some(precision.into())).await.expect_err("bad precision must be rejected"));
        assert!(message.contains(precision) && message.contains(expect), "{device} {precision}: {message}");
    }
}

/// On the page's main thread there is no `FileReaderSync`: opening files says a worker is needed.
#[wasm_bindgen_test]
fn h5_files_need_a_worker() {
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(&b"\x89HDF"[..]));
    let file = web_sys::File::new_with_u8_array_sequence(&parts, "x.h5").expect("File");
    let e = scatterlab_web::h5::BlobStorage::new(&file, "x.h5").expect_err("main thread has no FileReaderSync");
    assert!(e.to_string().contains("Web Worker"), "{e}");
    let files: js_sys::Array = std::iter::once(JsValue::from(file)).collect();
    let e: JsValue = scatterlab_web::h5::H5Session::open(files).err().expect("H5Session.open rejects").into();
    let message = e.dyn_ref::<js_sys::Error>().map(|e| String::from(e.message())).unwrap_or_default();
    assert!(message.contains("Web Worker") && message.contains("x.h5"), "{message}");
}
