//! CIF reader, symmetry and cell tests on small hand-written CIFs.

use super::{parse_cif, Cell, Displacement, SymOp};
use crate::BlochError;

const HEADER: &str = "data_test\n_cell_length_a 4.0\n_cell_length_b 5.0\n_cell_length_c 6.0\n\
_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n";

fn sites(rows: &str) -> String {
    format!(
        "loop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n\
         _atom_site_fract_z\n_atom_site_U_iso_or_equiv\n{rows}"
    )
}

/// The error's line and tag, panicking on success or on another variant.
fn cif_error(result: Result<super::Crystal, BlochError>) -> (usize, String, String) {
    match result {
        Err(BlochError::Cif { line, tag, message, .. }) => (line, tag, message),
        other => panic!("expected a CIF error, got {other:?}"),
    }
}

#[test]
fn reads_values_with_uncertainties_quotes_text_fields_and_several_loops() {
    let text = format!(
        "# comment\n{HEADER}_journal_title\n;\nA multi-line\ntext field with _fake_tag and loop_\n;\n\
         _symmetry_space_group_name_H-M 'P -1'\nloop_\n_symmetry_equiv_pos_as_xyz\n'x, y, z'\n\"-x,-y,-z\"\n\
         {}loop_\n_publ_author_name\n'O''Brien, A.'\n'Smith, B.'\n",
        sites("Ti1 Ti 0.1234(5) 0.25 0.5(1) 0.0100(3)\nO1 O2- 0 0 0 .0075\n")
    );
    let crystal = parse_cif("t", &text).expect("parses");
    assert_eq!(crystal.name, "t");
    // Ti on a general position (2 images), O on the inversion centre (1).
    assert_eq!(crystal.atoms.len(), 3);
    let ti: Vec<_> = crystal.atoms.iter().filter(|a| a.z == 22).collect();
    assert_eq!(ti.len(), 2);
    assert_eq!(ti[0].frac, [0.1234, 0.25, 0.5]);
    assert!((ti[1].frac[0] - 0.8766).abs() < 1e-12 && (ti[1].frac[1] - 0.75).abs() < 1e-12);
    assert_eq!(ti[0].displacement, Displacement::Iso(0.01));
    assert_eq!(crystal.atoms.iter().find(|a| a.z == 8).map(|a| a.occupancy), Some(1.0));
}

#[test]
fn missing_cell_is_an_error_naming_the_tag() {
    let text = "data_x\n_cell_length_a 4\n_cell_length_b 4\n_cell_angle_alpha 90\n_cell_angle_beta 90\n\
                _cell_angle_gamma 90\n_symmetry_space_group_name_H-M 'P 1'\n"
        .to_string()
        + &sites("Si1 Si 0 0 0 0.01\n");
    let (_, tag, message) = cif_error(parse_cif("x", &text));
    assert_eq!(tag, "_cell_length_c");
    assert!(message.contains("missing"), "{message}");
    let degenerate = HEADER.replace("_cell_angle_gamma 90", "_cell_angle_gamma 180") + "_space_group_IT_number 1\n" + &sites("Si1 Si 0 0 0 0.01\n");
    let (line, tag, _) = cif_error(parse_cif("x", &degenerate));
    assert_eq!((line, tag.as_str()), (2, "_cell_length_a"));
}

#[test]
fn malformed_numbers_are_errors_with_their_line() {
    for bad in ["0.1.2", "abc", "0.5(", "0.5(x)", "inf", "NaN", "1e400", "?"] {
        let text = format!("{HEADER}_space_group_IT_number 1\n{}", sites(&format!("Si1 Si {bad} 0 0 0.01\n")));
        let (line, tag, message) = cif_error(parse_cif("x", &text));
        assert_eq!((line, tag.as_str()), (16, "_atom_site_fract_x"), "{bad}: {message}");
    }
    let text = format!("{HEADER}_cell_volume 12(3)4\n_space_group_IT_number 1\n{}", sites("Si1 Si 0 0 0 0.01\n"));
    assert!(parse_cif("x", &text).is_ok(), "unread tags are not validated");
}

