//! Issue 25, Bloch part: every adversarial input of the campaign ends in a clean per-case error
//! (naming the case, the input, the size or the thickness) or a correct finite answer — never a
//! panic, an abort, a NaN or a flux above 1. Cases are the fixture's Si-200kV-00 with one input
//! changed, run through `simulate` as the CLI does.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_bloch::limits::solver_work;
use scatterlab_bloch::matrix::Conventions;
use scatterlab_bloch::pattern::Method;
use scatterlab_bloch::simulate::{parse_cases, simulate_within, CaseOutput};
use scatterlab_bloch::solve::{Solver, MAX_THICKNESS_A};
use scatterlab_bloch::Limits;
use serde_json::{json, Value};

fn fixture() -> Value {
    serde_json::from_str(&scatterlab_testkit::read_fixture_text("bloch/reference.json")).expect("fixture JSON")
}

/// Si-200kV-00 (169 beams) with `edit` applied to its case, on the Si CIF with `cif_edit`.
fn si_case(id: &str, edit: impl Fn(&mut Value), cif_edit: impl Fn(&str) -> String) -> (Value, Value) {
    let reference = fixture();
    let mut case = reference["cases"][0].clone();
    assert_eq!(case["id"], "Si-200kV-00");
    case["id"] = json!(id);
    case["crystal"] = json!(id);
    edit(&mut case);
    let cif = cif_edit(reference["crystals"]["Si"]["cif"].as_str().expect("Si CIF"));
    (case, json!({ "cif": cif }))
}

fn run(cases: Vec<(Value, Value)>, solver: Solver, limits: &Limits) -> Vec<CaseOutput> {
    let crystals: serde_json::Map<String, Value> = cases.iter().map(|(c, x)| (c["crystal"].as_str().unwrap_or_default().to_owned(), x.clone())).collect();
    let file = json!({ "crystals": crystals, "cases": cases.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>() });
    let parsed = parse_cases(&file.to_string()).expect("cases parse");
    simulate_within(&parsed, Method { solver, conventions: Conventions::DiffBloch }, limits).cases
}

fn error_of(out: &CaseOutput) -> &str {
    out.error.as_deref().unwrap_or_else(|| panic!("{}: expected an error, got {} beams", out.id, out.hkl.as_ref().map_or(0, Vec::len)))
}

fn same(text: &str) -> String {
    text.to_owned()
}

#[test]
fn a_huge_cell_is_a_beam_budget_error_before_allocation() {
    // ~22k beams, an 8 GB matrix: faer's AllocError or the OOM killer before.
    let case = si_case("a1000", |_| {}, |cif| cif.replace("_cell_length_a 5.4309", "_cell_length_a 1000"));
    let out = run(vec![case], Solver::Expm, &Limits::default());
    let error = error_of(&out[0]);
    for part in ["simulation \"a1000\"", "beams", "1000.0000", "g_solve 1.6", "sg_max 0.04", "limit of 4096", "--max-beams"] {
        assert!(error.contains(part), "{part}: {error}");
    }
    // The limit is the caller's: the unmodified case (169 beams) passes the default, not 100.
    let plain = || si_case("plain", |_| {}, same);
    assert!(run(vec![plain()], Solver::Eigen, &Limits::default())[0].error.is_none());
    let error = run(vec![plain()], Solver::Eigen, &Limits { max_beams: 100, ..Limits::default() })[0].error.clone().unwrap_or_default();
    assert!(error.contains("169 beams") && error.contains("limit of 100"), "{error}");
}

#[test]
fn other_input_sizes_are_budgeted() {
    let big_grid = si_case(
        "grid",
        |c| {
            c["g_solve_invA"] = json!(60.0);
            c["structure_factor_grid_g_max_invA"] = json!(120.5);
        },
        same,
    );
    let tilts = si_case(
        "tilts",
        |c| {
            c["kind"] = json!("rocking");
            c["tilt_semiangle_deg"] = json!(1.0);
            c["n_tilts"] = json!(20_000);
        },
        same,
    );
    let thicknesses = si_case("thicknesses", |c| c["thicknesses_A"] = json!(vec![100.0; 10_001]), same);
    let out = run(vec![big_grid, tilts, thicknesses], Solver::Eigen, &Limits::default());
    assert!(error_of(&out[0]).contains("hkl box") && error_of(&out[0]).contains("134217728"), "{}", error_of(&out[0]));
    assert!(error_of(&out[1]).contains("tilt angles: 20000 exceed the limit of 10000"), "{}", error_of(&out[1]));
    assert!(error_of(&out[2]).contains("thicknesses: 10001 exceed the limit of 10000"), "{}", error_of(&out[2]));
}

