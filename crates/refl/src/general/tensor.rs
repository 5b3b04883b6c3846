//! Layers with a full dielectric tensor: principal optical constants and Euler angles → the
//! laboratory susceptibility χ = ε − 1 (3×3, complex).
//!
//! Euler convention (refloxide's `EulerAnglesZxz`, Passler & Paarmann 2017 eq. 2): the rotation
//! Ω = R_z(φ) · R_x(θ) · R_z(ψ) with `euler_deg = [φ, θ, ψ]`, each R an *active* right-handed
//! rotation (R_z(a) = [[cos a, −sin a, 0], [sin a, cos a, 0], [0, 0, 1]]). The principal axes
//! a, b, c of the material are the columns of Ω in the lab frame (x along the in-plane
//! projection of the incident beam, z into the sample), and χ_lab = Ω diag(χ_a, χ_b, χ_c) Ωᵀ.
//! With θ = 0 the c axis is the surface normal; the c axis is (sin φ sin θ, −cos φ sin θ, cos θ).

use num_complex::Complex64 as C64;
use serde::{Deserialize, Serialize};

use crate::dual::Cx;
use crate::Layer;

/// One layer with principal optical constants along its material axes a, b, c and an
/// orientation. Per axis n = 1 − δ + iβ and ε = 1 − 2δ + 2iβ (linear, as in [`crate::stack`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TensorLayer {
    /// Thickness in Å (ignored for the fronting medium and the substrate).
    pub thickness: f64,
    /// RMS roughness in Å of the interface **above** this layer (ignored for the fronting medium).
    pub roughness: f64,
    /// Principal δ along the material axes a, b, c.
    pub delta: [f64; 3],
    /// Principal β along the material axes a, b, c.
    pub beta: [f64; 3],
    /// Euler angles [φ, θ, ψ] in degrees, z–x′–z″ convention (see the module documentation).
    pub euler_deg: [f64; 3],
}

impl TensorLayer {
    /// The same physics as a uniaxial [`Layer`] of the recursion: a = b = ordinary, c = extraordinary
    /// along z (no rotation).
    pub fn from_uniaxial(layer: &Layer) -> Self {
        Self {
            thickness: layer.thickness,
            roughness: layer.roughness,
            delta: [layer.delta_o, layer.delta_o, layer.delta_e],
            beta: [layer.beta_o, layer.beta_o, layer.beta_e],
            euler_deg: [0.0; 3],
        }
    }

    /// An isotropic layer.
    pub fn isotropic(thickness: f64, roughness: f64, delta: f64, beta: f64) -> Self {
        Self { thickness, roughness, delta: [delta; 3], beta: [beta; 3], euler_deg: [0.0; 3] }
    }

    /// The laboratory susceptibility χ = ε − 1 (value only).
    pub fn chi(&self) -> [[C64; 3]; 3] {
        let principal = std::array::from_fn(|k| C64::new(-2.0 * self.delta[k], 2.0 * self.beta[k]));
        let sc = self.euler_deg.map(sincos_deg);
        lab_chi(principal, sc.map(|(s, _)| C64::new(s, 0.0)), sc.map(|(_, c)| C64::new(c, 0.0)))
    }

    pub(crate) fn fields(&self) -> [(String, f64); 11] {
        let axis = ["a", "b", "c"];
        let mut out: [(String, f64); 11] = Default::default();
        out[0] = ("thickness".into(), self.thickness);
        out[1] = ("roughness".into(), self.roughness);
        for k in 0..3 {
            out[2 + k] = (format!("delta[{}]", axis[k]), self.delta[k]);
            out[5 + k] = (format!("beta[{}]", axis[k]), self.beta[k]);
            out[8 + k] = (format!("euler_deg[{k}]"), self.euler_deg[k]);
        }
        out
    }
}

/// (sin, cos) of an angle in degrees, exact at multiples of 90° so that axis-aligned
/// orientations give exact zeros in the tensor (and exactly decoupled s and p).
pub fn sincos_deg(deg: f64) -> (f64, f64) {
    let r = deg.rem_euclid(360.0);
    if r == 0.0 {
        (0.0, 1.0)
    } else if r == 90.0 {
        (1.0, 0.0)
    } else if r == 180.0 {
        (0.0, -1.0)
    } else if r == 270.0 {
        (-1.0, 0.0)
    } else {
        deg.to_radians().sin_cos()
    }
}

