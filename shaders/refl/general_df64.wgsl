// requires: refl/df64.wgsl
// The general 4x4 method (tilted / biaxial layers), df64 (double-float) complex arithmetic.
// CPU f64 twin: crates/refl/src/general/recursion.rs with crates/refl/src/general/modes.rs,
// crates/refl/src/general/quartic.rs, crates/refl/src/general/propagate.rs and
// crates/refl/src/general/roughness.rs — the same steps, in the same order, with the same branches:
//   modes: closed form for s/p-decoupled layers; otherwise Ferrari roots of the quartic, sorted
//   2 down + 2 up (Im nu beyond 1e-7 of the scale, else the Poynting flux S_z), pair factors
//   refined by Newton (<= 6 steps, stop at 1e-6) plus one final step; graphs Z from N = Delta^2 - S Delta + P.
//   recursion from the substrate up with the Sylvester interface differences; Nevot-Croce by mode
//   pairs (exp(-s2 (mu - lambda)^2 / 2) on the eigenprojectors, the largest exponent subtracted).
// Not reproduced: the CPU's continuation of the quartic's factors along a curve (each GPU point
// starts from the roots, which is the CPU's own fallback; both converge to the same factors).
// The host (crates/refl/src/general/gpu.rs) computes every q-independent term in f64 and uploads
// it as (hi, lo); one invocation per (curve, q) point, any number of stacks per dispatch.

struct Params {
    n_points: u32,
    one: f32,
    two: u32,
    four: u32,
}

// Trip counts 2 and 4 read from the uniform: loops over them are not unrolled, so each large
// function (modes, Sylvester, sides, exponentials) is inlined once rather than per use; this keeps
// the driver's compile time (lavapipe: LLVM) down. The arithmetic is unchanged.
var<private> dyn2: u32 = 2u;
var<private> dyn4: u32 = 4u;

// geom = ((k0 d).hi, .lo, (sigma^2 k0^2).hi, .lo); flags = (decoupled, rough, 0, 0);
// t: the layer terms (see T_*) then chi_ij at T_CHI + 3 i + j.
struct Layer {
    geom: vec4<f32>,
    flags: vec4<u32>,
    t: array<vec4<f32>, 27>,
}

// Differences (this layer - the one above) for the interface above this layer (see D_*).
struct Iface {
    t: array<vec4<f32>, 10>,
}

struct Point {
    stack: u32,
    _pad: u32,
    zeta: vec2<f32>,
    zeta2: vec2<f32>,
    qh2: vec2<f32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> stacks: array<vec2<u32>>;   // (first layer, layer count)
@group(0) @binding(2) var<storage, read> layers: array<Layer>;
@group(0) @binding(3) var<storage, read> ifaces: array<Iface>;
@group(0) @binding(4) var<storage, read> points: array<Point>;
// Per point: (R_ss, R_sp), (R_ps, R_pp), each as (hi, lo).
@group(0) @binding(5) var<storage, read_write> reflectance: array<vec4<f32>>;

const WORKGROUP_SIZE: u32 = 64u;

const T_CHI_YY: u32 = 0u;
const T_CHI_ZZ: u32 = 1u;
const T_INV_EZZ: u32 = 2u;
const T_GAMMA: u32 = 3u;
const T_ALPHA: u32 = 4u;
const T_BETA: u32 = 5u;
const T_ETA: u32 = 6u;
const T_KAPPA_X: u32 = 7u;
const T_KAPPA_Y: u32 = 8u;
const T_MU: u32 = 9u;
const T_MU_T: u32 = 10u;
const T_EXX: u32 = 11u;
const T_S_XZ: u32 = 12u;
const T_P_YZ: u32 = 13u;
const T_P_XZ: u32 = 14u;
const T_P_XY: u32 = 15u;
const T_C1: u32 = 16u;
const T_C0: u32 = 17u;
const T_CHI: u32 = 18u;

const D_INV_EZZ: u32 = 0u;
const D_GAMMA: u32 = 1u;
const D_ALPHA: u32 = 2u;
const D_BETA: u32 = 3u;
const D_ETA: u32 = 4u;
const D_KAPPA_X: u32 = 5u;
const D_KAPPA_Y: u32 = 6u;
const D_MU: u32 = 7u;
const D_MU_T: u32 = 8u;
const D_CHI_YY: u32 = 9u;

// ---- 2x2 complex matrices: a = [0][0], b = [0][1], c = [1][0], d = [1][1] ----

struct M2 {
    a: vec4<f32>,
    b: vec4<f32>,
    c: vec4<f32>,
    d: vec4<f32>,
}

fn m_zero() -> M2 {
    return M2(vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0), vec4<f32>(0.0));
}

fn m_diag(x: vec4<f32>, y: vec4<f32>) -> M2 {
    return M2(x, vec4<f32>(0.0), vec4<f32>(0.0), y);
}

