//! `ResidentGpu` (frames kept on the GPU, `shaders/stem/fused.wgsl` with the patterns off)
//! against its CPU twin `detector_images`: totals and every detector's per-frame sums identical,
//! on fresh random u16 and u32 frames split over several storage buffers (a small slab cap forces
//! the split) and uploaded in uneven batches that cross buffer boundaries; then the detectors
//! move and only the images are recomputed; bad uploads are named errors.
//! Runs on lavapipe here; SCATTERLAB_SKIP_GPU=1 skips it on a machine without any adapter.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use rand::{Rng, SeedableRng};
use scatterlab_stem::gpu::ResidentGpu;
use scatterlab_stem::load::PixelData;
use scatterlab_stem::reduce::{detector_images, DetectorShape, VirtualDetector};

fn gpu() -> Option<scatterlab_gpu::GpuContext> {
    scatterlab_testkit::gpu_or_skip("stem resident GPU", || pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default())))
}

fn slice(d: &PixelData, px: usize, range: std::ops::Range<usize>) -> PixelData {
    let r = range.start * px..range.end * px;
    match d {
        PixelData::U16(v) => PixelData::U16(v[r].to_vec()),
        PixelData::U32(v) => PixelData::U32(v[r].to_vec()),
        _ => unreachable!(),
    }
}

#[test]
fn resident_detector_images_equal_the_cpu_twin() {
    let Some(ctx) = gpu() else { return };
    let seed = scatterlab_testkit::seed("stem resident GPU");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for (det, n, wide) in [([21usize, 19usize], 150usize, false), ([16, 16], 97, true)] {
        let px = det[0] * det[1];
        let data = if wide {
            PixelData::U32((0..n * px).map(|_| if rng.gen_bool(0.05) { u32::MAX } else { rng.gen_range(0..1 << 20) }).collect())
        } else {
            PixelData::U16((0..n * px).map(|_| rng.gen()).collect())
        };
        // About 40 frames per buffer: several buffers, batches crossing them.
        let frame_bytes = if wide { px * 4 } else { px.div_ceil(2) * 4 };
        let mut resident = pollster::block_on(ResidentGpu::new(&ctx, det, n, wide, Some((40 * frame_bytes) as u64))).unwrap();
        assert!(resident.n_buffers() >= 3, "{} buffers", resident.n_buffers());
        let mut first = 0;
        while first < n {
            let end = (first + rng.gen_range(1..60)).min(n);
            resident.upload(first as u64, slice(&data, px, first..end).as_slice()).unwrap();
            first = end;
        }
        for step in 0..3 {
            let c = [det[0] as f64 / 2.0 + rng.gen_range(-2.0..2.0), det[1] as f64 / 2.0 + rng.gen_range(-2.0..2.0)];
            let r = rng.gen_range(2.0..6.0);
            let mut dets = VirtualDetector::standard(c, r, [r + 0.5, 2.0 * r]);
            dets.push(VirtualDetector { name: "box".into(), shape: DetectorShape::Rect { rows: 2..det[0] - 3, cols: 1..5 } });
            let want = detector_images(det, data.as_slice(), &dets).unwrap();
            let got = pollster::block_on(resident.detector_images(&dets)).unwrap();
            assert_eq!(got, want, "{det:?} × {n} (wide {wide}) step {step}, seed {seed}");
        }
    }
}

#[test]
fn bad_uploads_are_named_errors() {
    let Some(ctx) = gpu() else { return };
    let mut r = pollster::block_on(ResidentGpu::new(&ctx, [4, 4], 3, false, None)).unwrap();
    let e = r.upload(0, PixelData::U16(vec![0; 17]).as_slice()).unwrap_err().to_string();
    assert!(e.contains("not whole 4×4 frames"), "{e}");
    let e = r.upload(2, PixelData::U16(vec![0; 32]).as_slice()).unwrap_err().to_string();
    assert!(e.contains("outside the scan's 3 frames"), "{e}");
    let e = r.upload(0, PixelData::U32(vec![0; 16]).as_slice()).unwrap_err().to_string();
    assert!(e.contains("pixel width"), "{e}");
    let e = pollster::block_on(ResidentGpu::new(&ctx, [64, 64], 3, true, Some(100))).unwrap_err().to_string();
    assert!(e.contains("exceeds the adapter's storage buffer limit"), "{e}");
}
