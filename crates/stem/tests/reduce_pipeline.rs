//! The `reduce` pipeline's options and the fused pass's narrow (u8/u16) kernels:
//! - radii in mrad convert with α / R (convergence semi-angle over the measured BF radius), so
//!   a BF of α mrad is exactly the measured disc, and the sampling is recorded;
//! - the u8 and u16 kernels (u32 accumulators folded every 65,537 frames) give the same result as
//!   the u32 kernel (u64 accumulators) on the same counts, across the fold and with saturated
//!   pixels, for every product.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::path::PathBuf;

use rand::{Rng, SeedableRng};
use scatterlab_core::CancelToken;
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, PixelData, PixelSlice};
use scatterlab_stem::reduce::{reduce, DetectorShape, FusedPass, FusedResult, RadiusUnit, ReduceDevice, ReduceOptions, VirtualDetector};

fn dir() -> PathBuf {
    scatterlab_testkit::fixture("stem")
}

fn run(options: &ReduceOptions) -> scatterlab_stem::reduce::Products {
    let files = DirFileSet::new(dir());
    let acq = Acquisition::open(&files, "dev_small_master.h5", &Hints::default()).unwrap();
    pollster::block_on(reduce(&acq, &files, options, ReduceDevice::Cpu, &mut |_, _| {}, &CancelToken::new())).unwrap()
}

#[test]
fn radii_in_mrad_use_the_measured_bf_disc() {
    let px = run(&ReduceOptions::default());
    let r = px.record.bf_radius_px;
    // dev_small: convergence semi-angle 20 mrad (the master's /entry/instrument/stem).
    let mrad = run(&ReduceOptions { bf_radius: Some(20.0), adf: Some([40.0, 80.0]), radius_unit: RadiusUnit::Mrad, ..Default::default() });
    let s = mrad.record.sampling_mrad_per_px.expect("sampling recorded");
    println!("measured BF radius {r:.4} px → sampling {s:.5} mrad/px; ADF {:?} px", mrad.record.adf_px);
    assert!((s - 20.0 / r).abs() < 1e-12);
    assert!((mrad.record.bf_radius_px - r).abs() < 1e-9, "BF of α mrad = the measured disc");
    assert!((mrad.record.adf_px[0] - 2.0 * r).abs() < 1e-9 && (mrad.record.adf_px[1] - 4.0 * r).abs() < 1e-9);
    let bf = |p: &scatterlab_stem::reduce::Products| p.integers.iter().find(|(n, _, _)| n == "bf").unwrap().2.clone();
    assert_eq!(bf(&mrad), bf(&px), "same BF detector, same image");
    // Radii in pixels record the same sampling: one rule for every product and manifest.
    assert_eq!(px.record.sampling_mrad_per_px, Some(s));
    assert_eq!(px.record.detector_sampling.as_ref().map(|d| d.source), Some(scatterlab_stem::sampling::SamplingSource::SemiAngleOverDisc));
}

fn detectors(det: [usize; 2]) -> Vec<VirtualDetector> {
    let c = [det[0] as f64 / 2.0 - 0.2, det[1] as f64 / 2.0 + 0.4];
    let mut d = VirtualDetector::standard(c, 2.5, [3.0, 6.0]);
    d.push(VirtualDetector { name: "box".into(), shape: DetectorShape::Rect { rows: det[0] / 3..det[0], cols: 0..3 } });
    d
}

fn pass(det: [usize; 2], n: usize, batches: &[(u64, PixelData)]) -> FusedResult {
    let mut p = FusedPass::new(det, n, &detectors(det)).unwrap();
    for (first, data) in batches {
        p.add(*first, data.as_slice()).unwrap();
    }
    p.finish()
}

fn widen(d: &PixelData) -> PixelData {
    match d {
        PixelData::U8(v) => PixelData::U32(v.iter().map(|&x| u32::from(x)).collect()),
        PixelData::U16(v) => PixelData::U32(v.iter().map(|&x| u32::from(x)).collect()),
        other => other.clone(),
    }
}

/// Narrow batches against the same counts widened to u32 (the u64 kernel).
fn check(det: [usize; 2], n: usize, batches: Vec<(u64, PixelData)>, what: &str) {
    let wide: Vec<(u64, PixelData)> = batches.iter().map(|(f, d)| (*f, widen(d))).collect();
    let (a, b) = (pass(det, n, &batches), pass(det, n, &wide));
    assert_eq!(a, b, "{what}: narrow and u32 kernels differ");
}