fn m_add(x: M2, y: M2) -> M2 {
    return M2(c_add(x.a, y.a), c_add(x.b, y.b), c_add(x.c, y.c), c_add(x.d, y.d));
}

fn m_sub(x: M2, y: M2) -> M2 {
    return M2(c_sub(x.a, y.a), c_sub(x.b, y.b), c_sub(x.c, y.c), c_sub(x.d, y.d));
}

fn m_mul(x: M2, y: M2) -> M2 {
    return M2(
        c_add(c_mul(x.a, y.a), c_mul(x.b, y.c)),
        c_add(c_mul(x.a, y.b), c_mul(x.b, y.d)),
        c_add(c_mul(x.c, y.a), c_mul(x.d, y.c)),
        c_add(c_mul(x.c, y.b), c_mul(x.d, y.d)),
    );
}

fn m_scale(x: M2, s: vec4<f32>) -> M2 {
    return M2(c_mul(x.a, s), c_mul(x.b, s), c_mul(x.c, s), c_mul(x.d, s));
}

fn m_neg(x: M2) -> M2 {
    return M2(-x.a, -x.b, -x.c, -x.d);
}

fn m_add_id(x: M2, s: vec4<f32>) -> M2 {
    return M2(c_add(x.a, s), x.b, x.c, c_add(x.d, s));
}

fn m_det(x: M2) -> vec4<f32> {
    return c_sub(c_mul(x.a, x.d), c_mul(x.b, x.c));
}

fn m_adj(x: M2) -> M2 {
    return M2(x.d, -x.b, -x.c, x.a);
}

fn m_inv(x: M2) -> M2 {
    return m_scale(m_adj(x), c_recip(m_det(x)));
}

// B M with B = diag(kx, -1), and M B.
fn b_left(kx: vec4<f32>, m: M2) -> M2 {
    return M2(c_mul(kx, m.a), c_mul(kx, m.b), -m.c, -m.d);
}

fn b_right(m: M2, kx: vec4<f32>) -> M2 {
    return M2(c_mul(m.a, kx), -m.b, c_mul(m.c, kx), -m.d);
}

// ---- per-point scalars and layer terms ----

struct Pt {
    zeta: vec4<f32>,
    zeta2: vec4<f32>,
    qh2: vec4<f32>,
}

fn lt(li: u32, k: u32) -> vec4<f32> {
    return layers[li].t[k];
}

struct Modes {
    z_dn: M2,
    z_up: M2,
    lam_dn: M2,
    lam_up: M2,
    w_inv: M2,
    om_dn: M2,
    om_up: M2,
    decoupled: u32,
}

struct Pair {
    s: vec4<f32>,
    p: vec4<f32>,
}

fn modes(li: u32, pt: Pt) -> Modes {
    let g = c_add(lt(li, T_CHI_YY), pt.qh2);
    let h = c_add(lt(li, T_CHI_ZZ), pt.qh2);
    if (layers[li].flags.x != 0u) {
        return decoupled_modes(li, pt, g, h);
    }
    return coupled_modes(li, pt, g, h);
}

fn decoupled_modes(li: u32, pt: Pt, g: vec4<f32>, h: vec4<f32>) -> Modes {
    let alpha = lt(li, T_ALPHA);
    let gamma = lt(li, T_GAMMA);
    let kx = lt(li, T_KAPPA_X);
    let ns = c_sqrt_dec(g);
    let centre = c_pow2(c_mul(c_add(alpha, gamma), pt.zeta), -0.5);
    let half = c_pow2(c_mul(c_sub(alpha, gamma), pt.zeta), 0.5);
    var r = c_sqrt_dec(c_add(c_mul(half, half), c_mul(c_mul(kx, h), lt(li, T_INV_EZZ))));
    // Down-going: the larger Im nu; for propagating modes the positive Poynting flux Re(r/kx) >= 0.
    if (r.z == 0.0 && r.w == 0.0 && c_div(r, kx).x < 0.0) {
        r = -r;
    }
    let np_dn = c_add(centre, r);
    let np_up = c_sub(centre, r);
    let inv_kx = c_recip(kx);
    let zg = c_mul(pt.zeta, gamma);
    let zp_dn = c_mul(c_add(np_dn, zg), inv_kx);
    let zp_up = c_mul(c_add(np_up, zg), inv_kx);
    var m: Modes;
    m.z_dn = m_diag(zp_dn, -ns);
    m.z_up = m_diag(zp_up, ns);
    m.lam_dn = m_diag(np_dn, ns);
    m.lam_up = m_diag(np_up, -ns);
    m.w_inv = m_diag(c_recip(c_sub(zp_up, zp_dn)), c_recip(c_pow2(ns, 2.0)));
    m.om_dn = m_diag(np_up, -ns);
    m.om_up = m_diag(np_dn, ns);
    m.decoupled = 1u;
    return m;
}

// ---- the quartic: reduction, Newton on the pair factorisation, Ferrari roots ----

