//! Structure factors against the diffBloch 0.2.0rc1 reference (shared/fixtures/bloch): every
//! crystal's CIF is parsed and expanded to P1, F(g) is tabulated out to each case's
//! `structure_factor_grid_g_max_invA`, and compared with F000 and every beam's F_re/F_im.
//!
//! The gate is 1e-9 of max|F|, but the fixture stores the beams' F_re/F_im rounded to 9
//! significant digits (e.g. F(000) = 0.291467309 vs the full-precision `F000`
//! 0.2914673093294215), which alone is up to 1.2e-9 of max|F|. So: `F000` (full precision)
//! must agree to 1e-12 relative, and every beam value must round to the stored digits, i.e.
//! lie within half a unit of its 9th significant digit (≤ 5e-10 absolute, tighter for smaller
//! values; float64 agreement would give ~1e-16).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use num_complex::Complex64;
use scatterlab_bloch::{parse_cif, StructureFactors};
use serde_json::Value;

/// F000 is stored at full float64 precision.
const F000_REL_TOL: f64 = 1e-12;
/// Significant digits of the stored beam F_re/F_im.
const STORED_DIGITS: i32 = 9;

/// Float64 summation slack (Å⁻²): near-cancelling F (|F| ~ 1e-9 from terms ~ 1e-2) carry
/// absolute rounding errors ~ 1e-17 in either code, far above their 9th significant digit.
const FLOAT_SLACK: f64 = 1e-15;

/// Half a unit of the last stored digit of `x`, plus float slack: the rounding bound.
fn stored_half_unit(x: f64) -> f64 {
    if x == 0.0 {
        return FLOAT_SLACK;
    }
    let exponent = x.abs().log10().floor() as i32;
    0.5 * 10f64.powi(exponent - (STORED_DIGITS - 1)) * (1.0 + 1e-6) + FLOAT_SLACK
}

fn reference() -> Value {
    let text = scatterlab_testkit::read_fixture_text("bloch/reference.json");
    serde_json::from_str(&text).expect("reference.json parses")
}

fn f64s(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect()
}

#[test]
fn p1_expansion_counts_atoms() {
    let reference = reference();
    let crystals = reference["crystals"].as_object().expect("crystals");
    // Si: diamond (8); SrTiO3: perovskite (5); quartz: 3 Si + 6 O; urea: 2 C, 2 O, 4 N, 8 H.
    let expected =
        [("Si", 8, vec![(14, 8)]), ("SrTiO3", 5, vec![(38, 1), (22, 1), (8, 3)]), ("quartz_aniso", 9, vec![(14, 3), (8, 6)]), ("urea", 16, vec![(6, 2), (8, 2), (7, 4), (1, 8)])];
    for (name, total, per_z) in expected {
        let crystal = parse_cif(name, crystals[name]["cif"].as_str().expect("cif")).expect("CIF parses");
        assert_eq!(crystal.atoms.len(), total, "{name}");
        for (z, count) in per_z {
            assert_eq!(crystal.atoms.iter().filter(|a| a.z == z).count(), count, "{name}: Z = {z}");
        }
        let cell = f64s(&crystals[name]["cell"]);
        assert_eq!(crystal.cell.lengths.to_vec(), cell[..3].to_vec(), "{name}");
        assert_eq!(crystal.cell.angles_deg.to_vec(), cell[3..].to_vec(), "{name}");
        assert!(crystal.atoms.iter().all(|a| a.frac.iter().all(|x| (0.0..1.0).contains(x))));
    }
}

#[test]
fn structure_factors_match_diffbloch() {
    let reference = reference();
    let crystals = reference["crystals"].as_object().expect("crystals");
    let mut worst_overall: f64 = 0.0;
    for case in reference["cases"].as_array().expect("cases") {
        let id = case["id"].as_str().expect("id");
        let name = case["crystal"].as_str().expect("crystal");
        let crystal = parse_cif(name, crystals[name]["cif"].as_str().expect("cif")).expect("CIF parses");
        let g_max = case["structure_factor_grid_g_max_invA"].as_f64().expect("g_max");
        let absorption = case["absorption"].as_bool().expect("absorption");
        let energy = case["energy_eV"].as_f64().expect("energy");
        let sf = StructureFactors::compute(&crystal, g_max, energy, absorption).expect("F computes");

        let f000 = f64s(&case["F000"]);
        let beams = &case["beams"];
        let (re, im) = (f64s(&beams["F_re"]), f64s(&beams["F_im"]));
        let hkl: Vec<[i32; 3]> = beams["hkl"]
            .as_array()
            .expect("hkl")
            .iter()
            .map(|m| {
                let v: Vec<i32> = m.as_array().expect("hkl row").iter().map(|x| x.as_i64().expect("int") as i32).collect();
                [v[0], v[1], v[2]]
            })
            .collect();
        let scale = re.iter().zip(&im).map(|(r, i)| r.hypot(*i)).fold(f64::hypot(f000[0], f000[1]), f64::max);

        let f000_err = (sf.f000() - Complex64::new(f000[0], f000[1])).norm();
        assert!(f000_err <= F000_REL_TOL * scale, "{id}: F000 {} vs {f000:?}", sf.f000());
        let (mut worst, mut worst_beam, mut worst_units) = (0.0_f64, [0, 0, 0], 0.0_f64);
        for ((m, r), i) in hkl.iter().zip(&re).zip(&im) {
            let f = sf.get(*m).unwrap_or_else(|| panic!("{id}: beam {m:?} outside the F grid"));
            for (mine, stored) in [(f.re, *r), (f.im, *i)] {
                let units = (mine - stored).abs() / stored_half_unit(stored);
                assert!(units <= 1.0, "{id}: beam {m:?}: {mine:e} does not round to the stored {stored:e}");
                worst_units = worst_units.max(units);
            }
            let err = (f - Complex64::new(*r, *i)).norm();
            if err > worst {
                (worst, worst_beam) = (err, *m);
            }
        }
        let rel = worst / scale;
        println!(
            "{id}: {} P1 atoms, {} grid hkl, {} beams, F000 = {:.16} (|dF000| {f000_err:.1e}), beams: max |dF| = {worst:.3e} \
             ({rel:.3e} of max|F| {scale:.4}, at {worst_beam:?}), max {worst_units:.3} half-units of the 9th digit",
            crystal.atoms.len(),
            sf.len(),
            hkl.len(),
            sf.f000()
        );
        worst_overall = worst_overall.max(rel);
    }
    println!("worst relative error over all cases: {worst_overall:.3e}");
}

