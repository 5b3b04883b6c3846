//! Partial acquisitions (issue: silent wrong DPC on partial data). With data files removed
//! (one, two, all but one) the missing files' frame ranges come from the file numbers and the
//! frames per file, and a reduction of the frames present leaves the missing frames out of
//! everything: integer products 0 and real products NaN there, the CoM mean, the rotation fit
//! and the iDPC integration equal references computed from the present frames alone (the CoM
//! of each frame taken from a reduction of the complete acquisition, which is per frame exact).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;

use scatterlab_core::CancelToken;
use scatterlab_hdf5::storage::open_native;
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, MapFileSet};
use scatterlab_stem::reduce::{idpc_physical, reduce, Products, ReduceDevice, ReduceOptions, VectorField};

fn dir() -> PathBuf {
    let d = scatterlab_testkit::fixture("stem");
    assert!(d.join("dev_small_master.h5").is_file(), "STEM fixtures missing at {}", d.display());
    d
}

/// `prefix`'s master and data files except those numbered in `drop`.
fn files_without(prefix: &str, n_files: usize, drop: &[usize]) -> MapFileSet {
    let mut set = MapFileSet::new();
    let master = format!("{prefix}_master.h5");
    set.insert(&master, open_native(dir().join(&master)).unwrap());
    for k in (1..=n_files).filter(|k| !drop.contains(k)) {
        let f = format!("{prefix}_data_{k:06}.h5");
        set.insert(&f, open_native(dir().join(&f)).unwrap());
    }
    set
}

fn ranges(acq: &Acquisition) -> Vec<(String, Option<[u64; 2]>)> {
    acq.missing().iter().map(|m| (m.link.clone(), m.frames)).collect()
}

#[test]
fn missing_file_ranges_follow_the_file_numbers() {
    let r = |k: usize, a: u64, b: u64| (format!("data_{k:06}"), Some([a, b]));
    // dev_small: 100, 100, 56 frames per file.
    let cases: [(&[usize], Vec<_>); 5] = [
        (&[3], vec![r(3, 200, 256)]),
        (&[2], vec![r(2, 100, 200)]),
        (&[2, 3], vec![r(2, 100, 200), r(3, 200, 256)]),
        (&[1, 2], vec![r(1, 0, 100), r(2, 100, 200)]),
        (&[1, 3], vec![r(1, 0, 100), r(3, 200, 256)]),
    ];
    for (drop, want) in cases {
        let acq = Acquisition::open(&files_without("dev_small", 3, drop), "dev_small_master.h5", &Hints::default()).unwrap();
        assert_eq!(ranges(&acq), want, "dev_small without {drop:?}");
        let missing: u64 = want.iter().map(|(_, f)| f.map_or(0, |[a, b]| b - a)).sum();
        assert_eq!(acq.n_missing_frames(), missing);
        let present = acq.present_frames();
        assert_eq!(present.iter().filter(|p| !**p).count() as u64, missing);
    }
    // dev_medium: 5000 × 3 + 1384 frames.
    let acq = Acquisition::open(&files_without("dev_medium", 4, &[2, 3]), "dev_medium_master.h5", &Hints::default()).unwrap();
    assert_eq!(ranges(&acq), vec![r(2, 5000, 10000), r(3, 10000, 15000)]);
    let acq = Acquisition::open(&files_without("dev_medium", 4, &[1, 2, 3]), "dev_medium_master.h5", &Hints::default()).unwrap();
    assert_eq!(ranges(&acq), vec![r(1, 0, 5000), r(2, 5000, 10000), r(3, 10000, 15000)]);
    let acq = Acquisition::open(&files_without("dev_medium", 4, &[2, 3, 4]), "dev_medium_master.h5", &Hints::default()).unwrap();
    assert_eq!(ranges(&acq), vec![r(2, 5000, 10000), r(3, 10000, 15000), r(4, 15000, 16384)]);
}

/// dev_small's geometry from its params (so the complete and partial reductions use one).
fn options(allow_missing: bool) -> ReduceOptions {
    ReduceOptions { center: Some([32.3, 31.6]), bf_radius: Some(9.5), adf: Some([11.0, 24.0]), allow_missing, ..Default::default() }
}

fn run(files: &dyn scatterlab_stem::load::FileSet, options: &ReduceOptions) -> Result<Products, String> {
    let acq = Acquisition::open(files, "dev_small_master.h5", &Hints::default()).map_err(|e| e.to_string())?;
    pollster::block_on(reduce(&acq, files, options, ReduceDevice::Cpu, &mut |_, _| {}, &CancelToken::new())).map_err(|e| e.to_string())
}