#[test]
fn unknown_element_and_structural_errors() {
    let text = format!("{HEADER}_space_group_IT_number 1\n{}", sites("X1 Xx 0 0 0 0.01\n"));
    let (line, tag, message) = cif_error(parse_cif("x", &text));
    assert_eq!((line, tag.as_str()), (16, "_atom_site_type_symbol"));
    assert!(message.contains("Xx"), "{message}");

    let short_loop = format!("{HEADER}_space_group_IT_number 1\n{}", sites("Si1 Si 0 0 0\n"));
    assert_eq!(cif_error(parse_cif("x", &short_loop)).1, "_atom_site_label");
    let unterminated = format!("{HEADER}_title 'oops\n");
    assert_eq!(cif_error(parse_cif("x", &unterminated)).0, 8);
    let open_field = format!("{HEADER}_title\n;\nnever closed\n");
    assert_eq!(cif_error(parse_cif("x", &open_field)).0, 9);
    assert_eq!(cif_error(parse_cif("x", "_cell_length_a 4\n")).2, "content before the first data_ block");
    let dangling = format!("{HEADER}_space_group_IT_number\n");
    assert!(cif_error(parse_cif("x", &dangling)).2.contains("without a value"));
    let save = format!("{HEADER}save_frame\n");
    assert_eq!(cif_error(parse_cif("x", &save)).1, "save_frame");
    let no_adp = format!("{HEADER}_space_group_IT_number 1\nloop_\n_atom_site_label\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\nSi1 0 0 0\n");
    assert_eq!(cif_error(parse_cif("x", &no_adp)).1, "_atom_site_u_iso_or_equiv");
}

#[test]
fn symmetry_operators_parse_and_bad_ones_are_rejected() {
    let op = SymOp::parse(" -Y+1/4, x-y , 1/2+Z ").expect("parses");
    assert_eq!(op.rotation, [[0.0, -1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 0.0, 1.0]]);
    assert_eq!(op.translation, [0.25, 0.0, 0.5]);
    assert_eq!(SymOp::parse("x,y,z+0.5").map(|o| o.translation), Ok([0.0, 0.0, 0.5]));
    for bad in ["x,y", "x,y,w", "x,x,z", "x,y,z+", "2x,y,z", "x,y,z/2"] {
        assert!(SymOp::parse(bad).is_err(), "{bad}");
    }
    let text = format!("{HEADER}loop_\n_space_group_symop_operation_xyz\nx,y,z\n'x,y,q'\n{}", sites("Si1 Si 0 0 0 0.01\n"));
    let (line, tag, _) = cif_error(parse_cif("x", &text));
    assert_eq!((line, tag.as_str()), (11, "_space_group_symop_operation_xyz"));
}

#[test]
fn without_operators_only_an_explicit_p1_is_accepted() {
    let rock_salt = |sg: &str| format!("{HEADER}{sg}\n{}", sites("Na1 Na 0 0 0 0.01\nCl1 Cl 0.5 0.5 0.5 0.01\n")).replace("5.0", "4.0").replace("6.0", "4.0");
    // A symbol or number names several settings: its operators are never assumed (issue 25).
    for (sg, tag) in [
        ("_symmetry_space_group_name_H-M 'F m -3 m'", "_symmetry_space_group_name_h-m"),
        ("_space_group_name_H-M_alt Fm-3m", "_space_group_name_h-m_alt"),
        ("_space_group_IT_number 225", "_space_group_it_number"),
        ("_symmetry_space_group_name_H-M 'P 4/n c c'", "_symmetry_space_group_name_h-m"),
        ("_space_group_name_H-M_alt 'P 1'\n_space_group_IT_number 2", "_space_group_it_number"),
    ] {
        let (line, got_tag, message) = cif_error(parse_cif("nacl", &rock_salt(sg)));
        assert_eq!((line, got_tag.as_str()), (8 + sg.matches('\n').count(), tag), "{sg}: {message}");
        assert!(message.contains("not listed") && message.contains("_space_group_symop_operation_xyz"), "{sg}: {message}");
    }
    for sg in ["_space_group_name_H-M_alt 'P 1'", "_symmetry_space_group_name_H-M P1", "_space_group_name_Hall 'P 1'", "_space_group_IT_number 1"] {
        let crystal = parse_cif("nacl", &rock_salt(sg)).expect(sg);
        assert_eq!(crystal.atoms.len(), 2, "{sg}");
    }
    let (line, tag, message) = cif_error(parse_cif("x", &rock_salt("")));
    assert_eq!((line, tag.as_str()), (1, "_space_group_symop_operation_xyz"));
    assert!(message.contains("P 1"), "{message}");
}

