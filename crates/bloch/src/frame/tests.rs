use num_complex::Complex64;

use super::*;
use crate::beams::{tilt_angles_deg, tilted_orientations, Cutoff};
use crate::matrix::tests::{toy_table, Table};
use crate::matrix::Conventions;
use crate::pattern::Simulation;
use crate::rocking::{Coupling, Rocking};
use crate::{parse_cif, StructureFactors};

const DIRECT: Mat3 = [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]];

fn toy_simulation(angles: &[f64], coupling: Coupling) -> Simulation {
    Simulation {
        name: "toy".to_owned(),
        direct: DIRECT,
        orientation: crate::beams::rotation_x(0.03),
        energy_ev: 200e3,
        g_solve_inv_a: 0.8,
        sg_max_inv_a: 0.01,
        thicknesses_a: vec![100.0, 400.0],
        absorption: false,
        rocking: Some(Rocking { tilt_angles_deg: angles.to_vec(), coupling }),
    }
}

/// The per-tilt segments the rocking curve of `simulation` selects, as a frame.
fn per_tilt_frame(simulation: &Simulation, table: &dyn StructureFactorTable, optics: &Optics, angles: &[f64]) -> Frame {
    let orientations = tilted_orientations(&simulation.orientation, angles);
    let segments = orientations.iter().enumerate().map(|(i, o)| Segment { hkl: simulation.select_beams(table, optics, o, Cutoff::Strict).unwrap(), tilts: vec![i] }).collect();
    Frame { name: "toy".to_owned(), direct: DIRECT, orientations, segments, thicknesses_a: simulation.thicknesses_a.clone(), absorption: false }
}

