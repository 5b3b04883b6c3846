//! Shared test helpers: locate the fixtures, acquire the GPU, compare with tolerances.
#![allow(dead_code)]

use std::path::PathBuf;

/// `shared/fixtures` beside the repository (or `$SCATTERLAB_FIXTURES`): the test kit's rule.
pub fn fixtures_dir() -> PathBuf {
    scatterlab_testkit::fixtures_dir()
}

/// Reads a fixture file as text, with a message that says where it was looked for.
pub fn read_fixture(rel: &str) -> String {
    scatterlab_testkit::read_fixture_text(rel)
}

/// The GPU context for tests: lavapipe here. Fails loudly unless SCATTERLAB_SKIP_GPU=1 says
/// otherwise (the test kit's rule).
pub fn gpu() -> Option<scatterlab_gpu::GpuContext> {
    scatterlab_testkit::gpu_or_skip("refl GPU test", || pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default())))
}

/// Largest |a − b| / |b| over paired slices.
pub fn max_rel(a: &[f64], b: &[f64]) -> (f64, usize) {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).enumerate().map(|(i, (x, y))| ((x - y).abs() / y.abs(), i)).fold((0.0, 0), |m, v| if v.0 > m.0 || v.0.is_nan() { v } else { m })
}

/// One df64 4×4 pipeline per test binary: lavapipe takes tens of seconds to compile the kernel,
/// once (`ParrattGpu::general` keeps it). `None` when the GPU tests are skipped.
pub fn general_pipeline() -> Option<&'static scatterlab_refl::gpu::ParrattGpu> {
    static PIPELINE: std::sync::OnceLock<Option<scatterlab_refl::gpu::ParrattGpu>> = std::sync::OnceLock::new();
    PIPELINE
        .get_or_init(|| {
            let ctx = gpu()?;
            let p = pollster::block_on(scatterlab_refl::gpu::ParrattGpu::new(&ctx)).expect("refl pipeline");
            pollster::block_on(p.general()).expect("df64 4×4 pipeline");
            Some(p)
        })
        .as_ref()
}
