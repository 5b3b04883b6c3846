//! The df64 arithmetic library (`shaders/refl/df64.wgsl`) on the device against f64: the
//! error-free TwoSum/TwoProd are exact, and + − × ÷ √ exp cos sin, the complex decaying root and
//! cube root are within a few 2^-48 (relative), on seeded random inputs (seed printed,
//! `SCATTERLAB_SEED` replays). This is what the 4×4 df64 kernel's precision rests on.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

mod common;

use num_complex::Complex64 as C64;
use rand::{Rng, SeedableRng};
use scatterlab_gpu::wgpu;
use wgpu::util::DeviceExt;

/// Outputs per input: see `KERNEL`.
const OUTS: usize = 10;

const KERNEL: &str = r#"
@group(0) @binding(0) var<uniform> one: vec4<f32>;
@group(0) @binding(1) var<storage, read> inputs: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> outputs: array<vec4<f32>>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    df_one = one.x;
    let i = gid.x;
    if (i >= arrayLength(&inputs)) {
        return;
    }
    let v = inputs[i];
    let a = v.xy;
    let b = v.zw;
    let o = i * 10u;
    outputs[o + 0u] = vec4<f32>(two_sum(a.x, b.x), two_prod(a.x, b.x));
    outputs[o + 1u] = vec4<f32>(df_add(a, b), df_mul(a, b));
    outputs[o + 2u] = vec4<f32>(df_div(a, b), df_sqrt(df_abs(a)));
    outputs[o + 3u] = vec4<f32>(df_exp(a * 0.03125), df_exp(-df_abs(a)));
    outputs[o + 4u] = df_cos_sin(a * 64.0);
    outputs[o + 5u] = c_sqrt_dec(v);
    outputs[o + 6u] = c_cbrt(v);
    outputs[o + 7u] = c_recip(v * 1e-18);
    outputs[o + 8u] = c_exp(vec4<f32>(v.xy * 0.0625, v.zw * 16.0));
    outputs[o + 9u] = c_mul(v, vec4<f32>(b, a));
}
"#;

fn split(x: f64) -> [f32; 2] {
    let hi = x as f32;
    [hi, (x - f64::from(hi)) as f32]
}

fn join(v: [f32; 2]) -> f64 {
    f64::from(v[0]) + f64::from(v[1])
}

fn cjoin(v: [f32; 4]) -> C64 {
    C64::new(join([v[0], v[1]]), join([v[2], v[3]]))
}

