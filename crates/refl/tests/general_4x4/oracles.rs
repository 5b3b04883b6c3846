//! The 4×4 method against its oracles: an independent plain Berreman implementation (random
//! tilted biaxial stacks) and refloxide 0.3.0's `general_reflectivity` (saved fixture).

use rand::{Rng, SeedableRng};
use scatterlab_refl::general::{general_reflectivity, GeneralReflectivity, GeneralStack, TensorLayer};

use super::{berreman, max_dev, random_tensor_layer, seed};

#[test]
fn tilted_biaxial_stacks_equal_the_independent_berreman_implementation() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed() ^ 0x4b4b);
    let mut worst = (0.0f64, String::new());
    for k in 0..25 {
        let n = rng.gen_range(1..4);
        let mut layers = vec![TensorLayer::isotropic(0.0, 0.0, 0.0, 0.0)];
        for _ in 0..n {
            let d = rng.gen_range(5.0..120.0);
            layers.push(random_tensor_layer(&mut rng, d, 0.0));
        }
        layers.push(random_tensor_layer(&mut rng, 0.0, 0.0));
        let stack = GeneralStack { layers };
        let energy = rng.gen_range(250.0..320.0);
        let k0 = scatterlab_core::units::photon_k0(energy);
        let q: Vec<f64> = (1..60).map(|i| i as f64 / 60.0 * 1.9 * k0).collect();
        let got = general_reflectivity(&stack, energy, &q).unwrap();
        let want = berreman::reflectivity(&stack, energy, &q, berreman::RoughnessRule::ModePair);
        let w = max_dev(&got, &want, FLOOR);
        if w.0 > worst.0 || w.0.is_nan() {
            worst = (w.0, format!("stack {k}: {}", w.1));
        }
    }
    eprintln!("tilted biaxial vs plain Berreman: worst {:.3e} ({})", worst.0, worst.1);
    assert!(worst.0 <= PLAIN_REL_TOL, "{}", worst.1);
}

struct OracleCase {
    id: String,
    energy: f64,
    q: Vec<f64>,
    stack: GeneralStack,
    want: GeneralReflectivity,
}

fn refloxide_cases() -> Vec<OracleCase> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/refloxide_general.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let floats = |x: &serde_json::Value| x.as_array().unwrap().iter().map(|y| y.as_f64().unwrap()).collect::<Vec<f64>>();
    let three = |x: &serde_json::Value| <[f64; 3]>::try_from(floats(x)).unwrap();
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| OracleCase {
            id: c["id"].as_str().unwrap().to_owned(),
            energy: c["energy_ev"].as_f64().unwrap(),
            q: floats(&c["q_inv_A"]),
            stack: GeneralStack {
                layers: c["layers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| TensorLayer {
                        thickness: l["thickness"].as_f64().unwrap(),
                        roughness: l["roughness"].as_f64().unwrap(),
                        delta: three(&l["delta"]),
                        beta: three(&l["beta"]),
                        euler_deg: three(&l["euler_deg"]),
                    })
                    .collect(),
            },
            want: GeneralReflectivity {
                r_ss: floats(&c["expected"]["R_ss"]),
                r_pp: floats(&c["expected"]["R_pp"]),
                r_sp: floats(&c["expected"]["R_sp"]),
                r_ps: floats(&c["expected"]["R_ps"]),
            },
        })
        .collect()
}

/// Ours vs refloxide where both use the same physics (worst seen 8e-12).
const REFLOXIDE_REL_TOL: f64 = 1e-10;
/// The 8 keV case: refloxide's general path is itself up to 2.5e-9 off the 40-digit reference on
/// the hard X-ray cases of shared/fixtures/refl (README, `refloxide_general_4x4_f64`), while ours
/// equals the recursion to 2e-12 there; seen 3.9e-10 (at q = 0.004, R_sp).
const REFLOXIDE_HARD_REL_TOL: f64 = 1e-9;
/// The plain transfer-matrix implementation (subtractive D_a⁻¹ D_b): seen ≤ 9e-10 on soft X-rays.
const PLAIN_REL_TOL: f64 = 5e-9;
/// Reflectances below this are compared absolutely.
const FLOOR: f64 = 1e-10;

#[test]
fn tilted_biaxial_stacks_match_refloxide_general_reflectivity() {
    let cases = refloxide_cases();
    assert_eq!(cases.len(), 12);
    for case in cases {
        let got = general_reflectivity(&case.stack, case.energy, &case.q).unwrap();
        let (dev, at) = max_dev(&got, &case.want, FLOOR);
        eprintln!("{:28} ours vs refloxide {dev:.2e} ({at})", case.id);
        match case.id.as_str() {
            "soft_rough_coupled" => {
                // Roughness next to coupled layers: refloxide's same-label Névot–Croce rule differs
                // from ours (CONVENTIONS.md). The plain implementation with either rule reproduces
                // each side, so the difference is the rule and nothing else.
                let same_label = berreman::reflectivity(&case.stack, case.energy, &case.q, berreman::RoughnessRule::SameLabel);
                let mode_pair = berreman::reflectivity(&case.stack, case.energy, &case.q, berreman::RoughnessRule::ModePair);
                let (a, b) = (max_dev(&same_label, &case.want, FLOOR).0, max_dev(&got, &mode_pair, FLOOR).0);
                eprintln!("{:28} plain(same-label) vs refloxide {a:.2e}, ours vs plain(mode-pair) {b:.2e}", "");
                assert!(dev > 1e-3, "the rules should differ visibly here ({dev:e})");
                assert!(a <= PLAIN_REL_TOL && b <= PLAIN_REL_TOL, "{a:e} {b:e}");
            }
            "hard_tilted_8kev" => assert!(dev <= REFLOXIDE_HARD_REL_TOL, "{}: {dev:e} {at}", case.id),
            _ => assert!(dev <= REFLOXIDE_REL_TOL, "{}: {dev:e} {at}", case.id),
        }
    }
}
