//! OpticalTable: linear and PCHIP interpolation against numpy.interp / scipy PchipInterpolator on
//! a NEXAFS-like table (oracle `table` in materials_oracle.json), exactness at the knots,
//! monotonicity without overshoot, parsing and named errors.

use super::{f, object_of, oracle};
use scatterlab_refl::materials::{Interpolation, OpticalConstants, OpticalTable};

fn oracle_table() -> (OpticalTable, serde_json::Value) {
    let o = oracle()["table"].clone();
    let energy: Vec<f64> = o["energy_ev"].as_array().expect("energy").iter().map(f).collect();
    let col = |k: usize, i: usize| f(&o["columns"][k][i]);
    let values = (0..energy.len()).map(|i| OpticalConstants { delta_o: col(0, i), beta_o: col(1, i), delta_e: col(2, i), beta_e: col(3, i) }).collect();
    (OpticalTable::new("nexafs", energy, values).expect("valid table"), o)
}

fn as_array(c: &OpticalConstants) -> [f64; 4] {
    [c.delta_o, c.beta_o, c.delta_e, c.beta_e]
}

#[test]
fn linear_and_pchip_match_numpy_and_scipy() {
    // Same formulas as numpy/scipy: rounding only. Tolerance 1e-12 × the column's largest |value|.
    let (table, o) = oracle_table();
    assert_eq!(table.interpolation(), Interpolation::Linear);
    let mut worst: f64 = 0.0;
    for (mode, key) in [(Interpolation::Linear, "linear"), (Interpolation::Pchip, "pchip")] {
        let t = table.clone().with_interpolation(mode);
        for (i, e) in o["at_ev"].as_array().expect("at").iter().map(f).enumerate() {
            let got = as_array(&t.at(e).expect("in range"));
            for k in 0..4 {
                let column = o["columns"][k].as_array().expect("column");
                let scale = column.iter().map(|v| f(v).abs()).fold(0.0, f64::max);
                let err = (got[k] - f(&o[key][k][i])).abs() / scale;
                worst = worst.max(err);
                assert!(err < 1e-12, "{key} column {k} at {e} eV: {} vs {} ({err:.2e})", got[k], f(&o[key][k][i]));
            }
        }
    }
    eprintln!("table interpolation worst deviation from numpy/scipy: {worst:.2e} of column scale");
}

#[test]
fn both_interpolations_are_exact_on_the_knots() {
    let (table, _) = oracle_table();
    for mode in [Interpolation::Linear, Interpolation::Pchip] {
        let t = table.clone().with_interpolation(mode);
        for (e, v) in t.energies().iter().zip(t.values()) {
            assert_eq!(t.at(*e).expect("knot"), v, "{mode:?} at {e}");
        }
    }
}

#[test]
fn pchip_is_monotone_without_overshoot_at_an_edge() {
    // A step-like absorption edge: β jumps 40× over 0.2 eV. A natural cubic spline rings here;
    // PCHIP stays between neighbouring knots and preserves the monotone rise.
    let e = vec![280.0, 282.0, 284.0, 284.2, 284.4, 286.0, 290.0];
    let beta = [0.1, 0.1, 0.12, 2.0, 4.0, 4.05, 4.05];
    let values = beta.iter().map(|&b| OpticalConstants { delta_o: 0.0, beta_o: b, delta_e: -b, beta_e: b }).collect();
    let t = OpticalTable::new("edge", e.clone(), values).expect("valid").with_interpolation(Interpolation::Pchip);
    let mut previous = f64::NEG_INFINITY;
    for i in 0..=10_000 {
        let x = 280.0 + 10.0 * i as f64 / 10_000.0;
        let c = t.at(x).expect("in range");
        // Rounding only (values ~4): 1e-14 slack.
        assert!(c.beta_o >= previous - 1e-14, "not monotone at {x}: {} < {previous}", c.beta_o);
        let j = e.partition_point(|&k| k <= x).clamp(1, e.len() - 1);
        let (lo, hi) = (beta[j - 1].min(beta[j]), beta[j - 1].max(beta[j]));
        assert!(c.beta_o >= lo - 1e-14 && c.beta_o <= hi + 1e-14, "overshoot at {x}: {} outside [{lo}, {hi}]", c.beta_o);
        assert_eq!(c.delta_e, -c.beta_o);
        previous = c.beta_o;
    }
}

