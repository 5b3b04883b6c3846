//! The exact Jacobian of a model's curves with respect to its parameters (CPU, f64).
//!
//! The engine differentiates R with respect to per-layer optics, thickness, roughness, q offset,
//! energy and resolution width (forward mode, [`crate::gradient`]); this file applies the chain rule
//! from model parameters to those: links add up, a density scales δ and β, a shared energy offset
//! moves every dataset's k0 and its materials. The one term that is not exact to rounding is the
//! energy dispersion of tabulated materials (a central difference of the interpolant, h = 1 meV).

use super::compile::{principal_constants, Optics, Slot};
use super::evaluate::{in_dataset, BuiltStack};
use super::file::Polarization;
use super::Model;
use crate::gradient::{smeared_gradient, LayerParam, Param};
use crate::resolution::SmearedRequest;
use crate::{CurveRequest, ReflError};

/// Model curves and their derivatives.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelJacobian {
    /// Model R per dataset (scale and background applied).
    pub curves: Vec<Vec<f64>>,
    /// ∂R/∂p: `[dataset][k][q]` for the k-th requested parameter.
    pub d: Vec<Vec<Vec<f64>>>,
}

/// Accumulates kernel parameters and, per requested model parameter, weighted contributions.
struct Chain {
    kernel: Vec<Param>,
    terms: Vec<Vec<(usize, f64)>>,
}

impl Chain {
    fn add(&mut self, k: usize, param: Param, factor: f64) {
        let idx = match self.kernel.iter().position(|p| *p == param) {
            Some(i) => i,
            None => {
                self.kernel.push(param);
                self.kernel.len() - 1
            }
        };
        self.terms[k].push((idx, factor));
    }
}

const OPTICS: [LayerParam; 4] = [LayerParam::DeltaO, LayerParam::BetaO, LayerParam::DeltaE, LayerParam::BetaE];

impl Model {
    /// Curves and ∂curves/∂values[wrt[k]] for every dataset, at the full parameter vector `values`.
    pub fn jacobian(&self, values: &[f64], wrt: &[usize]) -> Result<ModelJacobian, ReflError> {
        self.check_values(values)?;
        if let Some(&bad) = wrt.iter().find(|&&i| i >= values.len()) {
            return Err(ReflError::input(format!("parameter index {bad}"), format!("the model has {} parameters", values.len())));
        }
        if self.general {
            return Err(ReflError::input("model", "the Jacobian of tilted/biaxial (4×4) models is not available yet"));
        }
        let mut out = ModelJacobian { curves: Vec::new(), d: Vec::new() };
        for (i, d) in self.compiled.datasets.iter().enumerate() {
            let BuiltStack::Uniaxial(stack) = self.stack(i, values)? else {
                return Err(ReflError::input("model", "mixed stack kinds"));
            };
            let probe = self.probe(d, values);
            let chain = self.chain(i, values, wrt)?;
            let request = SmearedRequest { curve: CurveRequest { stack: &stack, energy_ev: probe.energy_ev, q: &probe.q }, resolution: &probe.resolution };
            let g = smeared_gradient(&request, &chain.kernel).map_err(|e| in_dataset(e, i, &d.name))?;
            let (r, dr) = match d.polarization {
                Polarization::S | Polarization::Ss => (g.r_s, g.d_r_s),
                Polarization::P | Polarization::Pp => (g.r_p, g.d_r_p),
                Polarization::Sp | Polarization::Ps => (vec![0.0; probe.q.len()], vec![vec![0.0; probe.q.len()]; chain.kernel.len()]),
            };
            let (scale, bg) = (d.scale.get(values), d.background.get(values));
            let rows = wrt
                .iter()
                .enumerate()
                .map(|(k, &p)| {
                    let mut row = vec![0.0; r.len()];
                    for &(idx, f) in &chain.terms[k] {
                        row.iter_mut().zip(&dr[idx]).for_each(|(a, b)| *a += scale * f * b);
                    }
                    if d.scale == Slot::Param(p) {
                        row.iter_mut().zip(&r).for_each(|(a, b)| *a += b);
                    }
                    if d.background == Slot::Param(p) {
                        row.iter_mut().for_each(|a| *a += 1.0);
                    }
                    row
                })
                .collect();
            out.curves.push(r.iter().map(|x| scale * x + bg).collect());
            out.d.push(rows);
        }
        Ok(out)
    }

