// Double-float (df64) arithmetic library, prepended to kernels that declare `// requires: refl/df64.wgsl`.
// CPU twin: the f64 arithmetic of crates/refl/src/general/recursion.rs (and `decaying_root` of
// crates/refl/src/cpu/mod.rs); the host splits f64 into (hi, lo) in crates/refl/src/general/gpu.rs.
// A real is vec2<f32>(hi, lo) with |lo| <= ulp(hi)/2 (~48 significant bits); a complex is
// vec4<f32>(re.hi, re.lo, im.hi, im.lo). TwoSum (Knuth) and TwoProd (fma) are error-free
// transformations; `df_one` (1.0, set from a uniform by the kernel) keeps compilers from folding
// (s - a) back into b or contracting the error terms: it is opaque at compile time.
// Transcendentals: exp by ln2 reduction, 2^-8 scaling and expm1 doubling; sin/cos by a three-part
// pi/2 reduction and Taylor series to r^19 (|r| <= pi/4); sqrt and cbrt by f32 seeds and Newton
// steps in df64. Magnitudes are rescaled by powers of two before squaring, so complex reciprocals
// and roots neither underflow nor overflow in f32's exponent range.

var<private> df_one: f32 = 1.0;

fn two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = a + b;
    let v = s * df_one - a;
    let e = (a - (s * df_one - v)) + (b - v);
    return vec2<f32>(s, e);
}

// |a| >= |b| (or a == 0).
fn quick_two_sum(a: f32, b: f32) -> vec2<f32> {
    let s = a + b;
    let e = b - (s * df_one - a);
    return vec2<f32>(s, e);
}

// Dekker's split with the opaque 1 (no contraction of 4097 a - a).
fn df_split(a: f32) -> vec2<f32> {
    let t = (4097.0 * a) * df_one;
    let hi = t - (t - a);
    return vec2<f32>(hi, a - hi);
}

// p + e = a b exactly (Dekker: exact whether or not the compiler fuses the partial products).
fn two_prod(a: f32, b: f32) -> vec2<f32> {
    let p = a * b;
    let x = df_split(a);
    let y = df_split(b);
    let e = ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y;
    return vec2<f32>(p, e);
}

fn df(a: f32) -> vec2<f32> {
    return vec2<f32>(a, 0.0);
}

fn df_add(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let s = two_sum(a.x, b.x);
    let t = two_sum(a.y, b.y);
    let u = quick_two_sum(s.x, s.y + t.x);
    return quick_two_sum(u.x, u.y + t.y);
}

fn df_sub(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    return df_add(a, -b);
}

fn df_mul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let p = two_prod(a.x, b.x);
    return quick_two_sum(p.x, p.y + (a.x * b.y + a.y * b.x));
}

fn df_mul_f(a: vec2<f32>, b: f32) -> vec2<f32> {
    let p = two_prod(a.x, b);
    return quick_two_sum(p.x, p.y + a.y * b);
}

fn df_div(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
    let q1 = a.x / b.x;
    let r1 = df_sub(a, df_mul_f(b, q1));
    let q2 = r1.x / b.x;
    let r2 = df_sub(r1, df_mul_f(b, q2));
    let q3 = r2.x / b.x;
    return df_add(quick_two_sum(q1, q2), df(q3));
}

fn df_abs(a: vec2<f32>) -> vec2<f32> {
    return select(a, -a, a.x < 0.0);
}

// a > b.
fn df_gt(a: vec2<f32>, b: vec2<f32>) -> bool {
    return a.x > b.x || (a.x == b.x && a.y > b.y);
}

fn df_finite(a: f32) -> bool {
    return (bitcast<u32>(a) & 0x7f800000u) != 0x7f800000u;
}

// The bit patterns of +inf and a quiet NaN in private variables: a `bitcast` of a literal is a
// constant expression, and WGSL forbids non-finite constants (Chrome's Tint rejects the shader;
// naga let it pass). Reading a variable is not a constant expression.
var<private> df_inf_bits: u32 = 0x7f800000u;
var<private> df_nan_bits: u32 = 0x7fc00000u;

fn df_inf() -> f32 {
    return bitcast<f32>(df_inf_bits);
}

fn df_nan() -> f32 {
    return bitcast<f32>(df_nan_bits);
}

fn df_sqrt(a: vec2<f32>) -> vec2<f32> {
    if (a.x <= 0.0) {
        return vec2<f32>(0.0, 0.0);
    }
    let x = sqrt(a.x);
    let y = quick_two_sum(x, df_sub(a, two_prod(x, x)).x / (2.0 * x));
    return df_add(y, df(df_sub(a, df_mul(y, y)).x / (2.0 * y.x)));
}

const LN2_HI: f32 = 0.6931471824645996;
const LN2_LO: f32 = -1.9046542121259336e-09;