struct Quartic {
    c0: vec4<f32>,
    c1: vec4<f32>,
    c2: vec4<f32>,
    c3: vec4<f32>,
}

fn correct(c: Quartic, q: Pair, other: Pair) -> Pair {
    let s = q.s;
    let p = q.p;
    let s2p = c_sub(c_mul(s, s), p);
    let f1 = c_add(c_add(c_add(c_sub(c_mul(s, s2p), c_mul(s, p)), c_mul(c.c0, s2p)), c_mul(c.c1, s)), c.c2);
    let f0 = c_sub(c_sub(c_sub(c.c3, c_mul(s2p, p)), c_mul(c_mul(c.c0, s), p)), c_mul(c.c1, p));
    let g1 = c_sub(q.s, other.s);
    let g0 = c_sub(other.p, q.p);
    let n = c_add(c_add(c_mul(g0, g0), c_mul(c_mul(g0, g1), q.s)), c_mul(c_mul(g1, g1), q.p));
    let inv_n = c_recip(n);
    let x = c_mul(-g1, inv_n);
    let y = c_mul(c_add(c_mul(g1, q.s), g0), inv_n);
    let l1 = c_add(c_add(c_mul(c_mul(f1, x), q.s), c_mul(f1, y)), c_mul(f0, x));
    let l0 = c_sub(c_mul(f0, y), c_mul(c_mul(f1, x), q.p));
    return Pair(c_sub(q.s, l1), c_add(q.p, l0));
}

// One simultaneous Newton step on the factorisation (`newton_step`): corrections of both factors.
fn newton_step(c: Quartic, a: Pair, b: Pair) -> array<Pair, 2> {
    var out: array<Pair, 2>;
    for (var t = 0u; t < dyn2; t = t + 1u) {
        var q = a;
        var other = b;
        if (t == 1u) {
            q = b;
            other = a;
        }
        out[t] = correct(c, q, other);
    }
    return out;
}

fn pair_finite(p: Pair) -> bool {
    return df_finite(p.s.x) && df_finite(p.s.z) && df_finite(p.p.x) && df_finite(p.p.z);
}

fn resolvent_root(a: vec4<f32>, b: vec4<f32>, d: vec4<f32>) -> vec4<f32> {
    let third = vec2<f32>(0.3333333432674408, -9.934107758624577e-09);
    let a2 = c_mul(a, a);
    let p = c_sub(b, c_scale(a2, third));
    let q = c_add(c_sub(c_scale(c_pow2(c_mul(a2, a), 2.0), df_div(df(1.0), df(27.0))), c_scale(c_mul(a, b), third)), d);
    let disc = c_sqrt_dec(c_add(c_pow2(c_mul(q, q), 0.25), c_scale(c_mul(c_mul(p, p), p), df_div(df(1.0), df(27.0)))));
    let u1 = c_add(c_pow2(-q, 0.5), disc);
    let u2 = c_sub(c_pow2(-q, 0.5), disc);
    let u = c_cbrt(select(u2, u1, !df_gt(c_norm2(u2), c_norm2(u1))));
    let omega = vec4<f32>(-0.5, 0.0, 0.8660253882408142, 1.5543625053737742e-08);
    let a3 = c_scale(a, third);
    var best = -a3;
    var w = c_f(1.0);
    for (var k = 0u; k + 1u < dyn4; k = k + 1u) {
        let uk = c_mul(u, w);
        var t = vec4<f32>(0.0);
        if (c_mag(uk) > 0.0) {
            t = c_sub(uk, c_div(p, c_pow2(c_add(uk, c_pow2(uk, 2.0)), 1.0)));
        }
        let m = c_sub(t, a3);
        if (df_gt(c_norm2(m), c_norm2(best))) {
            best = m;
        }
        w = c_mul(w, omega);
    }
    return best;
}

struct Roots {
    r: array<vec4<f32>, 4>,
}

