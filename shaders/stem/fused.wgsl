// The 4D-STEM fused pass on the GPU: one workgroup per frame reads the frame once and writes
// its total, centre-of-mass moments and every virtual detector's sum; the same read adds the
// frame into the sum and max diffraction patterns. CPU twin: crates/stem/src/reduce/fused.rs
// (every integer product is compared byte for byte).
//
// WGSL has no 64-bit integers (and WebGPU no 64-bit atomics), so every sum is a pair of u32
// (lo, hi) with explicit carries: per-thread partials, then a workgroup tree reduction, and for
// the cross-frame sum pattern an atomicAdd on lo whose returned old value tells whether to carry
// into hi. Moments r·v use a 32×32 → 64-bit multiply from 16-bit halves. Exact while each sum
// stays below 2^64.

struct Params {
    px: u32,            // detector pixels per frame
    det_cols: u32,
    n_frames: u32,      // frames in this batch
    n_det: u32,         // virtual detectors (≤ 32)
    packed: u32,        // 1: two u16 per u32 word (low half first); 0: one u32 per word
    words_per_frame: u32,
    first_frame: u32,   // this batch's first frame in the per-frame output
    flags: u32,         // bit 0: per-frame records only, no sum/max patterns (resident data)
}

const WG: u32 = 256u;
const MAX_DET: u32 = 32u;
// Per-frame output record: total, row moment, col moment, then each detector, as (lo, hi) pairs.
const FIXED: u32 = 3u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> frames: array<u32>;
@group(0) @binding(2) var<storage, read> labels: array<u32>;           // per pixel: bit k = detector k
@group(0) @binding(3) var<storage, read_write> per_frame: array<u32>;  // n_frames × (FIXED + n_det) × 2
@group(0) @binding(4) var<storage, read_write> sum_dp: array<atomic<u32>>; // px × (lo, hi)
@group(0) @binding(5) var<storage, read_write> max_dp: array<atomic<u32>>; // px

var<workgroup> lo_acc: array<u32, 256>;
var<workgroup> hi_acc: array<u32, 256>;

fn add64(a: vec2<u32>, b: vec2<u32>) -> vec2<u32> {
    let lo = a.x + b.x;
    let carry = select(0u, 1u, lo < a.x);
    return vec2<u32>(lo, a.y + b.y + carry);
}

// a · b as (lo, hi), exact.
fn mul32(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let p00 = a0 * b0;
    let p01 = a0 * b1;
    let p10 = a1 * b0;
    let p11 = a1 * b1;
    var r = vec2<u32>(p00, p11);
    r = add64(r, vec2<u32>(p01 << 16u, p01 >> 16u));
    r = add64(r, vec2<u32>(p10 << 16u, p10 >> 16u));
    return r;
}

fn pixel(frame: u32, i: u32) -> u32 {
    let base = frame * params.words_per_frame;
    if (params.packed == 1u) {
        let w = frames[base + i / 2u];
        return select(w & 0xffffu, w >> 16u, (i & 1u) == 1u);
    }
    return frames[base + i];
}

// Workgroup sum of each thread's (lo, hi); the result is valid in thread 0.
fn reduce(lid: u32, v: vec2<u32>) -> vec2<u32> {
    lo_acc[lid] = v.x;
    hi_acc[lid] = v.y;
    workgroupBarrier();
    var stride = WG / 2u;
    loop {
        if (stride == 0u) { break; }
        if (lid < stride) {
            let s = add64(vec2<u32>(lo_acc[lid], hi_acc[lid]), vec2<u32>(lo_acc[lid + stride], hi_acc[lid + stride]));
            lo_acc[lid] = s.x;
            hi_acc[lid] = s.y;
        }
        workgroupBarrier();
        stride = stride / 2u;
    }
    let r = vec2<u32>(lo_acc[0], hi_acc[0]);
    workgroupBarrier();
    return r;
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32, @builtin(num_workgroups) groups: vec3<u32>) {
    let frame = wid.x + wid.y * groups.x;
    // Uniform across the workgroup, so the barriers below stay in uniform control flow.
    let in_batch = frame < params.n_frames;
    var total = vec2<u32>(0u, 0u);
    var row_m = vec2<u32>(0u, 0u);
    var col_m = vec2<u32>(0u, 0u);
    var det: array<vec2<u32>, 32>;
    for (var k = 0u; k < MAX_DET; k = k + 1u) {
        det[k] = vec2<u32>(0u, 0u);
    }
    if (in_batch) {
        for (var i = lid; i < params.px; i = i + WG) {
            let v = pixel(frame, i);
            let row = i / params.det_cols;
            let col = i - row * params.det_cols;
            total = add64(total, vec2<u32>(v, 0u));
            row_m = add64(row_m, mul32(row, v));
            col_m = add64(col_m, mul32(col, v));
            var bits = labels[i];
            loop {
                if (bits == 0u) { break; }
                let k = firstTrailingBit(bits);
                det[k] = add64(det[k], vec2<u32>(v, 0u));
                bits = bits & (bits - 1u);
            }
            if ((params.flags & 1u) == 0u) {
                let old = atomicAdd(&sum_dp[2u * i], v);
                if (old > 0xffffffffu - v) {
                    atomicAdd(&sum_dp[2u * i + 1u], 1u);
                }
                atomicMax(&max_dp[i], v);
            }
        }
    }
    let stride = (FIXED + params.n_det) * 2u;
    let out = (params.first_frame + frame) * stride;
    let t = reduce(lid, total);
    if (in_batch && lid == 0u) { per_frame[out] = t.x; per_frame[out + 1u] = t.y; }
    let r = reduce(lid, row_m);
    if (in_batch && lid == 0u) { per_frame[out + 2u] = r.x; per_frame[out + 3u] = r.y; }
    let c = reduce(lid, col_m);
    if (in_batch && lid == 0u) { per_frame[out + 4u] = c.x; per_frame[out + 5u] = c.y; }
    for (var k = 0u; k < params.n_det; k = k + 1u) {
        let d = reduce(lid, det[k]);
        if (in_batch && lid == 0u) {
            per_frame[out + 6u + 2u * k] = d.x;
            per_frame[out + 7u + 2u * k] = d.y;
        }
    }
}
