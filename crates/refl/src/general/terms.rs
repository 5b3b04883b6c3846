//! Per-layer and per-interface quantities that do not depend on q, computed once per curve.
//!
//! Berreman's system for ψ = (H_y, E_y | E_x, H_x) (H in units of E: Z₀H), ν = k_z/k0,
//! ζ = k_x/k0, is ν ψ = Δ ψ with Δ = [[A, B], [C, D]] in 2×2 blocks (eliminating E_z, H_z):
//! A = [[−ζγ, μ], [0, 0]], B = diag(κ_x, −1),
//! C = [[h/ε_zz, −ζβ′], [ζη, −g + κ_y]], D = [[−ζα, 0], [−μ′, 0]], where
//! γ = ε_xz/ε_zz, α = ε_zx/ε_zz, β′ = ε_zy/ε_zz, η = ε_yz/ε_zz, κ_x = ε_xx − ε_xz ε_zx/ε_zz,
//! μ = ε_xy − ε_xz ε_zy/ε_zz, μ′ = ε_yx − ε_yz ε_zx/ε_zz, κ_y = ε_yz ε_zy/ε_zz, and
//! g = χ_yy + Q̂², h = χ_zz + Q̂² (Q̂ = q/2k0; ε − ζ² written without cancellation).
//! The differences of these between neighbouring layers are formed here from χ_b − χ_a by the
//! product rule, so interface terms never subtract two nearly equal O(1) numbers.

use num_complex::Complex64 as C64;

use super::tensor::is_decoupled;
use crate::dual::Cx;

/// One layer for the generic kernel: the laboratory χ = ε − 1 (dimensionless; k0 is passed
/// separately), thickness and roughness in Å, all in the scalar type T (C64, or jets).
#[derive(Clone, Copy, Debug)]
pub struct ChiLayer<T> {
    /// χ_ij, row i, column j, lab frame (x in the plane of incidence, z into the sample).
    pub chi: [[T; 3]; 3],
    /// Thickness, Å.
    pub thickness: T,
    /// Roughness of the interface above this layer, Å.
    pub roughness: T,
    /// s and p decouple exactly (χ_xy = χ_yx = χ_yz = χ_zy = 0, including any derivatives):
    /// the modes are then built in closed form, degenerate or not.
    pub decoupled: bool,
}

impl<T: Cx> ChiLayer<T> {
    /// A layer whose decoupling is judged from the values of χ. For jets whose derivative slots
    /// may move the coupling entries away from zero, set `decoupled` to false yourself.
    pub fn new(chi: [[T; 3]; 3], thickness: T, roughness: T) -> Self {
        let values = chi.map(|row| row.map(|x| x.value()));
        Self { chi, thickness, roughness, decoupled: is_decoupled(&values) }
    }
}

/// q-independent terms of one layer (see the module documentation for the names).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LayerTerms<T> {
    pub decoupled: bool,
    pub chi_values: [[C64; 3]; 3],
    pub chi_yy: T,
    pub chi_zz: T,
    pub inv_ezz: T,
    pub gamma: T,
    pub alpha: T,
    pub beta: T,
    pub eta: T,
    pub kappa_x: T,
    pub kappa_y: T,
    pub mu: T,
    pub mu_t: T,
    /// Quartic pieces: ε_xx, ε_xz + ε_zx, ε_yz ε_zy, ε_xz ε_zx, ε_xy ε_yx,
    /// ε_xy ε_yz + ε_yx ε_zy, ε_xy ε_yz ε_zx + ε_xz ε_yx ε_zy.
    pub exx: T,
    pub s_xz: T,
    pub p_yz: T,
    pub p_xz: T,
    pub p_xy: T,
    pub c1_term: T,
    pub c0_term: T,
    pub thickness: T,
    pub sigma2: T,
    pub rough: bool,
}

impl<T: Cx> LayerTerms<T> {
    pub fn new(l: &ChiLayer<T>) -> Self {
        let x = &l.chi;
        let inv_ezz = (x[2][2] + 1.0).recip();
        let alpha = x[2][0] * inv_ezz;
        let beta = x[2][1] * inv_ezz;
        Self {
            decoupled: l.decoupled,
            chi_values: x.map(|row| row.map(|v| v.value())),
            chi_yy: x[1][1],
            chi_zz: x[2][2],
            inv_ezz,
            gamma: x[0][2] * inv_ezz,
            alpha,
            beta,
            eta: x[1][2] * inv_ezz,
            kappa_x: x[0][0] + 1.0 - x[0][2] * alpha,
            kappa_y: x[1][2] * beta,
            mu: x[0][1] - x[0][2] * beta,
            mu_t: x[1][0] - x[1][2] * alpha,
            exx: x[0][0] + 1.0,
            s_xz: x[0][2] + x[2][0],
            p_yz: x[1][2] * x[2][1],
            p_xz: x[0][2] * x[2][0],
            p_xy: x[0][1] * x[1][0],
            c1_term: x[0][1] * x[1][2] + x[1][0] * x[2][1],
            c0_term: x[0][1] * x[1][2] * x[2][0] + x[0][2] * x[1][0] * x[2][1],
            thickness: l.thickness,
            sigma2: l.roughness * l.roughness,
            rough: l.roughness.value() != C64::new(0.0, 0.0),
        }
    }
}

/// Differences (layer below − layer above) of the Δ-block coefficients, cancellation-free.
#[derive(Clone, Copy, Debug)]
pub(crate) struct InterfaceTerms<T> {
    pub d_inv_ezz: T,
    pub d_gamma: T,
    pub d_alpha: T,
    pub d_beta: T,
    pub d_eta: T,
    pub d_kappa_x: T,
    pub d_kappa_y: T,
    pub d_mu: T,
    pub d_mu_t: T,
    pub d_chi_yy: T,
}

impl<T: Cx> InterfaceTerms<T> {
    /// `a` above, `b` below.
    pub fn new(a: &ChiLayer<T>, ta: &LayerTerms<T>, b: &ChiLayer<T>, tb: &LayerTerms<T>) -> Self {
        let (xa, xb) = (&a.chi, &b.chi);
        let d = |i: usize, j: usize| xb[i][j] - xa[i][j];
        let d_inv_ezz = T::real(0.0) - d(2, 2) * ta.inv_ezz * tb.inv_ezz;
        // δ(x/ε_zz) = δx / ε_zz,b + x_a δ(1/ε_zz).
        let ratio = |i: usize, j: usize| d(i, j) * tb.inv_ezz + xa[i][j] * d_inv_ezz;
        let (d_gamma, d_alpha, d_beta, d_eta) = (ratio(0, 2), ratio(2, 0), ratio(2, 1), ratio(1, 2));
        // δ(x·y) = δx · y_b + x_a · δy.
        Self {
            d_inv_ezz,
            d_gamma,
            d_alpha,
            d_beta,
            d_eta,
            d_kappa_x: d(0, 0) - (d(0, 2) * tb.alpha + xa[0][2] * d_alpha),
            d_kappa_y: d(1, 2) * tb.beta + xa[1][2] * d_beta,
            d_mu: d(0, 1) - (d(0, 2) * tb.beta + xa[0][2] * d_beta),
            d_mu_t: d(1, 0) - (d(1, 2) * tb.alpha + xa[1][2] * d_alpha),
            d_chi_yy: d(1, 1),
        }
    }
}
