// SSB ptychography's accumulation on the GPU (f32): for one batch of BF pixels whose scan images
// are already transformed (G_b, by ssb_fft.wgsl), each thread owns one scan frequency ν and adds
// Σ_b G_b(ν) conj(Γ_b(ν)) / max(|Γ_b(ν)|, floor) to the running sum; the ν = 0 thread adds G_b(0)
// instead (the convention's DC term). `scale` then multiplies a buffer by one real factor (the
// mean over BF pixels and the inverse transform's 1/(rows·cols), applied once at the end).
// CPU twin: crates/stem/src/ssb/accumulate.rs (`mean_spectrum`) with the probe of
// crates/stem/src/ssb/optics.rs (`Probe::eval`), compared in crates/stem/tests/ssb_gpu.rs.
//
// Γ_b(ν) = P(k_b − ν) P*(k_b) − P*(k_b + ν) P(k_b), P(k) = A(k) exp(−iχ(k)),
// A = clamp((k_α − |k|)/dk + 0.5, 0, 1), χ = πλ (C10 |k|² + C12c (kr² − kc²) + C12s 2 kr kc).
// χ is reduced to [−π, π] before sin/cos: WGSL only bounds their error on that interval.

struct Params {
    n_scan: u32,        // scan positions (rows · cols)
    n_batch: u32,       // BF pixels in this batch
    first: u32,         // the batch's first BF pixel (index into kvec)
    pad0: u32,
    k_alpha: f32,       // Å⁻¹
    inv_dk: f32,        // px·Å
    pi_lambda: f32,     // π λ, Å
    c10: f32,           // Å
    c12_cos: f32,       // C12 cos 2φ12, Å
    c12_sin: f32,       // C12 sin 2φ12, Å
    floor: f32,         // |Γ| floor (1e-8)
    factor: f32,        // `scale`: the real factor
}

const WG: u32 = 256u;
const TWO_PI: f32 = 6.283185307179586;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> spectra: array<vec2<f32>>;   // n_batch × n_scan, G_b
@group(0) @binding(2) var<storage, read> kvec: array<vec2<f32>>;      // every BF pixel's (k_row, k_col)
@group(0) @binding(3) var<storage, read> nu: array<vec2<f32>>;        // n_scan scan frequencies, detector frame
@group(0) @binding(4) var<storage, read_write> sum: array<vec2<f32>>; // n_scan

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

fn conj(a: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x, -a.y);
}

fn probe(k: vec2<f32>) -> vec2<f32> {
    let k2 = k.x * k.x + k.y * k.y;
    let a = clamp((params.k_alpha - sqrt(k2)) * params.inv_dk + 0.5, 0.0, 1.0);
    if (a == 0.0) {
        return vec2<f32>(0.0, 0.0);
    }
    var chi = params.pi_lambda * (params.c10 * k2 + params.c12_cos * (k.x * k.x - k.y * k.y) + params.c12_sin * 2.0 * k.x * k.y);
    chi = chi - TWO_PI * round(chi / TWO_PI);
    return a * vec2<f32>(cos(chi), -sin(chi));
}

@compute @workgroup_size(256)
fn accumulate(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * WG;
    let n = params.n_scan;
    if (i >= n) {
        return;
    }
    let v = nu[i];
    var acc = vec2<f32>(0.0, 0.0);
    for (var b = 0u; b < params.n_batch; b = b + 1u) {
        let g = spectra[b * n + i];
        if (i == 0u) {
            acc = acc + g;
            continue;
        }
        let kb = kvec[params.first + b];
        let p0 = probe(kb);
        let gamma = cmul(probe(kb - v), conj(p0)) - cmul(conj(probe(kb + v)), p0);
        let norm = length(gamma);
        if (norm > 0.0) {
            acc = acc + cmul(g, conj(gamma)) / max(norm, params.floor);
        }
    }
    sum[i] = sum[i] + acc;
}

// dst[i] *= factor (in place through `sum`).
@compute @workgroup_size(256)
fn scale(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let i = id.x + id.y * groups.x * WG;
    if (i >= params.n_scan) {
        return;
    }
    sum[i] = sum[i] * params.factor;
}
