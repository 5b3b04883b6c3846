//! The 2×2 reflection-matrix recursion from the substrate up.
//!
//! In each layer the field is ψ = [I; Z_dn] a + [I; Z_up] b (graph bases, see [`super::modes`]),
//! and G maps down amplitudes a to up amplitudes b at the top of the layer. At the interface
//! a → b (b below) the amplitude map K = D_a⁻¹ D_b has the 2×2 blocks
//! K₊₊ = W⁻¹(Z_a,up − Z_b,dn), K₊₋ = W⁻¹(Z_a,up − Z_b,up), K₋₊ = W⁻¹(Z_b,dn − Z_a,dn),
//! K₋₋ = W⁻¹(Z_b,up − Z_a,dn), W = Z_a,up − Z_a,dn, and G_a = (K₋₊ + K₋₋ G)(K₊₊ + K₊₋ G)⁻¹.
//! The two small blocks δZ = Z_b − Z_a (the ones that set r) are not formed by subtraction:
//! both graphs solve the Riccati equation C + D Z − Z A − Z B Z = 0 of their layer, so δZ solves
//! the Sylvester equation (D_a − Z_a B_a) δZ − δZ Λ_b = −δC − δD Z_b + Z_a δA + Z_a δB Z_b,
//! whose right side holds only the cancellation-free differences of [`super::terms`]. Its 2×2
//! closed form X = p_Λ(Ω)⁻¹ (Ω R − R adj Λ) divides by p_Λ(Ω), a product of sums of a down and an
//! up k_z — never small. For uniaxial-z layers this is the recursion's (k_a² − k_b²)/(k_a + k_b).

use num_complex::Complex64 as C64;

use super::mat2::{self, M2};
use super::modes::{modes, Modes, Point, Seed};
use super::propagate::through_layer;
use super::roughness::roughen;
use super::terms::{ChiLayer, InterfaceTerms, LayerTerms};
use crate::dual::Cx;

/// A stack prepared for evaluation at many q (one photon energy): every q-independent term is
/// computed once here; [`GeneralKernel::point`] then allocates nothing.
#[derive(Clone, Debug)]
pub struct GeneralKernel<T> {
    layers: Vec<LayerTerms<T>>,
    interfaces: Vec<InterfaceTerms<T>>,
    k0: T,
    inv_k0: T,
}

impl<T: Cx> GeneralKernel<T> {
    /// Prepares `layers` (fronting first, substrate last; at least two, the fronting s/p-decoupled)
    /// at vacuum wavenumber `k0` = 2πE/hc in Å⁻¹. Inputs are assumed valid (see
    /// [`super::GeneralStack::validate`]); invalid ones give non-finite results, not panics.
    pub fn new(layers: &[ChiLayer<T>], k0: T) -> Self {
        let terms: Vec<LayerTerms<T>> = layers.iter().map(LayerTerms::new).collect();
        let interfaces = (1..layers.len()).map(|b| InterfaceTerms::new(&layers[b - 1], &terms[b - 1], &layers[b], &terms[b])).collect();
        Self { layers: terms, interfaces, k0, inv_k0: k0.recip() }
    }

    /// The reflection amplitude matrix at momentum transfer q (Å⁻¹, 0 < q < 2k0):
    /// `[[r_ss, r_sp], [r_ps, r_pp]]`, indexed `[outgoing][incident]` with 0 = s, 1 = p
    /// (r_sp: s reflected from p incident). Amplitudes refer to E along ŝ = ŷ and p̂ = ŷ × k̂ of
    /// the fronting medium (in a vacuum fronting: unit |E|; in general the p amplitude is H_y).
    pub fn point(&self, q: f64) -> [[T; 2]; 2] {
        let mut seeds = vec![Seed::default(); self.layers.len()];
        self.point_seeded(q, &mut seeds)
    }

    /// [`Self::point`] at every q of a curve, in order; `out(i, r)` receives the matrix at `q[i]`.
    /// Each coupled layer's characteristic quartic is solved by Newton steps from the previous
    /// q's factors (checked; the closed-form roots otherwise). Allocates once per curve.
    pub fn curve(&self, q: &[f64], mut out: impl FnMut(usize, [[T; 2]; 2])) {
        let mut seeds = vec![Seed::default(); self.layers.len()];
        for (i, &qi) in q.iter().enumerate() {
            out(i, self.point_seeded(qi, &mut seeds));
        }
    }

    fn point_seeded(&self, q: f64, seeds: &mut [Seed]) -> [[T; 2]; 2] {
        let qh = self.inv_k0 * (0.5 * q);
        let zeta2 = (T::real(1.0) - qh) * (qh + 1.0);
        let pt = Point { q, zeta: zeta2.sqrt_decaying(), zeta2, qh2: qh * qh };
        let n = self.layers.len();
        if n < 2 {
            let nan = T::real(f64::NAN);
            return [[nan; 2]; 2];
        }
        let mut below = modes(&self.layers[n - 1], &pt, &mut seeds[n - 1]);
        let mut g = mat2::zero::<T>();
        for b in (1..n).rev() {
            let mut above = modes(&self.layers[b - 1], &pt, &mut seeds[b - 1]);
            if b < n - 1 {
                g = through_layer(&g, &below, self.layers[b].thickness * self.k0);
            }
            g = self.interface(&mut above, &mut below, b, &pt, &g);
            below = above;
        }
        [[g[1][1], g[1][0]], [g[0][1], g[0][0]]]
    }

