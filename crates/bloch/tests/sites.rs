//! The asymmetric unit and its site map on every fixture crystal: `expand` gives exactly the
//! P1 atoms of `parse_cif`, every image is R·x_site + t of its site, and the free directions of
//! the special positions are the crystallographic ones.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_bloch::crystal::{parse_cif_asymmetric, wrap_unit, AsymmetricUnit};
use scatterlab_bloch::parse_cif;
use serde_json::Value;

fn fixture_crystals() -> Vec<(String, String)> {
    let json: Value = serde_json::from_str(&scatterlab_testkit::read_fixture_text("bloch/reference.json")).expect("json");
    json["crystals"].as_object().unwrap().iter().map(|(k, v)| (k.clone(), v["cif"].as_str().unwrap().to_owned())).collect()
}

fn asu(name: &str) -> AsymmetricUnit {
    let (_, cif) = fixture_crystals().into_iter().find(|(n, _)| n == name).unwrap();
    parse_cif_asymmetric(name, &cif).unwrap()
}

#[test]
fn expand_equals_parse_cif() {
    let crystals = fixture_crystals();
    assert_eq!(crystals.len(), 4);
    for (name, cif) in crystals {
        let asu = parse_cif_asymmetric(&name, &cif).unwrap();
        let (expanded, images) = asu.expand();
        assert_eq!(expanded, parse_cif(&name, &cif).unwrap(), "{name}");
        assert_eq!(images.len(), expanded.atoms.len());
        for (atom, image) in expanded.atoms.iter().zip(&images) {
            let site = &asu.sites[image.site];
            assert_eq!(atom.label, site.label);
            assert_eq!(atom.frac, image.op.apply(site.frac).map(wrap_unit), "{name} {}", atom.label);
        }
    }
}

#[test]
fn special_position_bases() {
    let quartz = asu("quartz_aniso");
    assert_eq!(quartz.position_basis(0).unwrap(), vec![[0.0, 1.0, 0.0]]);
    assert_eq!(quartz.position_basis(1).unwrap().len(), 3);
    // Si1 on the 2-fold axis [100]-type: 4 free U components.
    assert_eq!(quartz.adp_basis(0).unwrap().len(), 4);
    assert_eq!(quartz.adp_basis(1).unwrap().len(), 6);
    let srtio3 = asu("SrTiO3");
    for site in 0..3 {
        assert!(srtio3.position_basis(site).unwrap().is_empty(), "SrTiO3 site {site}");
    }
    // O1 at (½, ½, 0) has 4/mmm symmetry: U11 = U22 ≠ U33, no off-diagonal terms.
    assert_eq!(srtio3.adp_basis(2).unwrap(), vec![[1.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]]);
    assert!(asu("Si").position_basis(0).unwrap().is_empty());
    // Urea (P-421m): C1, O1 on mm2 (0, ½, z); N1, H1, H2 on the mirror (x, x+½, z).
    let urea = asu("urea");
    for site in [0, 1] {
        assert_eq!(urea.position_basis(site).unwrap(), vec![[0.0, 0.0, 1.0]], "urea site {site}");
    }
    for site in [2, 3, 4] {
        assert_eq!(urea.position_basis(site).unwrap(), vec![[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]], "urea site {site}");
    }
}
