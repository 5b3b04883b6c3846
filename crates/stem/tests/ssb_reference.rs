//! SSB against `<prefix>_reference.h5` (`ssb_object`, complex64, read with our own reader) for
//! every developer acquisition, with each set's true geometry from `<prefix>_params.json`
//! (centre, BF radius, rotation, C10/C12/φ12, detector sampling, step): relative L2 ≤ 1e-4 (the
//! fixtures README's tolerance). Also: the DPC default rotation, the file-derived sampling, and
//! bad input as typed errors naming the parameter.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;

use hdf5_reader::messages::datatype::Datatype;
use num_complex::Complex64;
use scatterlab_core::CancelToken;
use scatterlab_hdf5::H5File;
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, MaskPolicy, PixelSlice, StreamCursor};
use scatterlab_stem::reduce::{FusedPass, VirtualDetector};
use scatterlab_stem::ssb::{reconstruct, rotation_from_dpc, ssb, Aberrations, BfPixels, BfStack, Optics, SsbOptions, SsbProducts};
use serde_json::Value;

fn dir() -> PathBuf {
    let d = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/stem/"));
    assert!(d.join("dev_small_master.h5").is_file(), "STEM fixtures missing at {} (../shared/fixtures/stem beside the repository)", d.display());
    d
}

fn params(prefix: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir().join(format!("{prefix}_params.json"))).unwrap()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// A compound `{r, i}` dataset of floats (h5py's complex64/complex128) as complex numbers.
/// `dataset_numbers` reads numbers only, so the raw bytes are decoded here by the members.
fn complex_dataset(prefix: &str, path: &str) -> Vec<Complex64> {
    let file = H5File::open_path(dir().join(format!("{prefix}_reference.h5"))).unwrap();
    let ds = file.reader().dataset(path).unwrap();
    let n = ds.num_elements().unwrap() as usize;
    let raw = ds.read_raw_bytes().unwrap();
    let Datatype::Compound { size, fields } = ds.dtype() else { panic!("{path}: not a compound type: {:?}", ds.dtype()) };
    let member = |name: &str| {
        let fl = fields.iter().find(|fl| fl.name == name).unwrap_or_else(|| panic!("{path}: no member {name}"));
        let Datatype::FloatingPoint { size, byte_order } = &fl.datatype else { panic!("{path}.{name}: not a float") };
        assert_eq!(format!("{byte_order:?}"), "LittleEndian");
        (fl.byte_offset as usize, *size as usize)
    };
    let (re, im) = (member("r"), member("i"));
    let size = *size as usize;
    assert_eq!(raw.len(), n * size);
    let read = |e: &[u8], (at, w): (usize, usize)| match w {
        4 => f32::from_le_bytes(e[at..at + 4].try_into().unwrap()) as f64,
        8 => f64::from_le_bytes(e[at..at + 8].try_into().unwrap()),
        _ => panic!("{w}-byte float"),
    };
    raw.chunks_exact(size).map(|e| Complex64::new(read(e, re), read(e, im))).collect()
}

fn open(prefix: &str) -> (DirFileSet, Acquisition) {
    let files = DirFileSet::new(dir());
    let acq = Acquisition::open(&files, &format!("{prefix}_master.h5"), &Hints::default()).unwrap();
    (files, acq)
}

/// The options of the params' true geometry (the reference's own settings).
fn true_options(p: &Value) -> SsbOptions {
    let s = &p["references"]["ssb"];
    SsbOptions {
        center: Some([f(&s["center_row_col"][0]), f(&s["center_row_col"][1])]),
        bf_radius: Some(f(&s["bf_radius_px"])),
        rotation_deg: Some(f(&s["rotation_deg"])),
        transposed: Some(s["detector_transposed"].as_bool().unwrap()),
        aberrations: Aberrations { c10_nm: f(&s["C10_nm"]), c12_nm: f(&s["C12_nm"]), phi12_rad: f(&s["phi12_rad"]) },
        dk_inv_a_per_px: Some(f(&p["detector_sampling_invA_per_px"])),
        scan_step_a: Some(f(&p["step_A"])),
        ..Default::default()
    }
}

fn run(prefix: &str, options: &SsbOptions) -> SsbProducts {
    let (files, acq) = open(prefix);
    ssb(&acq, &files, options, &mut |_, _| {}, &CancelToken::new()).unwrap()
}

