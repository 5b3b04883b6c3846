// Batched 1-D FFTs along one axis of a stack of complex images (f32), the transforms of SSB
// ptychography's scan images. CPU twin: crates/stem/src/ssb/fft.rs (`Fft2`, rustfft in f64),
// compared on random images in crates/stem/tests/ssb_gpu.rs.
//
// A line l of a transform lives at `base(l) + j·elem_stride`, j < n, with
// `base(l) = (l / lines_per_image)·image_stride + (l % lines_per_image)·line_step`: rows of the
// images are (stride 1, step cols), columns (stride cols, step 1). Powers of two run as
// radix-2 Stockham passes (`stockham`, one dispatch per pass, ping-pong between two buffers,
// natural order out); other lengths by Bluestein's chirp-z: `chirp_in` (x·c into a contiguous
// power-of-two scratch of length m ≥ 2n − 1), a Stockham transform of length m, `multiply` by
// the chirp filter's spectrum (host f64, 1/m folded in), the inverse transform, `chirp_out`.
// Twiddles, chirps and filter spectra are host tables (f64 rounded once to f32), so no kernel
// evaluates a trigonometric function. `inverse` = 1 conjugates twiddles and chirps (unnormalised
// inverse, as rustfft's and numpy's ifft × n).

struct Params {
    n: u32,                // transform length (m for passes over the Bluestein scratch)
    ns: u32,               // Stockham: sub-transform size before this pass (1, 2, 4, …, n/2)
    n_lines: u32,
    lines_per_image: u32,
    line_step: u32,
    image_stride: u32,
    elem_stride: u32,
    inverse: u32,
    m: u32,                // Bluestein: scratch length (a power of two)
    tw_len: u32,           // twiddle table length (n / 2 of the transform it was made for)
    pad0: u32,
    pad1: u32,
}

const WG: u32 = 256u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> table: array<vec2<f32>>;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

fn conj_if(a: vec2<f32>, flag: u32) -> vec2<f32> {
    return select(a, vec2<f32>(a.x, -a.y), flag == 1u);
}

fn flat(id: vec3<u32>, groups: vec3<u32>) -> u32 {
    return id.x + id.y * groups.x * WG;
}

fn line_base(l: u32) -> u32 {
    return (l / params.lines_per_image) * params.image_stride + (l % params.lines_per_image) * params.line_step;
}

// One radix-2 butterfly per thread: n/2 per line.
@compute @workgroup_size(256)
fn stockham(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let half = params.n / 2u;
    let t = flat(id, groups);
    if (t >= params.n_lines * half) {
        return;
    }
    let l = t / half;
    let j = t % half;
    let base = line_base(l);
    let es = params.elem_stride;
    let ns = params.ns;
    let a = src[base + j * es];
    let k = j % ns;
    // exp(∓2πi k / (2 ns)) = table[k · n / (2 ns)] of the length-n table exp(−2πi i / n).
    let w = conj_if(table[k * (params.tw_len / ns)], params.inverse);
    let b = cmul(src[base + (j + half) * es], w);
    let d = (j / ns) * 2u * ns + k;
    dst[base + d * es] = a + b;
    dst[base + (d + ns) * es] = a - b;
}

// Bluestein in: scratch[l·m + j] = x_l[j] · c[j] (j < n), 0 up to m. c = exp(−πi j²/n).
@compute @workgroup_size(256)
fn chirp_in(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = flat(id, groups);
    let m = params.m;
    if (t >= params.n_lines * m) {
        return;
    }
    let l = t / m;
    let j = t % m;
    var v = vec2<f32>(0.0, 0.0);
    if (j < params.n) {
        v = cmul(src[line_base(l) + j * params.elem_stride], conj_if(table[j], params.inverse));
    }
    dst[t] = v;
}

// Bluestein: pointwise product with the filter's spectrum (contiguous scratch lines of length m).
@compute @workgroup_size(256)
fn multiply(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = flat(id, groups);
    let m = params.m;
    if (t >= params.n_lines * m) {
        return;
    }
    dst[t] = cmul(src[t], table[t % m]);
}

// Bluestein out: x_l[k] = scratch[l·m + k] · c[k], k < n.
@compute @workgroup_size(256)
fn chirp_out(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let t = flat(id, groups);
    let n = params.n;
    if (t >= params.n_lines * n) {
        return;
    }
    let l = t / n;
    let k = t % n;
    dst[line_base(l) + k * params.elem_stride] = cmul(src[l * params.m + k], conj_if(table[k], params.inverse));
}