fn ferrari(c: Quartic) -> Roots {
    let a = c.c0;
    let a2 = c_mul(a, a);
    let p = c_sub(c.c1, c_scale(a2, df(0.375)));
    let q = c_add(c_sub(c.c2, c_pow2(c_mul(a, c.c1), 0.5)), c_pow2(c_mul(a2, a), 0.125));
    let r = c_sub(c_add(c_sub(c.c3, c_pow2(c_mul(a, c.c2), 0.25)), c_pow2(c_mul(a2, c.c1), 0.0625)), c_scale(c_mul(a2, a2), df(3.0 / 256.0)));
    let scale = c_mag(p) + sqrt(c_mag(r)) + pow(c_mag(q), 1.0 / 3.0);
    var ys: array<vec4<f32>, 4>;
    if (c_mag(q) <= 1e-14 * scale * scale * scale) {
        let disc = c_sqrt_dec(c_sub(c_mul(p, p), c_pow2(r, 4.0)));
        let y1 = c_sqrt_dec(c_pow2(c_add(-p, disc), 0.5));
        let y2 = c_sqrt_dec(c_pow2(c_sub(-p, disc), 0.5));
        ys = array<vec4<f32>, 4>(y1, -y1, y2, -y2);
    } else {
        let m = resolvent_root(p, c_sub(c_pow2(c_mul(p, p), 0.25), r), c_pow2(-c_mul(q, q), 0.125));
        let s = c_sqrt_dec(c_pow2(m, 2.0));
        let t = c_div(q, s);
        let base = c_sub(c_pow2(-p, 2.0), c_pow2(m, 2.0));
        let d1 = c_sqrt_dec(c_sub(base, c_pow2(t, 2.0)));
        let d2 = c_sqrt_dec(c_add(base, c_pow2(t, 2.0)));
        ys = array<vec4<f32>, 4>(c_pow2(c_add(s, d1), 0.5), c_pow2(c_sub(s, d1), 0.5), c_pow2(c_sub(d2, s), 0.5), c_pow2(-c_add(s, d2), 0.5));
    }
    let shift = c_pow2(a, 0.25);
    var out: Roots;
    for (var k = 0; k < 4; k = k + 1) {
        out.r[k] = c_sub(ys[k], shift);
    }
    return out;
}

fn cross3(x: array<vec4<f32>, 3>, y: array<vec4<f32>, 3>) -> array<vec4<f32>, 3> {
    return array<vec4<f32>, 3>(
        c_sub(c_mul(x[1], y[2]), c_mul(x[2], y[1])),
        c_sub(c_mul(x[2], y[0]), c_mul(x[0], y[2])),
        c_sub(c_mul(x[0], y[1]), c_mul(x[1], y[0])),
    );
}

fn norm3(v: array<vec4<f32>, 3>) -> vec2<f32> {
    return df_add(df_add(c_norm2(v[0]), c_norm2(v[1])), c_norm2(v[2]));
}

// sign S_z of the mode with root nu (E from the null space of eps + n n^T - n^2 I; H = n x E).
fn poynting_sign(nu: vec4<f32>, li: u32, zeta: vec4<f32>, g: vec4<f32>, h: vec4<f32>) -> f32 {
    let nu2 = c_mul(nu, nu);
    let zn = c_mul(zeta, nu);
    let r0 = array<vec4<f32>, 3>(c_sub(c_add(lt(li, T_CHI), c_f(1.0)), nu2), lt(li, T_CHI + 1u), c_add(lt(li, T_CHI + 2u), zn));
    let r1 = array<vec4<f32>, 3>(lt(li, T_CHI + 3u), c_sub(g, nu2), lt(li, T_CHI + 5u));
    let r2 = array<vec4<f32>, 3>(c_add(lt(li, T_CHI + 6u), zn), lt(li, T_CHI + 7u), h);
    let c01 = cross3(r0, r1);
    let c02 = cross3(r0, r2);
    let c12 = cross3(r1, r2);
    // max_by keeps the last of equal maxima.
    var e = c01;
    var en = norm3(c01);
    if (!df_gt(en, norm3(c02))) {
        e = c02;
        en = norm3(c02);
    }
    if (!df_gt(en, norm3(c12))) {
        e = c12;
        en = norm3(c12);
    }
    let rs = max(max(norm3(r0).x, norm3(r1).x), norm3(r2).x);
    if (en.x <= 1e-20 * rs * rs) {
        return select(-1.0, 1.0, nu.x >= 0.0);
    }
    let hx = -c_mul(nu, e[1]);
    let hy = c_sub(c_mul(nu, e[0]), c_mul(zeta, e[2]));
    let sz = c_sub(c_mul(e[0], c_conj(hy)), c_mul(e[1], c_conj(hx)));
    return select(-1.0, 1.0, sz.x >= 0.0);
}

fn graph(a: M2, kx: vec4<f32>, c: M2, d: M2, other: Pair) -> M2 {
    let n_xx = m_add_id(m_sub(m_add(m_mul(a, a), b_left(kx, c)), m_scale(a, other.s)), other.p);
    let n_yx = m_sub(m_add(m_mul(c, a), m_mul(d, c)), m_scale(c, other.s));
    return m_mul(n_yx, m_inv(n_xx));
}