fn relative_l2(a: &[Complex64], b: &[Complex64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let d: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    (d / b.iter().map(|y| y.norm_sqr()).sum::<f64>()).sqrt()
}

#[test]
fn ssb_object_equals_the_reference_on_every_dev_set() {
    for prefix in ["dev_small", "dev_medium", "dev_oddtail"] {
        let p = params(prefix);
        let got = run(prefix, &true_options(&p));
        let want = complex_dataset(prefix, "/ssb_object");
        let err = relative_l2(&got.object, &want);
        println!("{prefix}: ssb_object relative L2 {err:.3e} ({} BF pixels)", got.record.bf_pixels);
        assert_eq!(got.record.bf_pixels as u64, p["references"]["ssb"]["bf_pixels"].as_u64().unwrap(), "{prefix}");
        assert!(err <= 1e-4, "{prefix}: relative L2 {err:e}");
        assert!(!got.record.fitted);
    }
}

#[test]
fn auto_probe_is_the_default_geometry() {
    // Nothing but the rotation given: centre and radius from the auto probe of the mean pattern
    // (32.10, 31.55; 9.458 px against the true 32.3, 31.6; 9.5), dk from the measured radius.
    let got = run("dev_small", &SsbOptions { rotation_deg: Some(12.0), ..Default::default() });
    let r = &got.record;
    assert!(r.auto_probe && (r.bf_radius_px - 9.45754080179648).abs() < 1e-9, "{r:?}");
    let err = relative_l2(&got.object, &complex_dataset("dev_small", "/ssb_object"));
    println!("dev_small auto probe: {} BF pixels, relative L2 {err:.3e}", r.bf_pixels);
    assert!(err < 0.05, "{err}");
}

#[test]
fn the_reference_pins_the_astigmatism_angle_convention() {
    // φ_k = atan2(k_col, k_row). The other reading, atan2(k_row, k_col), equals this one with
    // (C12, φ12) → (−C12, −φ12): on dev_medium (C12 0.6 nm) that must miss the reference by far
    // more than the tolerance (the object's mean amplitude dominates the norm: 1.2e-3 here).
    let p = params("dev_medium");
    let o = true_options(&p);
    let swapped = SsbOptions { aberrations: Aberrations { c12_nm: -o.aberrations.c12_nm, phi12_rad: -o.aberrations.phi12_rad, ..o.aberrations }, ..o };
    let err = relative_l2(&run("dev_medium", &swapped).object, &complex_dataset("dev_medium", "/ssb_object"));
    println!("dev_medium with the swapped angle convention: relative L2 {err:.3e}");
    assert!(err > 1e-3, "{err}");
}

#[test]
fn file_sampling_and_dpc_rotation_reproduce_the_reference() {
    // Only the geometry given: dk from the semi-angle over the given radius, λ and step from the
    // file, θ from DPC (θ = −a, half turn by the physical iDPC).
    for prefix in ["dev_small", "dev_medium"] {
        let p = params(prefix);
        let options = SsbOptions { rotation_deg: None, transposed: None, dk_inv_a_per_px: None, scan_step_a: None, ..true_options(&p) };
        let got = run(prefix, &options);
        let r = &got.record;
        let want_dk = f(&p["detector_sampling_invA_per_px"]);
        assert!((r.optics.dk_inv_a_per_px - want_dk).abs() < 1e-9 * want_dk, "{prefix}: dk {}", r.optics.dk_inv_a_per_px);
        assert!(r.sampling_rule.contains("SemiAngleOverDisc"), "{}", r.sampling_rule);
        let theta = f(&p["rot_deg"]);
        assert!((r.rotation_deg - theta).abs() < 1.0, "{prefix}: θ {} (true {theta}; {})", r.rotation_deg, r.rotation_source);
        assert!(!r.transposed);
        let err = relative_l2(&got.object, &complex_dataset(prefix, "/ssb_object"));
        println!("{prefix}: DPC θ = {:.3}°, relative L2 {err:.3e}", r.rotation_deg);
        assert!(err < 0.05, "{prefix}: a rotation within a degree gives nearly the same object ({err})");
    }
}

#[test]
fn a_transposed_detector_gives_the_same_object_and_rotation() {
    // dev_small with every frame transposed as a transposed camera would store it: the BF disc
    // around the swapped centre with `transposed` must give the reference object, and DPC on
    // the transposed frames must pick the transposed order and the same θ (θ = −a both ways).
    let p = params("dev_small");
    let o = true_options(&p);
    let (_, acq) = open("dev_small");
    let [r, c] = acq.det_shape();
    let [cr, cc] = o.center.unwrap();
    let (dk, radius, step) = (o.dk_inv_a_per_px.unwrap(), o.bf_radius.unwrap(), o.scan_step_a.unwrap());
    let pixels = BfPixels::disc([c, r], [cc, cr], radius, dk, true).unwrap();
    let mut stack = BfStack::new(pixels, [16, 16], r * c);
    let mut fused = FusedPass::new([c, r], 256, &VirtualDetector::standard([cc, cr], radius, [1.2 * radius, 2.5 * radius])).unwrap();
    let mut cursor = StreamCursor::new(&acq, MaskPolicy::ZeroMasked);
    while let Some(b) = cursor.next_batch(&acq, 64).unwrap() {
        let PixelSlice::U16(v) = b.data else { panic!("dev_small is u16") };
        let mut t = vec![0u16; v.len()];
        for (frame, out) in v.chunks_exact(r * c).zip(t.chunks_exact_mut(r * c)) {
            for (i, &x) in frame.iter().enumerate() {
                out[(i % c) * r + i / c] = x;
            }
        }
        stack.add(b.first_frame, PixelSlice::U16(&t)).unwrap();
        fused.add(b.first_frame, PixelSlice::U16(&t)).unwrap();
    }
    let wavelength = f(&p["wavelength_A"]);
    let optics = Optics { wavelength_a: wavelength, k_alpha_inv_a: f(&p["k_alpha_invA"]), dk_inv_a_per_px: dk };
    let object = reconstruct(&stack, &optics, &o.aberrations, step, o.rotation_deg.unwrap(), &CancelToken::new()).unwrap();
    let err = relative_l2(&object, &complex_dataset("dev_small", "/ssb_object"));
    println!("dev_small transposed: relative L2 {err:.3e}");
    assert!(err <= 1e-4, "{err}");
    let d = rotation_from_dpc(&fused.finish(), [16, 16], dk, step).unwrap();
    println!("dev_small transposed: DPC a = {:.3}°, θ = {:.3}°, transposed {}", d.dpc_deg, d.theta_deg, d.transposed);
    assert!(d.transposed);
    assert!((d.theta_deg - 12.0).abs() < 1.0, "{d:?}");
}

#[test]
fn bad_input_is_a_typed_error_naming_the_parameter() {
    let p = params("dev_oddtail");
    let (files, acq) = open("dev_oddtail");
    let go = |o: &SsbOptions| ssb(&acq, &files, o, &mut |_, _| {}, &CancelToken::new()).err().map(|e| (e.object.clone(), e.to_string()));
    let base = true_options(&p);
    // A radius that holds no pixel centre (the centre sits 0.4 / 0.2 px off the nearest one).
    let e = go(&SsbOptions { bf_radius: Some(0.1), ..base.clone() }).unwrap();
    assert_eq!(e.0, "BF radius", "{e:?}");
    let e = go(&SsbOptions { center: Some([-50.0, -50.0]), ..base.clone() }).unwrap();
    assert_eq!(e.0, "BF radius", "{e:?}");
    for (o, name) in [
        (SsbOptions { aberrations: Aberrations { c10_nm: f64::NAN, ..base.aberrations }, ..base.clone() }, "C10"),
        (SsbOptions { aberrations: Aberrations { c12_nm: f64::INFINITY, ..base.aberrations }, ..base.clone() }, "C12"),
        (SsbOptions { aberrations: Aberrations { phi12_rad: f64::NAN, ..base.aberrations }, ..base.clone() }, "phi12"),
        (SsbOptions { rotation_deg: Some(f64::NAN), ..base.clone() }, "scan rotation"),
        (SsbOptions { bf_radius: Some(f64::NAN), ..base.clone() }, "BF radius"),
        (SsbOptions { dk_inv_a_per_px: Some(-1.0), ..base.clone() }, "detector sampling"),
        (SsbOptions { scan_step_a: Some(f64::NAN), ..base.clone() }, "scan step"),
        (SsbOptions { wavelength_a: Some(0.0), ..base.clone() }, "wavelength"),
        (SsbOptions { center: Some([f64::NAN, 3.0]), ..base.clone() }, "beam centre row"),
    ] {
        let e = go(&o).unwrap_or_else(|| panic!("{name}: no error"));
        assert_eq!(e.0, name, "{e:?}");
    }
    // A scan of one row (the scan shape given as a hint: 1 × 20 of the 20 frames).
    let one_row = Acquisition::open(&files, "dev_oddtail_master.h5", &Hints { scan_shape: Some([1, 20]), ..Default::default() }).unwrap();
    let e = ssb(&one_row, &files, &base, &mut |_, _| {}, &CancelToken::new()).unwrap_err();
    assert_eq!(e.object, "scan shape", "{e}");
    // Missing calibration: no semi-angle or step in the file and none given.
    let bare = Acquisition::open(&DirFileSet::new(dir()), "dev_small_single.h5", &Hints { scan_shape: Some([16, 16]), ..Default::default() }).unwrap();
    let cal = bare.calibration();
    let o = SsbOptions { scan_step_a: None, dk_inv_a_per_px: None, ..true_options(&params("dev_small")) };
    let e = ssb(&bare, &DirFileSet::new(dir()), &o, &mut |_, _| {}, &CancelToken::new()).unwrap_err();
    println!("missing calibration: {e}");
    assert!(["wavelength", "convergence semi-angle", "scan step"].contains(&e.object.as_str()), "{e} ({cal:?})");
}
