//! The CPU reductions against `<prefix>_reference.h5` (read with our own reader) and
//! `<prefix>_params.json` for every developer acquisition: virtual detectors, totals, sum/max
//! patterns exact; mean pattern and centre of mass to the fixtures' tolerances; auto probe; DPC
//! rotation on the grid (same step) and exactly (≤ 0.05° of the fine reference); aligned field
//! and quantem-convention iDPC; physical iDPC correlating with the true phase; display histogram
//! and LUT indices exact. Tolerances are the fixtures README's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::ops::ControlFlow;
use std::path::PathBuf;

use scatterlab_core::CancelToken;
use scatterlab_hdf5::values::dataset_numbers;
use scatterlab_hdf5::{tree, H5File, NodeKind, TreeOptions};
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, MaskPolicy, StreamOptions};
use scatterlab_stem::reduce::display::{histogram256, lut_indices};
use scatterlab_stem::reduce::idpc::{correlation, idpc_physical, idpc_quantem, resolve_half_turn};
use scatterlab_stem::reduce::{auto_probe, center_of_mass, find_rotation, FusedPass, FusedResult, RotationOptions, VirtualDetector};
use serde_json::Value;

fn dir() -> PathBuf {
    let d = scatterlab_testkit::fixture("stem");
    assert!(d.join("dev_small_master.h5").is_file(), "STEM fixtures missing at {} (../shared/fixtures/stem beside the repository)", d.display());
    d
}

fn reference(prefix: &str, name: &str) -> Vec<f64> {
    let f = H5File::open_path(dir().join(format!("{prefix}_reference.h5"))).unwrap();
    let t = tree(&f, &TreeOptions { attrs: false, ..Default::default() });
    let node =
        t.nodes.iter().find(|n| n.path.rsplit('/').next() == Some(name) && matches!(n.kind, NodeKind::Dataset(_))).unwrap_or_else(|| panic!("{prefix}_reference.h5 has no {name}"));
    dataset_numbers(&f, &node.path).unwrap()
}

