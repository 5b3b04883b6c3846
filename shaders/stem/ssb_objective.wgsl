// The aberration fit's loss on the GPU (f32), many trials per dispatch: quantem's phase-variance
// objective in the factorised form of its CPU twin, crates/stem/src/ssb/objective.rs
// (`PhaseVariance::losses`), compared in crates/stem/tests/ssb_gpu.rs.
//
// `corrected`: one thread per (image, grid frequency) of a chunk whose images are
// (trial t0 + j / n_pix, selected pixel p0 + j % n_pix): with ν = Rot(θ)(fr, fc), M the trial's
// χ matrix, `W = A(k_b − ν) e^{−iχ(ν)} − A(k_b + ν) e^{iχ(ν)}` and the plane wave `e^{−2i k_bᵀMν}`,
// O_b's spectrum is `G_b e^{−2iu} conj(W) A_b / max(A_b |W|, floor)`, its ν = 0 term the shared DC.
// ssb_fft.wgsl then inverse-transforms every image, and `moments` adds angle(O_b) and its square
// per (trial, position) into running sums; the host forms the mean variance in f64. Phases are
// reduced to [−π, π] before sin/cos (WGSL bounds their error only there).

struct Params {
    grid_rows: u32,
    grid_cols: u32,
    n_pix: u32,         // pixels per trial in this chunk
    p0: u32,            // the chunk's first selected pixel
    t0: u32,            // the chunk's first trial (index into `trials`)
    n_trials: u32,      // trials in this chunk
    acc_t0: u32,        // trial index of acc's first row
    pad0: u32,
    k_alpha: f32,
    inv_dk: f32,
    floor: f32,
    pad1: f32,
    dc: vec2<f32>,      // mean over all BF pixels of G_b(0)
    pad2: vec2<f32>,
}

// Per trial: M = [[m00, m01], [m01, m11]] (rad Å²), sin θ, cos θ.
struct TrialData {
    m00: f32,
    m01: f32,
    m11: f32,
    sin_t: f32,
    cos_t: f32,
    pad0: f32,
    pad1: f32,
    pad2: f32,
}

const WG: u32 = 256u;
const TWO_PI: f32 = 6.283185307179586;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> spectra: array<vec2<f32>>;    // selected pixels × grid
@group(0) @binding(2) var<storage, read> pixels: array<vec4<f32>>;     // (k_row, k_col, A(k_b), 0)
@group(0) @binding(3) var<storage, read> freqs: array<f32>;            // fr (grid_rows) then fc (grid_cols), Å⁻¹
@group(0) @binding(4) var<storage, read> trials: array<TrialData>;
@group(0) @binding(5) var<storage, read_write> out: array<vec2<f32>>;  // corrected: chunk images; moments: acc

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

fn cis(phase: f32) -> vec2<f32> {
    let r = phase - TWO_PI * round(phase / TWO_PI);
    return vec2<f32>(cos(r), sin(r));
}

fn aperture(k: vec2<f32>) -> f32 {
    return clamp((params.k_alpha - length(k)) * params.inv_dk + 0.5, 0.0, 1.0);
}

@compute @workgroup_size(256)
fn corrected(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = params.grid_rows * params.grid_cols;
    let t = id.x + id.y * groups.x * WG;
    if (t >= params.n_trials * params.n_pix * n) {
        return;
    }
    let j = t / n;
    let idx = t % n;
    if (idx == 0u) {
        out[t] = params.dc;
        return;
    }
    let tr = trials[params.t0 + j / params.n_pix];
    let p = params.p0 + j % params.n_pix;
    let px = pixels[p];
    let kb = px.xy;
    let ab = px.z;
    let f = vec2<f32>(freqs[idx / params.grid_cols], freqs[params.grid_rows + idx % params.grid_cols]);
    let nu = vec2<f32>(tr.cos_t * f.x - tr.sin_t * f.y, tr.sin_t * f.x + tr.cos_t * f.y);
    let am = aperture(kb - nu);
    let ap = aperture(kb + nu);
    var o = vec2<f32>(0.0, 0.0);
    if (am != 0.0 || ap != 0.0) {
        let m_nu = vec2<f32>(tr.m00 * nu.x + tr.m01 * nu.y, tr.m01 * nu.x + tr.m11 * nu.y);
        let e = cis(dot(nu, m_nu));
        let w = vec2<f32>(e.x, -e.y) * am - e * ap;
        let norm = ab * length(w);
        if (norm > 0.0) {
            // u = k_bᵀ M ν.
            let ramp = cis(-2.0 * dot(kb, m_nu));
            let g = spectra[p * n + idx];
            o = cmul(cmul(g, ramp), vec2<f32>(w.x, -w.y)) * (ab / max(norm, params.floor));
        }
    }
    out[t] = o;
}

// acc[(t0 + tl − acc_t0)·n + idx] += (Σ angle, Σ angle²) over the chunk's pixels of trial tl.
@compute @workgroup_size(256)
fn moments(@builtin(global_invocation_id) id: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = params.grid_rows * params.grid_cols;
    let t = id.x + id.y * groups.x * WG;
    if (t >= params.n_trials * n) {
        return;
    }
    let tl = t / n;
    let idx = t % n;
    var s = 0.0;
    var q = 0.0;
    for (var b = 0u; b < params.n_pix; b = b + 1u) {
        let z = spectra[(tl * params.n_pix + b) * n + idx];
        // arg(0) = 0, as Complex64::arg.
        var phi = 0.0;
        if (z.x != 0.0 || z.y != 0.0) {
            phi = atan2(z.y, z.x);
        }
        s = s + phi;
        q = q + phi * phi;
    }
    let a = (params.t0 + tl - params.acc_t0) * n + idx;
    out[a] = out[a] + vec2<f32>(s, q);
}
