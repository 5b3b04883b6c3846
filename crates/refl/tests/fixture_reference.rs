//! The 40 cases of `shared/fixtures/refl/reference.json` against `expected_hp`:
//! CPU f64 within 1e-9 relative, GPU f32 within 2e-3 relative (the README's gates).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use scatterlab_refl::cases::parse_cases;
use scatterlab_refl::{compute, CurveRequest, Engine, Reflectivity};
use serde_json::Value;

const CPU_REL_TOL: f64 = 1e-9;
const GPU_REL_TOL: f64 = 2e-3;

struct Case {
    id: String,
    stack: scatterlab_refl::Stack,
    energy_ev: f64,
    q: Vec<f64>,
    expected_s: Vec<f64>,
    expected_p: Vec<f64>,
}

fn load() -> Vec<Case> {
    let text = common::read_fixture("refl/reference.json");
    let raw: Value = serde_json::from_str(&text).unwrap();
    let parsed = parse_cases(&text).unwrap();
    assert_eq!(parsed.len(), 40);
    parsed
        .into_iter()
        .zip(raw["cases"].as_array().unwrap())
        .map(|(p, v)| {
            let input = p.input.unwrap();
            let col = |k: &str| v["expected_hp"][k].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect::<Vec<_>>();
            Case { id: p.id, stack: input.stack().unwrap(), energy_ev: input.energy_ev, q: input.q.clone(), expected_s: col("R_s"), expected_p: col("R_p") }
        })
        .collect()
}

fn check(cases: &[Case], results: &[Reflectivity], tol: f64, label: &str) {
    let mut worst = (0.0f64, String::new());
    let mut failures = Vec::new();
    for (case, r) in cases.iter().zip(results) {
        for (pol, got, want) in [("R_s", &r.r_s, &case.expected_s), ("R_p", &r.r_p, &case.expected_p)] {
            let (rel, i) = common::max_rel(got, want);
            if rel > worst.0 || rel.is_nan() {
                worst = (rel, format!("{} {pol} q[{i}]", case.id));
            }
            if !(rel <= tol) {
                failures.push(format!("{} {pol}: max rel {rel:.3e} at q[{i}]={} (got {}, want {})", case.id, case.q[i], got[i], want[i]));
            }
        }
    }
    eprintln!("{label}: worst relative deviation {:.3e} ({})", worst.0, worst.1);
    assert!(failures.is_empty(), "{label}: {} curves beyond {tol:e}:\n{}", failures.len(), failures.join("\n"));
}

fn requests(cases: &[Case]) -> Vec<CurveRequest<'_>> {
    cases.iter().map(|c| CurveRequest { stack: &c.stack, energy_ev: c.energy_ev, q: &c.q }).collect()
}

#[test]
fn cpu_f64_matches_high_precision_reference() {
    let cases = load();
    let results = pollster::block_on(compute(Engine::Cpu, &requests(&cases))).unwrap();
    check(&cases, &results, CPU_REL_TOL, "cpu f64");
}

#[test]
fn gpu_f32_matches_high_precision_reference() {
    let Some(ctx) = common::gpu() else { return };
    let cases = load();
    let pipeline = pollster::block_on(scatterlab_refl::gpu::ParrattGpu::new(&ctx)).unwrap();
    // All 40 curves in one dispatch, as a fitter would batch them.
    let results = pollster::block_on(compute(Engine::Gpu(&pipeline), &requests(&cases))).unwrap();
    check(&cases, &results, GPU_REL_TOL, &format!("gpu f32 on {}", ctx.describe()));
}