#[test]
fn outside_the_range_is_an_error_naming_table_and_energy() {
    let (table, _) = oracle_table();
    for e in [269.99, 320.01, f64::NAN] {
        let (object, problem) = object_of(table.at(e).expect_err("outside"));
        assert_eq!(object, "optical table 'nexafs' energy");
        assert!(problem.contains(&format!("{e} eV")), "{problem}");
    }
    assert_eq!(table.energy_range(), (270.0, 320.0));
}

#[test]
fn text_tables_parse_with_comments_commas_and_three_or_five_columns() {
    let five = "# energy delta_o beta_o delta_e beta_e\n280, 1e-3, 2e-4, 1.5e-3, 3e-4\n\n290 2e-3 4e-4 2.5e-3 5e-4  # after the edge\n";
    let t = OpticalTable::parse_text("film", five).expect("five columns");
    assert_eq!(t.energies(), &[280.0, 290.0]);
    let mid = t.at(285.0).expect("mid");
    let want = [1.5e-3, 3e-4, 2e-3, 4e-4];
    for (got, want) in as_array(&mid).iter().zip(want) {
        assert!((got - want).abs() < 1e-18, "{got} vs {want}");
    }
    let three = OpticalTable::parse_text("iso", "100 1e-3 1e-4\n200\t3e-3\t5e-4\r\n").expect("three columns");
    let c = three.at(150.0).expect("mid");
    assert_eq!((c.delta_o, c.beta_o), (c.delta_e, c.beta_e));
    assert!((c.delta_o - 2e-3).abs() < 1e-18 && (c.beta_o - 3e-4).abs() < 1e-18);
}

#[test]
fn text_errors_name_the_line() {
    for (text, line, says) in [
        ("# header\n280 1 2\nenergy delta beta\n", 3, "not a number"),
        ("280 1 2\n\n290 1 2 3\n", 3, "columns"),
        ("280 1 2\n290 1 2 3 4\n", 2, "earlier lines have 3"),
        ("280 1 2\n# c\n290 1 2\n285 1 2\n", 4, "ascend"),
        ("280 1 2\n290 nan 1\n", 2, "delta_o"),
        ("-1 1 2\n290 1 2\n", 1, "positive"),
    ] {
        let (object, problem) = object_of(OpticalTable::parse_text("t", text).expect_err(text));
        assert_eq!(object, format!("optical table 't' line {line}"), "{problem}");
        assert!(problem.contains(says), "{text:?}: {problem}");
    }
    let (object, problem) = object_of(OpticalTable::parse_text("t", "# nothing\n280 1 2\n").expect_err("one row"));
    assert_eq!(object, "optical table 't'");
    assert!(problem.contains("at least 2"), "{problem}");
}

#[test]
fn new_errors_name_the_row() {
    let v = OpticalConstants { delta_o: 1e-3, beta_o: 1e-4, delta_e: 1e-3, beta_e: 1e-4 };
    let (object, _) = object_of(OpticalTable::new("t", vec![1.0, 2.0], vec![v]).expect_err("length"));
    assert_eq!(object, "optical table 't'");
    let (object, _) = object_of(OpticalTable::new("t", vec![1.0, 3.0, 2.0], vec![v; 3]).expect_err("order"));
    assert_eq!(object, "optical table 't' row 2");
    let bad = OpticalConstants { beta_e: f64::INFINITY, ..v };
    let (object, problem) = object_of(OpticalTable::new("t", vec![1.0, 2.0], vec![v, bad]).expect_err("inf"));
    assert_eq!((object.as_str(), problem.contains("beta_e")), ("optical table 't' row 1", true));
    assert!(OpticalTable::new("t", vec![1.0], vec![v]).is_err());
    assert!(OpticalTable::new("t", vec![f64::NAN, 2.0], vec![v; 2]).is_err());
}
