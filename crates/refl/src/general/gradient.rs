//! Exact derivatives of R_ss, R_pp, R_sp, R_ps with respect to layer parameters and the photon
//! energy: the generic kernel run on [`Jet`]s, eight parameters per pass.

use num_complex::Complex64 as C64;

use super::tensor::{lab_chi, sincos_deg};
use super::{validate_beam, ChiLayer, GeneralKernel, GeneralReflectivity, GeneralStack};
use crate::dual::{Cx, Jet};
use crate::ReflError;

/// Derivative slots per pass.
const BLOCK: usize = 8;

/// A parameter to differentiate with respect to. Layers are indexed as in [`GeneralStack`];
/// axes 0, 1, 2 = a, b, c; Euler angles 0, 1, 2 = φ, θ, ψ (per degree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeneralParam {
    /// Thickness of a layer (Å).
    Thickness(usize),
    /// Roughness of the interface above a layer (Å).
    Roughness(usize),
    /// δ of a layer along a principal axis.
    Delta(usize, usize),
    /// β of a layer along a principal axis.
    Beta(usize, usize),
    /// An Euler angle of a layer, in degrees.
    Euler(usize, usize),
    /// Photon energy (eV) at fixed optical constants (k0 = 2πE/hc changes).
    Energy,
}

/// Reflectances and their derivatives: `d_ss[k][i]` = ∂R_ss(q_i)/∂`params[k]`, likewise for the rest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GeneralGradient {
    /// The reflectances themselves.
    pub reflectivity: GeneralReflectivity,
    /// ∂R_ss/∂p, one row per parameter.
    pub d_ss: Vec<Vec<f64>>,
    /// ∂R_pp/∂p.
    pub d_pp: Vec<Vec<f64>>,
    /// ∂R_sp/∂p (s reflected from p incident).
    pub d_sp: Vec<Vec<f64>>,
    /// ∂R_ps/∂p (p reflected from s incident).
    pub d_ps: Vec<Vec<f64>>,
}

fn check_params(stack: &GeneralStack, params: &[GeneralParam]) -> Result<(), ReflError> {
    let n = stack.layers.len();
    for (k, p) in params.iter().enumerate() {
        let (layer, index) = match *p {
            GeneralParam::Thickness(j) | GeneralParam::Roughness(j) => (j, 0),
            GeneralParam::Delta(j, i) | GeneralParam::Beta(j, i) | GeneralParam::Euler(j, i) => (j, i),
            GeneralParam::Energy => (0, 0),
        };
        if layer >= n {
            return Err(ReflError::input(format!("params[{k}]"), format!("{p:?}: layer {layer} does not exist (the stack has {n})")));
        }
        if index >= 3 {
            return Err(ReflError::input(format!("params[{k}]"), format!("{p:?}: axis/angle index must be 0, 1 or 2")));
        }
    }
    Ok(())
}

/// A real jet with value `v` and derivative `slope` in each slot where `block` holds `want`.
fn seeded(v: f64, slope: f64, block: &[GeneralParam], want: GeneralParam) -> Jet<BLOCK> {
    let mut j = Jet::<BLOCK>::constant(C64::new(v, 0.0));
    for (slot, p) in block.iter().enumerate() {
        if *p == want {
            j.d[slot] = C64::new(slope, 0.0);
        }
    }
    j
}

/// (sin, cos) of an angle jet in degrees, exact at multiples of 90° on the value.
fn sincos_jet(angle: &Jet<BLOCK>) -> (Jet<BLOCK>, Jet<BLOCK>) {
    let (s, c) = sincos_deg(angle.v.re);
    let rad = std::f64::consts::PI / 180.0;
    (Jet { v: C64::new(s, 0.0), d: angle.d.map(|x| x * (c * rad)) }, Jet { v: C64::new(c, 0.0), d: angle.d.map(|x| x * (-s * rad)) })
}

fn layers_for(stack: &GeneralStack, block: &[GeneralParam]) -> Vec<ChiLayer<Jet<BLOCK>>> {
    use GeneralParam::*;
    let mut out = Vec::with_capacity(stack.layers.len());
    for (j, l) in stack.layers.iter().enumerate() {
        let principal: [Jet<BLOCK>; 3] =
            std::array::from_fn(|i| seeded(l.delta[i], 1.0, block, Delta(j, i)) * -2.0 + seeded(l.beta[i], 1.0, block, Beta(j, i)) * C64::new(0.0, 2.0));
        let angles: [Jet<BLOCK>; 3] = std::array::from_fn(|i| seeded(l.euler_deg[i], 1.0, block, Euler(j, i)));
        let sc = angles.map(|a| sincos_jet(&a));
        let chi = lab_chi(principal, sc.map(|x| x.0), sc.map(|x| x.1));
        let zero = C64::new(0.0, 0.0);
        let coupling = [chi[0][1], chi[1][0], chi[1][2], chi[2][1]];
        let decoupled = coupling.iter().all(|x| x.v == zero && x.d.iter().all(|d| *d == zero));
        out.push(ChiLayer { chi, thickness: seeded(l.thickness, 1.0, block, Thickness(j)), roughness: seeded(l.roughness, 1.0, block, Roughness(j)), decoupled });
    }
    out
}

/// R_ss, R_pp, R_sp, R_ps and their exact derivatives with respect to `params` at one photon
/// energy over q. Inputs are validated first; a bad parameter is named as `params[k]`.
pub fn general_gradient(stack: &GeneralStack, energy_ev: f64, q: &[f64], params: &[GeneralParam]) -> Result<GeneralGradient, ReflError> {
    stack.validate()?;
    let k0 = validate_beam(energy_ev, q)?;
    check_params(stack, params)?;
    let mut out = GeneralGradient { reflectivity: super::general_reflectivity(stack, energy_ev, q)?, ..Default::default() };
    for block in params.chunks(BLOCK) {
        let k0_jet = seeded(k0, k0 / energy_ev, block, GeneralParam::Energy);
        let kernel = GeneralKernel::new(&layers_for(stack, block), k0_jet);
        let mut rows = vec![[vec![0.0; q.len()], vec![0.0; q.len()], vec![0.0; q.len()], vec![0.0; q.len()]]; block.len()];
        kernel.curve(q, |i, r| {
            // [[ss, sp], [ps, pp]] → rows in the order ss, pp, sp, ps.
            let rr = [r[0][0].norm_sqr(), r[1][1].norm_sqr(), r[0][1].norm_sqr(), r[1][0].norm_sqr()];
            for (slot, row) in rows.iter_mut().enumerate() {
                for c in 0..4 {
                    row[c][i] = rr[c].d[slot].re;
                }
            }
        });
        for [ss, pp, sp, ps] in rows {
            out.d_ss.push(ss);
            out.d_pp.push(pp);
            out.d_sp.push(sp);
            out.d_ps.push(ps);
        }
    }
    Ok(out)
}