fn coupled_modes(li: u32, pt: Pt, g: vec4<f32>, h: vec4<f32>) -> Modes {
    let z = pt.zeta;
    let inv_ezz = lt(li, T_INV_EZZ);
    let kx = lt(li, T_KAPPA_X);
    let a = M2(-c_mul(z, lt(li, T_GAMMA)), lt(li, T_MU), vec4<f32>(0.0), vec4<f32>(0.0));
    let c = M2(c_mul(h, inv_ezz), -c_mul(z, lt(li, T_BETA)), c_mul(z, lt(li, T_ETA)), c_sub(lt(li, T_KAPPA_Y), g));
    let d = M2(-c_mul(z, lt(li, T_ALPHA)), vec4<f32>(0.0), -lt(li, T_MU_T), vec4<f32>(0.0));
    let exx = lt(li, T_EXX);
    let s_xz = lt(li, T_S_XZ);
    let p_yz = lt(li, T_P_YZ);
    let p_xz = lt(li, T_P_XZ);
    let gh = c_mul(g, h);
    let c3 = c_mul(z, s_xz);
    let c2 = c_sub(c_add(p_yz, p_xz), c_add(c_add(gh, c_mul(exx, h)), c_mul(g, pt.zeta2)));
    let c1 = c_mul(z, c_sub(lt(li, T_C1), c_mul(g, s_xz)));
    let c0 = c_sub(c_add(c_sub(c_mul(exx, c_sub(gh, p_yz)), c_mul(lt(li, T_P_XY), h)), lt(li, T_C0)), c_mul(g, p_xz));
    let cq = Quartic(c_mul(c3, inv_ezz), c_mul(c2, inv_ezz), c_mul(c1, inv_ezz), c_mul(c0, inv_ezz));
    // Roots and sorting: 2 down (score = Im nu, or half the tolerance times sign S_z) first.
    let roots = ferrari(cq);
    var scale = 0.0;
    for (var k = 0; k < 4; k = k + 1) {
        scale = max(scale, c_mag(roots.r[k]));
    }
    let tol = 1e-7 * scale + 1e-37;
    var score: array<f32, 4>;
    for (var k = 0u; k < dyn4; k = k + 1u) {
        let im = roots.r[k].z;
        if (abs(im) > tol) {
            score[k] = im;
        } else {
            score[k] = 0.5 * tol * poynting_sign(roots.r[k], li, z, g, h);
        }
    }
    // Stable insertion sort, descending.
    var order = array<i32, 4>(0, 1, 2, 3);
    for (var i = 1; i < 4; i = i + 1) {
        var j = i;
        loop {
            if (j == 0) {
                break;
            }
            if (!(score[order[j]] > score[order[j - 1]])) {
                break;
            }
            let tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
            j = j - 1;
        }
    }
    let rr = roots.r;
    var dn = Pair(c_add(rr[order[0]], rr[order[1]]), c_mul(rr[order[0]], rr[order[1]]));
    var up = Pair(c_add(rr[order[2]], rr[order[3]]), c_mul(rr[order[2]], rr[order[3]]));
    for (var step = 0; step < 6; step = step + 1) {
        let nd = newton_step(cq, dn, up);
        let ndn = nd[0];
        let nup = nd[1];
        if (!(pair_finite(ndn) && pair_finite(nup))) {
            break;
        }
        let change = c_mag(c_sub(ndn.s, dn.s)) + c_mag(c_sub(nup.s, up.s));
        let sc = c_mag(dn.s) + c_mag(up.s) + sqrt(c_mag(dn.p) + c_mag(up.p));
        dn = ndn;
        up = nup;
        if (change <= 1e-6 * sc) {
            break;
        }
    }
    let fin = newton_step(cq, dn, up);
    let fdn = fin[0];
    let fup = fin[1];
    var m: Modes;
    var zs: array<M2, 2>;
    for (var t = 0u; t < dyn2; t = t + 1u) {
        var other = fup;
        if (t == 1u) {
            other = fdn;
        }
        zs[t] = graph(a, kx, c, d, other);
    }
    m.z_dn = zs[0];
    m.z_up = zs[1];
    m.lam_dn = m_add(a, b_left(kx, m.z_dn));
    m.lam_up = m_add(a, b_left(kx, m.z_up));
    m.w_inv = m_inv(m_sub(m.z_up, m.z_dn));
    m.om_dn = m_sub(d, b_right(m.z_dn, kx));
    m.om_up = m_sub(d, b_right(m.z_up, kx));
    m.decoupled = 0u;
    return m;
}

// ---- propagation through a layer (crates/refl/src/general/propagate.rs) ----

// exp(s Lambda) by the cosh/sinh form: power series in u = s^2 w for |u| < 1, else eigenvalues.
fn expm(lam: M2, s: vec4<f32>) -> M2 {
    let m = c_pow2(c_add(lam.a, lam.d), 0.5);
    let half = c_pow2(c_sub(lam.a, lam.d), 0.5);
    let w = c_add(c_mul(half, half), c_mul(lam.b, lam.c));
    let u = c_mul(c_mul(s, s), w);
    let shifted = m_add_id(lam, -m);
    if (c_norm2(u).x < 1.0) {
        var ch = c_f(1.0);
        var sh = c_f(1.0);
        var tc = c_f(1.0);
        var ts = c_f(1.0);
        for (var n = 1; n <= 11; n = n + 1) {
            let k = f32(n);
            tc = c_scale(c_mul(tc, u), df_div(df(1.0), df((2.0 * k) * (2.0 * k - 1.0))));
            ts = c_scale(c_mul(ts, u), df_div(df(1.0), df((2.0 * k + 1.0) * (2.0 * k))));
            ch = c_add(ch, tc);
            sh = c_add(sh, ts);
            if (c_mag(tc) < 1e-17) {
                break;
            }
        }
        let e = c_exp(c_mul(s, m));
        return m_add_id(m_scale(shifted, c_mul(c_mul(sh, s), e)), c_mul(ch, e));
    }
    let r = c_sqrt_dec(w);
    let e1 = c_exp(c_mul(s, c_add(m, r)));
    let e2 = c_exp(c_mul(s, c_sub(m, r)));
    let sum = c_pow2(c_add(e1, e2), 0.5);
    let diff = c_mul(c_sub(e1, e2), c_recip(c_pow2(r, 2.0)));
    return m_add_id(m_scale(shifted, diff), sum);
}

