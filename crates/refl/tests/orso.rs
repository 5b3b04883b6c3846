//! ORSO `.ort` reading: a two-dataset file written by orsopy 1.2.3 (`data/make_orso_example.py`)
//! reads back with its merged metadata and its columns; malformed files name the line.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_refl::orso::parse_orso;
use scatterlab_refl::ReflError;

const FILE: &str = include_str!("data/orso_two_datasets.ort");

#[test]
fn orsopy_file_reads_back_with_metadata() {
    let sets = parse_orso(FILE, "orso_two_datasets.ort").unwrap();
    assert_eq!(sets.len(), 2);
    assert_eq!(sets[0].name(), "s-polarised 250 eV");
    assert_eq!(sets[1].name(), "p-polarised 250 eV");
    let h0 = &sets[0].header;
    assert_eq!(h0["data_source"]["sample"]["name"], "P3HT on Si");
    assert_eq!(h0["data_source"]["experiment"]["probe"], "x-ray");
    assert_eq!(h0["data_source"]["measurement"]["instrument_settings"]["wavelength"]["magnitude"], 49.59);
    // The second header overrides the polarisation and inherits the rest.
    let h1 = &sets[1].header;
    assert_eq!(h0["data_source"]["measurement"]["instrument_settings"]["polarization"], "mo");
    assert_eq!(h1["data_source"]["measurement"]["instrument_settings"]["polarization"], "po");
    assert_eq!(h1["data_source"]["sample"]["name"], "P3HT on Si");
    for (i, set) in sets.iter().enumerate() {
        let d = &set.data;
        assert_eq!(d.q.len(), 12);
        assert!((d.q[0] - 0.01).abs() < 1e-15 && (d.q[11] - 0.2).abs() < 1e-15);
        let r0 = (-0.01f64 * (30.0 + 10.0 * i as f64)).exp();
        assert!((d.r[0] - r0).abs() < 1e-15 * r0);
        assert!((d.dr.as_ref().unwrap()[0] - 0.03 * r0).abs() < 1e-15);
        assert!((d.dq.as_ref().unwrap()[11] - 0.01).abs() < 1e-15); // FWHM = 0.05 q
    }
}

#[test]
fn nanometre_units_and_bad_rows() {
    let nm = "# data_set: x\n# columns:\n# - {name: Qz, unit: 1/nm}\n# - {name: R}\n0.5 0.9\n1.0 0.5\n";
    let sets = parse_orso(nm, "nm.ort").unwrap();
    assert_eq!(sets[0].data.q, vec![0.05, 0.1]);
    let err = |text: &str| match parse_orso(text, "bad.ort") {
        Err(ReflError::Input(e)) => format!("{}: {}", e.object, e.problem),
        other => panic!("{other:?}"),
    };
    assert!(err("# columns:\n# - {name: Qz}\n# - {name: R}\n0.1 0.5\n0.2 x\n").starts_with("bad.ort line 5"));
    assert!(err("# title: t\n0.1 0.5\n").contains("no `columns`"));
    assert!(err("# columns:\n# - {name: Qz, unit: 1/furlong}\n# - {name: R}\n0.1 0.5\n").contains("1/furlong"));
    assert!(err("# columns: [\n0.1 0.5\n").contains("not YAML"));
}

#[test]
fn written_files_read_back_identically() {
    let sets = parse_orso(FILE, "orso_two_datasets.ort").unwrap();
    let text = scatterlab_refl::orso::write_orso(&sets).unwrap();
    let again = parse_orso(&text, "written.ort").unwrap();
    assert_eq!(again.len(), 2);
    for (a, b) in sets.iter().zip(&again) {
        assert_eq!(a.header, b.header);
        assert_eq!((&a.data.q, &a.data.r, &a.data.dr, &a.data.dq), (&b.data.q, &b.data.r, &b.data.dr, &b.data.dq));
    }
}
