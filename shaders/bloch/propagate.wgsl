// Bloch-wave propagation through a thickness series, batched: one workgroup per item (a tilt, an
// orientation, a structure) advances ψ ← exp(i·h·A) ψ by scaled Taylor substeps, starting from
// ψ = e₀, and writes |ψ|² after each thickness. CPU twin (f64, same plan, same order of the
// terms): crates/bloch/src/propagate/taylor.rs.
//
// One dispatch runs `n_sub` substeps of thickness step `step` for every item; ψ is kept in
// `state` between dispatches. The host cuts the plan into dispatches so that no invocation runs
// more than ~50 k loop iterations: Mesa's llvmpipe/lavapipe ends any shader invocation after
// 65,535 loop iterations (its loop limiter), which a whole thickness series far exceeds.
//
// f32 complex numbers as vec2 (re, im). Matrices column-major so that the threads of a
// workgroup, each owning rows i, i + 64, …, read consecutive addresses for each column j.
// ψ and two Taylor terms live in workgroup memory (3 × 512 × 8 B = 12 KiB): N ≤ 512 beams.

struct Params {
    n_items: u32,
    terms: u32,
    n_sub: u32,    // substeps in this dispatch
    step: u32,     // thickness index written when `write` is 1
    h: f32,        // substep size: phase scale × Δt / substeps
    init: u32,     // 1: start from ψ = e₀ (the first dispatch)
    write: u32,    // 1: write |ψ|² for `step` after this dispatch
    n_steps: u32,  // thicknesses (rows of each item's output)
}

struct Item {
    n: u32,        // beams
    mat_off: u32,  // first matrix element (complex) in `mats`
    vec_off: u32,  // first element of this item's ψ in `state`, and its row in `out` × n_steps
    _pad: u32,
}

const WG: u32 = 64u;
const MAX_N: u32 = 512u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> items: array<Item>;
@group(0) @binding(2) var<storage, read> mats: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read_write> state: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> out: array<f32>;

var<workgroup> psi: array<vec2<f32>, 512>;
var<workgroup> term: array<vec2<f32>, 512>;
var<workgroup> next: array<vec2<f32>, 512>;
var<workgroup> shared_n: u32;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = wid.x + wid.y * groups.x;
    let valid = index < params.n_items;
    let item = items[min(index, params.n_items - 1u)];
    if (lid == 0u) {
        shared_n = select(0u, min(item.n, MAX_N), valid);
    }
    // A uniform copy: the loops below that hold barriers run the same count in every thread.
    let n = workgroupUniformLoad(&shared_n);
    for (var i = lid; i < n; i = i + WG) {
        if (params.init == 1u) {
            psi[i] = select(vec2<f32>(0.0, 0.0), vec2<f32>(1.0, 0.0), i == 0u);
        } else {
            psi[i] = state[item.vec_off + i];
        }
    }
    let h = params.h;
    for (var s = 0u; s < params.n_sub; s = s + 1u) {
        for (var i = lid; i < n; i = i + WG) {
            term[i] = psi[i];
        }
        workgroupBarrier();
        for (var t = 1u; t <= params.terms; t = t + 1u) {
            let f = h / f32(t);
            for (var i = lid; i < n; i = i + WG) {
                var acc = vec2<f32>(0.0, 0.0);
                let col = item.mat_off + i;
                // Four columns per iteration (a quarter of the loop-limiter's count), same order.
                var j = 0u;
                loop {
                    if (j + 4u > n) { break; }
                    acc = acc + cmul(mats[col + j * n], term[j]);
                    acc = acc + cmul(mats[col + (j + 1u) * n], term[j + 1u]);
                    acc = acc + cmul(mats[col + (j + 2u) * n], term[j + 2u]);
                    acc = acc + cmul(mats[col + (j + 3u) * n], term[j + 3u]);
                    j = j + 4u;
                }
                loop {
                    if (j >= n) { break; }
                    acc = acc + cmul(mats[col + j * n], term[j]);
                    j = j + 1u;
                }
                next[i] = vec2<f32>(-f * acc.y, f * acc.x);
            }
            workgroupBarrier();
            for (var i = lid; i < n; i = i + WG) {
                term[i] = next[i];
                psi[i] = psi[i] + next[i];
            }
            workgroupBarrier();
        }
    }
    for (var i = lid; i < n; i = i + WG) {
        state[item.vec_off + i] = psi[i];
        if (params.write == 1u) {
            out[item.vec_off * params.n_steps + params.step * n + i] = dot(psi[i], psi[i]);
        }
    }
}