    /// Which kernel derivatives each requested parameter needs in dataset `i`, with weights.
    fn chain(&self, i: usize, values: &[f64], wrt: &[usize]) -> Result<Chain, ReflError> {
        let d = &self.compiled.datasets[i];
        let energy = d.energy_ev + d.energy_offset.get(values);
        let mut chain = Chain { kernel: Vec::new(), terms: vec![Vec::new(); wrt.len()] };
        for (k, &p) in wrt.iter().enumerate() {
            let is = |s: Slot| s == Slot::Param(p);
            for (j, l) in self.compiled.layers.iter().enumerate() {
                let object = format!("layer {j} '{}'", l.name);
                let layer = |param| Param::Layer { layer: j, param };
                if is(l.thickness) {
                    chain.add(k, layer(LayerParam::Thickness), 1.0);
                }
                if is(l.roughness) {
                    chain.add(k, layer(LayerParam::Roughness), 1.0);
                }
                let optics = &self.compiled.optics[l.optics];
                let s = l.density_scale.get(values);
                let (delta, beta) = principal_constants(optics, d.energy_ev, energy, values, &object)?;
                let unscaled = [delta[0], beta[0], delta[2], beta[2]];
                if is(l.density_scale) {
                    OPTICS.iter().zip(unscaled).for_each(|(&lp, c)| chain.add(k, layer(lp), c));
                }
                match optics {
                    Optics::Compound { compound, density } if is(*density) => {
                        let rho = density.get(values);
                        let per_rho = if rho != 0.0 {
                            unscaled.map(|c| c / rho)
                        } else {
                            let c = compound.optical_constants(energy)?;
                            [c.delta_o, c.beta_o, c.delta_e, c.beta_e].map(|x| x / compound.density_g_cm3)
                        };
                        OPTICS.iter().zip(per_rho).for_each(|(&lp, c)| chain.add(k, layer(lp), s * c));
                    }
                    Optics::Principal { delta, beta } => {
                        // The recursion reads the a axis as ordinary and c as extraordinary.
                        for (slots, (o, e)) in [(delta, (LayerParam::DeltaO, LayerParam::DeltaE)), (beta, (LayerParam::BetaO, LayerParam::BetaE))] {
                            if is(slots[0].at(d.energy_ev, &object)?) {
                                chain.add(k, layer(o), s);
                            }
                            if is(slots[2].at(d.energy_ev, &object)?) {
                                chain.add(k, layer(e), s);
                            }
                        }
                    }
                    _ => {}
                }
                if is(d.energy_offset) && matches!(optics, Optics::Compound { .. } | Optics::Table(_)) {
                    let h = 1e-3;
                    let (dp, bp) = principal_constants(optics, d.energy_ev, energy + h, values, &object)?;
                    let (dm, bm) = principal_constants(optics, d.energy_ev, energy - h, values, &object)?;
                    let slope = [dp[0] - dm[0], bp[0] - bm[0], dp[2] - dm[2], bp[2] - bm[2]].map(|x| s * x / (2.0 * h));
                    OPTICS.iter().zip(slope).for_each(|(&lp, c)| chain.add(k, layer(lp), c));
                }
            }
            if is(d.q_offset) {
                chain.add(k, Param::QOffset, 1.0);
            }
            if is(d.energy_offset) {
                chain.add(k, Param::Energy, 1.0);
            }
            if let super::compile::CompiledResolution::Constant(slot) = d.resolution {
                if is(slot) {
                    chain.add(k, Param::Resolution, 1.0);
                }
            }
        }
        Ok(chain)
    }
}
