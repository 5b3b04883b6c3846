//! Issue 18, deliverable 5 (writers): `refined.cif` read back by the crate's own CIF reader (same
//! sites, positions, ADPs and operators to the printed precision; the space-group text identical
//! to the source's), the s.u. parentheses rule on a table of cases, U_eq of an anisotropic site
//! in a non-orthogonal cell against the hand formula, and the observed-vs-calculated CSV.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_bloch::crystal::{parse_cif_asymmetric, AsymmetricUnit};
use scatterlab_bloch::refine::metric::frame_metrics;
use scatterlab_bloch::refine::output::{format_with_su, u_equivalent};
use scatterlab_bloch::refine::{observed_vs_calculated_csv, refined_cif, Evaluation, FrameFit, RefineError, SiteUncertainty};
use scatterlab_bloch::{Atom, Cell, Displacement};

fn start_cif() -> String {
    scatterlab_testkit::read_fixture_text("bloch/synthetic_quartz/start.cif")
}

/// The quartz start structure moved towards the true one, as a refinement would leave it.
fn refined_quartz(source: &str) -> AsymmetricUnit {
    let mut asu = parse_cif_asymmetric("", source).expect("parse start.cif");
    asu.sites[0].frac[1] = 0.471256;
    asu.sites[0].displacement = Displacement::Iso(0.0085);
    asu.sites[1].frac = [0.8547294, 0.5858187, 0.6186823];
    asu.sites[1].displacement = Displacement::Iso(0.01512);
    asu
}

#[test]
fn su_parentheses_follow_the_iucr_rule() {
    let cases = [
        (0.471256, 0.000034, "0.47126(3)"),
        (0.0085, 0.00042, "0.0085(4)"),
        (1.234, 0.019, "1.234(19)"),
        (0.471256, 0.0, "0.471256"),
        (0.0085, 0.0, "0.0085"),
        // 10–19 keeps two digits, 20 and above one.
        (0.123456, 0.00015, "0.12346(15)"),
        (0.123456, 0.00020, "0.1235(2)"),
        // An s.u. rounding up to the next decade: 0.000096 → 0.0001.
        (0.123456, 0.000096, "0.1235(1)"),
        (-0.25, 0.0031, "-0.250(3)"),
        (-0.00001, 0.0003, "0.0000(3)"),
        (12.3, 2.5, "12(3)"),
        (1234.0, 250.0, "1200(300)"),
    ];
    for (value, su, expected) in cases {
        assert_eq!(format_with_su(value, su), expected, "value {value} su {su}");
    }
}

#[test]
fn quartz_round_trip_keeps_symmetry_sites_and_values() {
    let source = start_cif();
    let refined = refined_quartz(&source);
    let su = [
        SiteUncertainty { frac: [0.0, 0.000034, 0.0], u_iso: 0.00042, ..Default::default() },
        SiteUncertainty { frac: [0.00012, 0.00009, 0.000071], u_iso: 0.0011, ..Default::default() },
    ];
    let text = refined_cif(&source, &refined, &su).expect("write refined.cif");
    println!("{text}");

    // The space-group text (H-M symbol through the last operator) is the source's, byte for byte.
    let from = source.find("_symmetry_space_group_name_H-M").expect("H-M in source");
    let to = source.find("'-x,-x+y,-z+2/3'").expect("last operator") + "'-x,-x+y,-z+2/3'".len();
    assert!(text.contains(&source[from..to]), "space-group text not copied verbatim");
    for expected in ["Si1 Si 0.0 0.47126(3) 0.833333 0.0085(4) Uiso 1.0", "O1 O 0.85473(12) 0.58582(9) 0.61868(7) 0.0151(11) Uiso 1.0"] {
        assert!(text.contains(expected), "missing row {expected:?}");
    }
    assert!(text.starts_with("#\\#CIF_1.1\n") && text.contains("_computing_structure_refinement 'scatterlab "));

    let back = parse_cif_asymmetric("", &text).expect("read refined.cif back");
    assert_eq!(back.ops, refined.ops, "operators");
    assert_eq!(back.cell, refined.cell);
    assert_eq!(back.sites.len(), 2);
    // Printed precision: half a unit of the last printed digit.
    let tolerances = [[0.0, 0.5e-5, 0.0], [0.5e-5, 0.5e-5, 0.5e-5]];
    let u_tolerances = [0.5e-4, 0.5e-4];
    for ((ours, theirs), (tol, u_tol)) in refined.sites.iter().zip(&back.sites).zip(tolerances.iter().zip(u_tolerances)) {
        assert_eq!((ours.label.as_str(), ours.z), (theirs.label.as_str(), theirs.z));
        for (axis, ((a, b), t)) in ours.frac.iter().zip(theirs.frac).zip(tol).enumerate() {
            assert!((a - b).abs() <= t + 1e-12, "{} frac {axis}: {a} vs {b}", ours.label);
        }
        let (Displacement::Iso(a), Displacement::Iso(b)) = (ours.displacement, theirs.displacement) else { panic!("{}: not Uiso", ours.label) };
        assert!((a - b).abs() <= u_tol + 1e-12, "{} U_iso {a} vs {b}", ours.label);
        assert_eq!(theirs.occupancy, 1.0);
    }
    // Without s.u. every value is written to full precision (up to 8 decimals).
    let plain = parse_cif_asymmetric("", &refined_cif(&source, &refined, &[]).expect("write")).expect("read back");
    for (ours, theirs) in refined.sites.iter().zip(&plain.sites) {
        assert_eq!(ours.frac, theirs.frac);
        assert_eq!(ours.displacement, theirs.displacement);
    }
}

