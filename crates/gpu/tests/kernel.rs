#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message
//! The dispatch helper on its own: a WGSL kernel that doubles a buffer, compiled as a [`Kernel`],
//! bound from buffers made by the context's helpers, dispatched over a 2-D grid and read back,
//! against the same doubling on the CPU (exact: ×2 is exact in f32).

use scatterlab_gpu::{workgroups, GpuContext, GpuError, Kernel};

const WG: u32 = 64;

/// `out[i] = 2 · a[i] + b[i]` for i < n; `double_only` (bindings 0, 1, 3) skips b.
const SOURCE: &str = "
struct Params { n: u32, pad0: u32, pad1: u32, pad2: u32 }
@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> b: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 64u;
    if (i < params.n) { out[i] = 2.0 * a[i] + b[i]; }
}

@compute @workgroup_size(64)
fn double_only(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * 64u;
    if (i < params.n) { out[i] = 2.0 * a[i]; }
}
";

fn context() -> Option<GpuContext> {
    scatterlab_testkit::gpu_or_skip("gpu kernel helper", || pollster::block_on(GpuContext::new(&Default::default())))
}

fn inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    ((0..n).map(|i| i as f32 * 0.25 - 100.0).collect(), (0..n).map(|i| (i % 7) as f32).collect())
}

/// Runs `entry` over n values; `with_b` binds all four bindings in order, else 0, 1, 3 by number.
fn run(ctx: &GpuContext, entry: &str, n: usize, with_b: bool) -> Vec<f32> {
    let kernel = pollster::block_on(Kernel::from_wgsl(ctx, "doubling test", SOURCE, entry)).unwrap();
    assert_eq!(kernel.label(), format!("doubling test {entry}"));
    let (a, b) = inputs(n);
    let params = ctx.uniform_from("test params", &[n as u32, 0, 0, 0]);
    let (a_buf, b_buf) = (ctx.storage_from("test a", &a), ctx.storage_from("test b", &b));
    let out = ctx.storage("test out", (n * 4) as u64, scatterlab_gpu::wgpu::BufferUsages::COPY_SRC);
    let bind = if with_b { kernel.bind(ctx, &[&params, &a_buf, &b_buf, &out]) } else { kernel.bind_at(ctx, &[(0, &params), (1, &a_buf), (3, &out)]) };
    let mut encoder = ctx.encoder("doubling test");
    kernel.dispatch(&mut encoder, &bind, workgroups(n, WG)).unwrap();
    pollster::block_on(ctx.submit_and_read::<f32>(encoder, "doubling test", &out, n)).unwrap()
}

#[test]
fn a_kernel_doubles_a_buffer_as_the_cpu_does() {
    let Some(ctx) = context() else { return };
    // 70,000 groups of 64: more than one row of the dispatch grid (65,535), so the flat index
    // is rebuilt from a 2-D grid as every kernel of the repository does.
    for (n, with_b) in [(1, true), (1000, true), (1000, false), (65_536 * 64 + 100, true)] {
        let got = run(&ctx, if with_b { "main" } else { "double_only" }, n, with_b);
        let (a, b) = inputs(n);
        assert_eq!(got.len(), n);
        for i in 0..n {
            let want = 2.0 * a[i] + if with_b { b[i] } else { 0.0 };
            assert_eq!(got[i], want, "n = {n}, value {i}");
        }
    }
}

#[test]
fn read_back_copies_a_buffer_in_its_own_submission() {
    let Some(ctx) = context() else { return };
    let values: Vec<u32> = (0..257).map(|i| i * 3 + 1).collect();
    let src = ctx.device.create_buffer(&scatterlab_gpu::wgpu::BufferDescriptor {
        label: Some("test source"),
        size: (values.len() * 4) as u64,
        usage: scatterlab_gpu::wgpu::BufferUsages::COPY_SRC | scatterlab_gpu::wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    ctx.queue.write_buffer(&src, 0, bytemuck::cast_slice(&values));
    let got: Vec<u32> = pollster::block_on(ctx.read_back("test read", &src, values.len())).unwrap();
    assert_eq!(got, values);
    let first: Vec<u32> = pollster::block_on(ctx.read_back("test read", &src, 10)).unwrap();
    assert_eq!(first, values[..10]);
    assert!(pollster::block_on(ctx.read_back::<u32>("test read", &src, 0)).unwrap().is_empty());
}

#[test]
fn impossible_reads_and_grids_are_typed_errors() {
    let Some(ctx) = context() else { return };
    let src = ctx.storage("small", 16, scatterlab_gpu::wgpu::BufferUsages::COPY_SRC);
    // Beyond the buffer, and not a whole number of 4-byte words.
    for result in [pollster::block_on(ctx.read_back::<u32>("too long", &src, 5)).map(|_| ()), pollster::block_on(ctx.read_back::<u8>("unaligned", &src, 3)).map(|_| ())] {
        match result {
            Err(e @ GpuError::Device { .. }) => assert!(e.to_string().contains("cannot read back"), "{e}"),
            other => panic!("{other:?}"),
        }
    }
    let kernel = pollster::block_on(Kernel::from_wgsl(&ctx, "doubling test", SOURCE, "double_only")).unwrap();
    let params = ctx.uniform_from("test params", &[0u32; 4]);
    let bind = kernel.bind_at(&ctx, &[(0, &params), (1, &src), (3, &ctx.storage("out", 16, scatterlab_gpu::wgpu::BufferUsages::empty()))]);
    let mut encoder = ctx.encoder("too many groups");
    // u32::MAX groups need 65,535 × 65,537: beyond WebGPU's 65,535 per dimension (and lavapipe's).
    if ctx.limits.max_compute_workgroups_per_dimension < 65_537 {
        match kernel.dispatch(&mut encoder, &bind, u32::MAX) {
            Err(e @ GpuError::Device { .. }) => assert!(e.to_string().contains("per dimension"), "{e}"),
            other => panic!("{other:?}"),
        }
    }
    // A wrong entry point names shader label and entry.
    match pollster::block_on(Kernel::from_wgsl(&ctx, "doubling test", SOURCE, "no_such_entry")) {
        Err(GpuError::Device { operation, .. }) => assert!(operation.contains("doubling test"), "{operation}"),
        other => panic!("{other:?}"),
    }
}
