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
//! first: no overflow or 0/0 for very rough interfaces.

use num_complex::Complex64 as C64;

use super::mat2::{self, M2};
use super::modes::Modes;
use crate::dual::Cx;

/// Eigen-decomposition of a pair's 2×2 Λ: eigenvalues and eigenvector matrix (columns).
struct Eig<T> {
    lam: [T; 2],
    v: M2<T>,
    v_inv: M2<T>,
}

/// Below this relative gap the two modes of a pair are treated as one k_z (their mean) in the
/// graph basis: the eigenvectors would be ill-conditioned, and the factor varies by O(gap).
const DEGENERATE_GAP: f64 = 1e-8;

fn eig<T: Cx>(lam: &M2<T>, decoupled: bool) -> Eig<T> {
    let one = mat2::diag(T::real(1.0), T::real(1.0));
    if decoupled {
        return Eig { lam: [lam[0][0], lam[1][1]], v: one, v_inv: one };
    }
    let m = (lam[0][0] + lam[1][1]) * 0.5;
    let half = (lam[0][0] - lam[1][1]) * 0.5;
    let r = (half * half + lam[0][1] * lam[1][0]).sqrt();
    let scale = m.value().norm() + r.value().norm();
    if r.value().norm() <= DEGENERATE_GAP * scale {
        return Eig { lam: [m, m], v: one, v_inv: one };
    }
    // (Λ − λ1) v1 = 0 with λ1 = m + r: v1 = (r + h, Λ10) or (Λ01, r − h); take the larger.
    let (rp, rm) = (r + half, r - half);
    let v1 = if rp.value().norm() >= rm.value().norm() { [rp, lam[1][0]] } else { [lam[0][1], rm] };
    // λ2 = m − r: v2 = (h − r, Λ10) or (Λ01, −(h + r)).
    let v2 = if rm.value().norm() >= rp.value().norm() { [T::real(0.0) - rm, lam[1][0]] } else { [lam[0][1], T::real(0.0) - rp] };
    let v = [[v1[0], v2[0]], [v1[1], v2[1]]];
    let norms = (v1[0].value().norm() + v1[1].value().norm()) * (v2[0].value().norm() + v2[1].value().norm());
    if mat2::det(&v).value().norm() <= DEGENERATE_GAP * norms {
        return Eig { lam: [m, m], v: one, v_inv: one };
    }
    Eig { lam: [m + r, m - r], v, v_inv: mat2::inv(&v) }
}

/// Applies the roughness factors to the interface blocks `k[row][col]` (0 = down, 1 = up) between
/// layer a (above, rows) and b (below, columns); `s2` = σ² k0² (ν = k_z/k0 in the modes).
pub(crate) fn roughen<T: Cx>(k: &mut [[M2<T>; 2]; 2], a: &Modes<T>, b: &Modes<T>, s2: T) {
    let ea = [eig(&a.lam_dn, a.decoupled), eig(&a.lam_up, a.decoupled)];
    let eb = [eig(&b.lam_dn, b.decoupled), eig(&b.lam_up, b.decoupled)];
    let z = T::real(0.0);
    let mut expo = [[[[z; 2]; 2]; 2]; 2];
    let mut top = (f64::NEG_INFINITY, z);
    for (rb, ea_r) in ea.iter().enumerate() {
        for (cb, eb_c) in eb.iter().enumerate() {
            for i in 0..2 {
                for j in 0..2 {
                    let dk = eb_c.lam[j] - ea_r.lam[i];
                    let e = z - s2 * dk * dk * 0.5;
                    expo[rb][cb][i][j] = e;
                    if e.value().re > top.0 {
                        top = (e.value().re, e);
                    }
                }
            }
        }
    }
    for (rb, ea_r) in ea.iter().enumerate() {
        for (cb, eb_c) in eb.iter().enumerate() {
            let decoupled = a.decoupled && b.decoupled;
            let mut ke = if decoupled { k[rb][cb] } else { mat2::mul(&mat2::mul(&ea_r.v_inv, &k[rb][cb]), &eb_c.v) };
            for (i, row) in ke.iter_mut().enumerate() {
                for (j, x) in row.iter_mut().enumerate() {
                    if x.value() != C64::new(0.0, 0.0) || !decoupled {
                        *x = *x * (expo[rb][cb][i][j] - top.1).exp();
                    }
                }
            }
            k[rb][cb] = if decoupled { ke } else { mat2::mul(&mat2::mul(&ea_r.v, &ke), &eb_c.v_inv) };
        }
    }
}