#[test]
fn sites_missing_from_the_model_are_carried_from_the_source() {
    let source = start_cif().replace("O1 O 0.860729", "H1 H 0.1 0.2 0.3 1.0 0.03 Uiso\nO1 O 0.860729");
    let mut refined = refined_quartz(&source);
    refined.sites.retain(|s| s.z != 1);
    let text = refined_cif(&source, &refined, &[]).expect("write");
    assert!(text.contains("copied unchanged from the source: H1."));
    let back = parse_cif_asymmetric("", &text).expect("read back");
    let labels: Vec<&str> = back.sites.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels, ["Si1", "H1", "O1"]);
    assert_eq!(back.sites[1].frac, [0.1, 0.2, 0.3]);
    assert_eq!(back.sites[1].displacement, Displacement::Iso(0.03));
}

#[test]
fn aniso_sites_get_u_eq_and_an_aniso_loop() {
    // Monoclinic a = 5, b = 6, c = 7 Å, β = 100°: a* = 1/(a sin β), b* = 1/b, c* = 1/(c sin β),
    // so U_eq = 1/3 [U22 + (U11 + U33 + 2 U13 cos β) / sin² β] = 0.0198177257 (by hand).
    let cell = Cell { lengths: [5.0, 6.0, 7.0], angles_deg: [90.0, 100.0, 90.0] };
    let u = [0.01, 0.02, 0.03, 0.0, 0.005, 0.0];
    let (u_eq, _) = u_equivalent(u, &cell);
    assert!((u_eq - 0.019_817_725_69).abs() < 1e-10, "U_eq {u_eq}");
    // Triclinic, all six components: the same as the crate's B_eq / 8π² (trace of U_cart / 3).
    let triclinic = Cell { lengths: [5.1, 6.3, 7.7], angles_deg: [81.0, 97.0, 113.0] };
    let u6 = [0.012, 0.017, 0.021, 0.002, -0.003, 0.004];
    let atom = Atom { label: "X".into(), z: 14, frac: [0.1, 0.2, 0.3], occupancy: 1.0, displacement: Displacement::Aniso(u6) };
    let from_b = atom.b_iso_equivalent(&triclinic) / (8.0 * std::f64::consts::PI.powi(2));
    assert!((u_equivalent(u6, &triclinic).0 - from_b).abs() < 1e-12, "U_eq {} vs B_eq/8π² {from_b}", u_equivalent(u6, &triclinic).0);

    let source = "data_mono\n_cell_length_a 5\n_cell_length_b 6\n_cell_length_c 7\n_cell_angle_alpha 90\n_cell_angle_beta 100\n_cell_angle_gamma 90\n\
        _space_group_name_H-M_alt 'P 1 2/m 1'\nloop_\n_space_group_symop_operation_xyz\nx,y,z\n-x,y,-z\n-x,-y,-z\nx,-y,z\n\
        loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n_atom_site_U_iso_or_equiv\nSi1 Si 0.1 0 0.3 0.01\n";
    let mut refined = parse_cif_asymmetric("", source).expect("parse");
    refined.sites[0].displacement = Displacement::Aniso(u);
    let su = [SiteUncertainty { frac: [0.0004, 0.0, 0.0004], u_aniso: [0.0011, 0.0012, 0.0013, 0.0, 0.0009, 0.0], ..Default::default() }];
    let text = refined_cif(source, &refined, &su).expect("write");
    println!("{text}");
    // U_eq s.u. propagated from the diagonal and U13 terms; here 0.00072.
    assert!(text.contains("Si1 Si 0.1000(4) 0.0 0.3000(4) 0.0198(7) Uani 1.0"), "atom row");
    assert!(text.contains("Si1 0.0100(11) 0.0200(12) 0.0300(13) 0.0 0.0050(9) 0.0"), "aniso row");
    assert!(text.contains("_space_group_name_H-M_alt 'P 1 2/m 1'\nloop_\n_space_group_symop_operation_xyz\nx,y,z\n-x,y,-z\n-x,-y,-z\nx,-y,z\n"));
    let back = parse_cif_asymmetric("", &text).expect("read back");
    assert_eq!(back.ops, refined.ops);
    assert_eq!(back.sites[0].displacement, Displacement::Aniso(u));
}