#[test]
fn narrow_kernels_equal_the_u32_kernel_on_random_frames() {
    let seed = scatterlab_testkit::seed("stem reduce pipeline");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for (det, n) in [([13, 17], 91), ([70, 66], 9), ([1, 130], 40)] {
        let px = det[0] * det[1];
        let u8s: Vec<u8> = (0..n * px).map(|_| if rng.gen_bool(0.05) { u8::MAX } else { rng.gen() }).collect();
        let cut = n / 3 * px;
        check(det, n, vec![(0, PixelData::U8(u8s[..cut].to_vec())), ((n / 3) as u64, PixelData::U8(u8s[cut..].to_vec()))], &format!("u8 {det:?} seed {seed}"));
        let u16s: Vec<u16> = (0..n * px).map(|_| if rng.gen_bool(0.05) { u16::MAX } else { rng.gen() }).collect();
        check(det, n, vec![(0, PixelData::U16(u16s))], &format!("u16 {det:?} seed {seed}"));
    }
}

/// Random annuli (centres inside, on the edge and outside), rectangles and sparse user masks: the
/// narrow kernel sums them as masks over their bounding boxes, the wide one as row runs.
#[test]
fn narrow_masks_equal_the_u32_runs_for_random_detectors() {
    let seed = scatterlab_testkit::seed("stem reduce pipeline");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for det in [[96, 96], [37, 53], [5, 300], [130, 7], [300, 5]] {
        let px = det[0] * det[1];
        let mut dets = Vec::new();
        for k in 0..12 {
            let c = [rng.gen_range(-10.0..det[0] as f64 + 10.0), rng.gen_range(-10.0..det[1] as f64 + 10.0)];
            let inner = rng.gen_range(0.0..20.0);
            let outer = if k == 0 { f64::INFINITY } else { inner + rng.gen_range(0.0..60.0) };
            dets.push(VirtualDetector::annulus(&format!("annulus{k}"), c, inner, outer));
            let (r0, c0) = (rng.gen_range(0..det[0]), rng.gen_range(0..det[1]));
            let rect = DetectorShape::Rect { rows: r0..rng.gen_range(r0 + 1..=det[0]), cols: c0..rng.gen_range(c0 + 1..=det[1]) };
            dets.push(VirtualDetector { name: format!("rect{k}"), shape: rect });
            let mask = DetectorShape::Mask((0..px).map(|_| rng.gen_bool(0.02)).collect());
            dets.push(VirtualDetector { name: format!("mask{k}"), shape: mask });
        }
        dets.retain(|d| d.runs(det).is_ok()); // those covering no pixel are errors, tested elsewhere
        assert!(dets.len() > 20, "{det:?}: too few detectors left");
        let n = 7;
        let u16s: Vec<u16> = (0..n * px).map(|_| if rng.gen_bool(0.05) { u16::MAX } else { rng.gen() }).collect();
        let u32s: Vec<u32> = u16s.iter().map(|&v| u32::from(v)).collect();
        let run = |data: PixelSlice<'_>| {
            let mut p = FusedPass::new(det, n, &dets).unwrap();
            p.add(0, data).unwrap();
            p.finish()
        };
        assert_eq!(run(PixelSlice::U16(&u16s)), run(PixelSlice::U32(&u32s)), "{det:?} seed {seed}");
    }
}

#[test]
fn u16_pattern_sums_fold_before_they_overflow() {
    // 65,537 frames of 65,535 fill a u32 pattern sum exactly; a few more frames, all saturated
    // on some pixels, must carry into the u64 result (pending sums fold at 65,537 frames).
    let det = [4, 6];
    let n = 65_537 + 300;
    let px = det[0] * det[1];
    let frames: Vec<u16> = (0..n * px).map(|i| if i % px < 5 { u16::MAX } else { (i % 7) as u16 }).collect();
    let (a, b) = frames.split_at(40_000 * px);
    let batches = vec![(0, PixelData::U16(a.to_vec())), (40_000, PixelData::U16(b.to_vec()))];
    let result = pass(det, n, &batches);
    assert_eq!(result.sum_dp[0], n as u64 * 65_535, "a saturated pixel's sum exceeds u32 and stays exact");
    assert!(result.sum_dp[0] > u64::from(u32::MAX));
    check(det, n, batches, "65,837 u16 frames");
}
