//! The eigenmodes of one layer at one q, as two invariant subspaces (down-going, up-going).
//!
//! Each subspace is stored as the graph of a 2×2 matrix over the (H_y, E_y) amplitudes:
//! (E_x, H_x) = Z (H_y, E_y), with Λ = A + B Z the restriction of Δ to it (its eigenvalues are
//! the pair's ν = k_z/k0). Basis vectors of a subspace are thus normalised to H_y = 1, E_y = 0
//! ("p-like") and H_y = 0, E_y = 1 ("s-like"): in the vacuum they are exactly p and s of unit
//! |E|. A graph basis needs no individual eigenvectors, so (near-)degenerate pairs are harmless.
//!
//! * s/p-decoupled tensors: closed forms (s: ν² = g; p: a quadratic), exactly as the recursion.
//! * coupled tensors: the quartic's roots on the value, sorted into 2 down + 2 up (Im ν > 0, or,
//!   for propagating roots, the sign of the Poynting flux S_z), the pair factors refined by
//!   Newton steps and one final step in T (exact derivatives); then
//!   Z_down from the x-columns of N = Δ² − S_up Δ + P_up I, whose range is the down subspace
//!   (Cayley–Hamilton), and likewise Z_up with the down pair.

use num_complex::Complex64 as C64;

use super::mat2::{self, M2};
use super::quartic::{self, Pair};
use super::roughness::Side;
use super::terms::LayerTerms;
use crate::dual::Cx;

/// The q-dependent scalars shared by all layers: q, ζ = k_x/k0, ζ², Q̂² = (q/2k0)².
#[derive(Clone, Copy, Debug)]
pub(crate) struct Point<T> {
    pub q: f64,
    pub zeta: T,
    pub zeta2: T,
    pub qh2: T,
}

/// Modes of one layer at one q.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Modes<T> {
    pub z_dn: M2<T>,
    pub z_up: M2<T>,
    pub lam_dn: M2<T>,
    pub lam_up: M2<T>,
    /// (Z_up − Z_dn)⁻¹.
    pub w_inv: M2<T>,
    /// D − Z_dn B (spectrum: the up pair) and D − Z_up B (spectrum: the down pair).
    pub om_dn: M2<T>,
    pub om_up: M2<T>,
    pub decoupled: bool,
    /// The roughness eigen-data of (Λ_dn, Λ_up), filled on first use (each layer meets two
    /// interfaces).
    pub sides: Option<[Side<T>; 2]>,
}

/// The value pair factors (down, up) of a layer at the last two q of a curve: Newton starts at
/// their linear extrapolation to the next q.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Seed {
    last: Option<(f64, Pair<C64>, Pair<C64>)>,
    before: Option<(f64, Pair<C64>, Pair<C64>)>,
}

impl Seed {
    fn predict(&self, q: f64) -> Option<(Pair<C64>, Pair<C64>)> {
        let (q1, d1, u1) = self.last?;
        let Some((q0, d0, u0)) = self.before else { return Some((d1, u1)) };
        let t = (q - q1) / (q1 - q0);
        if !t.is_finite() || t.abs() > 4.0 {
            return Some((d1, u1));
        }
        let lin = |a: Pair<C64>, b: Pair<C64>| Pair { s: b.s + (b.s - a.s) * t, p: b.p + (b.p - a.p) * t };
        Some((lin(d0, d1), lin(u0, u1)))
    }

    fn push(&mut self, q: f64, dn: Pair<C64>, up: Pair<C64>) {
        self.before = self.last;
        self.last = Some((q, dn, up));
    }
}

/// The Δ blocks A, C, D (B = diag(κ_x, −1)).
#[inline]
fn blocks<T: Cx>(l: &LayerTerms<T>, pt: &Point<T>, g: T, h: T) -> (M2<T>, M2<T>, M2<T>) {
    let z = T::real(0.0);
    let a = [[z - pt.zeta * l.gamma, l.mu], [z, z]];
    let c = [[h * l.inv_ezz, z - pt.zeta * l.beta], [pt.zeta * l.eta, l.kappa_y - g]];
    let d = [[z - pt.zeta * l.alpha, z], [z - l.mu_t, z]];
    (a, c, d)
}

/// B · M with B = diag(κ_x, −1).
#[inline]
fn b_left<T: Cx>(kx: T, m: &M2<T>) -> M2<T> {
    [[kx * m[0][0], kx * m[0][1]], [-m[1][0], -m[1][1]]]
}