fn df_exp(a: vec2<f32>) -> vec2<f32> {
    if (a.x < -104.0) {
        return vec2<f32>(0.0, 0.0);
    }
    if (a.x > 88.7) {
        return vec2<f32>(df_inf(), 0.0);
    }
    let k = round(a.x * 1.4426950408889634);
    let r = df_sub(df_sub(a, two_prod(k, LN2_HI)), two_prod(k, LN2_LO));
    let s = r * (1.0 / 256.0);
    // expm1(s), |s| <= 1.4e-3: Taylor to s^7 (the rest is below 1e-24 of s).
    var p = df(1.0 / 5040.0);
    p = df_add(df(1.0 / 720.0), df_mul(p, s));
    p = df_add(df(1.0 / 120.0), df_mul(p, s));
    p = df_add(df(1.0 / 24.0), df_mul(p, s));
    p = df_add(vec2<f32>(0.1666666716337204, -4.967053879312289e-09), df_mul(p, s));
    p = df_add(df(0.5), df_mul(p, s));
    p = df_add(df(1.0), df_mul(p, s));
    var m = df_mul(p, s);
    // (1 + m)^2 - 1 = m (2 + m), eight times: expm1(256 s).
    for (var i = 0; i < 8; i = i + 1) {
        m = df_mul(m, df_add(df(2.0), m));
    }
    let one_m = df_add(df(1.0), m);
    let e = i32(k);
    // Two steps so that 2^e is representable for e down to -149.
    let e1 = e / 2;
    return ldexp(ldexp(one_m, vec2<i32>(e1)), vec2<i32>(e - e1));
}

const PIO2_1: f32 = 1.5707963705062866;
const PIO2_2: f32 = -4.371138828673793e-08;
const PIO2_3: f32 = -1.7151245100058819e-15;

// Taylor coefficients (-1)^k/(2k+1)! and (-1)^k/(2k)! as (hi, lo).
const SIN_C = array<vec2<f32>, 10>(
    vec2<f32>(1.0, 0.0),
    vec2<f32>(-0.1666666716337204, 4.967053879312289e-09),
    vec2<f32>(0.008333333767950535, -4.34617203337595e-10),
    vec2<f32>(-0.00019841270113829523, 2.725596874933456e-12),
    vec2<f32>(2.7557318844628753e-06, 3.793571224297229e-14),
    vec2<f32>(-2.5052107943679403e-08, -4.4176230446483665e-16),
    vec2<f32>(1.6059044372074283e-10, -5.352526511562726e-18),
    vec2<f32>(-7.647163609812713e-13, -1.2200710471178288e-20),
    vec2<f32>(2.8114573589663704e-15, -1.0462084739763658e-22),
    vec2<f32>(-8.220635078476521e-18, 0.0),
);
const COS_C = array<vec2<f32>, 11>(
    vec2<f32>(1.0, 0.0),
    vec2<f32>(-0.5, 0.0),
    vec2<f32>(0.0416666679084301, -1.2417634698280722e-09),
    vec2<f32>(-0.0013888889225199819, 3.3631094437103215e-11),
    vec2<f32>(2.4801587642286904e-05, -3.40699609366682e-13),
    vec2<f32>(-2.755731998149713e-07, 7.575112209051195e-15),
    vec2<f32>(2.0876755879584152e-09, 1.1082839147459852e-16),
    vec2<f32>(-1.147074536050896e-11, -2.372207689231238e-19),
    vec2<f32>(4.7794772561329454e-14, 7.62544404448643e-22),
    vec2<f32>(-1.5619206814541513e-16, 0.0),
    vec2<f32>(4.110317590937049e-19, 0.0),
);

// (cos a, sin a) as (cos.hi, cos.lo, sin.hi, sin.lo).
fn df_cos_sin(a: vec2<f32>) -> vec4<f32> {
    let j = round(a.x * 0.6366197723675814);
    var r = df_sub(a, two_prod(j, PIO2_1));
    r = df_sub(r, two_prod(j, PIO2_2));
    r = df_sub(r, df(j * PIO2_3));
    let t = df_mul(r, r);
    var s = SIN_C[9];
    for (var k = 8; k >= 0; k = k - 1) {
        s = df_add(SIN_C[k], df_mul(s, t));
    }
    s = df_mul(s, r);
    var c = COS_C[10];
    for (var k = 9; k >= 0; k = k - 1) {
        c = df_add(COS_C[k], df_mul(c, t));
    }
    let quadrant = i32(j - 4.0 * floor(j * 0.25));
    switch quadrant {
        case 0: { return vec4<f32>(c, s); }
        case 1: { return vec4<f32>(-s, c); }
        case 2: { return vec4<f32>(-c, -s); }
        default: { return vec4<f32>(s, -c); }
    }
}

// ---- complex df64 ----

fn cx(re: vec2<f32>, im: vec2<f32>) -> vec4<f32> {
    return vec4<f32>(re, im);
}

