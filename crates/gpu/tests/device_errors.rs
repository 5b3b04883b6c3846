//! The GPU layer turns device-side failures into typed errors instead of panicking:
//! an unknown shader, a pipeline that fails validation, a buffer beyond the adapter's limits.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_gpu::{GpuContext, GpuError};

fn context() -> Option<GpuContext> {
    scatterlab_testkit::gpu_or_skip("gpu device errors", || pollster::block_on(GpuContext::new(&Default::default())))
}

#[test]
fn unknown_shader_is_a_typed_error() {
    let Some(ctx) = context() else { return };
    match pollster::block_on(ctx.compute_pipeline("nope/missing.wgsl", "main")) {
        Err(GpuError::UnknownShader(path)) => assert_eq!(path, "nope/missing.wgsl"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn wrong_entry_point_is_a_device_error_not_a_panic() {
    let Some(ctx) = context() else { return };
    match pollster::block_on(ctx.compute_pipeline("refl/parratt.wgsl", "no_such_entry")) {
        Err(GpuError::Device { operation, .. }) => assert!(operation.contains("refl/parratt.wgsl")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn oversized_buffer_names_itself() {
    let Some(ctx) = context() else { return };
    let too_big = ctx.limits.max_buffer_size.max(ctx.limits.max_storage_buffer_binding_size) + 1;
    match ctx.check_storage_size("test buffer", too_big) {
        Err(e @ GpuError::TooLarge { .. }) => assert!(e.to_string().contains("test buffer")),
        other => panic!("{other:?}"),
    }
    assert!(ctx.check_storage_size("small buffer", 1024).is_ok());
    assert!(!ctx.describe().is_empty());
}

#[test]
fn a_software_adapter_says_so() {
    let Some(ctx) = context() else { return };
    // Here (CI, lavapipe) the adapter is software: its description must flag it, as the CLI,
    // the app and provenance records print it.
    if ctx.adapter_info.device_type == wgpu::DeviceType::Cpu {
        assert!(ctx.is_software());
        assert!(ctx.describe().ends_with("(software adapter, slow)"), "{}", ctx.describe());
    } else if !ctx.is_software() {
        assert!(!ctx.describe().contains("software"), "{}", ctx.describe());
    }
}
