//! An independent, deliberately plain Berreman 4×4 implementation for thin stacks:
//! Δ built column by column from Maxwell's equations, its characteristic polynomial by
//! Faddeev–LeVerrier, roots by Durand–Kerner, eigenvectors by Gaussian elimination with complete
//! pivoting, modes sorted by Im k_z or Poynting flux and labelled p-like/s-like by
//! |E_x|²/(|E_x|² + |E_y|²), and a plain product of 4×4 transfer matrices. No code is shared with
//! the library (rotation, Δ, eigen-solve, recursion are all written again here).
#![allow(clippy::needless_range_loop)] // textbook index loops over 4×4 matrices, on purpose

use num_complex::Complex64 as C64;
use scatterlab_refl::general::{GeneralReflectivity, GeneralStack, TensorLayer};

type M4 = [[C64; 4]; 4];

/// How roughness factors are assigned (see `CONVENTIONS.md`).
#[derive(Clone, Copy, Debug, PartialEq)]
#[allow(dead_code)]
pub enum RoughnessRule {
    /// K[r][c] · exp(−σ²(k_b[c] − k_a[r])²/2): the library's rule.
    ModePair,
    /// refloxide 0.3.0: k_a of the mode of a with the label of c, sign by direction.
    SameLabel,
}

fn czero() -> C64 {
    C64::new(0.0, 0.0)
}

/// ε = I + Ω diag(χ) Ωᵀ, Ω = Rz(φ) Rx(θ) Rz(ψ) by explicit matrix products.
fn epsilon(l: &TensorLayer) -> [[C64; 3]; 3] {
    let rz = |a: f64| [[a.cos(), -a.sin(), 0.0], [a.sin(), a.cos(), 0.0], [0.0, 0.0, 1.0]];
    let rx = |a: f64| [[1.0, 0.0, 0.0], [0.0, a.cos(), -a.sin()], [0.0, a.sin(), a.cos()]];
    let mul = |a: [[f64; 3]; 3], b: [[f64; 3]; 3]| {
        let mut c = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                c[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
            }
        }
        c
    };
    let [f, t, p] = l.euler_deg.map(f64::to_radians);
    let o = mul(mul(rz(f), rx(t)), rz(p));
    let chi: [C64; 3] = std::array::from_fn(|k| C64::new(-2.0 * l.delta[k], 2.0 * l.beta[k]));
    let mut e = [[czero(); 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            e[i][j] = (0..3).map(|k| chi[k] * o[i][k] * o[j][k]).sum::<C64>() + if i == j { 1.0 } else { 0.0 };
        }
    }
    e
}

/// Δ for ψ = (E_x, H_y, E_y, H_x), built by applying the equations to unit vectors.
fn delta(e: &[[C64; 3]; 3], zeta: f64) -> M4 {
    let apply = |psi: [C64; 4]| {
        let [ex, hy, ey, _hx] = psi;
        let ez = -(e[2][0] * ex + e[2][1] * ey + zeta * hy) / e[2][2];
        [hy + zeta * ez, e[0][0] * ex + e[0][1] * ey + e[0][2] * ez, -psi[3], zeta * zeta * ey - (e[1][0] * ex + e[1][1] * ey + e[1][2] * ez)]
    };
    let mut d = [[czero(); 4]; 4];
    for j in 0..4 {
        let mut unit = [czero(); 4];
        unit[j] = C64::new(1.0, 0.0);
        let col = apply(unit);
        for i in 0..4 {
            d[i][j] = col[i];
        }
    }
    d
}