fn c_real(re: vec2<f32>) -> vec4<f32> {
    return vec4<f32>(re, 0.0, 0.0);
}

fn c_f(re: f32) -> vec4<f32> {
    return vec4<f32>(re, 0.0, 0.0, 0.0);
}

fn c_add(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(df_add(a.xy, b.xy), df_add(a.zw, b.zw));
}

fn c_sub(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(df_sub(a.xy, b.xy), df_sub(a.zw, b.zw));
}

fn c_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    let re = df_sub(df_mul(a.xy, b.xy), df_mul(a.zw, b.zw));
    let im = df_add(df_mul(a.xy, b.zw), df_mul(a.zw, b.xy));
    return vec4<f32>(re, im);
}

// Times a df64 real.
fn c_scale(a: vec4<f32>, s: vec2<f32>) -> vec4<f32> {
    return vec4<f32>(df_mul(a.xy, s), df_mul(a.zw, s));
}

// Times a power of two (exact).
fn c_pow2(a: vec4<f32>, s: f32) -> vec4<f32> {
    return a * s;
}

fn c_conj(a: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(a.xy, -a.zw);
}

fn c_norm2(a: vec4<f32>) -> vec2<f32> {
    return df_add(df_mul(a.xy, a.xy), df_mul(a.zw, a.zw));
}

// |re| + |im| of the high parts: comparisons and scales only (as `mag` of the CPU twin).
fn c_mag(a: vec4<f32>) -> f32 {
    return abs(a.x) + abs(a.z);
}

// The binary exponent of the larger part (frexp convention: m = f 2^e, 0.5 <= f < 1).
fn c_exponent(a: vec4<f32>) -> i32 {
    return frexp(max(abs(a.x), abs(a.z))).exp;
}

fn c_ldexp(a: vec4<f32>, e: i32) -> vec4<f32> {
    return ldexp(a, vec4<i32>(e));
}

// 1/a, rescaled by a power of two first (a zero gives non-finite parts, as on the CPU).
fn c_recip(a: vec4<f32>) -> vec4<f32> {
    if (a.x == 0.0 && a.z == 0.0) {
        return vec4<f32>(df_inf(), 0.0, df_nan(), 0.0);
    }
    let e = c_exponent(a);
    let s = c_ldexp(a, -e);
    let inv = df_div(df(1.0), c_norm2(s));
    return c_ldexp(c_scale(c_conj(s), inv), -e);
}

fn c_div(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    return c_mul(a, c_recip(b));
}

// The square root with Im >= 0 (Re >= 0 when real): `decaying_root` of the CPU twin.
fn c_sqrt_dec(z: vec4<f32>) -> vec4<f32> {
    if (z.x == 0.0 && z.z == 0.0) {
        return vec4<f32>(0.0);
    }
    let e = c_exponent(z);
    let e2 = e - (e & 1);
    let s = c_ldexp(z, -e2);
    let x = s.xy;
    let y = s.zw;
    let m = df_sqrt(c_norm2(s));
    let t = df_sqrt(df_mul_f(df_add(m, df_abs(x)), 0.5));
    let inv2t = df_div(df(0.5), t);
    var root: vec4<f32>;
    if (x.x >= 0.0) {
        root = vec4<f32>(t, df_mul(y, inv2t));
    } else {
        root = vec4<f32>(df_mul(df_abs(y), inv2t), select(t, -t, y.x < 0.0));
    }
    if (root.z < 0.0) {
        root = -root;
    }
    return c_ldexp(root, e2 / 2);
}

// The principal cube root: an f32 polar seed, then Newton steps w <- (2w + z/w^2)/3 in df64.
fn c_cbrt(z: vec4<f32>) -> vec4<f32> {
    if (z.x == 0.0 && z.z == 0.0) {
        return z;
    }
    let e = c_exponent(z);
    let e3 = e - ((e % 3) + 3) % 3;
    let s = c_ldexp(z, -e3);
    let r = pow(length(vec2<f32>(s.x, s.z)), 1.0 / 3.0);
    let ang = atan2(s.z, s.x) / 3.0;
    var w = vec4<f32>(r * cos(ang), 0.0, r * sin(ang), 0.0);
    let third = vec2<f32>(0.3333333432674408, -9.934107758624577e-09);
    for (var i = 0; i < 4; i = i + 1) {
        w = c_scale(c_add(c_pow2(w, 2.0), c_div(s, c_mul(w, w))), third);
    }
    return c_ldexp(w, e3 / 3);
}

// exp(z) = e^re (cos im, sin im).
fn c_exp(z: vec4<f32>) -> vec4<f32> {
    let m = df_exp(z.xy);
    if (m.x == 0.0) {
        return vec4<f32>(0.0);
    }
    let cs = df_cos_sin(z.zw);
    return vec4<f32>(df_mul(m, cs.xy), df_mul(m, cs.zw));
}
