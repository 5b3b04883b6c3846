//! Névot–Croce roughness generalised to coupled modes.
//!
//! The interface matrix K maps the mode amplitudes of the layer below (b) to those of the
//! layer above (a). In the eigenmode bases of both layers each element K[r][c] — mode c of b
//! into mode r of a — is multiplied by exp(−σ² (k_z,b[c] − k_z,a[r])² / 2), with *signed* k_z
//! (up-going modes have Im k_z < 0). For a single mode pair this is exp(−(k_b − k_a)²σ²/2) on the
//! transmission-like and exp(−(k_b + k_a)²σ²/2) on the reflection-like elements, whose ratio is
//! the Névot–Croce factor exp(−2 k_a k_b σ²): the Parratt recursion with rough Fresnel r is
//! reproduced exactly for uncoupled modes (uniaxial-z and isotropic stacks).
//!
//! For coupled modes the rule depends only on the two modes involved, not on how they are
//! labelled. refloxide 0.3.0 instead uses, for K[r][c], the k_z of the mode of layer a that
//! carries the *same label* (p-like/s-like, up/down) as c; the two rules differ only on the
//! cross-polarised elements of interfaces next to coupled layers (see `CONVENTIONS.md`).
//! A common factor of all sixteen elements cancels in G, so the largest exponent is subtracted
//! first: no overflow or 0/0 for very rough interfaces. In a graph basis the factors act through
//! the eigenprojectors of each pair's Λ (a bivariate matrix function of Λ_a and Λ_b).

use num_complex::Complex64 as C64;

use super::mat2::{self, mag, M2};
use super::modes::Modes;
use crate::dual::Cx;

/// One side (a pair of modes of one layer). Well-separated modes are diagonalised,
/// Λ = V diag(λ) V⁻¹ (V = I when s and p decouple); a (near-)degenerate pair is expanded to first
/// order around its mean m: f(Λ) ≈ f(m) I + f′(m) (Λ − m I), which keeps derivatives exact where
/// the pair splits.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Side<T> {
    /// Eigenvalues and (V, V⁻¹); no basis when V = I.
    Eig { lam: [T; 2], basis: Option<(M2<T>, M2<T>)> },
    /// Mean eigenvalue m and Λ − m I.
    Expanded { m: T, n: M2<T> },
}

/// Below this relative gap a pair is expanded around its mean instead of diagonalised (the
/// eigenvectors would be ill-conditioned; the expansion's error is O(gap²)).
const DEGENERATE_GAP: f64 = 1e-8;

fn side<T: Cx>(lam: &M2<T>, decoupled: bool) -> Side<T> {
    if decoupled {
        return Side::Eig { lam: [lam[0][0], lam[1][1]], basis: None };
    }
    let z = T::real(0.0);
    let m = (lam[0][0] + lam[1][1]) * 0.5;
    let half = (lam[0][0] - lam[1][1]) * 0.5;
    let r = (half * half + lam[0][1] * lam[1][0]).sqrt_decaying(); // either root: m ± r
    let expanded = Side::Expanded { m, n: mat2::add_identity(lam, z - m) };
    if mag(r.value()) <= DEGENERATE_GAP * (mag(m.value()) + mag(r.value())) {
        return expanded;
    }
    // (Λ − λ1) v1 = 0 with λ1 = m + r: v1 = (r + h, Λ10) or (Λ01, r − h); take the larger.
    let (rp, rm) = (r + half, r - half);
    let v1 = if mag(rp.value()) >= mag(rm.value()) { [rp, lam[1][0]] } else { [lam[0][1], rm] };
    // λ2 = m − r: v2 = (h − r, Λ10) or (Λ01, −(h + r)).
    let v2 = if mag(rm.value()) >= mag(rp.value()) { [z - rm, lam[1][0]] } else { [lam[0][1], z - rp] };
    let v = [[v1[0], v2[0]], [v1[1], v2[1]]];
    let norms = (mag(v1[0].value()) + mag(v1[1].value())) * (mag(v2[0].value()) + mag(v2[1].value()));
    if mag(mat2::det(&v).value()) <= DEGENERATE_GAP * norms {
        return expanded;
    }
    Side::Eig { lam: [m + r, m - r], basis: Some((v, mat2::inv(&v))) }
}

#[derive(Clone, Copy, PartialEq)]
enum Order {
    Value,
    Slope,
}

impl<T: Cx> Side<T> {
    /// The k_z/k0 values that enter the factors.
    fn values(&self) -> [T; 2] {
        match self {
            Side::Eig { lam, .. } => *lam,
            Side::Expanded { m, .. } => [*m, *m],
        }
    }