fn through_layer(g: M2, m: Modes, k0d: vec2<f32>) -> M2 {
    let i_kd = vec4<f32>(0.0, 0.0, k0d);
    if (m.decoupled != 0u) {
        // phase(i, j) = exp(i k0 d (lam_dn[j][j] - lam_up[i][i])) on g[i][j].
        let dn = array<vec4<f32>, 2>(m.lam_dn.a, m.lam_dn.d);
        let up = array<vec4<f32>, 2>(m.lam_up.a, m.lam_up.d);
        var p: array<vec4<f32>, 4>;
        for (var t = 0u; t < dyn4; t = t + 1u) {
            p[t] = c_exp(c_mul(i_kd, c_sub(dn[t % 2u], up[t / 2u])));
        }
        return M2(c_mul(g.a, p[0]), c_mul(g.b, p[1]), c_mul(g.c, p[2]), c_mul(g.d, p[3]));
    }
    var e: array<M2, 2>;
    for (var t = 0u; t < dyn2; t = t + 1u) {
        var lam = m.lam_dn;
        var s = i_kd;
        if (t == 1u) {
            lam = m.lam_up;
            s = -i_kd;
        }
        e[t] = expm(lam, s);
    }
    return m_mul(m_mul(e[1], g), e[0]);
}

// ---- roughness (crates/refl/src/general/roughness.rs) ----

// kind 0: eigenvalues l0, l1 with V = I; 1: with basis v, vi; 2: expanded around m = l0, n = v.
struct Side {
    kind: u32,
    l0: vec4<f32>,
    l1: vec4<f32>,
    v: M2,
    vi: M2,
}

const DEGENERATE_GAP: f32 = 1e-8;

fn side(lam: M2, decoupled: u32) -> Side {
    if (decoupled != 0u) {
        return Side(0u, lam.a, lam.d, m_zero(), m_zero());
    }
    let m = c_pow2(c_add(lam.a, lam.d), 0.5);
    let half = c_pow2(c_sub(lam.a, lam.d), 0.5);
    let r = c_sqrt_dec(c_add(c_mul(half, half), c_mul(lam.b, lam.c)));
    let expanded = Side(2u, m, m, m_add_id(lam, -m), m_zero());
    if (c_mag(r) <= DEGENERATE_GAP * (c_mag(m) + c_mag(r))) {
        return expanded;
    }
    let rp = c_add(r, half);
    let rm = c_sub(r, half);
    var v1a = lam.b;
    var v1b = rm;
    if (c_mag(rp) >= c_mag(rm)) {
        v1a = rp;
        v1b = lam.c;
    }
    var v2a = lam.b;
    var v2b = -rp;
    if (c_mag(rm) >= c_mag(rp)) {
        v2a = -rm;
        v2b = lam.c;
    }
    let v = M2(v1a, v2a, v1b, v2b);
    let norms = (c_mag(v1a) + c_mag(v1b)) * (c_mag(v2a) + c_mag(v2b));
    if (c_mag(m_det(v)) <= DEGENERATE_GAP * norms) {
        return expanded;
    }
    return Side(1u, c_add(m, r), c_sub(m, r), v, m_inv(v));
}

// The k-th term (k = 0, 1) of a side: (k_z, matrix, slope) with f(Lambda) = sum f^(slope)(k_z) matrix.
struct Term {
    kz: vec4<f32>,
    mat: M2,
    slope: u32,
}

fn side_term(sd: Side, k: u32) -> Term {
    let one = c_f(1.0);
    let z = vec4<f32>(0.0);
    if (sd.kind == 0u) {
        if (k == 0u) {
            return Term(sd.l0, m_diag(one, z), 0u);
        }
        return Term(sd.l1, m_diag(z, one), 0u);
    }
    if (sd.kind == 1u) {
        let v = sd.v;
        let vi = sd.vi;
        if (k == 0u) {
            return Term(sd.l0, M2(c_mul(v.a, vi.a), c_mul(v.a, vi.b), c_mul(v.c, vi.a), c_mul(v.c, vi.b)), 0u);
        }
        return Term(sd.l1, M2(c_mul(v.b, vi.c), c_mul(v.b, vi.d), c_mul(v.d, vi.c), c_mul(v.d, vi.d)), 0u);
    }
    if (k == 0u) {
        return Term(sd.l0, m_diag(one, one), 0u);
    }
    return Term(sd.l0, sd.v, 1u);
}

