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

use super::mat2::{self, M2};
use super::modes::Modes;
use crate::dual::Cx;

/// One side (a pair of modes of one layer) as a sum of terms: eigenvalue and eigenprojector for
/// well-separated modes; for a (near-)degenerate pair, the first-order expansion around the mean
/// m: f(Λ) ≈ f(m) I + f′(m) (Λ − m I), which keeps derivatives exact where the pair splits.
struct Side<T> {
    terms: [(T, M2<T>, Order); 2],
}

#[derive(Clone, Copy, PartialEq)]
enum Order {
    Value,
    Slope,
}

/// Below this relative gap a pair is expanded around its mean instead of diagonalised (the
/// eigenvectors would be ill-conditioned; the expansion's error is O(gap²)).
const DEGENERATE_GAP: f64 = 1e-8;

fn side<T: Cx>(lam: &M2<T>, decoupled: bool) -> Side<T> {
    let (one, z) = (T::real(1.0), T::real(0.0));
    if decoupled {
        return Side { terms: [(lam[0][0], mat2::diag(one, z), Order::Value), (lam[1][1], mat2::diag(z, one), Order::Value)] };
    }
    let m = (lam[0][0] + lam[1][1]) * 0.5;
    let half = (lam[0][0] - lam[1][1]) * 0.5;
    let r = (half * half + lam[0][1] * lam[1][0]).sqrt();
    let degenerate = Side { terms: [(m, mat2::diag(one, one), Order::Value), (m, mat2::add_identity(lam, z - m), Order::Slope)] };
    if r.value().norm() <= DEGENERATE_GAP * (m.value().norm() + r.value().norm()) {
        return degenerate;
    }
    // (Λ − λ1) v1 = 0 with λ1 = m + r: v1 = (r + h, Λ10) or (Λ01, r − h); take the larger.
    let (rp, rm) = (r + half, r - half);
    let v1 = if rp.value().norm() >= rm.value().norm() { [rp, lam[1][0]] } else { [lam[0][1], rm] };
    // λ2 = m − r: v2 = (h − r, Λ10) or (Λ01, −(h + r)).
    let v2 = if rm.value().norm() >= rp.value().norm() { [z - rm, lam[1][0]] } else { [lam[0][1], z - rp] };
    let v = [[v1[0], v2[0]], [v1[1], v2[1]]];
    let norms = (v1[0].value().norm() + v1[1].value().norm()) * (v2[0].value().norm() + v2[1].value().norm());
    let det = mat2::det(&v);
    if det.value().norm() <= DEGENERATE_GAP * norms {
        return degenerate;
    }
    let vi = mat2::inv(&v);
    let proj = |k: usize| [[v[0][k] * vi[k][0], v[0][k] * vi[k][1]], [v[1][k] * vi[k][0], v[1][k] * vi[k][1]]];
    Side { terms: [(m + r, proj(0), Order::Value), (m - r, proj(1), Order::Value)] }
}

/// Applies the roughness factors to the interface blocks `k[row][col]` (0 = down, 1 = up) between
/// layer a (above, rows) and b (below, columns); `s2` = σ² k0² (ν = k_z/k0 in the modes).
/// K′ = Σ_i Σ_j F(λ_i, μ_j) P_i K Q_j with F(λ, μ) = exp(−s2 (μ − λ)²/2) (derivatives of F for
/// expanded degenerate pairs), divided by the largest F.
pub(crate) fn roughen<T: Cx>(k: &mut [[M2<T>; 2]; 2], a: &Modes<T>, b: &Modes<T>, s2: T) {
    let sa = [side(&a.lam_dn, a.decoupled), side(&a.lam_up, a.decoupled)];
    let sb = [side(&b.lam_dn, b.decoupled), side(&b.lam_up, b.decoupled)];
    let z = T::real(0.0);
    let exponent = |l: T, m: T| {
        let d = m - l;
        z - s2 * d * d * 0.5
    };
    let mut top = (f64::NEG_INFINITY, z);
    for (ra, cb) in sa.iter().flat_map(|x| sb.iter().map(move |y| (x, y))) {
        for (l, _, _) in &ra.terms {
            for (m, _, _) in &cb.terms {
                let e = exponent(*l, *m);
                if e.value().re > top.0 {
                    top = (e.value().re, e);
                }
            }
        }
    }
    let both_decoupled = a.decoupled && b.decoupled;
    for (rb, row_side) in sa.iter().enumerate() {
        for (cb, col_side) in sb.iter().enumerate() {
            let kk = k[rb][cb];
            if both_decoupled {
                // Diagonal projectors: element (i, j) gets F(λ_i, μ_j).
                for i in 0..2 {
                    for j in 0..2 {
                        if kk[i][j].value() != C64::new(0.0, 0.0) {
                            let f = (exponent(row_side.terms[i].0, col_side.terms[j].0) - top.1).exp();
                            k[rb][cb][i][j] = kk[i][j] * f;
                        }
                    }
                }
                continue;
            }
            let mut sum = mat2::zero::<T>();
            for (l, p, lo) in &row_side.terms {
                let pk = mat2::mul(p, &kk);
                for (m, q, mo) in &col_side.terms {
                    let d = *m - *l;
                    let f = (exponent(*l, *m) - top.1).exp();
                    // ∂F/∂λ = s2 (μ − λ) F, ∂F/∂μ = −s2 (μ − λ) F, ∂²F/∂λ∂μ = s2 (1 − s2 (μ − λ)²) F.
                    let coef = match (lo, mo) {
                        (Order::Value, Order::Value) => f,
                        (Order::Slope, Order::Value) => s2 * d * f,
                        (Order::Value, Order::Slope) => z - s2 * d * f,
                        (Order::Slope, Order::Slope) => s2 * (T::real(1.0) - s2 * d * d) * f,
                    };
                    sum = mat2::add(&sum, &mat2::scale(&mat2::mul(&pk, q), coef));
                }
            }
            k[rb][cb] = sum;
        }
    }
}