fn real<'a>(p: &'a Products, name: &str) -> &'a [f64] {
    &p.reals.iter().find(|r| r.0 == name).unwrap_or_else(|| panic!("no {name}; notes {:?}", p.record.notes)).2
}

fn integer<'a>(p: &'a Products, name: &str) -> &'a [u64] {
    &p.integers.iter().find(|r| r.0 == name).unwrap_or_else(|| panic!("no {name}")).2
}

/// Mean squared interior curl of `(r, c)` (components swapped if `t`) rotated by `deg`, over the
/// positions whose four neighbours all have data — written out here, independently of the crate.
fn masked_curl(r: &[f64], c: &[f64], rows: usize, cols: usize, deg: f64, t: bool) -> f64 {
    let (s, co) = deg.to_radians().sin_cos();
    let (a, b) = if t { (c, r) } else { (r, c) };
    let gr = |k: usize| co * a[k] - s * b[k];
    let gc = |k: usize| s * a[k] + co * b[k];
    let (mut sum, mut n) = (0.0, 0);
    for i in 1..rows - 1 {
        for j in 1..cols - 1 {
            let (up, down, left, right) = ((i - 1) * cols + j, (i + 1) * cols + j, i * cols + j - 1, i * cols + j + 1);
            if [up, down, left, right].iter().any(|&k| !a[k].is_finite() || !b[k].is_finite()) {
                continue;
            }
            let curl = 0.5 * (gc(down) - gc(up)) - 0.5 * (gr(right) - gr(left));
            sum += curl * curl;
            n += 1;
        }
    }
    sum / n as f64
}

#[test]
fn a_partial_reduction_leaves_the_missing_frames_out() {
    let complete = run(&DirFileSet::new(dir()), &options(false)).unwrap();
    let (rows, cols) = (16, 16);
    for drop in [&[3usize][..], &[2, 3], &[1, 3]] {
        let files = files_without("dev_small", 3, drop);
        let e = run(&files, &options(false)).err().unwrap();
        assert!(e.contains("--allow-missing") && e.contains(&format!("dev_small_data_{:06}.h5", drop[0])), "{e}");
        let p = run(&files, &options(true)).unwrap();
        let acq = Acquisition::open(&files, "dev_small_master.h5", &Hints::default()).unwrap();
        let present = acq.present_frames();
        assert_eq!(p.present, present, "without {drop:?}");
        assert_eq!(p.record.frames_missing, present.iter().filter(|v| !**v).count() as u64);
        // Integer products: the complete ones where present, 0 elsewhere.
        for name in ["bf", "abf", "adf", "df", "total"] {
            let want: Vec<u64> = integer(&complete, name).iter().zip(&present).map(|(&v, &k)| if k { v } else { 0 }).collect();
            assert_eq!(integer(&p, name), want.as_slice(), "{name} without {drop:?}");
        }
        let n_present = present.iter().filter(|v| **v).count() as f64;
        let mean_dp = real(&p, "mean_dp");
        for (m, s) in mean_dp.iter().zip(integer(&p, "sum_dp")) {
            assert!((m * n_present - *s as f64).abs() < 1e-6, "mean over the present frames");
        }
        // CoM: per frame as in the complete reduction, NaN without data, mean over the present.
        let mut centred = [Vec::new(), Vec::new()];
        for (axis, raw) in ["com_row_raw", "com_col_raw"].iter().enumerate() {
            let full = real(&complete, raw);
            let got = real(&p, raw);
            let mean = full.iter().zip(&present).filter(|(_, k)| **k).map(|(v, _)| v).sum::<f64>() / n_present;
            for (i, (&g, &k)) in got.iter().zip(&present).enumerate() {
                if k {
                    assert_eq!(g, full[i], "{raw}[{i}]");
                } else {
                    assert!(g.is_nan(), "{raw}[{i}] = {g} has no data");
                }
            }
            let name = if axis == 0 { "com_row" } else { "com_col" };
            for (g, w) in real(&p, name).iter().zip(full.iter().zip(&present).map(|(v, k)| if *k { v - mean } else { f64::NAN })) {
                assert!((g - w).abs() < 1e-12 || (g.is_nan() && w.is_nan()), "{name}: {g} vs {w}");
            }
            centred[axis] = real(&p, name).to_vec();
        }
        // Rotation: the exact minimum of the masked curl, against a 0.005° scan of it here.
        let (deg, t) = (p.record.rotation_deg.unwrap(), p.record.use_transpose.unwrap());
        let mut best = (f64::INFINITY, 0.0, false);
        for order in [false, true] {
            for k in 0..36_000 {
                let a = k as f64 * 0.005;
                let v = masked_curl(&centred[0], &centred[1], rows, cols, a, order);
                if v < best.0 {
                    best = (v, a, order);
                }
            }
        }
        let diff = ((deg - best.1).rem_euclid(180.0) + 90.0).rem_euclid(180.0) - 90.0;
        assert!(diff.abs() < 0.01 && t == best.2, "without {drop:?}: rotation {deg}° ({t}) vs reference {}° ({})", best.1, best.2);
        // iDPC: on the longest band of complete rows, equal to integrating that band alone.
        let complete_row = |i: usize| present[i * cols..(i + 1) * cols].iter().all(|v| *v);
        let (mut band, mut start) = ((0, 0), None);
        for i in 0..=rows {
            match (i < rows && complete_row(i), start) {
                (true, None) => start = Some(i),
                (false, Some(s)) => {
                    if i - s > band.1 - band.0 {
                        band = (s, i);
                    }
                    start = None;
                }
                _ => {}
            }
        }
        let crop = |v: &[f64]| v[band.0 * cols..band.1 * cols].to_vec();
        let field = VectorField { rows: band.1 - band.0, cols, r: crop(&centred[0]), c: crop(&centred[1]) };
        let reference = idpc_physical(&field.rotated(deg, t), p.record.dk_inv_a_per_px.unwrap(), 0.24).unwrap();
        let phase = real(&p, "idpc");
        for (i, v) in phase.iter().enumerate() {
            let row = i / cols;
            if (band.0..band.1).contains(&row) {
                let w = reference[i - band.0 * cols];
                assert!((v - w).abs() < 1e-9, "idpc[{i}] {v} vs {w}");
            } else {
                assert!(v.is_nan(), "idpc[{i}] outside the complete rows {band:?} is {v}");
            }
        }
        println!("without {drop:?}: {} frames present, rotation {deg:.2}° (complete {:.2}°), iDPC rows {band:?}", n_present, complete.record.rotation_deg.unwrap());
    }
}