fn mul4(a: &M4, b: &M4) -> M4 {
    let mut c = [[czero(); 4]; 4];
    for i in 0..4 {
        for j in 0..4 {
            c[i][j] = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    c
}

/// Monic characteristic polynomial coefficients [c0, c1, c2, c3] (Faddeev–LeVerrier).
fn char_poly(a: &M4) -> [C64; 4] {
    let mut m = [[czero(); 4]; 4];
    for (i, row) in m.iter_mut().enumerate() {
        row[i] = C64::new(1.0, 0.0);
    }
    let mut c = [czero(); 4];
    for k in 1..=4 {
        let am = mul4(a, &m);
        let tr: C64 = (0..4).map(|i| am[i][i]).sum();
        c[4 - k] = -tr / k as f64;
        m = am;
        for (i, row) in m.iter_mut().enumerate() {
            row[i] += c[4 - k];
        }
    }
    c
}

fn poly(c: &[C64; 4], x: C64) -> (C64, C64) {
    let f = (((x + c[3]) * x + c[2]) * x + c[1]) * x + c[0];
    let df = ((4.0 * x + 3.0 * c[3]) * x + 2.0 * c[2]) * x + c[1];
    (f, df)
}

/// Durand–Kerner, then Newton.
fn roots(c: &[C64; 4]) -> [C64; 4] {
    let bound = 1.0 + c.iter().map(|x| x.norm()).fold(0.0, f64::max);
    let mut z: [C64; 4] = std::array::from_fn(|i| C64::new(0.4, 0.9).powu(i as u32 + 1) * bound * 0.5);
    for _ in 0..2000 {
        for i in 0..4 {
            let den: C64 = (0..4).filter(|&j| j != i).map(|j| z[i] - z[j]).product();
            z[i] -= poly(c, z[i]).0 / den;
        }
    }
    z.map(|mut x| {
        for _ in 0..5 {
            let (f, df) = poly(c, x);
            if df.norm() > 0.0 {
                x -= f / df;
            }
        }
        x
    })
}

/// A null vector of a rank-3 4×4 matrix by complete pivoting.
fn null_vector(mut a: M4) -> [C64; 4] {
    let mut cols = [0, 1, 2, 3];
    for k in 0..3 {
        let (mut bi, mut bj, mut best) = (k, k, -1.0);
        for i in k..4 {
            for j in k..4 {
                if a[i][j].norm() > best {
                    (bi, bj, best) = (i, j, a[i][j].norm());
                }
            }
        }
        a.swap(k, bi);
        for row in a.iter_mut() {
            row.swap(k, bj);
        }
        cols.swap(k, bj);
        for i in k + 1..4 {
            let f = a[i][k] / a[k][k];
            for j in k..4 {
                let v = a[k][j];
                a[i][j] -= f * v;
            }
        }
    }
    let mut y = [czero(); 4];
    y[3] = C64::new(1.0, 0.0);
    for k in (0..3).rev() {
        let s: C64 = (k + 1..4).map(|j| a[k][j] * y[j]).sum();
        y[k] = -s / a[k][k];
    }
    let mut x = [czero(); 4];
    for k in 0..4 {
        x[cols[k]] = y[k];
    }
    x
}

fn inverse(a: &M4) -> M4 {
    let mut m = *a;
    let mut inv = [[czero(); 4]; 4];
    for (i, row) in inv.iter_mut().enumerate() {
        row[i] = C64::new(1.0, 0.0);
    }
    for k in 0..4 {
        let p = (k..4).max_by(|&i, &j| m[i][k].norm().total_cmp(&m[j][k].norm())).unwrap();
        m.swap(k, p);
        inv.swap(k, p);
        let d = m[k][k];
        for j in 0..4 {
            m[k][j] /= d;
            inv[k][j] /= d;
        }
        for i in 0..4 {
            if i != k {
                let f = m[i][k];
                for j in 0..4 {
                    let (mv, iv) = (m[k][j], inv[k][j]);
                    m[i][j] -= f * mv;
                    inv[i][j] -= f * iv;
                }
            }
        }
    }
    inv
}

/// Modes of one layer: ν (= k_z/k0) and vectors, ordered [down p, down s, up p, up s].
struct Modes {
    nu: [C64; 4],
    d: M4,
}

fn modes(l: &TensorLayer, zeta: f64) -> Modes {
    let e = epsilon(l);
    let isotropic = (0..3).all(|i| (0..3).all(|j| i == j || e[i][j] == czero())) && e[0][0] == e[1][1] && e[1][1] == e[2][2];
    if isotropic {
        let eps = e[0][0];
        let mut nu = (eps - zeta * zeta).sqrt();
        if nu.im < 0.0 || (nu.im == 0.0 && nu.re < 0.0) {
            nu = -nu;
        }
        let o = C64::new(1.0, 0.0);
        let z = czero();
        // Columns: p (E_x = ±ν/ε, H_y = 1), s (E_y = 1, H_x = ∓ν).
        let d = [[nu / eps, z, -nu / eps, z], [o, z, o, z], [z, o, z, o], [z, -nu, z, nu]];
        return Modes { nu: [nu, nu, -nu, -nu], d };
    }
    let dm = delta(&e, zeta);
    let lam = roots(&char_poly(&dm));
    let vecs: Vec<[C64; 4]> = lam
        .iter()
        .map(|&l| {
            let mut a = dm;
            for (i, row) in a.iter_mut().enumerate() {
                row[i] -= l;
            }
            null_vector(a)
        })
        .collect();
    let scale = lam.iter().map(|x| x.norm()).fold(0.0, f64::max);
    let down = |i: usize| {
        if lam[i].im.abs() > 1e-9 * scale {
            lam[i].im > 0.0
        } else {
            let v = vecs[i];
            (v[0] * v[1].conj() - v[2] * v[3].conj()).re > 0.0
        }
    };
    let (dn, up): (Vec<usize>, Vec<usize>) = (0..4).partition(|&i| down(i));
    assert_eq!(dn.len(), 2, "mode sorting failed: {lam:?}");
    let p_like = |i: usize| vecs[i][0].norm_sqr() / (vecs[i][0].norm_sqr() + vecs[i][2].norm_sqr());
    let label = |pair: &[usize]| if p_like(pair[0]) >= p_like(pair[1]) { [pair[0], pair[1]] } else { [pair[1], pair[0]] };
    let order = [label(&dn), label(&up)].concat();
    let mut d = [[czero(); 4]; 4];
    for (c, &i) in order.iter().enumerate() {
        for r in 0..4 {
            d[r][c] = vecs[i][r];
        }
    }
    Modes { nu: std::array::from_fn(|c| lam[order[c]]), d }
}

/// The four reflectances at each q: R_ss, R_pp, R_sp (s out, p in), R_ps.
pub fn reflectivity(stack: &GeneralStack, energy: f64, q: &[f64], rule: RoughnessRule) -> GeneralReflectivity {
    let k0 = 2.0 * std::f64::consts::PI * energy / 12398.4193;
    let mut out = GeneralReflectivity::default();
    for &qi in q {
        let zeta = (1.0 - (qi / (2.0 * k0)).powi(2)).sqrt();
        let m: Vec<Modes> = stack.layers.iter().map(|l| modes(l, zeta)).collect();
        let n = m.len();
        let mut total = [[czero(); 4]; 4];
        for (i, row) in total.iter_mut().enumerate() {
            row[i] = C64::new(1.0, 0.0);
        }
        for b in 1..n {
            let a = b - 1;
            if a > 0 {
                let mut p_inv = [[czero(); 4]; 4];
                for i in 0..4 {
                    p_inv[i][i] = (C64::new(0.0, -k0 * stack.layers[a].thickness) * m[a].nu[i]).exp();
                }
                total = mul4(&total, &p_inv);
            }
            let mut k = mul4(&inverse(&m[a].d), &m[b].d);
            let sigma = stack.layers[b].roughness;
            for r in 0..4 {
                for c in 0..4 {
                    let kb = m[b].nu[c] * k0;
                    let ka = match rule {
                        RoughnessRule::ModePair => m[a].nu[r] * k0,
                        // Same label (p/s) and direction as c, sign flipped for the opposite direction.
                        RoughnessRule::SameLabel => m[a].nu[c] * k0 * if (r < 2) == (c < 2) { 1.0 } else { -1.0 },
                    };
                    k[r][c] *= (-(kb - ka) * (kb - ka) * sigma * sigma / 2.0).exp();
                }
            }
            total = mul4(&total, &k);
        }
        // c_0 = total · (t_p, t_s, 0, 0): r = M_up,down · M_down,down⁻¹ (2×2).
        let (a, b, c, d) = (total[0][0], total[0][1], total[1][0], total[1][1]);
        let det = a * d - b * c;
        let inv = [[d / det, -b / det], [-c / det, a / det]];
        let r = |o: usize, i: usize| total[2 + o][0] * inv[0][i] + total[2 + o][1] * inv[1][i];
        out.r_pp.push(r(0, 0).norm_sqr());
        out.r_ss.push(r(1, 1).norm_sqr());
        out.r_sp.push(r(1, 0).norm_sqr());
        out.r_ps.push(r(0, 1).norm_sqr());
    }
    out
}