/// Ω = R_z(φ) R_x(θ) R_z(ψ) from the sines and cosines of [φ, θ, ψ].
pub(crate) fn rotation<T: Cx>(s: [T; 3], c: [T; 3]) -> [[T; 3]; 3] {
    let ([sf, st, sp], [cf, ct, cp]) = (s, c);
    let z = T::real(0.0);
    [[cf * cp - sf * ct * sp, z - cf * sp - sf * ct * cp, sf * st], [sf * cp + cf * ct * sp, cf * ct * cp - sf * sp, z - cf * st], [st * sp, st * cp, ct]]
}

/// χ_lab = χ_a I + Σ_{k=b,c} (χ_k − χ_a) r_k r_kᵀ (r_k = column k of Ω). Equal to Ω diag(χ) Ωᵀ,
/// written so that an isotropic layer is exactly χ I and a uniaxial one (χ_a = χ_b) exactly
/// χ_a I + (χ_c − χ_a) c cᵀ, whatever the rounding of the rotation.
pub(crate) fn lab_chi<T: Cx>(principal: [T; 3], s: [T; 3], c: [T; 3]) -> [[T; 3]; 3] {
    let omega = rotation(s, c);
    let z = T::real(0.0);
    let mut chi = [[z; 3]; 3];
    for (i, row) in chi.iter_mut().enumerate() {
        row[i] = principal[0];
    }
    // For an isotropic layer d = 0 exactly and every added term is an exact zero.
    for k in 1..3 {
        let d = principal[k] - principal[0];
        for i in 0..3 {
            for j in 0..3 {
                chi[i][j] = chi[i][j] + d * omega[i][k] * omega[j][k];
            }
        }
    }
    chi
}

/// Whether s and p decouple exactly: χ_xy = χ_yx = χ_yz = χ_zy = 0 (values).
pub fn is_decoupled(chi: &[[C64; 3]; 3]) -> bool {
    let zero = C64::new(0.0, 0.0);
    chi[0][1] == zero && chi[1][0] == zero && chi[1][2] == zero && chi[2][1] == zero
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_is_orthonormal_and_matches_the_c_axis_formula() {
        let e = [23.0, 61.0, -140.0];
        let sc = e.map(sincos_deg);
        let o = rotation(sc.map(|x| C64::new(x.0, 0.0)), sc.map(|x| C64::new(x.1, 0.0)));
        for i in 0..3 {
            for j in 0..3 {
                let dot: C64 = (0..3).map(|k| o[k][i] * o[k][j]).sum();
                assert!((dot - if i == j { 1.0 } else { 0.0 }).norm() < 1e-15);
            }
        }
        let (f, t) = (e[0].to_radians(), e[1].to_radians());
        let axis = [f.sin() * t.sin(), -f.cos() * t.sin(), t.cos()];
        for i in 0..3 {
            assert!((o[i][2].re - axis[i]).abs() < 1e-15);
        }
    }

    #[test]
    fn isotropic_and_axis_aligned_tensors_are_exact() {
        let iso = TensorLayer { euler_deg: [33.0, 47.0, 12.0], ..TensorLayer::isotropic(1.0, 0.0, 2e-3, 1e-4) };
        let chi = iso.chi();
        for (i, row) in chi.iter().enumerate() {
            for (j, x) in row.iter().enumerate() {
                assert_eq!(*x, if i == j { C64::new(-4e-3, 2e-4) } else { C64::new(0.0, 0.0) });
            }
        }
        // Optic axis in the plane of incidence (φ = 90°): exactly decoupled.
        let tilted = TensorLayer { delta: [1e-3, 1e-3, 3e-3], beta: [1e-4, 1e-4, 2e-4], euler_deg: [90.0, 35.0, 0.0], thickness: 1.0, roughness: 0.0 };
        assert!(is_decoupled(&tilted.chi()));
        let skew = TensorLayer { euler_deg: [30.0, 35.0, 0.0], ..tilted };
        assert!(!is_decoupled(&skew.chi()));
    }
}
