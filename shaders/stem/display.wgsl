// Display mapping on the GPU, twin of crates/stem/src/reduce/colormap.rs: scalar values to RGBA8
// through the shared colormap table (the same bytes as crates/stem/data/colormaps.bin), and a
// vector field to RGBA8 through the 2-D colour wheel. Output: one u32 per pixel, bytes R, G, B, A.

struct Params {
    n: u32,
    map: u32,        // colormap index in the table
    scale: u32,      // 0 linear, 1 log1p signed, 2 sqrt signed, 3 gamma signed
    _pad: u32,
    low: f32,        // limits after the transform
    high: f32,
    gamma: f32,
    max_magnitude: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;        // values, or the row component
@group(0) @binding(2) var<storage, read> b: array<f32>;        // the column component (wheel)
@group(0) @binding(3) var<storage, read> table: array<u32>;    // 256 packed RGBA8 per map
@group(0) @binding(4) var<storage, read_write> out: array<u32>;

fn transform(v: f32) -> f32 {
    switch params.scale {
        case 1u: { return sign(v) * log(1.0 + abs(v)); }
        case 2u: { return sign(v) * sqrt(abs(v)); }
        case 3u: { return sign(v) * pow(abs(v), params.gamma); }
        default: { return v; }
    }
}

fn index_of(gid: vec3<u32>, groups: vec3<u32>) -> u32 {
    return gid.x + gid.y * groups.x * 64u;
}

@compute @workgroup_size(64)
fn colorize(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = index_of(gid, groups);
    if (i >= params.n) { return; }
    let span = params.high - params.low;
    var norm = 0.0;
    if (span > 0.0) {
        norm = clamp((transform(a[i]) - params.low) / span, 0.0, 1.0);
    }
    let k = u32(clamp(floor(norm * 255.0), 0.0, 255.0));
    out[i] = table[params.map * 256u + k];
}

fn hsv_to_rgb(h: f32, s: f32, v: f32) -> vec3<f32> {
    let h6 = (h - floor(h)) * 6.0;
    let t = (vec3<f32>(5.0, 3.0, 1.0) + h6) % vec3<f32>(6.0);
    return v - v * s * clamp(min(t, 4.0 - t), vec3<f32>(0.0), vec3<f32>(1.0));
}

@compute @workgroup_size(64)
fn wheel(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = index_of(gid, groups);
    if (i >= params.n) { return; }
    let y = a[i];
    let x = b[i];
    let hue = atan2(y, x) / 6.283185307179586;
    let value = min(sqrt(x * x + y * y) / params.max_magnitude, 1.0);
    let rgb = hsv_to_rgb(hue, 1.0, value);
    let q = vec3<u32>(clamp(round(rgb * 255.0), vec3<f32>(0.0), vec3<f32>(255.0)));
    out[i] = q.x | (q.y << 8u) | (q.z << 16u) | (255u << 24u);
}
