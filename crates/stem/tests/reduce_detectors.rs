//! Virtual detector shapes and the fused pass on small synthetic frames: an annulus equals the
//! same pixels given as a mask and as a brute-force sum; rectangles; batches split anyhow give
//! identical products; bad inputs are named errors.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_stem::load::PixelSlice;
use scatterlab_stem::reduce::detector::mrad_to_px;
use scatterlab_stem::reduce::{DetectorShape, FusedPass, VirtualDetector};

fn frames(n: usize, det: [usize; 2]) -> Vec<u16> {
    // Deterministic, uneven values (a small LCG) so every pixel matters.
    let mut x = 12345u32;
    (0..n * det[0] * det[1])
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            ((x >> 16) % 1000) as u16
        })
        .collect()
}

#[test]
fn shapes_sum_the_pixels_they_name() {
    let det = [13, 17];
    let n = 6;
    let data = frames(n, det);
    let centre = [6.2, 8.7];
    let ring = VirtualDetector::annulus("ring", centre, 2.5, 5.0);
    let mask: Vec<bool> = (0..det[0] * det[1])
        .map(|i| {
            let (r, c) = ((i / det[1]) as f64 - centre[0], (i % det[1]) as f64 - centre[1]);
            let d = (r * r + c * c).sqrt();
            (2.5..=5.0).contains(&d)
        })
        .collect();
    let as_mask = VirtualDetector { name: "mask".into(), shape: DetectorShape::Mask(mask.clone()) };
    let rect = VirtualDetector { name: "rect".into(), shape: DetectorShape::Rect { rows: 2..5, cols: 15..17 } };
    let dets = [ring, as_mask, rect];
    let mut whole = FusedPass::new(det, n, &dets).unwrap();
    whole.add(0, PixelSlice::U16(&data)).unwrap();
    let px = det[0] * det[1];
    let mut pieces = FusedPass::new(det, n, &dets).unwrap();
    // Out of order and unevenly split.
    pieces.add(4, PixelSlice::U16(&data[4 * px..])).unwrap();
    pieces.add(0, PixelSlice::U16(&data[..px])).unwrap();
    pieces.add(1, PixelSlice::U16(&data[px..4 * px])).unwrap();
    let (a, b) = (whole.finish(), pieces.finish());
    assert_eq!(a, b, "batching changed the products");
    for f in 0..n {
        let frame = &data[f * px..(f + 1) * px];
        let brute: u64 = frame.iter().zip(&mask).filter(|(_, &m)| m).map(|(&v, _)| v as u64).sum();
        assert_eq!(a.detector("ring").unwrap()[f], brute);
        assert_eq!(a.detector("mask").unwrap()[f], brute);
        let rect: u64 = (2..5).flat_map(|r| (15..17).map(move |c| r * det[1] + c)).map(|i| frame[i] as u64).sum();
        assert_eq!(a.detector("rect").unwrap()[f], rect);
        let total: u64 = frame.iter().map(|&v| v as u64).sum();
        let row_moment: u64 = frame.iter().enumerate().map(|(i, &v)| (i / det[1]) as u64 * v as u64).sum();
        assert_eq!(a.total[f], total);
        assert!((a.com_raw[0][f] - row_moment as f64 / total as f64).abs() < 1e-12);
    }
}

#[test]
fn bad_inputs_are_named() {
    let det = [8, 8];
    let bad = |shape: DetectorShape| VirtualDetector { name: "x".into(), shape }.runs(det).unwrap_err().to_string();
    assert!(bad(DetectorShape::Mask(vec![true; 3])).contains("virtual detector 'x': mask has 3 pixels"));
    assert!(bad(DetectorShape::Rect { rows: 0..9, cols: 0..2 }).contains("outside the 8×8"));
    assert!(bad(DetectorShape::Mask(vec![false; 64])).contains("covers no detector pixel"));
    let nan = VirtualDetector::annulus("adf", [f64::NAN, 1.0], 1.0, 2.0).runs(det).unwrap_err().to_string();
    assert!(nan.starts_with("virtual detector 'adf'"), "{nan}");
    let inverted = VirtualDetector::annulus("adf", [4.0, 4.0], 3.0, 2.0).runs(det).unwrap_err().to_string();
    assert!(inverted.contains("inner ≤ outer"), "{inverted}");
    let mut pass = FusedPass::new(det, 2, &[VirtualDetector::annulus("bf", [4.0, 4.0], 0.0, 2.0)]).unwrap();
    assert!(pass.add(0, PixelSlice::U16(&[1; 65])).unwrap_err().to_string().contains("not whole 8×8 frames"));
    assert!(pass.add(1, PixelSlice::U16(&[1; 128])).unwrap_err().to_string().contains("outside the scan's 2 frames"));
    assert!(mrad_to_px(10.0, None, "ADF inner radius").unwrap_err().to_string().starts_with("ADF inner radius"));
    assert_eq!(mrad_to_px(21.0, Some(2.1), "r").unwrap(), 10.0);
}
