//! Unit tests of the `.cif_pets` reader.

use super::*;

const MINIMAL: &str = "data_x
_cell_length_a 4.0
_cell_length_b 4.0
_cell_length_c 4.0
_cell_angle_alpha 90
_cell_angle_beta 90
_cell_angle_gamma 90
_diffrn_radiation_wavelength 0.02508
_diffrn_orient_matrix_UB_11 0.25
_diffrn_orient_matrix_UB_12 0
_diffrn_orient_matrix_UB_13 0
_diffrn_orient_matrix_UB_21 0
_diffrn_orient_matrix_UB_22 0.25
_diffrn_orient_matrix_UB_23 0
_diffrn_orient_matrix_UB_31 0
_diffrn_orient_matrix_UB_32 0
_diffrn_orient_matrix_UB_33 0.25
_diffrn_measurement_details
;
data collection geometry: continuous rotation
rotation axis position: 12.5
;
loop_
_diffrn_zone_axis_id
_diffrn_zone_axis_u
_diffrn_zone_axis_v
_diffrn_zone_axis_w
_diffrn_zone_axis_precession_angle
_diffrn_zone_axis_alpha
_diffrn_zone_axis_beta
_diffrn_zone_axis_omega
_diffrn_zone_axis_scale
1 0 0 1 1.000 -2.0 0.0 0.0 1.0
2 0 0 1 1.000 0.0 0.0 0.0 1.0
loop_
_refln_index_h
_refln_index_k
_refln_index_l
_refln_intensity_meas
_refln_intensity_sigma
_refln_zone_axis_id
 1 0 0 10.5 1.0 1
 0 1 0 3.25(2) 0.5 2
";

#[test]
fn reads_the_items_loops_and_summary() {
    let data = PetsData::parse("x.cif_pets", MINIMAL).unwrap();
    assert_eq!(data.cell, [4.0, 4.0, 4.0, 90.0, 90.0, 90.0]);
    assert_eq!(data.ub[2][2], 0.25);
    assert_eq!(data.rotation_axis_position_deg, Some(12.5));
    assert_eq!(data.geometry, CollectionGeometry::ContinuousRotation);
    assert_eq!(data.frames.len(), 2);
    assert_eq!(data.frames[0].alpha_deg, -2.0);
    assert_eq!(data.reflections[1].intensity, 3.25);
    assert_eq!(data.reflections[1].line, 43);
}

#[test]
fn errors_name_the_line() {
    let bad_row = MINIMAL.replace(" 0 1 0 3.25(2) 0.5 2", " 0 1 x 3.25 0.5 2");
    let err = PetsData::parse("x.cif_pets", &bad_row).unwrap_err().to_string();
    assert!(err.contains("line 43") && err.contains("_refln_index_l"), "{err}");
    let short_row = MINIMAL.replace(" 0 1 0 3.25(2) 0.5 2", " 0 1 0 3.25 2");
    let err = PetsData::parse("x.cif_pets", &short_row).unwrap_err().to_string();
    assert!(err.contains("line 43"), "{err}");
    let unknown_frame = MINIMAL.replace(" 0 1 0 3.25(2) 0.5 2", " 0 1 0 3.25 0.5 7");
    let err = PetsData::parse("x.cif_pets", &unknown_frame).unwrap_err().to_string();
    assert!(err.contains("line 43") && err.contains("frame 7"), "{err}");
    let empty_frame = MINIMAL.replace(" 0 1 0 3.25(2) 0.5 2", " 0 1 0 3.25 0.5 1");
    let err = PetsData::parse("x.cif_pets", &empty_frame).unwrap_err().to_string();
    assert!(err.contains("frame 2 has no reflections"), "{err}");
    let no_wavelength = MINIMAL.replace("_diffrn_radiation_wavelength 0.02508\n", "");
    assert!(PetsData::parse("x.cif_pets", &no_wavelength).unwrap_err().to_string().contains("_diffrn_radiation_wavelength"));
    let unclosed = MINIMAL.replace("rotation axis position: 12.5\n;", "rotation axis position: 12.5");
    assert!(PetsData::parse("x.cif_pets", &unclosed).is_err());
}