    /// G above the interface between layers b−1 and b, from G at the top of layer b.
    fn interface(&self, a: &mut Modes<T>, b: &mut Modes<T>, index: usize, pt: &Point<T>, g: &M2<T>) -> M2<T> {
        let it = &self.interfaces[index - 1];
        let z = T::real(0.0);
        let zeta = pt.zeta;
        let d_a = [[z - zeta * it.d_gamma, it.d_mu], [z, z]];
        let d_c = [[z - pt.zeta2 * it.d_inv_ezz, z - zeta * it.d_beta], [zeta * it.d_eta, it.d_kappa_y - it.d_chi_yy]];
        let d_d = [[z - zeta * it.d_alpha, z], [z - it.d_mu_t, z]];
        let rhs = |za: &M2<T>, zb: &M2<T>| {
            // −δC − δD Z_b + Z_a δA + Z_a δB Z_b, δB = diag(δκ_x, 0).
            let db_zb = [[it.d_kappa_x * zb[0][0], it.d_kappa_x * zb[0][1]], [z, z]];
            let za_part = mat2::mul(za, &mat2::add(&d_a, &db_zb));
            mat2::sub(&za_part, &mat2::add(&d_c, &mat2::mul(&d_d, zb)))
        };
        let dz_dn = sylvester(&a.om_dn, &b.lam_dn, &rhs(&a.z_dn, &b.z_dn));
        let dz_up = sylvester(&a.om_up, &b.lam_up, &rhs(&a.z_up, &b.z_up));
        let lb = &self.layers[index];
        if !lb.rough {
            // W⁻¹X (W⁻¹Y)⁻¹ = W⁻¹ X Y⁻¹ W with X = δZ_dn + (Z_b,up − Z_a,dn) G,
            // Y = (Z_a,up − Z_b,dn) − δZ_up G: two products fewer than forming K.
            let x = mat2::add(&dz_dn, &mat2::mul(&mat2::sub(&b.z_up, &a.z_dn), g));
            let y = mat2::sub(&mat2::sub(&a.z_up, &b.z_dn), &mat2::mul(&dz_up, g));
            let w = mat2::sub(&a.z_up, &a.z_dn);
            return mat2::mul(&mat2::mul(&a.w_inv, &mat2::mul(&x, &mat2::inv(&y))), &w);
        }
        let w = &a.w_inv;
        let mut k =
            [[mat2::mul(w, &mat2::sub(&a.z_up, &b.z_dn)), mat2::scale(&mat2::mul(w, &dz_up), T::real(-1.0))], [mat2::mul(w, &dz_dn), mat2::mul(w, &mat2::sub(&b.z_up, &a.z_dn))]];
        roughen(&mut k, a, b, lb.sigma2 * self.k0 * self.k0);
        let num = mat2::add(&k[1][0], &mat2::mul(&k[1][1], g));
        let den = mat2::add(&k[0][0], &mat2::mul(&k[0][1], g));
        mat2::mul(&num, &mat2::inv(&den))
    }
}

/// X with Ω X − X Λ = R (2×2): X = p_Λ(Ω)⁻¹ (Ω R − R adj Λ), p_Λ(x) = x² − tr Λ x + det Λ.
#[inline]
fn sylvester<T: Cx>(om: &M2<T>, lam: &M2<T>, r: &M2<T>) -> M2<T> {
    let t = lam[0][0] + lam[1][1];
    let p = mat2::add_identity(&mat2::sub(&mat2::mul(om, om), &mat2::scale(om, t)), mat2::det(lam));
    let rhs = mat2::sub(&mat2::mul(om, r), &mat2::mul(r, &mat2::adj(lam)));
    mat2::mul(&mat2::inv(&p), &rhs)
}

/// The reflection amplitude matrix `[[r_ss, r_sp], [r_ps, r_pp]]` at one q from per-layer χ
/// tensors (dimensionless ε − 1), thickness and roughness (Å) and k0 (Å⁻¹), in any [`Cx`] scalar:
/// with [`crate::dual::Jet`] the derivatives come out exactly. Prepares the stack on every call;
/// for many q use [`GeneralKernel`].
pub fn reflection_matrix<T: Cx>(layers: &[ChiLayer<T>], k0: T, q: f64) -> [[T; 2]; 2] {
    GeneralKernel::new(layers, k0).point(q)
}

/// Reflectances |r|² of an amplitude matrix, same layout.
pub(crate) fn reflectances(r: &[[C64; 2]; 2]) -> [[f64; 2]; 2] {
    r.map(|row| row.map(|x| C64::norm_sqr(&x)))
}