/// dev_small_master.h5 with `nimages` (u64 at byte 10082, found with h5py's `get_offset`, checked
/// below) set to `n`.
fn master_with_nimages(n: u64) -> Vec<u8> {
    let mut bytes = std::fs::read(dir().join("dev_small_master.h5")).unwrap();
    assert_eq!(bytes[10082..10090], 256u64.to_le_bytes(), "nimages is where h5py put it");
    bytes[10082..10090].copy_from_slice(&n.to_le_bytes());
    bytes
}

#[test]
fn an_absurd_frame_count_is_a_named_error() {
    // nimages = 2⁶⁴ − 1 once panicked with "capacity overflow" and 2⁴⁰ aborted allocating 8 TiB.
    for n in [u64::MAX, 1 << 40] {
        let mut set = files_without("dev_small", 3, &[]);
        set.insert("dev_small_master.h5", scatterlab_hdf5::storage::bytes(master_with_nimages(n)));
        let e = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("frames declared") && e.contains("exceed the limit"), "nimages {n}: {e}");
    }
    // A plausible count above the data (a scan cut short) still opens, the rest missing.
    let mut set = files_without("dev_small", 3, &[]);
    set.insert("dev_small_master.h5", scatterlab_hdf5::storage::bytes(master_with_nimages(300)));
    let acq = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).unwrap();
    assert_eq!((acq.n_frames(), acq.n_missing_frames()), (300, 44));
}

#[test]
fn an_absurd_calibration_is_ignored_with_a_warning() {
    // convergence_semiangle (f64 at byte 10158, h5py) = 1e308 once gave an infinite iDPC.
    let mut bytes = std::fs::read(dir().join("dev_small_master.h5")).unwrap();
    assert_eq!(bytes[10158..10166], 20.0f64.to_le_bytes(), "convergence_semiangle is where h5py put it");
    bytes[10158..10166].copy_from_slice(&1e308f64.to_le_bytes());
    let mut set = files_without("dev_small", 3, &[]);
    set.insert("dev_small_master.h5", scatterlab_hdf5::storage::bytes(bytes));
    let acq = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).unwrap();
    assert_eq!(acq.calibration().convergence_mrad, None);
    assert!(acq.warnings().iter().any(|w| w.contains("convergence_semiangle = 1e308 mrad")), "{:?}", acq.warnings());
    let p = run(&set, &options(false)).unwrap();
    // The sampling falls back to the file's geometry and says so; every real product is finite.
    assert_eq!(p.record.detector_sampling.as_ref().map(|s| s.source), Some(scatterlab_stem::sampling::SamplingSource::FileGeometry));
    for (name, _, values) in &p.reals {
        assert!(values.iter().all(|v| v.is_finite()), "{name}");
    }
    // A hint outside the physical range is ignored the same way.
    let hints = Hints { convergence_mrad: Some(f64::INFINITY), ..Default::default() };
    let acq = Acquisition::open(&DirFileSet::new(dir()), "dev_small_master.h5", &hints).unwrap();
    assert_eq!(acq.calibration().convergence_mrad, None);
}