/// M · B with B = diag(κ_x, −1).
#[inline]
fn b_right<T: Cx>(m: &M2<T>, kx: T) -> M2<T> {
    [[m[0][0] * kx, -m[0][1]], [m[1][0] * kx, -m[1][1]]]
}

/// The modes of a layer at one point; `seed` carries the pair factors along a curve.
pub(crate) fn modes<T: Cx>(l: &LayerTerms<T>, pt: &Point<T>, seed: &mut Seed) -> Modes<T> {
    let g = l.chi_yy + pt.qh2;
    let h = l.chi_zz + pt.qh2;
    if l.decoupled {
        decoupled(l, pt, g, h)
    } else {
        coupled(l, pt, g, h, seed)
    }
}

fn decoupled<T: Cx>(l: &LayerTerms<T>, pt: &Point<T>, g: T, h: T) -> Modes<T> {
    let ns = g.sqrt_decaying();
    let centre = (l.alpha + l.gamma) * pt.zeta * -0.5;
    let half = (l.alpha - l.gamma) * pt.zeta * 0.5;
    let mut r = (half * half + l.kappa_x * h * l.inv_ezz).sqrt_decaying();
    // Down-going: the larger Im ν; for equal Im (propagating), the positive Poynting flux
    // Re(E_x H_y*) = Re Z |H_y|², i.e. Re(r/κ_x) ≥ 0.
    if r.value().im == 0.0 && (r / l.kappa_x).value().re < 0.0 {
        r = -r;
    }
    let (np_dn, np_up) = (centre + r, centre - r);
    let inv_kx = l.kappa_x.recip();
    let zg = pt.zeta * l.gamma;
    let (zp_dn, zp_up) = ((np_dn + zg) * inv_kx, (np_up + zg) * inv_kx);
    let z = T::real(0.0);
    Modes {
        z_dn: mat2::diag(zp_dn, z - ns),
        z_up: mat2::diag(zp_up, ns),
        lam_dn: mat2::diag(np_dn, ns),
        lam_up: mat2::diag(np_up, z - ns),
        w_inv: mat2::diag((zp_up - zp_dn).recip(), (ns * 2.0).recip()),
        om_dn: mat2::diag(np_up, z - ns),
        om_up: mat2::diag(np_dn, ns),
        decoupled: true,
        sides: None,
    }
}

/// Monic characteristic quartic det(νI − Δ) = det(ε + n nᵀ − n² I)/ε_zz, n = (ζ, 0, ν).
#[inline]
fn quartic<T: Cx>(l: &LayerTerms<T>, pt: &Point<T>, g: T, h: T) -> quartic::Quartic<T> {
    let z = pt.zeta;
    let gh = g * h;
    let c3 = z * l.s_xz;
    let c2 = l.p_yz + l.p_xz - (gh + l.exx * h + g * pt.zeta2);
    let c1 = z * (l.c1_term - g * l.s_xz);
    let c0 = l.exx * (gh - l.p_yz) - l.p_xy * h + l.c0_term - g * l.p_xz;
    [c3 * l.inv_ezz, c2 * l.inv_ezz, c1 * l.inv_ezz, c0 * l.inv_ezz]
}

/// Z of the subspace that is the range of N = Δ² − S Δ + P I (S, P of the *other* pair).
#[inline]
fn graph<T: Cx>(a: &M2<T>, kx: T, c: &M2<T>, d: &M2<T>, other: &Pair<T>) -> M2<T> {
    let n_xx = mat2::add_identity(&mat2::sub(&mat2::add(&mat2::mul(a, a), &b_left(kx, c)), &mat2::scale(a, other.s)), other.p);
    let n_yx = mat2::sub(&mat2::add(&mat2::mul(c, a), &mat2::mul(d, c)), &mat2::scale(c, other.s));
    mat2::mul(&n_yx, &mat2::inv(&n_xx))
}

