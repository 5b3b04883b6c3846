//! Acceptance against `shared/fixtures/bloch/reference.json` (README there): geometry constants,
//! beam sets, intensities vs `I_ref` with both solvers (expm only for the absorptive case) and,
//! with the abTEM switch, vs `I_abtem`, all within 1e-6 absolute. Run with `--nocapture` for
//! the per-case table of max errors and timings.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Instant;

use num_complex::Complex64;
use scatterlab_bloch::geometry::{Optics, KAPPA};
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::simulate::{parse_cases, simulate, CaseInput, CasesFile};
use scatterlab_bloch::solve::Solver;
use scatterlab_bloch::{parse_cif, BlochError, Crystal, StructureFactors};
use serde_json::Value;

const TOLERANCE: f64 = 1e-6;

fn fixture_path() -> PathBuf {
    scatterlab_testkit::fixture("bloch/reference.json")
}

struct Fixture {
    text: String,
    inputs: CasesFile,
    reference: Value,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let text = std::fs::read_to_string(fixture_path()).expect("read the Bloch fixture");
        let inputs = parse_cases(&text).expect("parse the cases");
        let reference: Value = serde_json::from_str(&text).expect("fixture JSON");
        assert_eq!(inputs.cases.len(), 14);
        Fixture { text, inputs, reference }
    })
}

fn reference_case(id: &str) -> &'static Value {
    fixture().reference["cases"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap()
}

fn crystal(case: &CaseInput) -> Crystal {
    parse_cif(&case.crystal, &fixture().inputs.crystals[&case.crystal].cif).expect("fixture CIF")
}

fn hkl_list(v: &Value) -> Vec<[i32; 3]> {
    v.as_array().unwrap().iter().map(|h| [0, 1, 2].map(|i| h[i].as_i64().unwrap() as i32)).collect()
}

fn matrix_of(v: &Value) -> Vec<Vec<f64>> {
    v.as_array().unwrap().iter().map(|row| row.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()).collect()
}

/// One solved case: beams, intensities, seconds.
struct Solved {
    hkl: Vec<[i32; 3]>,
    intensities: Vec<Vec<f64>>,
    seconds: f64,
}

fn solve(case: &CaseInput, method: Method) -> Result<Solved, BlochError> {
    let crystal = crystal(case);
    let start = Instant::now();
    let (hkl, intensities) = case.run(&crystal, method)?;
    Ok(Solved { hkl, intensities, seconds: start.elapsed().as_secs_f64() })
}

/// Max |I − I_expected| over the beams of `expected_hkl` (a beam we lack counts as an error).
fn max_error(solved: &Solved, expected_hkl: &[[i32; 3]], expected: &[Vec<f64>]) -> f64 {
    let mut worst: f64 = 0.0;
    for (t, row) in expected.iter().enumerate() {
        for (hkl, value) in expected_hkl.iter().zip(row) {
            let got = solved.hkl.iter().position(|h| h == hkl).map_or(f64::INFINITY, |i| solved.intensities[t][i]);
            worst = worst.max((got - value).abs());
        }
    }
    worst
}

/// Every case with the eigen solver (the non-absorptive ones), computed once for several tests.
fn eigen_results() -> &'static Vec<(String, Option<Solved>)> {
    static RESULTS: OnceLock<Vec<(String, Option<Solved>)>> = OnceLock::new();
    RESULTS.get_or_init(|| {
        fixture()
            .inputs
            .cases
            .iter()
            .map(|case| {
                let method = Method { solver: Solver::Eigen, conventions: Conventions::DiffBloch };
                let solved = if case.absorption { None } else { Some(solve(case, method).expect("eigen solve")) };
                (case.id.clone(), solved)
            })
            .collect()
    })
}

#[test]
fn geometry_constants_match_the_fixture() {
    let mut worst: f64 = 0.0;
    for case in &fixture().inputs.cases {
        let r = reference_case(&case.id);
        let f000 = Complex64::new(r["F000"][0].as_f64().unwrap(), r["F000"][1].as_f64().unwrap());
        let optics = Optics::new(case.energy_ev, f000).unwrap();
        for (name, got) in [
            ("wavelength_A", optics.wavelength_a),
            ("sigma_per_V_A", optics.sigma_per_v_a),
            ("kappa", KAPPA),
            ("prefactor", optics.prefactor),
            ("U0_A2", optics.u0_a2),
            ("K_n_invA", optics.k_n_inv_a),
        ] {
            let expected = r[name].as_f64().unwrap();
            let relative = ((got - expected) / expected).abs();
            worst = worst.max(relative);
            assert!(relative <= 1e-12, "{} {name}: {got} vs {expected}", case.id);
        }
        // And F(000) from our structure factors feeds the same U0.
        let table = StructureFactors::compute(&crystal(case), case.grid_radius(), case.energy_ev, case.absorption).unwrap();
        assert!((table.f000() - f000).norm() <= 1e-12 * f000.norm(), "{} F000 {} vs {f000}", case.id, table.f000());
    }
    println!("geometry: worst relative difference {worst:.2e}");
}