#[test]
fn df64_arithmetic_on_the_device_equals_f64() {
    let Some(ctx) = common::gpu() else { return };
    let seed = scatterlab_testkit::seed("df64 arithmetic");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let n = 4096;
    let pairs: Vec<(f64, f64)> = (0..n)
        .map(|_| {
            let a = rng.gen_range(-50.0..50.0) * 10f64.powi(rng.gen_range(-3..2));
            let b = rng.gen_range(0.1..10.0) * if rng.gen_bool(0.5) { 1.0 } else { -1.0 } * 10f64.powi(rng.gen_range(-4..2));
            (a, b)
        })
        .collect();
    let inputs: Vec<[f32; 4]> = pairs.iter().map(|&(a, b)| [split(a), split(b)].concat().try_into().unwrap()).collect();
    let source = format!("{}\n{KERNEL}", scatterlab_gpu::shaders::get("refl/df64.wgsl").unwrap().source);
    let module = ctx.device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("df64 test"), source: wgpu::ShaderSource::Wgsl(source.into()) });
    let pipeline = ctx.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("df64 test"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let one = ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: bytemuck::cast_slice(&[1.0f32; 4]), usage: wgpu::BufferUsages::UNIFORM });
    let inp = ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: bytemuck::cast_slice(&inputs), usage: wgpu::BufferUsages::STORAGE });
    let bytes = (n * OUTS * 16) as u64;
    let out = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    let read = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let bind = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: one.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: inp.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: out.as_entire_binding() },
        ],
    });
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups((n as u32).div_ceil(64), 1, 1);
    }
    enc.copy_buffer_to_buffer(&out, 0, &read, 0, bytes);
    pollster::block_on(ctx.submit_checked("df64 test", enc.finish())).unwrap();
    let flat: Vec<[f32; 4]> = pollster::block_on(scatterlab_gpu::read_buffer(&ctx, &read, n * OUTS)).unwrap();

    // Worst error per operation, in units of 2^-48 relative to the stated scale.
    let ulp = 2f64.powi(-48);
    let mut worst = std::collections::BTreeMap::<&str, f64>::new();
    let mut note = |name: &'static str, got: f64, want: f64, scale: f64| {
        let e = (got - want).abs() / (scale * ulp);
        let w = worst.entry(name).or_insert(0.0);
        if e > *w || e.is_nan() {
            *w = e;
        }
    };
    let mut inexact = 0;
    for (k, &v) in inputs.iter().enumerate() {
        let (a, b) = (join([v[0], v[1]]), join([v[2], v[3]]));
        let o = &flat[k * OUTS..(k + 1) * OUTS];
        let (ah, bh) = (f64::from(v[0]), f64::from(v[2]));
        // Error-free transformations: exact in f64 (24 + 24 bits fit in 53).
        if join([o[0][0], o[0][1]]) != ah + bh || join([o[0][2], o[0][3]]) != ah * bh {
            inexact += 1;
        }
        note("add", join([o[1][0], o[1][1]]), a + b, a.abs().max(b.abs()));
        note("mul", join([o[1][2], o[1][3]]), a * b, (a * b).abs());
        note("div", join([o[2][0], o[2][1]]), a / b, (a / b).abs());
        note("sqrt", join([o[2][2], o[2][3]]), a.abs().sqrt(), a.abs().sqrt());
        let e1 = (a * 0.03125).exp();
        note("exp", join([o[3][0], o[3][1]]), e1, e1);
        let e2 = (-a.abs()).exp();
        if e2 > 1e-30 {
            note("exp", join([o[3][2], o[3][3]]), e2, e2);
        }
        let (s, c) = (a * 64.0).sin_cos();
        // The argument itself is known to 2^-48 relative: its rounding bounds the phase error.
        let arg = (a * 64.0).abs().max(1.0);
        note("cos_sin", join([o[4][0], o[4][1]]), c, arg);
        note("cos_sin", join([o[4][2], o[4][3]]), s, arg);
        let z = C64::new(a, b);
        let r = scatterlab_refl::cpu::decaying_root(z);
        note("sqrt_decaying", (cjoin(o[5]) - r).norm(), 0.0, r.norm());
        let cb = C64::from_polar(z.norm().cbrt(), z.arg() / 3.0);
        note("cbrt", (cjoin(o[6]) - cb).norm(), 0.0, cb.norm());
        // The device scales each part by 1e-18 in f32 (as here) before the reciprocal.
        let rz = C64::new(f64::from(v[0] * 1e-18) + f64::from(v[1] * 1e-18), f64::from(v[2] * 1e-18) + f64::from(v[3] * 1e-18)).inv();
        note("recip", (cjoin(o[7]) - rz).norm(), 0.0, rz.norm() * 4.0);
        let ze = C64::new(a * 0.0625, b * 16.0).exp();
        note("exp complex", (cjoin(o[8]) - ze).norm(), 0.0, ze.norm() * (b * 16.0).abs().max(1.0));
        let zm = z * C64::new(b, a);
        note("mul complex", (cjoin(o[9]) - zm).norm(), 0.0, z.norm() * C64::new(b, a).norm());
    }
    eprintln!("df64 on {} (seed {seed}): inexact TwoSum/TwoProd {inexact} of {n}; worst errors in 2^-48 units: {worst:?}", ctx.describe());
    assert_eq!(inexact, 0, "TwoSum/TwoProd must be error-free on this device");
    for (name, w) in &worst {
        assert!(*w <= 16.0, "{name}: {w} × 2^-48");
    }
}