fn side_value(sd: Side, k: u32) -> vec4<f32> {
    if (sd.kind == 2u || k == 0u) {
        return sd.l0;
    }
    return sd.l1;
}

fn exponent(l: vec4<f32>, m: vec4<f32>, s2: vec2<f32>) -> vec4<f32> {
    let d = c_sub(m, l);
    return -c_pow2(c_mul(c_scale(d, s2), d), 0.5);
}

fn entry(x: M2, i: u32, j: u32) -> vec4<f32> {
    if (i == 0u) {
        return select(x.b, x.a, j == 0u);
    }
    return select(x.d, x.c, j == 0u);
}

fn roughen_block(kk: M2, row: Side, col: Side, rb: u32, cb: u32, expo: array<vec4<f32>, 16>, top: vec4<f32>, s2: vec2<f32>) -> M2 {
    if (row.kind != 2u && col.kind != 2u) {
        var ke = kk;
        if (row.kind == 1u) {
            ke = m_mul(row.vi, ke);
        }
        if (col.kind == 1u) {
            ke = m_mul(ke, col.v);
        }
        let r0 = 2u * rb;
        let c0 = 2u * cb;
        var f: array<vec4<f32>, 4>;
        for (var t = 0u; t < dyn4; t = t + 1u) {
            f[t] = c_exp(c_sub(expo[4u * (r0 + t / 2u) + c0 + t % 2u], top));
        }
        ke = M2(c_mul(ke.a, f[0]), c_mul(ke.b, f[1]), c_mul(ke.c, f[2]), c_mul(ke.d, f[3]));
        if (row.kind == 1u) {
            ke = m_mul(row.v, ke);
        }
        if (col.kind == 1u) {
            ke = m_mul(ke, col.vi);
        }
        return ke;
    }
    // An expanded (degenerate) side: the sum over both sides' terms.
    var sum = m_zero();
    for (var i = 0u; i < dyn2; i = i + 1u) {
        let tr = side_term(row, i);
        let pk = m_mul(tr.mat, kk);
        for (var j = 0u; j < dyn2; j = j + 1u) {
            let tc = side_term(col, j);
            let d = c_sub(tc.kz, tr.kz);
            let f = c_exp(c_sub(exponent(tr.kz, tc.kz, s2), top));
            var coef = f;
            if (tr.slope == 1u && tc.slope == 0u) {
                coef = c_mul(c_scale(d, s2), f);
            } else if (tr.slope == 0u && tc.slope == 1u) {
                coef = -c_mul(c_scale(d, s2), f);
            } else if (tr.slope == 1u && tc.slope == 1u) {
                coef = c_mul(c_scale(c_sub(c_f(1.0), c_mul(c_scale(d, s2), d)), s2), f);
            }
            sum = m_add(sum, m_scale(m_mul(pk, tc.mat), coef));
        }
    }
    return sum;
}

// ---- interfaces (crates/refl/src/general/recursion.rs) ----

// X with Om X - X Lam = R: X = p_Lam(Om)^-1 (Om R - R adj Lam).
fn sylvester(om: M2, lam: M2, r: M2) -> M2 {
    let t = c_add(lam.a, lam.d);
    let p = m_add_id(m_sub(m_mul(om, om), m_scale(om, t)), m_det(lam));
    let rhs = m_sub(m_mul(om, r), m_mul(r, m_adj(lam)));
    return m_mul(m_inv(p), rhs);
}

fn it(ib: u32, k: u32) -> vec4<f32> {
    return ifaces[ib].t[k];
}

fn rhs_of(za: M2, zb: M2, d_a: M2, d_c: M2, d_d: M2, dkx: vec4<f32>) -> M2 {
    let db_zb = M2(c_mul(dkx, zb.a), c_mul(dkx, zb.b), vec4<f32>(0.0), vec4<f32>(0.0));
    return m_sub(m_mul(za, m_add(d_a, db_zb)), m_add(d_c, m_mul(d_d, zb)));
}