#[test]
fn a_vanishing_calibration_is_ignored_with_a_warning() {
    // Found by scripts/mutate-cli.py: convergence_semiangle = 1e-300 mrad passed the (0, 1000] check and gave a
    // 1e-301 mrad/px detector sampling (an iDPC scaled by ~1e301, exit 0); a scan step of 1e-300 Å the same.
    let mut bytes = std::fs::read(dir().join("dev_small_master.h5")).unwrap();
    assert_eq!(bytes[10158..10166], 20.0f64.to_le_bytes(), "convergence_semiangle is where h5py put it");
    assert_eq!(bytes[10142..10150], 0.24f64.to_le_bytes(), "scan_step is where h5py put it");
    bytes[10158..10166].copy_from_slice(&1e-300f64.to_le_bytes());
    bytes[10142..10150].copy_from_slice(&1e-300f64.to_le_bytes());
    let mut set = files_without("dev_small", 3, &[]);
    set.insert("dev_small_master.h5", scatterlab_hdf5::storage::bytes(bytes));
    let acq = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).unwrap();
    assert_eq!((acq.calibration().convergence_mrad, acq.calibration().scan_step_a), (None, None));
    for what in ["convergence_semiangle = 1e-300 mrad", "scan_step = 1e-300 Å"] {
        assert!(acq.warnings().iter().any(|w| w.contains(what) && w.contains("ignored")), "{what}: {:?}", acq.warnings());
    }
    let p = run(&set, &options(false)).unwrap();
    assert_eq!(p.record.detector_sampling.as_ref().map(|s| s.source), Some(scatterlab_stem::sampling::SamplingSource::FileGeometry));
    for (name, _, values) in &p.reals {
        assert!(values.iter().all(|v| v.is_finite()), "{name}");
    }
    // Hints below the physical range are ignored the same way (the geometry hint included).
    let hints = Hints { convergence_mrad: Some(1e-300), scan_step_a: Some(1e-300), det_sampling_mrad: Some([1e-300, 2.0]), ..Default::default() };
    let acq = Acquisition::open(&DirFileSet::new(dir()), "dev_small_master.h5", &hints).unwrap();
    let c = acq.calibration();
    assert_eq!((c.convergence_mrad, c.scan_step_a, c.det_sampling_mrad), (None, None, None));
    assert!(acq.warnings().iter().any(|w| w.contains("detector sampling") && w.contains("ignored")), "{:?}", acq.warnings());
}

#[test]
fn an_absurd_pixel_size_leaves_the_file_geometry_out() {
    // Found by scripts/mutate-cli.py: y_pixel_size (f64 at byte 10038) = 1e308 m gave an infinite
    // file_geometry_mrad_per_px, written as null in manifest.json with exit 0.
    let mut bytes = std::fs::read(dir().join("dev_small_master.h5")).unwrap();
    assert_eq!(bytes[10038..10046], 1e-4f64.to_le_bytes(), "y_pixel_size is where h5py put it");
    bytes[10038..10046].copy_from_slice(&1e308f64.to_le_bytes());
    let mut set = files_without("dev_small", 3, &[]);
    set.insert("dev_small_master.h5", scatterlab_hdf5::storage::bytes(bytes));
    let acq = Acquisition::open(&set, "dev_small_master.h5", &Hints::default()).unwrap();
    assert_eq!(acq.calibration().det_sampling_mrad, None);
    assert!(acq.warnings().iter().any(|w| w.contains("detector sampling (pixel size / detector distance)") && w.contains("ignored")), "{:?}", acq.warnings());
    let p = run(&set, &options(false)).unwrap();
    let sampling = p.record.detector_sampling.as_ref().expect("the semi-angle over the disc still gives a sampling");
    assert_eq!((sampling.source, sampling.file_geometry_mrad_per_px), (scatterlab_stem::sampling::SamplingSource::SemiAngleOverDisc, None));
    assert!(sampling.mrad_per_px.is_finite() && sampling.warning.is_none());
    for (name, _, values) in &p.reals {
        assert!(values.iter().all(|v| v.is_finite()), "{name}");
    }
}
