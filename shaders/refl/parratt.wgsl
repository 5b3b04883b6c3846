// Parratt recursion for uniaxial layers (optic axis along z), f32.
// CPU f64 twin: crates/refl/src/cpu/mod.rs — the same steps, in the same order:
//   chi = eps - 1 = -2 delta + 2i beta;  Q2 = (q/2)^2
//   s: kz^2 = chi_o k0^2 + Q2;  p: kz^2 = (eps_o/eps_e)(chi_e k0^2 + Q2);  root with Im kz >= 0
//   r = (k_a^2 - k_b^2)/(k_a + k_b)^2 with the squared difference formed without cancellation
//   Nevot-Croce: r * exp(-2 k_a k_b sigma_b^2);  X <- (r + X phi)/(1 + r X phi), phi = exp(2i k_b d_b)
// One invocation per (curve, q) point; the stack table lets one dispatch hold many stacks.

struct Params {
    n_points: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
}

// geom = (thickness, sigma^2, 0, 0); chi = (chi_o.re, chi_o.im, chi_e.re, chi_e.im)
struct Layer {
    geom: vec4<f32>,
    chi: vec4<f32>,
}

struct Point {
    stack: u32,
    k02: f32,
    q2: f32,
    _pad: f32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> stacks: array<vec2<u32>>;   // (first layer, layer count)
@group(0) @binding(2) var<storage, read> layers: array<Layer>;
@group(0) @binding(3) var<storage, read> points: array<Point>;
@group(0) @binding(4) var<storage, read_write> reflectance: array<vec2<f32>>; // (R_s, R_p)

const WORKGROUP_SIZE: u32 = 64u;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

// Smith's division: no overflow/underflow from squaring the denominator.
fn cdiv(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    if (abs(b.x) >= abs(b.y)) {
        let r = b.y / b.x;
        let d = b.x + b.y * r;
        return vec2<f32>((a.x + a.y * r) / d, (a.y - a.x * r) / d);
    }
    let r = b.x / b.y;
    let d = b.y + b.x * r;
    return vec2<f32>((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}

// cos and sin from polynomials (Cephes sinf/cosf, |r| <= pi/4, ~1 ulp) after a Cody-Waite
// reduction by pi/2: WGSL only bounds the builtin sin/cos to 2^-11 absolute, and SwiftShader's
// WebGPU sits near that (~2e-4), which is far too coarse for interference phases.
const TWO_OVER_PI: f32 = 0.6366197723675814;
const HALF_PI_HI: f32 = 1.5703125;
const HALF_PI_MID: f32 = 4.837512969970703125e-4;
const HALF_PI_LO: f32 = 7.54978995489188216e-8;

fn cos_sin(angle: f32) -> vec2<f32> {
    let j = round(angle * TWO_OVER_PI);
    let r = ((angle - j * HALF_PI_HI) - j * HALF_PI_MID) - j * HALF_PI_LO;
    let r2 = r * r;
    let s = r + r * r2 * (-1.6666654611e-1 + r2 * (8.3321608736e-3 + r2 * -1.9515295891e-4));
    let c = 1.0 - 0.5 * r2 + r2 * r2 * (4.166664568298827e-2 + r2 * (-1.388731625493765e-3 + r2 * 2.443315711809948e-5));
    let quadrant = i32(j - 4.0 * floor(j * 0.25));
    switch quadrant {
        case 0: { return vec2<f32>(c, s); }
        case 1: { return vec2<f32>(-s, c); }
        case 2: { return vec2<f32>(-c, -s); }
        default: { return vec2<f32>(s, -c); }
    }
}

fn cexp(z: vec2<f32>) -> vec2<f32> {
    return exp(z.x) * cos_sin(z.y);
}

// Square root with Im >= 0 (the downward-decaying wave), computed on scaled input.
fn decaying_root(z: vec2<f32>) -> vec2<f32> {
    let s = max(abs(z.x), abs(z.y));
    if (s == 0.0) {
        return vec2<f32>(0.0, 0.0);
    }
    let x = z.x / s;
    let y = z.y / s;
    let m = sqrt(x * x + y * y);
    let t = sqrt((m + abs(x)) * 0.5);
    let rs = sqrt(s);
    var root: vec2<f32>;
    if (x >= 0.0) {
        root = vec2<f32>(t, y / (2.0 * t));
    } else {
        root = vec2<f32>(abs(y) / (2.0 * t), select(t, -t, y < 0.0));
    }
    root = root * rs;
    if (root.y < 0.0) {
        root = -root;
    }
    return root;
}

fn parratt_step(r: vec2<f32>, x: vec2<f32>, phase: vec2<f32>) -> vec2<f32> {
    let xp = cmul(x, phase);
    return cdiv(r + xp, vec2<f32>(1.0, 0.0) + cmul(r, xp));
}

struct LayerTerms {
    chi_o: vec2<f32>,
    chi_e: vec2<f32>,
    p: vec2<f32>,        // eps_o eps_e - 1
    inv_eps_o: vec2<f32>,
    ks: vec2<f32>,
    kp: vec2<f32>,
}

fn layer_terms(layer: Layer, k02: f32, q2: f32) -> LayerTerms {
    var t: LayerTerms;
    t.chi_o = layer.chi.xy;
    t.chi_e = layer.chi.zw;
    t.p = t.chi_o + t.chi_e + cmul(t.chi_o, t.chi_e);
    let eps_o = vec2<f32>(1.0, 0.0) + t.chi_o;
    let eps_e = vec2<f32>(1.0, 0.0) + t.chi_e;
    t.inv_eps_o = cdiv(vec2<f32>(1.0, 0.0), eps_o);
    t.ks = decaying_root(t.chi_o * k02 + vec2<f32>(q2, 0.0));
    t.kp = decaying_root(cmul(cdiv(eps_o, eps_e), t.chi_e * k02 + vec2<f32>(q2, 0.0)));
    return t;
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let index = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (index >= params.n_points) {
        return;
    }
    let point = points[index];
    let stack = stacks[point.stack];
    let first = stack.x;
    let n = stack.y;
    let k02 = point.k02;
    let q2 = point.q2;

    var below = layer_terms(layers[first + n - 1u], k02, q2);
    var xs = vec2<f32>(0.0, 0.0);
    var xp = vec2<f32>(0.0, 0.0);
    for (var b = n - 1u; b >= 1u; b = b - 1u) {
        let lb = layers[first + b];
        let above = layer_terms(layers[first + b - 1u], k02, q2);
        // s interface
        let ss = above.ks + below.ks;
        var rs = cdiv((above.chi_o - below.chi_o) * k02, cmul(ss, ss));
        // p interface: (u_a^2 - u_b^2) / (u_a + u_b)^2, u = kz_p / eps_o
        let one = vec2<f32>(1.0, 0.0);
        let num = (above.chi_e - below.chi_e + cmul(above.chi_e, below.p) - cmul(below.chi_e, above.p)) * k02
            + (below.p - above.p) * q2;
        let norm = cmul(one + above.p, one + below.p);
        let sp = cmul(above.kp, above.inv_eps_o) + cmul(below.kp, below.inv_eps_o);
        var rp = cdiv(num, cmul(norm, cmul(sp, sp)));
        let sigma2 = lb.geom.y;
        if (sigma2 > 0.0) {
            rs = cmul(rs, cexp(-2.0 * sigma2 * cmul(above.ks, below.ks)));
            rp = cmul(rp, cexp(-2.0 * sigma2 * cmul(above.kp, below.kp)));
        }
        let d = lb.geom.x;
        var phase_s = vec2<f32>(1.0, 0.0);
        var phase_p = vec2<f32>(1.0, 0.0);
        if (d > 0.0 && b < n - 1u) {
            // exp(2i k d) = exp(-2 Im(k) d + 2i Re(k) d)
            phase_s = cexp(vec2<f32>(-2.0 * d * below.ks.y, 2.0 * d * below.ks.x));
            phase_p = cexp(vec2<f32>(-2.0 * d * below.kp.y, 2.0 * d * below.kp.x));
        }
        xs = parratt_step(rs, xs, phase_s);
        xp = parratt_step(rp, xp, phase_p);
        below = above;
    }
    reflectance[index] = vec2<f32>(dot(xs, xs), dot(xp, xp));
}