#[test]
fn bad_uncertainties_are_typed_errors_naming_the_site() {
    let source = start_cif();
    let refined = refined_quartz(&source);
    let short = refined_cif(&source, &refined, &[SiteUncertainty::default()]).unwrap_err();
    assert!(matches!(&short, RefineError::Inconsistent { item, .. } if item == "standard uncertainties"), "{short}");
    let negative = [SiteUncertainty::default(), SiteUncertainty { u_iso: -1e-3, ..Default::default() }];
    let err = refined_cif(&source, &refined, &negative).unwrap_err();
    assert!(err.to_string().contains("\"O1\"") && err.to_string().contains("U_iso"), "{err}");
    let nan = [SiteUncertainty { frac: [f64::NAN, 0.0, 0.0], ..Default::default() }, SiteUncertainty::default()];
    assert!(refined_cif(&source, &refined, &nan).unwrap_err().to_string().contains("\"Si1\""));
}

#[test]
fn csv_has_one_row_per_scored_reflection_with_the_wr2_scale() {
    let frame = |id: i64, hkl: Vec<[i32; 3]>, observed: Vec<f64>, calculated: Vec<f64>| {
        let sigmas: Vec<f64> = observed.iter().map(|o: &f64| 0.05 * o + 1.0).collect();
        let metrics = frame_metrics(&calculated, &observed, &sigmas);
        FrameFit { id, hkl, observed, sigmas, calculated, metrics }
    };
    let frames = vec![frame(3, vec![[1, 0, 0], [0, 1, -1]], vec![120.0, 30.0], vec![0.0012, 0.00031]), frame(7, vec![[2, -1, 3]], vec![55.5], vec![0.00052])];
    let scales: Vec<f64> = frames.iter().map(|f| f.metrics.wr2.scale).collect();
    let csv = observed_vs_calculated_csv(&Evaluation { frames, wr2: 0.0, r_obs: 0.0 });
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "frame,h,k,l,I_obs,sigma,I_calc,I_calc_unscaled");
    assert_eq!(lines.len(), 4);
    let row: Vec<&str> = lines[2].split(',').collect();
    assert_eq!(&row[..6], ["3", "0", "1", "-1", "30", "2.5"]);
    let scaled: f64 = row[6].parse().expect("I_calc");
    assert!((scaled - scales[0] * 0.00031).abs() <= 1e-12 * scaled.abs(), "I_calc {scaled}");
    assert_eq!(row[7].parse::<f64>().expect("unscaled"), 0.00031);
    assert!(lines[3].starts_with("7,2,-1,3,55.5,"));
}