#[test]
fn grid_is_complete_and_ordered_like_diffbloch() {
    let reference = reference();
    let crystals = reference["crystals"].as_object().expect("crystals");
    let crystal = parse_cif("quartz_aniso", crystals["quartz_aniso"]["cif"].as_str().expect("cif")).expect("CIF parses");
    let g_max = 2.0;
    let sf = StructureFactors::compute(&crystal, g_max, 200e3, false).expect("F computes");
    let b = crystal.cell.reciprocal_matrix();
    let g_len = |m: [i32; 3]| -> f64 {
        let g: [f64; 3] = std::array::from_fn(|j| (0..3).map(|i| f64::from(m[i]) * b[i][j]).sum());
        g.iter().map(|x| x * x).sum::<f64>().sqrt()
    };
    assert_eq!(sf.hkl()[0], [0, 0, 0]);
    assert_eq!(sf.hkl()[1], [0, 0, 1], "l runs fastest, 0, 1, …");
    // Every hkl in a generous box is tabulated exactly when |g| <= g_max; Friedel pairs agree.
    let mut inside = 0;
    for h in -12..=12 {
        for k in -12..=12 {
            for l in -12..=12 {
                let m = [h, k, l];
                let f = sf.get(m);
                assert_eq!(f.is_some(), g_len(m) <= g_max, "{m:?}");
                if let Some(f) = f {
                    inside += 1;
                    let friedel = sf.get([-h, -k, -l]).expect("Friedel mate");
                    assert!((f - friedel.conj()).norm() < 1e-14, "{m:?}");
                }
            }
        }
    }
    assert_eq!(inside, sf.len());
    assert_eq!(sf.values().len(), sf.len());
}

/// Full-precision diffBloch values (data/diffbloch_reference_F.py: diffBloch's own reader,
/// expansion and `structure_factors` at float64) for every beam plus 60 seeded grid hkl per
/// case out to g_max, and diffBloch's grid size and order.
#[test]
fn structure_factors_match_diffbloch_full_precision() {
    const REL_TOL: f64 = 1e-12;
    let reference = reference();
    let crystals = reference["crystals"].as_object().expect("crystals");
    let text = include_str!("../data/diffbloch_F_full_precision.json");
    let full: Value = serde_json::from_str(text).expect("full-precision table parses");
    let to_hkl = |v: &Value| -> Vec<[i32; 3]> {
        v.as_array()
            .expect("hkl list")
            .iter()
            .map(|m| {
                let v: Vec<i32> = m.as_array().expect("hkl").iter().map(|x| x.as_i64().expect("int") as i32).collect();
                [v[0], v[1], v[2]]
            })
            .collect()
    };
    let mut worst_overall: f64 = 0.0;
    for case in reference["cases"].as_array().expect("cases") {
        let id = case["id"].as_str().expect("id");
        let name = case["crystal"].as_str().expect("crystal");
        let crystal = parse_cif(name, crystals[name]["cif"].as_str().expect("cif")).expect("CIF parses");
        let g_max = case["structure_factor_grid_g_max_invA"].as_f64().expect("g_max");
        let absorption = case["absorption"].as_bool().expect("absorption");
        let sf = StructureFactors::compute(&crystal, g_max, case["energy_eV"].as_f64().expect("energy"), absorption).expect("F computes");
        let table = &full["cases"][id];
        assert_eq!(sf.len() as u64, table["n_grid"].as_u64().expect("n_grid"), "{id}: grid size");
        let head = to_hkl(&table["grid_head"]);
        let tail = to_hkl(&table["grid_tail"]);
        assert_eq!(&sf.hkl()[..head.len()], head.as_slice(), "{id}: grid order (head)");
        assert_eq!(&sf.hkl()[sf.len() - tail.len()..], tail.as_slice(), "{id}: grid order (tail)");
        let (re, im) = (f64s(&table["F_re"]), f64s(&table["F_im"]));
        let (mut worst, mut scale) = (0.0_f64, 0.0_f64);
        for ((m, r), i) in to_hkl(&table["hkl"]).iter().zip(&re).zip(&im) {
            let f = sf.get(*m).unwrap_or_else(|| panic!("{id}: {m:?} outside the F grid"));
            worst = worst.max((f - Complex64::new(*r, *i)).norm());
            scale = scale.max(r.hypot(*i));
        }
        println!("{id}: {} hkl, max |F - F_diffBloch| = {worst:.2e} ({:.2e} of max|F|)", re.len(), worst / scale);
        assert!(worst <= REL_TOL * scale, "{id}: {worst:e} vs max|F| {scale}");
        worst_overall = worst_overall.max(worst / scale);
    }
    println!("worst relative error (full precision) over all cases: {worst_overall:.3e}");
}
