//! The two Bloch benchmark frames (docs/plans/bloch-gradients.md § 8), rebuilt from the peer's
//! JSON (`python/diffbloch_bench.py`: diffBloch's own u0, tilt matrices and coupling segments) or,
//! without the peer, from our own beam selection.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use std::path::PathBuf;

use scatterlab_bloch::beams::{mat3_mul, rotation_x, tilt_angles_deg, tilted_orientations, Cutoff, Hkl, Mat3};
use scatterlab_bloch::frame::{Frame, Segment};
use scatterlab_bloch::geometry::Optics;
use scatterlab_bloch::pattern::Simulation;
use scatterlab_bloch::{parse_cif, Crystal, StructureFactors};
use serde_json::Value;

/// A benchmark frame with what it was built from.
pub struct BenchFrame {
    /// "quartz" or "borane".
    pub name: String,
    /// The crystal (P1).
    pub crystal: Crystal,
    /// The frozen optics (diffBloch's u0, or ours from F(000) natively).
    pub optics: Optics,
    /// Orientations, segments and thickness.
    pub frame: Frame,
    /// "diffBloch plan" or a description of the native stand-in.
    pub source: String,
    /// The CIF text (for the asymmetric unit of the gradient model).
    pub cif: String,
    /// O before the tilts.
    pub orientation: Mat3,
    /// Tilt angles about lab x (degrees): O_i = R_x(θ_i)·O.
    pub tilts_deg: Vec<f64>,
}

/// Where the fixtures live (shared/fixtures/bloch).
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/fixtures/bloch"))
}

/// The vendored borane CIF (benches/data/borane_IAM_4.cif).
pub fn borane_cif() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/data/borane_IAM_4.cif")).expect("benches/data/borane_IAM_4.cif")
}

fn json_file(path: PathBuf) -> Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).expect("fixture JSON")
}

/// The CIF of frame `name`: quartz_aniso of reference.json or the vendored borane.
pub fn cif(name: &str) -> String {
    match name {
        "quartz" => json_file(fixtures_dir().join("reference.json"))["crystals"]["quartz_aniso"]["cif"].as_str().expect("quartz_aniso CIF").to_owned(),
        _ => borane_cif(),
    }
}

/// The crystal (P1) of frame `name`.
pub fn crystal(name: &str) -> Crystal {
    parse_cif(name, &cif(name)).expect("benchmark CIF parses")
}

fn mat3(v: &Value) -> Mat3 {
    std::array::from_fn(|i| std::array::from_fn(|j| v[i][j].as_f64().expect("3×3 matrix")))
}

fn hkl_list(v: &Value) -> Vec<Hkl> {
    v.as_array().expect("hkl list").iter().map(|h| std::array::from_fn(|i| h[i].as_i64().expect("integer hkl") as i32)).collect()
}

/// Rebuilds a frame from one entry of the peer's `cases`: its u0, O, tilt matrices (O_i = T_i·O),
/// thickness and segments.
pub fn from_peer(case: &Value) -> BenchFrame {
    let name = case["name"].as_str().expect("case name").to_owned();
    let crystal = crystal(&name);
    let optics = Optics::with_u0(case["energy"].as_f64().expect("energy"), case["u0"].as_f64().expect("u0")).expect("optics");
    let orientation = mat3(&case["orientation"]);
    let orientations = case["tilts"].as_array().expect("tilts").iter().map(|t| mat3_mul(&mat3(t), &orientation)).collect();
    let segments = case["segments"]
        .as_array()
        .expect("segments")
        .iter()
        .map(|s| Segment { hkl: hkl_list(&s["hkl"]), tilts: s["cover"].as_array().expect("cover").iter().map(|t| t.as_u64().expect("tilt index") as usize).collect() })
        .collect();
    let frame = Frame {
        name: name.clone(),
        direct: crystal.cell.direct_matrix(),
        orientations,
        segments,
        thicknesses_a: vec![case["thickness"].as_f64().expect("thickness")],
        absorption: false,
    };
    let tilts_deg = case["tilts_deg"].as_array().expect("tilts_deg").iter().map(|t| t.as_f64().expect("tilt angle")).collect();
    BenchFrame { cif: cif(&name), name, crystal, optics, frame, source: "diffBloch plan".to_owned(), orientation, tilts_deg }
}

/// Rotation by `deg` degrees about lab axis 0, 1 or 2 (right-handed).
fn rotation(axis: usize, deg: f64) -> Mat3 {
    let (s, c) = deg.to_radians().sin_cos();
    let (i, j) = [(1, 2), (2, 0), (0, 1)][axis];
    let mut m = [[0.0; 3]; 3];
    m[axis][axis] = 1.0;
    (m[i][i], m[i][j], m[j][i], m[j][j]) = (c, -s, s, c);
    m
}

/// The frames without the peer: our per-tilt selection (strict cut-offs, as diffBloch's per-tilt
/// coupling) for borane, and one union segment for quartz (a stand-in for diffBloch's adaptive
/// union segments: N is the union's, larger than its segments'); U0 from our F(000).
pub fn native(name: &str) -> BenchFrame {
    let crystal = crystal(name);
    let (orientation, g_max, n_tilts, thickness) = match name {
        "quartz" => (mat3(&json_file(fixtures_dir().join("synthetic_quartz/truth.json"))["U_matrix"]), 2.0, 42, 850.0),
        _ => (mat3_mul(&mat3_mul(&rotation(2, 17.0), &rotation(0, 23.0)), &rotation(1, 11.0)), 1.9, 125, 1900.0),
    };
    let table = StructureFactors::compute(&crystal, 2.0 * g_max + 0.5, 200e3, false).expect("structure factors");
    let optics = Optics::new(200e3, table.f000()).expect("optics");
    let angles = tilt_angles_deg(1.0, n_tilts);
    let simulation = Simulation {
        name: name.to_owned(),
        direct: crystal.cell.direct_matrix(),
        orientation,
        energy_ev: 200e3,
        g_solve_inv_a: g_max,
        sg_max_inv_a: 0.01,
        thicknesses_a: vec![thickness],
        absorption: false,
        rocking: None,
    };
    let orientations = tilted_orientations(&orientation, &angles);
    debug_assert!(orientations.iter().zip(&angles).all(|(o, a)| *o == mat3_mul(&rotation_x(a.to_radians()), &orientation)));
    let per_tilt: Vec<Vec<Hkl>> = orientations.iter().map(|o| simulation.select_beams(&table, &optics, o, Cutoff::Strict).expect("beams")).collect();
    let (segments, source) = if name == "quartz" {
        let mut union: Vec<Hkl> = per_tilt.into_iter().flatten().collect();
        union.sort_unstable();
        union.dedup();
        (vec![Segment { hkl: union, tilts: (0..n_tilts).collect() }], "native: one union segment (diffBloch adapts 4)")
    } else {
        (per_tilt.into_iter().enumerate().map(|(i, hkl)| Segment { hkl, tilts: vec![i] }).collect(), "native: per-tilt selection")
    };
    let frame = Frame { name: name.to_owned(), direct: simulation.direct, orientations, segments, thicknesses_a: vec![thickness], absorption: false };
    BenchFrame { name: name.to_owned(), crystal, optics, frame, source: source.to_owned(), cif: cif(name), orientation, tilts_deg: angles }
}

/// Beams per tilt of a frame (the size of the segment covering it).
pub fn beams_per_tilt(frame: &Frame) -> Vec<usize> {
    let mut n = vec![0; frame.orientations.len()];
    for s in &frame.segments {
        for &t in &s.tilts {
            n[t] = s.hkl.len();
        }
    }
    n
}