#[test]
fn beam_sets_equal_the_fixture() {
    // Static and rocking alike, from the eigen runs plus the absorptive case from expm.
    let absorptive = fixture().inputs.cases.iter().find(|c| c.absorption).unwrap();
    let absorptive_solved = solve(absorptive, Method { solver: Solver::Expm, conventions: Conventions::DiffBloch }).unwrap();
    for (id, solved) in eigen_results() {
        let solved = solved.as_ref().unwrap_or(&absorptive_solved);
        let expected = hkl_list(&reference_case(id)["beams"]["hkl"]);
        let mut got_sorted = solved.hkl.clone();
        got_sorted.sort_unstable();
        let mut expected_sorted = expected.clone();
        expected_sorted.sort_unstable();
        assert_eq!(got_sorted, expected_sorted, "{id}: beam set");
        println!("{id}: {} beams, same order as the fixture: {}", solved.hkl.len(), solved.hkl == expected);
    }
}

#[test]
fn eigen_matches_i_ref() {
    for (id, solved) in eigen_results() {
        let Some(solved) = solved else { continue };
        let r = reference_case(id);
        let error = max_error(solved, &hkl_list(&r["beams"]["hkl"]), &matrix_of(&r["intensities"]["I_ref"]));
        println!("eigen {id}: max |I − I_ref| = {error:.2e} ({:.3} s)", solved.seconds);
        assert!(error <= TOLERANCE, "{id}: eigen vs I_ref {error:.3e}");
    }
}

#[test]
fn expm_matches_i_ref() {
    for case in &fixture().inputs.cases {
        let solved = solve(case, Method { solver: Solver::Expm, conventions: Conventions::DiffBloch }).unwrap();
        let r = reference_case(&case.id);
        let error = max_error(&solved, &hkl_list(&r["beams"]["hkl"]), &matrix_of(&r["intensities"]["I_ref"]));
        println!("expm {}: max |I − I_ref| = {error:.2e} ({:.3} s)", case.id, solved.seconds);
        assert!(error <= TOLERANCE, "{}: expm vs I_ref {error:.3e}", case.id);
    }
}

#[test]
fn abtem_conventions_match_i_abtem() {
    let mut checked = 0;
    for case in &fixture().inputs.cases {
        let r = reference_case(&case.id);
        let Some(expected) = r["intensities"].get("I_abtem") else { continue };
        let hkl = hkl_list(&r["beams"]["hkl"]);
        for solver in [Solver::Eigen, Solver::Expm] {
            let solved = solve(case, Method { solver, conventions: Conventions::Abtem }).unwrap();
            let error = max_error(&solved, &hkl, &matrix_of(expected));
            let to_ref = max_error(&solved, &hkl, &matrix_of(&r["intensities"]["I_ref"]));
            println!("abTEM {solver:?} {}: max |I − I_abtem| = {error:.2e} (vs I_ref {to_ref:.2e})", case.id);
            assert!(error <= TOLERANCE, "{} abTEM {solver:?}: {error:.3e}", case.id);
        }
        checked += 1;
    }
    assert_eq!(checked, 8, "static isotropic non-absorptive cases with I_abtem");
}

#[test]
fn eigen_on_the_absorptive_case_is_a_typed_error() {
    let case = fixture().inputs.cases.iter().find(|c| c.absorption).unwrap();
    let err = case.run(&crystal(case), Method { solver: Solver::Eigen, conventions: Conventions::DiffBloch }).unwrap_err();
    assert!(matches!(&err, BlochError::Numerical { object, .. } if object.contains(&case.id)), "{err}");
}

#[test]
fn the_simulator_reads_no_reference_fields() {
    // Strip every reference result from two cases (one static, one rocking): same output.
    let mut stripped: Value = serde_json::from_str(&fixture().text).unwrap();
    let keep = ["urea-300kV-11", "quartz_aniso-200kV-13"];
    let cases = stripped["cases"].as_array_mut().unwrap();
    cases.retain(|c| keep.contains(&c["id"].as_str().unwrap()));
    for case in cases.iter_mut() {
        let object = case.as_object_mut().unwrap();
        object.retain(|key, _| !(key.starts_with("beams") || key.starts_with("intensities") || key.contains("check") || key.starts_with("max_abs") || key == "n_beams"));
        for key in ["wavelength_A", "sigma_per_V_A", "kappa", "prefactor", "U0_A2", "K_n_invA", "F000", "flux_I_ref", "n_beams_per_tilt"] {
            object.remove(key);
        }
    }
    let bare = parse_cases(&stripped.to_string()).unwrap();
    let results = simulate(&bare, Method { solver: Solver::Eigen, conventions: Conventions::DiffBloch });
    for (out, id) in results.cases.iter().zip(keep) {
        assert_eq!(out.id, id);
        let (_, full) = eigen_results().iter().find(|(i, _)| i == id).unwrap();
        let full = full.as_ref().unwrap();
        assert_eq!(out.hkl.as_ref().unwrap(), &full.hkl, "{id}");
        assert_eq!(out.intensities.as_ref().unwrap(), &full.intensities, "{id}");
    }
}