fn max_difference(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    a.iter().flatten().zip(b.iter().flatten()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

#[test]
fn per_tilt_and_union_segments_equal_the_rocking_curve() {
    let table = toy_table(7, false);
    let angles = tilt_angles_deg(0.5, 5);
    let optics = Optics::new(200e3, table.f000()).unwrap();
    for solver in [Solver::Eigen, Solver::Expm] {
        let method = Method { solver, conventions: Conventions::DiffBloch };
        let simulation = toy_simulation(&angles, Coupling::PerTilt);
        let expected = simulation.run(&table, method).unwrap();
        let frame = per_tilt_frame(&simulation, &table, &optics, &angles);
        let got = frame.run(&table, &optics, method).unwrap();
        assert_eq!(got.hkl, expected.hkl);
        assert!(max_difference(&got.intensities, &expected.intensities) < 1e-12, "{solver:?} per tilt");
        // One segment on the union covering every tilt is union coupling.
        let union = Frame { segments: vec![Segment { hkl: frame.union(), tilts: (0..5).collect() }], ..frame };
        let expected = toy_simulation(&angles, Coupling::Union).run(&table, method).unwrap();
        let got = union.run(&table, &optics, method).unwrap();
        assert!(max_difference(&got.intensities, &expected.intensities) < 1e-12, "{solver:?} union");
    }
}

#[test]
fn real_path_equals_the_complex_eigen_solver() {
    // A real table (centrosymmetric toy): F = the real part of the toy's.
    let complex = toy_table(7, false);
    let table = Table { hkl: complex.hkl.clone(), values: complex.values.iter().map(|(h, f)| (*h, Complex64::new(f.re, 0.0))).collect() };
    let optics = Optics::new(200e3, table.f000()).unwrap();
    let angles = tilt_angles_deg(0.5, 3);
    let frame = per_tilt_frame(&toy_simulation(&angles, Coupling::PerTilt), &table, &optics, &angles);
    for conventions in [Conventions::DiffBloch, Conventions::Abtem] {
        let basis = lab_reciprocal_basis(&DIRECT, &frame.orientations[1]).unwrap();
        let setup = MatrixSetup { basis: &basis, optics: &optics, absorption: false, conventions };
        let matrix = StructureMatrix::build(&frame.segments[1].hkl, &table, &setup).unwrap();
        assert!(real_part_if_real(&matrix).is_some());
        let thicknesses = [0.0, 150.0, 900.0];
        let fast = eigen_intensities(&matrix, &thicknesses, "toy").unwrap();
        let slow = intensities(&matrix, &thicknesses, Solver::Expm, "toy").unwrap();
        assert!(max_difference(&fast, &slow) < 1e-12, "{conventions:?}: {}", max_difference(&fast, &slow));
        assert!((fast[0][matrix.index_000] - 1.0).abs() < 1e-13);
    }
    // A complex matrix is not taken for real.
    let basis = lab_reciprocal_basis(&DIRECT, &frame.orientations[0]).unwrap();
    let setup = MatrixSetup { basis: &basis, optics: &optics, absorption: false, conventions: Conventions::DiffBloch };
    assert!(real_part_if_real(&StructureMatrix::build(&frame.segments[0].hkl, &complex, &setup).unwrap()).is_none());
}

#[test]
fn bad_segments_are_named_errors() {
    let table = toy_table(7, false);
    let optics = Optics::new(200e3, table.f000()).unwrap();
    let angles = tilt_angles_deg(0.5, 3);
    let frame = per_tilt_frame(&toy_simulation(&angles, Coupling::PerTilt), &table, &optics, &angles);
    let method = Method::default();
    let mut uncovered = frame.clone();
    uncovered.segments.pop();
    assert!(uncovered.run(&table, &optics, method).unwrap_err().to_string().contains("no segment covers tilt 2"));
    let mut twice = frame.clone();
    twice.segments[0].tilts.push(1);
    assert!(twice.run(&table, &optics, method).unwrap_err().to_string().contains("segment 1: covers tilt 1, which another segment covers"));
    let mut outside = frame.clone();
    outside.segments[2].tilts = vec![7];
    assert!(outside.validate().is_err());
    let mut no_000 = frame.clone();
    no_000.segments[1].hkl.retain(|h| *h != [0, 0, 0]);
    assert!(no_000.validate().unwrap_err().to_string().contains("000"));
    let absorptive = Frame { absorption: true, ..frame };
    assert!(absorptive.run(&table, &optics, Method { solver: Solver::Eigen, ..method }).is_err());
}

#[test]
fn support_table_equals_the_full_grid() {
    let cif = "data_toy\n_cell_length_a 4.1\n_cell_length_b 4.3\n_cell_length_c 5.2\n_cell_angle_alpha 90\n_cell_angle_beta 95\n_cell_angle_gamma 90\n\
loop_\n_symmetry_equiv_pos_as_xyz\n'x,y,z'\n'-x,-y,-z'\nloop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n\
_atom_site_fract_z\n_atom_site_U_iso_or_equiv\nSi1 Si 0.1 0.2 0.3 0.005\nO1 O 0.31 0.12 0.77 0.011\n";
    let crystal = parse_cif("toy", cif).unwrap();
    let full = StructureFactors::compute(&crystal, 2.0, 200e3, false).unwrap();
    let support: Vec<Hkl> = full.hkl().iter().copied().step_by(3).collect();
    let table = SupportTable::compute(&crystal, &support).unwrap();
    let scale = full.values().iter().map(|f| f.norm()).fold(0.0, f64::max);
    for h in &support {
        let (a, b) = (table.value(*h).unwrap(), full.get(*h).unwrap());
        assert!((a - b).norm() <= 1e-15 * scale, "{h:?}: {a} vs {b}");
    }
    // Centrosymmetric: every F is real after snapping.
    assert!(table.values().iter().all(|f| f.im == 0.0));
    assert_eq!(table.f000(), full.f000());
    assert!(table.value([40, 0, 0]).is_none());
}

#[test]
fn gathered_difference_indices_equal_per_pair_lookups() {
    let cif = "data_toy\n_cell_length_a 4.1\n_cell_length_b 4.3\n_cell_length_c 5.2\n_cell_angle_alpha 90\n_cell_angle_beta 95\n_cell_angle_gamma 90\n\
loop_\n_symmetry_equiv_pos_as_xyz\n'x,y,z'\nloop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n\
_atom_site_fract_z\n_atom_site_U_iso_or_equiv\nSi1 Si 0.1 0.2 0.3 0.005\n";
    let crystal = parse_cif("toy", cif).unwrap();
    let full = StructureFactors::compute(&crystal, 2.0, 200e3, false).unwrap();
    let support: Vec<Hkl> = full.hkl().to_vec();
    let table = SupportTable::compute(&crystal, &support).unwrap();
    let per_pair = |t: &dyn StructureFactorTable, beams: &[Hkl]| -> Result<Vec<u32>, Hkl> {
        let mut out = Vec::new();
        for b in beams {
            for a in beams {
                let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
                out.push(t.index_of(d).ok_or(d)? as u32);
            }
        }
        Ok(out)
    };
    // Within the box's half-width per axis (the one-load fast path), and beyond it (per-pair checks).
    let near: Vec<Hkl> = vec![[0, 0, 0], [1, 0, -1], [-2, 1, 0], [0, -1, 2], [1, 1, 1]];
    let far: Vec<Hkl> = vec![[0, 0, 0], [5, 0, 0], [-5, 0, 0]];
    for (t, name) in [(&table as &dyn StructureFactorTable, "support"), (&full, "grid")] {
        assert_eq!(t.difference_indices(&near), per_pair(t, &near), "{name}");
        assert_eq!(t.difference_indices(&far), per_pair(t, &far), "{name}");
    }
    // A difference outside the table is named.
    let beyond: Vec<Hkl> = vec![[0, 0, 0], [12, 0, 0]];
    assert_eq!(table.difference_indices(&beyond), Err([-12, 0, 0]));
    assert!(far.iter().all(|h| h[0].abs() <= 5) && per_pair(&table, &far).is_err(), "the far set must leave the box");
}

#[test]
fn union_table_matrices_equal_structure_matrix_build_bit_for_bit() {
    for absorption in [false, true] {
        let table = toy_table(7, absorption);
        let optics = Optics::new(200e3, table.f000()).unwrap();
        let angles = tilt_angles_deg(0.5, 3);
        let frame = per_tilt_frame(&toy_simulation(&angles, Coupling::PerTilt), &table, &optics, &angles);
        let union = frame.union();
        let gathered = UnionTable::new(&union, &table);
        for conventions in [Conventions::DiffBloch, Conventions::Abtem] {
            for (segment, orientation) in frame.segments.iter().zip(&frame.orientations) {
                let basis = lab_reciprocal_basis(&DIRECT, orientation).unwrap();
                let setup = MatrixSetup { basis: &basis, optics: &optics, absorption, conventions };
                let slots: Vec<usize> = segment.hkl.iter().map(|h| union.binary_search(h).unwrap()).collect();
                let fast = gathered.matrix(&segment.hkl, &slots, &setup).unwrap();
                let slow = StructureMatrix::build(&segment.hkl, &table, &setup).unwrap();
                assert_eq!(fast.a, slow.a, "{conventions:?}, absorption {absorption}");
                assert_eq!((fast.mii, fast.sg, fast.k, fast.index_000, fast.hermitian), (slow.mii, slow.sg, slow.k, slow.index_000, slow.hermitian));
            }
        }
    }
    // A union reaching beyond the grid is a named error.
    let small = toy_table(1, false);
    let beams = [[-1, 0, 0], [0, 0, 0], [1, 0, 0]];
    let optics = Optics::new(200e3, small.f000()).unwrap();
    let basis = lab_reciprocal_basis(&DIRECT, &crate::beams::rotation_x(0.01)).unwrap();
    let setup = MatrixSetup { basis: &basis, optics: &optics, absorption: false, conventions: Conventions::DiffBloch };
    let err = UnionTable::new(&beams, &small).matrix(&beams, &[0, 1, 2], &setup).unwrap_err();
    assert!(err.to_string().contains("F[-2, 0, 0] (beams [1, 0, 0] → [-1, 0, 0]): outside the structure-factor grid"), "{err}");
}

#[test]
fn tridiagonal_path_equals_expm_for_real_matrices() {
    let complex = toy_table(7, false);
    let table = Table { hkl: complex.hkl.clone(), values: complex.values.iter().map(|(h, f)| (*h, Complex64::new(f.re, 0.0))).collect() };
    let optics = Optics::new(200e3, table.f000()).unwrap();
    let angles = tilt_angles_deg(0.5, 3);
    let frame = per_tilt_frame(&toy_simulation(&angles, Coupling::PerTilt), &table, &optics, &angles);
    for conventions in [Conventions::DiffBloch, Conventions::Abtem] {
        for (segment, orientation) in frame.segments.iter().zip(&frame.orientations) {
            let basis = lab_reciprocal_basis(&DIRECT, orientation).unwrap();
            let setup = MatrixSetup { basis: &basis, optics: &optics, absorption: false, conventions };
            let matrix = StructureMatrix::build(&segment.hkl, &table, &setup).unwrap();
            assert_ne!(matrix.index_000, 0, "the test should exercise the permutation");
            let thicknesses = [0.0, 150.0, 900.0, 2500.0];
            let fast = fast_intensities(&matrix, &thicknesses, "toy").unwrap();
            let slow = intensities(&matrix, &thicknesses, Solver::Expm, "toy").unwrap();
            assert!(max_difference(&fast, &slow) < 1e-11, "{conventions:?}: {}", max_difference(&fast, &slow));
        }
    }
    // Through Frame::run_with, equal to the eigen run.
    let fast = frame.run_with(&table, &optics, Conventions::DiffBloch, &fast_intensities).unwrap();
    let eigen = frame.run(&table, &optics, Method { solver: Solver::Eigen, conventions: Conventions::DiffBloch }).unwrap();
    assert!(max_difference(&fast.intensities, &eigen.intensities) < 1e-11);
}
