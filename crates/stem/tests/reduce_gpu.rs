//! `shaders/stem/fused.wgsl` (FusedPassGpu) against its CPU twin (FusedPass): the whole
//! FusedResult — every detector, total, sum/max pattern, and the centre of mass computed from the
//! exact moments — must be identical, on the fixtures (u16 with the mask applied; the u32 copy with
//! its 0xFFFFFFFF dead-pixel sentinels kept, so the paired-u32 sums carry; an odd 61×67 detector)
//! and on fresh random frames with values up to u32::MAX (seed printed; SCATTERLAB_SEED replays).
//! Runs on lavapipe here; SCATTERLAB_SKIP_GPU=1 skips it on a machine without any adapter.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::ops::ControlFlow;
use std::path::PathBuf;

use rand::{Rng, SeedableRng};
use scatterlab_core::CancelToken;
use scatterlab_stem::gpu::FusedPassGpu;
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, MaskPolicy, PixelData, StreamOptions};
use scatterlab_stem::reduce::{FusedPass, VirtualDetector};

fn gpu() -> Option<scatterlab_gpu::GpuContext> {
    scatterlab_testkit::gpu_or_skip("stem reduce GPU", || pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default())))
}

fn dir() -> PathBuf {
    scatterlab_testkit::fixture("stem")
}

fn detectors(det: [usize; 2]) -> Vec<VirtualDetector> {
    let c = [det[0] as f64 / 2.0 + 0.3, det[1] as f64 / 2.0 - 0.4];
    let r = det[0].min(det[1]) as f64 / 4.0;
    let mut d = VirtualDetector::standard(c, r, [1.2 * r, 2.5 * r]);
    d.push(VirtualDetector::annulus("edge", c, 0.0, 1.0));
    d
}

fn compare_fixture(ctx: &scatterlab_gpu::GpuContext, master: &str, mask: MaskPolicy) {
    let acq = Acquisition::open(&DirFileSet::new(dir()), master, &Hints::default()).unwrap();
    let (det, n) = (acq.det_shape(), acq.n_frames() as usize);
    let dets = detectors(det);
    let mut cpu = FusedPass::new(det, n, &dets).unwrap();
    let mut gpu = pollster::block_on(FusedPassGpu::new(ctx, det, n, &dets)).unwrap();
    acq.stream(
        &StreamOptions { mask, batch_frames: 53 },
        &mut |b| {
            cpu.add(b.first_frame, b.data).unwrap();
            pollster::block_on(gpu.add(b.first_frame, b.data)).unwrap();
            ControlFlow::Continue(())
        },
        &mut |_: u64, _: u64| {},
        &CancelToken::new(),
    )
    .unwrap();
    let (c, g) = (cpu.finish(), pollster::block_on(gpu.finish()).unwrap());
    let max_sum = c.sum_dp.iter().max().copied().unwrap_or(0);
    println!("{master} ({mask:?}): {n} frames of {det:?}; largest pattern sum {max_sum} (> u32: {})", max_sum > u32::MAX as u64);
    assert_eq!(g, c, "{master}: GPU and CPU fused passes differ");
}

#[test]
fn fixtures_match_the_cpu_twin_exactly() {
    let Some(ctx) = gpu() else { return };
    compare_fixture(&ctx, "dev_small_master.h5", MaskPolicy::ZeroMasked);
    compare_fixture(&ctx, "dev_small_u32_master.h5", MaskPolicy::Keep);
    compare_fixture(&ctx, "dev_oddtail_master.h5", MaskPolicy::ZeroMasked);
}

#[test]
fn random_frames_match_the_cpu_twin_exactly() {
    let Some(ctx) = gpu() else { return };
    let seed = scatterlab_testkit::seed("stem reduce GPU");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    for (det, n, wide) in [([33, 47], 29, true), ([64, 64], 40, false), ([7, 5], 300, true)] {
        let px = det[0] * det[1];
        let data = if wide {
            PixelData::U32((0..n * px).map(|_| if rng.gen_bool(0.1) { u32::MAX - rng.gen_range(0..1000) } else { rng.gen() }).collect())
        } else {
            PixelData::U16((0..n * px).map(|_| rng.gen()).collect())
        };
        let dets = detectors(det);
        let mut cpu = FusedPass::new(det, n, &dets).unwrap();
        let mut gpu = pollster::block_on(FusedPassGpu::new(&ctx, det, n, &dets)).unwrap();
        cpu.add(0, data.as_slice()).unwrap();
        // Two uneven batches on the GPU.
        let cut = n / 3;
        let (a, b) = match &data {
            PixelData::U32(v) => (PixelData::U32(v[..cut * px].to_vec()), PixelData::U32(v[cut * px..].to_vec())),
            PixelData::U16(v) => (PixelData::U16(v[..cut * px].to_vec()), PixelData::U16(v[cut * px..].to_vec())),
            _ => unreachable!(),
        };
        pollster::block_on(gpu.add(cut as u64, b.as_slice())).unwrap();
        pollster::block_on(gpu.add(0, a.as_slice())).unwrap();
        let (c, g) = (cpu.finish(), pollster::block_on(gpu.finish()).unwrap());
        assert_eq!(g, c, "random {det:?} × {n} (wide {wide}, seed {seed}) differs");
    }
}

#[test]
fn bad_batches_are_named_errors() {
    let Some(ctx) = gpu() else { return };
    let det = [8, 8];
    let mut gpu = pollster::block_on(FusedPassGpu::new(&ctx, det, 2, &detectors(det)[..1])).unwrap();
    let e = pollster::block_on(gpu.add(0, PixelData::U16(vec![1; 65]).as_slice())).unwrap_err().to_string();
    assert!(e.contains("not whole 8×8 frames"), "{e}");
    let e = pollster::block_on(gpu.add(1, PixelData::U16(vec![1; 128]).as_slice())).unwrap_err().to_string();
    assert!(e.contains("outside the scan's 2 frames"), "{e}");
    let many: Vec<VirtualDetector> = (0..33).map(|k| VirtualDetector::annulus(&format!("d{k}"), [4.0, 4.0], 0.0, 3.0)).collect();
    let e = pollster::block_on(FusedPassGpu::new(&ctx, det, 2, &many)).unwrap_err().to_string();
    assert!(e.contains("at most 32"), "{e}");
}