// G above the interface between layers lb - 1 (modes ma) and lb (modes mb), from G at the top of lb.
fn interface_step(ma: Modes, mb: Modes, lb: u32, pt: Pt, g: M2) -> M2 {
    let zeta = pt.zeta;
    let d_a = M2(-c_mul(zeta, it(lb, D_GAMMA)), it(lb, D_MU), vec4<f32>(0.0), vec4<f32>(0.0));
    let d_c = M2(-c_mul(pt.zeta2, it(lb, D_INV_EZZ)), -c_mul(zeta, it(lb, D_BETA)), c_mul(zeta, it(lb, D_ETA)), c_sub(it(lb, D_KAPPA_Y), it(lb, D_CHI_YY)));
    let d_d = M2(-c_mul(zeta, it(lb, D_ALPHA)), vec4<f32>(0.0), -it(lb, D_MU_T), vec4<f32>(0.0));
    let dkx = it(lb, D_KAPPA_X);
    var dz: array<M2, 2>;
    for (var t = 0u; t < dyn2; t = t + 1u) {
        var om = ma.om_dn;
        var lam = mb.lam_dn;
        var za = ma.z_dn;
        var zb = mb.z_dn;
        if (t == 1u) {
            om = ma.om_up;
            lam = mb.lam_up;
            za = ma.z_up;
            zb = mb.z_up;
        }
        dz[t] = sylvester(om, lam, rhs_of(za, zb, d_a, d_c, d_d, dkx));
    }
    let dz_dn = dz[0];
    let dz_up = dz[1];
    if (layers[lb].flags.y == 0u) {
        let x = m_add(dz_dn, m_mul(m_sub(mb.z_up, ma.z_dn), g));
        let y = m_sub(m_sub(ma.z_up, mb.z_dn), m_mul(dz_up, g));
        let w = m_sub(ma.z_up, ma.z_dn);
        return m_mul(m_mul(ma.w_inv, m_mul(x, m_inv(y))), w);
    }
    let w = ma.w_inv;
    var k = array<M2, 4>(m_mul(w, m_sub(ma.z_up, mb.z_dn)), m_neg(m_mul(w, dz_up)), m_mul(w, dz_dn), m_mul(w, m_sub(mb.z_up, ma.z_dn)));
    let s2 = layers[lb].geom.zw;
    var sides: array<Side, 4>;
    for (var t = 0u; t < dyn4; t = t + 1u) {
        var lam = ma.lam_dn;
        var dec = ma.decoupled;
        if (t == 1u) {
            lam = ma.lam_up;
        } else if (t == 2u) {
            lam = mb.lam_dn;
            dec = mb.decoupled;
        } else if (t == 3u) {
            lam = mb.lam_up;
            dec = mb.decoupled;
        }
        sides[t] = side(lam, dec);
    }
    let sa = array<Side, 2>(sides[0], sides[1]);
    let sb = array<Side, 2>(sides[2], sides[3]);
    let la = array<vec4<f32>, 4>(side_value(sa[0], 0u), side_value(sa[0], 1u), side_value(sa[1], 0u), side_value(sa[1], 1u));
    let lbv = array<vec4<f32>, 4>(side_value(sb[0], 0u), side_value(sb[0], 1u), side_value(sb[1], 0u), side_value(sb[1], 1u));
    var expo: array<vec4<f32>, 16>;
    var top = vec4<f32>(0.0);
    var top_re = -df_inf();
    for (var r = 0u; r < 4u; r = r + 1u) {
        for (var c = 0u; c < 4u; c = c + 1u) {
            let e = exponent(la[r], lbv[c], s2);
            expo[4u * r + c] = e;
            if (e.x > top_re || (r == 0u && c == 0u)) {
                top_re = e.x;
                top = e;
            }
        }
    }
    for (var rb = 0u; rb < dyn2; rb = rb + 1u) {
        for (var cb = 0u; cb < dyn2; cb = cb + 1u) {
            k[2u * rb + cb] = roughen_block(k[2u * rb + cb], sa[rb], sb[cb], rb, cb, expo, top, s2);
        }
    }
    let num = m_add(k[2], m_mul(k[3], g));
    let den = m_add(k[0], m_mul(k[1], g));
    return m_mul(num, m_inv(den));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    df_one = params.one;
    dyn2 = params.two;
    dyn4 = params.four;
    let index = gid.x + gid.y * groups.x * WORKGROUP_SIZE;
    if (index >= params.n_points) {
        return;
    }
    let point = points[index];
    let stack = stacks[point.stack];
    let first = stack.x;
    let n = stack.y;
    let pt = Pt(c_real(point.zeta), c_real(point.zeta2), c_real(point.qh2));
    // From the substrate up; one call site of `modes` (layer j above interface b = j + 1).
    var below: Modes;
    var g = m_zero();
    for (var j = i32(n) - 1; j >= 0; j = j - 1) {
        let above = modes(first + u32(j), pt);
        let b = u32(j) + 1u;
        if (b < n) {
            if (b < n - 1u) {
                g = through_layer(g, below, layers[first + b].geom.xy);
            }
            g = interface_step(above, below, first + b, pt, g);
        }
        below = above;
    }
    // r_ss = G[1][1], r_sp = G[1][0], r_ps = G[0][1], r_pp = G[0][0].
    reflectance[2u * index] = vec4<f32>(c_norm2(g.d), c_norm2(g.c));
    reflectance[2u * index + 1u] = vec4<f32>(c_norm2(g.b), c_norm2(g.a));
}