#[test]
fn unphysical_crystals_are_errors_naming_the_tag() {
    let cases = vec![
        si_case("u-negative", |_| {}, |cif| cif.replace("1.0 0.005900 Uiso", "1.0 -0.1 Uiso")),
        si_case(
            "flat-cell",
            |_| {},
            |cif| cif.replace("_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90", "_cell_angle_alpha 120\n_cell_angle_beta 120\n_cell_angle_gamma 120"),
        ),
        si_case("occupancy", |_| {}, |cif| cif.replace("1.0 0.005900 Uiso", "1.5 0.005900 Uiso")),
        si_case(
            "no-operators",
            |_| {},
            |cif| {
                let start = cif.find("loop_\n_symmetry_equiv_pos_as_xyz").expect("operator loop");
                let end = cif.find("loop_\n_atom_site").expect("site loop");
                format!("{}{}", &cif[..start], &cif[end..])
            },
        ),
        si_case("no-atoms", |_| {}, |cif| cif.replace("Si1 Si 0.000000 0.000000 0.000000 1.0 0.005900 Uiso", "")),
    ];
    let out = run(cases, Solver::Expm, &Limits::default());
    let want = [
        "_atom_site_u_iso_or_equiv: site \"Si1\": U_iso = -0.1",
        "_cell_length_a: cell angles [120.0, 120.0, 120.0] give a degenerate cell",
        "_atom_site_occupancy: site \"Si1\": occupancy 1.5 outside [0, 1]",
        "_symmetry_space_group_name_h-m: space group \"F d -3 m\" is stated but its operators are not listed",
        "_atom_site_fract_x: the atom-site loop has no atoms",
    ];
    for (o, w) in out.iter().zip(want) {
        let error = error_of(o);
        assert!(error.contains(w) && error.contains(&format!("CIF {}: line ", o.id)), "{}: {error}", o.id);
    }
}

#[test]
fn thicknesses_beyond_the_physical_limit_are_errors_and_the_limit_is_exact() {
    // expm gave Σ I = 1.43 at 9e15 Å, 1e21 at 1e18 Å, NaN at 1.8e19 Å.
    for solver in [Solver::Expm, Solver::Eigen] {
        for t in [9e15, 1e18, 1.8e19, f64::MAX] {
            let out = run(vec![si_case("thick", |c| c["thicknesses_A"] = json!([100.0, t]), same)], solver, &Limits::default());
            let error = error_of(&out[0]);
            assert!(error.contains("thickness[1]") && error.contains("physical limit"), "{solver:?} {t}: {error}");
        }
    }
    // At the limit both solvers are finite, conserve the flux and agree.
    let at_limit = || si_case("limit", |c| c["thicknesses_A"] = json!([MAX_THICKNESS_A / 3.0, MAX_THICKNESS_A]), same);
    let expm = run(vec![at_limit()], Solver::Expm, &Limits::default());
    let eigen = run(vec![at_limit()], Solver::Eigen, &Limits::default());
    let (x, e) = (expm[0].intensities.as_ref().expect("expm finite"), eigen[0].intensities.as_ref().expect("eigen finite"));
    for (row_x, row_e) in x.iter().zip(e) {
        assert!((row_x.iter().sum::<f64>() - 1.0).abs() < 1e-6 && (row_e.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let worst = row_x.iter().zip(row_e).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        assert!(worst < 1e-6, "expm vs eigen at {MAX_THICKNESS_A} Å: {worst:e}");
    }
}

#[test]
fn heavy_legal_cases_are_work_budget_errors_before_anything_is_solved() {
    // The campaign's timeouts: sg_max 1e9 Å⁻¹ keeps every beam inside g_solve (~2000 at 3 thicknesses,
    // minutes of expm), legal sizes all. The budget is checked on the beam counts before a matrix is built.
    let plain = run(vec![si_case("plain", |_| {}, same)], Solver::Expm, &Limits::default());
    let beams = plain[0].hkl.as_ref().expect("plain case runs").len();
    let thicknesses = fixture()["cases"][0]["thicknesses_A"].as_array().expect("thicknesses").len();
    assert_eq!(beams, 169);
    let exact = solver_work(&[beams], thicknesses, Solver::Expm);
    assert_eq!(exact, 12.0 * 169f64.powi(3) * thicknesses as f64);
    // At the estimate the case runs and equals the default run; one multiply-add below it is refused.
    let at = run(vec![si_case("plain", |_| {}, same)], Solver::Expm, &Limits { max_work: exact, ..Limits::default() });
    assert_eq!(at[0].intensities, plain[0].intensities);
    let below = run(vec![si_case("plain", |_| {}, same)], Solver::Expm, &Limits { max_work: exact - 1.0, ..Limits::default() });
    let error = error_of(&below[0]);
    for part in ["simulation \"plain\"", "1 matrix of up to 169 beams", &format!("{thicknesses} thickness(es)"), "work budget", "eigen", "--max-work"] {
        assert!(error.contains(part), "{part}: {error}");
    }
    // sg_max 1e9: thousands of beams, refused at once under a 1e11 budget (the default lets it run for minutes).
    let wide = si_case("wide", |c| c["sg_max_invA"] = json!(1e9), same);
    let out = run(vec![wide], Solver::Expm, &Limits { max_work: 1e11, ..Limits::default() });
    let error = error_of(&out[0]);
    assert!(error.contains("simulation \"wide\"") && error.contains("exceed the work budget of 1.00e11"), "{error}");
    // A rocking curve counts one matrix per tilt (eigen: no per-thickness exponential).
    let rocking = si_case(
        "rock",
        |c| {
            c["kind"] = json!("rocking");
            c["tilt_semiangle_deg"] = json!(0.5);
            c["n_tilts"] = json!(40);
        },
        same,
    );
    let out = run(vec![rocking], Solver::Eigen, &Limits { max_work: 1e8, ..Limits::default() });
    let error = error_of(&out[0]);
    assert!(error.contains("simulation \"rock\"") && error.contains("40 matrices") && !error.contains("eigen solver decomposes"), "{error}");
}
