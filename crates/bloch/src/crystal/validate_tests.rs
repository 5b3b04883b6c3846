//! Issue 25's crystal cases: each unphysical CIF is an error naming the tag, the site and the
//! line (before, each was accepted and gave a wrong pattern); every fixture CIF still loads.

use std::path::PathBuf;

use super::parse_cif;
use crate::BlochError;

const P1: &str = "data_t\n_cell_length_a 4.0\n_cell_length_b 5.0\n_cell_length_c 6.0\n_cell_angle_alpha 90\n_cell_angle_beta 90\n\
_cell_angle_gamma 90\n_space_group_IT_number 1\n";

/// An atom-site loop with occupancy and U_iso columns; the rows start on line 17 after [`P1`].
fn sites(rows: &str) -> String {
    format!(
        "loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n\
         _atom_site_occupancy\n_atom_site_U_iso_or_equiv\n{rows}"
    )
}

fn cif_error(text: &str) -> (usize, String, String) {
    match parse_cif("t", text) {
        Err(BlochError::Cif { line, tag, message, .. }) => (line, tag, message),
        other => panic!("expected a CIF error, got {other:?}"),
    }
}

#[test]
fn a_zero_volume_cell_is_an_error() {
    let text = P1.replace("_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90", "_cell_angle_alpha 120\n_cell_angle_beta 120\n_cell_angle_gamma 120")
        + &sites("Si1 Si 0 0 0 1 0.01\n");
    let (line, tag, message) = cif_error(&text);
    assert_eq!((line, tag.as_str()), (2, "_cell_length_a"));
    assert!(message.contains("degenerate"), "{message}");
    let nearly = text.replace("_cell_angle_gamma 120", "_cell_angle_gamma 119");
    assert!(parse_cif("t", &nearly).is_ok(), "a thin but real cell is accepted");
}

#[test]
fn negative_displacements_and_bad_occupancies_name_the_site_and_line() {
    let (line, tag, message) = cif_error(&(P1.to_owned() + &sites("Si1 Si 0 0 0 1 0.01\nO1 O 0.5 0.5 0.5 1 -0.1\n")));
    assert_eq!((line, tag.as_str()), (18, "_atom_site_u_iso_or_equiv"));
    assert!(message.contains("\"O1\"") && message.contains("-0.1"), "{message}");
    for bad in ["1.2", "-0.1"] {
        let (line, tag, message) = cif_error(&(P1.to_owned() + &sites(&format!("Si1 Si 0 0 0 {bad} 0.01\n"))));
        assert_eq!((line, tag.as_str()), (17, "_atom_site_occupancy"), "{message}");
        assert!(message.contains("\"Si1\"") && message.contains("[0, 1]"), "{message}");
    }
    let b_iso = P1.to_owned() + "loop_\n_atom_site_label\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n_atom_site_B_iso_or_equiv\nSi1 0 0 0 -1\n";
    assert_eq!(cif_error(&b_iso).1, "_atom_site_b_iso_or_equiv");
    let edges = P1.to_owned() + &sites("Si1 Si 0 0 0 0 0\nO1 O 0.5 0.5 0.5 1 0\n");
    assert!(parse_cif("t", &edges).is_ok(), "occupancy 0 and 1, U_iso 0 are physical");
}

#[test]
fn an_indefinite_u_tensor_is_an_error() {
    let aniso = |u: &str| {
        P1.to_owned()
            + &sites("O1 O 0.1 0.2 0.3 1 ?\n")
            + "loop_\n_atom_site_aniso_label\n_atom_site_aniso_U_11\n_atom_site_aniso_U_22\n_atom_site_aniso_U_33\n\
               _atom_site_aniso_U_12\n_atom_site_aniso_U_13\n_atom_site_aniso_U_23\n"
            + u
    };
    assert!(parse_cif("t", &aniso("O1 0.01 0.02 0.015 0.001 0.002 -0.001\n")).is_ok());
    let (line, tag, message) = cif_error(&aniso("O1 0.01 0.01 0.01 0.05 0 0\n"));
    assert_eq!((line, tag.as_str()), (26, "_atom_site_aniso_u_11"));
    assert!(message.contains("\"O1\"") && message.contains("positive semi-definite"), "{message}");
}

#[test]
fn an_empty_atom_list_is_an_error() {
    let text = P1.to_owned() + &sites("");
    let (line, tag, message) = cif_error(&text);
    assert_eq!((line, tag.as_str()), (9, "_atom_site_fract_x"));
    assert!(message.contains("no atoms"), "{message}");
}

fn fixtures() -> PathBuf {
    scatterlab_testkit::fixture("bloch")
}

#[test]
fn every_fixture_cif_still_loads() {
    let reference: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixtures().join("reference.json")).expect("reference.json")).expect("JSON");
    let crystals = reference["crystals"].as_object().expect("crystals");
    assert_eq!(crystals.len(), 4);
    for (name, entry) in crystals {
        let crystal = parse_cif(name, entry["cif"].as_str().expect("cif")).unwrap_or_else(|e| panic!("{name}: {e}"));
        crystal.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for file in ["start.cif", "true.cif"] {
        let text = std::fs::read_to_string(fixtures().join("synthetic_quartz").join(file)).expect("quartz CIF");
        let crystal = parse_cif("", &text).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(crystal.atoms.len(), 9, "{file}");
    }
}