    /// Σ-form: (k_z, matrix, order) with f(Λ) = Σ f^(order)(k_z) · matrix.
    fn terms(&self) -> [(T, M2<T>, Order); 2] {
        let (one, z) = (T::real(1.0), T::real(0.0));
        match self {
            Side::Eig { lam, basis: None } => [(lam[0], mat2::diag(one, z), Order::Value), (lam[1], mat2::diag(z, one), Order::Value)],
            Side::Eig { lam, basis: Some((v, vi)) } => {
                let proj = |k: usize| [[v[0][k] * vi[k][0], v[0][k] * vi[k][1]], [v[1][k] * vi[k][0], v[1][k] * vi[k][1]]];
                [(lam[0], proj(0), Order::Value), (lam[1], proj(1), Order::Value)]
            }
            Side::Expanded { m, n } => [(*m, mat2::diag(one, one), Order::Value), (*m, *n, Order::Slope)],
        }
    }
}

/// Applies the roughness factors to the interface blocks `k[row][col]` (0 = down, 1 = up) between
/// layer a (above, rows) and b (below, columns); `s2` = σ² k0² (ν = k_z/k0 in the modes).
/// K′ = Σ_i Σ_j F(λ_i, μ_j) P_i K Q_j with F(λ, μ) = exp(−s2 (μ − λ)²/2) over the eigenprojectors
/// (derivatives of F for expanded pairs), all divided by the largest F.
pub(crate) fn roughen<T: Cx>(k: &mut [[M2<T>; 2]; 2], a: &mut Modes<T>, b: &mut Modes<T>, s2: T) {
    let sa = *a.sides.get_or_insert_with(|| [side(&a.lam_dn, a.decoupled), side(&a.lam_up, a.decoupled)]);
    let sb = *b.sides.get_or_insert_with(|| [side(&b.lam_dn, b.decoupled), side(&b.lam_up, b.decoupled)]);
    let z = T::real(0.0);
    let exponent = |l: T, m: T| {
        let d = m - l;
        z - s2 * d * d * 0.5
    };
    // All sixteen exponents once; the largest is subtracted.
    let (la, lb) = ([sa[0].values(), sa[1].values()].concat(), [sb[0].values(), sb[1].values()].concat());
    let mut expo = [[z; 4]; 4];
    let mut top = (f64::NEG_INFINITY, z);
    for (r, &l) in la.iter().enumerate() {
        for (c, &m) in lb.iter().enumerate() {
            let e = exponent(l, m);
            expo[r][c] = e;
            if e.value().re > top.0 {
                top = (e.value().re, e);
            }
        }
    }
    for (rb, row) in sa.iter().enumerate() {
        for (cb, col) in sb.iter().enumerate() {
            k[rb][cb] = match (row, col) {
                (Side::Eig { basis: bl, .. }, Side::Eig { basis: bm, .. }) => {
                    // To eigen-coordinates, scale element-wise, back.
                    let mut ke = k[rb][cb];
                    if let Some((_, vi)) = bl {
                        ke = mat2::mul(vi, &ke);
                    }
                    if let Some((v, _)) = bm {
                        ke = mat2::mul(&ke, v);
                    }
                    for (i, row) in ke.iter_mut().enumerate() {
                        for (j, x) in row.iter_mut().enumerate() {
                            if x.value() != C64::new(0.0, 0.0) || bl.is_some() || bm.is_some() {
                                *x = *x * (expo[2 * rb + i][2 * cb + j] - top.1).exp();
                            }
                        }
                    }
                    if let Some((v, _)) = bl {
                        ke = mat2::mul(v, &ke);
                    }
                    if let Some((_, vi)) = bm {
                        ke = mat2::mul(&ke, vi);
                    }
                    ke
                }
                _ => expanded_block(&k[rb][cb], row, col, &exponent, top.1, s2),
            };
        }
    }
}

/// One block where a side is an expanded degenerate pair: Σ over the terms of both sides.
fn expanded_block<T: Cx>(kk: &M2<T>, row: &Side<T>, col: &Side<T>, exponent: &impl Fn(T, T) -> T, top: T, s2: T) -> M2<T> {
    let z = T::real(0.0);
    let mut sum = mat2::zero::<T>();
    for (l, p, lo) in row.terms() {
        let pk = mat2::mul(&p, kk);
        for (m, q, mo) in col.terms() {
            let d = m - l;
            let f = (exponent(l, m) - top).exp();
            // ∂F/∂λ = s2 (μ − λ) F, ∂F/∂μ = −s2 (μ − λ) F, ∂²F/∂λ∂μ = s2 (1 − s2 (μ − λ)²) F.
            let coef = match (lo, mo) {
                (Order::Value, Order::Value) => f,
                (Order::Slope, Order::Value) => s2 * d * f,
                (Order::Value, Order::Slope) => z - s2 * d * f,
                (Order::Slope, Order::Slope) => s2 * (T::real(1.0) - s2 * d * d) * f,
            };
            sum = mat2::add(&sum, &mat2::scale(&mat2::mul(&pk, &q), coef));
        }
    }
    sum
}