fn params(prefix: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join(format!("{prefix}_params.json"))).unwrap()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse().ok())).unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Streams the acquisition (bad pixels zeroed) through one fused pass with the fixture's detectors.
fn fused(prefix: &str, p: &Value) -> (FusedResult, [usize; 2]) {
    let acq = Acquisition::open(&DirFileSet::new(dir()), &format!("{prefix}_master.h5"), &Hints::default()).unwrap();
    let scan = acq.scan_shape().unwrap();
    let vd = &p["references"]["virtual_detectors"];
    let detectors: Vec<VirtualDetector> = ["bf", "abf", "adf", "df"]
        .iter()
        .map(|&name| {
            let d = &vd[name];
            let c = [f(&d["center_row_col"][0]), f(&d["center_row_col"][1])];
            VirtualDetector::annulus(name, c, f(&d["inner_px"]), f(&d["outer_px"]))
        })
        .collect();
    let mut pass = FusedPass::new(acq.det_shape(), acq.n_frames() as usize, &detectors).unwrap();
    for (name, &n) in pass.names().to_vec().iter().zip(pass.n_pixels()) {
        assert_eq!(n as u64, vd[name]["n_pixels"].as_u64().unwrap(), "{prefix} {name} pixels");
    }
    let mut err = None;
    acq.stream(
        &StreamOptions { mask: MaskPolicy::ZeroMasked, batch_frames: 41 },
        &mut |b| {
            if let Err(e) = pass.add(b.first_frame, b.data) {
                err = Some(e);
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        },
        &mut |_: u64, _: u64| {},
        &CancelToken::new(),
    )
    .unwrap();
    assert!(err.is_none(), "{err:?}");
    (pass.finish(), [scan.rows, scan.cols])
}

fn max_abs(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

fn range(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max) - v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn as_f64(v: &[u64]) -> Vec<f64> {
    v.iter().map(|&x| x as f64).collect()
}

fn check(prefix: &str) {
    let p = params(prefix);
    let (r, scan) = fused(prefix, &p);
    // Exact integer products.
    for name in ["bf", "abf", "adf", "df"] {
        assert_eq!(as_f64(r.detector(name).unwrap()), reference(prefix, name), "{prefix} {name}");
        let total: u64 = r.detector(name).unwrap().iter().sum();
        assert_eq!(total, p["references"]["virtual_detectors"][name]["total"].as_u64().unwrap(), "{prefix} {name} total");
    }
    assert_eq!(as_f64(&r.total), reference(prefix, "total"), "{prefix} total");
    assert_eq!(as_f64(&r.sum_dp), reference(prefix, "sum_dp"), "{prefix} sum_dp");
    assert_eq!(as_f64(&r.max_dp), reference(prefix, "max_dp"), "{prefix} max_dp");
    let mean_ref = reference(prefix, "mean_dp");
    let mean = r.mean_dp();
    let rel = mean.iter().zip(&mean_ref).map(|(a, b)| (a - b).abs() / b.abs().max(1e-30)).fold(0.0, f64::max);
    assert!(rel <= 1e-6, "{prefix} mean_dp rtol {rel:e}");
    // Centre of mass.
    let e_raw = max_abs(&r.com_raw[0], &reference(prefix, "com_row_raw")).max(max_abs(&r.com_raw[1], &reference(prefix, "com_col_raw")));
    let com = center_of_mass(&r.com_raw, scan).unwrap();
    let e = max_abs(&com.r, &reference(prefix, "com_row")).max(max_abs(&com.c, &reference(prefix, "com_col")));
    println!("{prefix}: CoM raw {e_raw:.2e} px, centred {e:.2e} px (gate 1e-4)");
    assert!(e_raw <= 1e-4 && e <= 1e-4);
    // Auto probe from the mean pattern.
    let probe = auto_probe(&mean, r.det).unwrap();
    let pr = &p["references"];
    let (c0, c1, rad) = (f(&pr["auto_probe_center_row_col"][0]), f(&pr["auto_probe_center_row_col"][1]), f(&pr["auto_probe_radius_px"]));
    println!("{prefix}: auto probe {:?} r {:.4} (reference ({c0:.4}, {c1:.4}) r {rad:.4})", probe.center, probe.radius);
    assert!((probe.center[0] - c0).abs() < 1e-9 && (probe.center[1] - c1).abs() < 1e-9 && (probe.radius - rad).abs() < 1e-9);
    // Display of the ADF image.
    let d = &pr["display"];
    let adf = as_f64(r.detector("adf").unwrap());
    let hist = histogram256(&adf, f(&d["low"]), f(&d["high"])).unwrap();
    assert_eq!(hist.iter().map(|&v| v as f64).collect::<Vec<_>>(), reference(prefix, "display_adf_hist256"), "{prefix} histogram");
    let lut: Vec<f64> = lut_indices(&adf, f(&d["low"]), f(&d["high"])).unwrap().iter().map(|&v| v as f64).collect();
    assert_eq!(lut, reference(prefix, "display_adf_lut_index"), "{prefix} LUT indices");
    if scan[0] < 3 || scan[1] < 3 {
        return;
    }
    // DPC rotation.
    let dpc = &pr["dpc"];
    let rot = find_rotation(&com, &RotationOptions::default()).unwrap();
    let step = 180.0 / 179.0;
    let (grid_ref, fine_ref) = (f(&dpc["rotation_deg_grid"]), f(&dpc["rotation_deg_fine"]));
    let mod180 = |a: f64, b: f64| ((a - b).rem_euclid(180.0)).min((b - a).rem_euclid(180.0));
    println!("{prefix}: rotation grid {:.3}° (ref {grid_ref:.3}°), exact {:.3}° (ref fine {fine_ref:.2}°), transpose {}", rot.grid_deg, rot.fine_deg, rot.transpose);
    assert!(mod180(rot.grid_deg, grid_ref) <= step + 1e-9 && rot.grid_transpose == dpc["use_transpose_grid"].as_bool().unwrap());
    assert!(mod180(rot.fine_deg, fine_ref) <= 0.05 && rot.transpose == dpc["use_transpose_fine"].as_bool().unwrap());
    // The aligned field and quantem's iDPC at the grid angle.
    let aligned = com.rotated(rot.grid_deg, rot.grid_transpose);
    let ea = max_abs(&aligned.r, &reference(prefix, "dpc_row_aligned")).max(max_abs(&aligned.c, &reference(prefix, "dpc_col_aligned")));
    let q_ref = reference(prefix, "idpc_quantem_noswap");
    let eq = max_abs(&idpc_quantem(&aligned), &q_ref) / range(&q_ref);
    println!("{prefix}: aligned field {ea:.2e} px, quantem iDPC {eq:.2e} of its range (gates 1e-4)");
    assert!(ea <= 1e-4 && eq <= 1e-4);
    // Physical iDPC: the exact angle, the half turn resolved against the ADF image.
    let dk = f(&p["detector_sampling_invA_per_px"]);
    let step_a = f(&p["step_A"]);
    let mut phase = idpc_physical(&com.rotated(rot.fine_deg, rot.transpose), dk, step_a).unwrap();
    if resolve_half_turn(&phase, &adf) {
        phase.iter_mut().for_each(|v| *v = -*v);
    }
    let truth = reference(prefix, "phase_truth_rad");
    let phys_ref = reference(prefix, "idpc_physical_rad");
    let (r_truth, r_ref) = (correlation(&phase, &truth), correlation(&phase, &phys_ref));
    println!("{prefix}: physical iDPC r(truth) {r_truth:.3}, r(reference) {r_ref:.5}, range {:.4} rad (reference {:.4})", range(&phase), range(&phys_ref));
    assert!(r_truth >= 0.7, "{prefix}: iDPC correlates {r_truth:.3} with the true phase");
}

#[test]
fn dev_small() {
    check("dev_small");
}

#[test]
fn dev_medium() {
    check("dev_medium");
}

#[test]
fn dev_oddtail() {
    check("dev_oddtail");
}
