//! Shared test helpers: locate the fixtures, acquire the GPU, compare with tolerances.
#![allow(dead_code)]

use std::path::PathBuf;

/// `shared/fixtures` beside the repository (or `$SCATTERLAB_FIXTURES`).
pub fn fixtures_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("SCATTERLAB_FIXTURES") {
        return PathBuf::from(dir);
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fixtures")
}

/// Reads a fixture file as text, with a message that says where it was looked for.
pub fn read_fixture(rel: &str) -> String {
    let path = fixtures_dir().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("fixture {} missing ({e}); set SCATTERLAB_FIXTURES", path.display()))
}

/// The GPU context for tests: lavapipe here. Fails loudly unless SCATTERLAB_SKIP_GPU=1 says otherwise.
pub fn gpu() -> Option<scatterlab_gpu::GpuContext> {
    if std::env::var("SCATTERLAB_SKIP_GPU").is_ok_and(|v| v == "1") {
        eprintln!("SCATTERLAB_SKIP_GPU=1: GPU test skipped");
        return None;
    }
    match pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default())) {
        Ok(ctx) => Some(ctx),
        Err(e) => panic!("{e} (set SCATTERLAB_SKIP_GPU=1 to skip GPU tests on a machine without any adapter)"),
    }
}

/// Largest |a − b| / |b| over paired slices.
pub fn max_rel(a: &[f64], b: &[f64]) -> (f64, usize) {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).enumerate().map(|(i, (x, y))| ((x - y).abs() / y.abs(), i)).fold((0.0, 0), |m, v| if v.0 > m.0 || v.0.is_nan() { v } else { m })
}