fn coupled<T: Cx>(l: &LayerTerms<T>, pt: &Point<T>, g: T, h: T, seed: &mut Seed) -> Modes<T> {
    let (a, c, d) = blocks(l, pt, g, h);
    let coeffs = quartic(l, pt, g, h);
    let cv = coeffs.map(|x| x.value());
    // From the previous q's factors when Newton converges fast and the pairs still decay the
    // right ways; otherwise from the roots (Ferrari) and the Poynting sorting.
    let continued = seed.predict(pt.q).and_then(|(dn, up)| {
        let (dn, up, converged) = quartic::refine(&cv, dn, up, 4);
        (converged && clearly_sorted(&dn, &up)).then_some((dn, up))
    });
    let (dn, up) = continued.unwrap_or_else(|| {
        let roots = quartic::roots(&cv);
        let order = sort_down_up(&roots, l, pt.zeta.value(), g.value(), h.value());
        let pair = |i: usize, j: usize| Pair { s: roots[i] + roots[j], p: roots[i] * roots[j] };
        let (dn, up, _) = quartic::refine(&cv, pair(order[0], order[1]), pair(order[2], order[3]), 6);
        (dn, up)
    });
    seed.push(pt.q, dn, up);
    let lift = |p: Pair<C64>| Pair { s: T::constant(p.s), p: T::constant(p.p) };
    let (dn, up) = quartic::newton_step(&coeffs, lift(dn), lift(up));
    let z_dn = graph(&a, l.kappa_x, &c, &d, &up);
    let z_up = graph(&a, l.kappa_x, &c, &d, &dn);
    Modes {
        z_dn,
        z_up,
        lam_dn: mat2::add(&a, &b_left(l.kappa_x, &z_dn)),
        lam_up: mat2::add(&a, &b_left(l.kappa_x, &z_up)),
        w_inv: mat2::inv(&mat2::sub(&z_up, &z_dn)),
        om_dn: mat2::sub(&d, &b_right(&z_dn, l.kappa_x)),
        om_up: mat2::sub(&d, &b_right(&z_up, l.kappa_x)),
        decoupled: false,
        sides: None,
    }
}

/// Both down roots decay downwards and both up roots upwards by more than the sorting tolerance.
fn clearly_sorted(dn: &Pair<C64>, up: &Pair<C64>) -> bool {
    let roots = |p: &Pair<C64>| {
        let r = crate::cpu::decaying_root(p.s * p.s * 0.25 - p.p);
        (p.s * 0.5 + r, p.s * 0.5 - r)
    };
    let ((d1, d2), (u1, u2)) = (roots(dn), roots(up));
    let scale = [d1, d2, u1, u2].iter().map(|&r| mat2::mag(r)).fold(0.0, f64::max);
    let tol = 1e-7 * scale;
    d1.im > tol && d2.im > tol && u1.im < -tol && u2.im < -tol
}

/// Indices of the roots, the two down-going first. A root with |Im ν| above a small tolerance
/// decays one way; a propagating root goes the way its Poynting flux S_z points.
fn sort_down_up<T>(roots: &[C64; 4], l: &LayerTerms<T>, zeta: C64, g: C64, h: C64) -> [usize; 4] {
    let scale = roots.iter().map(|&r| mat2::mag(r)).fold(0.0, f64::max);
    let tol = 1e-7 * scale + 1e-300;
    let score = roots.map(|r| if r.im.abs() > tol { r.im } else { 0.5 * tol * poynting_sign(r, &l.chi_values, zeta, g, h) });
    let mut order = [0, 1, 2, 3];
    order.sort_by(|&i, &j| score[j].total_cmp(&score[i]));
    order
}

/// sign S_z of the mode with root ν: E from the null space of ε + n nᵀ − n² I (cross product of
/// two rows), H = n × E. Falls back to sign Re ν where the null space is not one-dimensional.
fn poynting_sign(nu: C64, chi: &[[C64; 3]; 3], zeta: C64, g: C64, h: C64) -> f64 {
    let m = [[chi[0][0] + 1.0 - nu * nu, chi[0][1], chi[0][2] + zeta * nu], [chi[1][0], g - nu * nu, chi[1][2]], [chi[2][0] + zeta * nu, chi[2][1], h]];
    let cross = |a: &[C64; 3], b: &[C64; 3]| [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    let norm = |v: &[C64; 3]| v.iter().map(|x| x.norm_sqr()).sum::<f64>();
    let cands = [cross(&m[0], &m[1]), cross(&m[0], &m[2]), cross(&m[1], &m[2])];
    let e = cands.iter().copied().max_by(|a, b| norm(a).total_cmp(&norm(b))).unwrap_or(cands[0]);
    let row_scale = m.iter().map(norm).fold(0.0, f64::max);
    if norm(&e) <= 1e-20 * row_scale * row_scale {
        return if nu.re >= 0.0 { 1.0 } else { -1.0 };
    }
    let (hx, hy) = (-nu * e[1], nu * e[0] - zeta * e[2]);
    let sz = (e[0] * hy.conj() - e[1] * hx.conj()).re;
    if sz >= 0.0 {
        1.0
    } else {
        -1.0
    }
}