#[test]
fn aniso_u_rotates_with_the_operator_and_b_values_convert() {
    // Orthorhombic cell, 4-fold-free: a 2-fold about z maps U13 → −U13, U23 → −U23.
    let text = format!(
        "{HEADER}loop_\n_symmetry_equiv_pos_as_xyz\nx,y,z\n-x,-y,z\n{}loop_\n_atom_site_aniso_label\n\
         _atom_site_aniso_B_11\n_atom_site_aniso_B_22\n_atom_site_aniso_B_33\n_atom_site_aniso_B_12\n\
         _atom_site_aniso_B_13\n_atom_site_aniso_B_23\nO1 0.8 0.9 1.0 0.1 0.2 0.3\n",
        sites("O1 O 0.1 0.2 0.3 ?\n")
    );
    let crystal = parse_cif("x", &text).expect("parses");
    let b_to_u = 1.0 / (8.0 * std::f64::consts::PI.powi(2));
    let u: Vec<[f64; 6]> = crystal
        .atoms
        .iter()
        .map(|a| match a.displacement {
            Displacement::Aniso(u) => u,
            Displacement::Iso(_) => panic!("aniso expected"),
        })
        .collect();
    let expected = [[0.8, 0.9, 1.0, 0.1, 0.2, 0.3], [0.8, 0.9, 1.0, 0.1, -0.2, -0.3]];
    for (got, want) in u.iter().zip(expected) {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w * b_to_u).abs() < 1e-15, "{got:?} vs {want:?}");
        }
    }
}

#[test]
fn hexagonal_aniso_rotation_preserves_the_equivalent_b() {
    // A 3-fold in a hexagonal cell mixes axes: U_eq (hence B_iso) must be invariant.
    let text = "data_h\n_cell_length_a 4.9\n_cell_length_b 4.9\n_cell_length_c 5.4\n_cell_angle_alpha 90\n\
                _cell_angle_beta 90\n_cell_angle_gamma 120\nloop_\n_symmetry_equiv_pos_as_xyz\nx,y,z\n-y,x-y,z\n-x+y,-x,z\n"
        .to_string()
        + &sites("O1 O 0.41 0.27 0.12 .\n")
        + "loop_\n_atom_site_aniso_label\n_atom_site_aniso_U_11\n_atom_site_aniso_U_22\n_atom_site_aniso_U_33\n\
           _atom_site_aniso_U_12\n_atom_site_aniso_U_13\n_atom_site_aniso_U_23\nO1 0.013 0.020 0.016 0.0095 -0.0026 0.0040\n";
    let crystal = parse_cif("h", &text).expect("parses");
    assert_eq!(crystal.atoms.len(), 3);
    let b: Vec<f64> = crystal.atoms.iter().map(|a| a.b_iso_equivalent(&crystal.cell)).collect();
    assert!(b.iter().all(|x| (x - b[0]).abs() < 1e-13), "{b:?}");
}

#[test]
fn cell_bases_are_reciprocal() {
    let cell = Cell { lengths: [4.9226, 4.9226, 5.4003], angles_deg: [90.0, 90.0, 120.0] };
    let (a, b) = (cell.direct_matrix(), cell.reciprocal_matrix());
    for (i, row_a) in a.iter().enumerate() {
        for (j, row_b) in b.iter().enumerate() {
            let d: f64 = row_a.iter().zip(row_b).map(|(x, y)| x * y).sum();
            assert!((d - f64::from(u8::from(i == j))).abs() < 1e-15);
        }
    }
    assert_eq!(a[0][1], 0.0);
    assert_eq!(a[1][2], 0.0);
    assert!((cell.volume() - 4.9226 * 4.9226 * 5.4003 * (3f64.sqrt() / 2.0)).abs() < 1e-10);
}
