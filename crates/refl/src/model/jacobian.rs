//! The exact Jacobian of a model's curves with respect to its parameters (CPU, f64).
//!
//! The engine differentiates R with respect to per-layer optics, thickness, roughness, q offset,
//! energy and resolution width (forward mode, [`crate::gradient`]); this file applies the chain rule
//! from model parameters to those: links add up, a density scales δ and β, a shared energy offset
//! moves every dataset's k0 and its materials. The one term that is not exact to rounding is the
//! energy dispersion of tabulated materials (a central difference of the interpolant, h = 1 meV).
//! Tilted/biaxial (4×4) models get the same chain rule through [`general_gradient`], plus the
//! Euler angles; their q-offset and resolution-width derivatives are not available yet.

use super::compile::{principal_constants, Optics, Slot};
use super::evaluate::{check_curve, in_dataset, BuiltStack};
use super::file::Polarization;
use super::Model;
use crate::general::{general_gradient, GeneralParam};
use crate::gradient::{smeared_gradient, LayerParam, Param};
use crate::resolution::SmearedRequest;
use crate::resolution::{expand_nodes, StackScales};
use crate::{CurveRequest, ReflError};

/// Model curves and their derivatives.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelJacobian {
    /// Model R per dataset (scale and background applied).
    pub curves: Vec<Vec<f64>>,
    /// ∂R/∂p: `[dataset][k][q]` for the k-th requested parameter.
    pub d: Vec<Vec<Vec<f64>>>,
}

/// A derivative the engines can give, independent of the backend.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    Thickness(usize),
    Roughness(usize),
    /// δ of layer j along principal axis a (0, 1, 2 = a, b, c).
    Delta(usize, usize),
    /// β of layer j along principal axis a.
    Beta(usize, usize),
    /// Euler angle i of layer j, degrees.
    Euler(usize, usize),
    Energy,
    QOffset,
    Resolution,
}

impl Kernel {
    /// The recursion's parameter: the a axis is ordinary, c extraordinary; b does not enter
    /// (uniaxial stacks are built from a and c only).
    fn uniaxial(self) -> Option<Param> {
        let layer = |layer, param| Some(Param::Layer { layer, param });
        match self {
            Kernel::Thickness(j) => layer(j, LayerParam::Thickness),
            Kernel::Roughness(j) => layer(j, LayerParam::Roughness),
            Kernel::Delta(j, 0) => layer(j, LayerParam::DeltaO),
            Kernel::Delta(j, 2) => layer(j, LayerParam::DeltaE),
            Kernel::Beta(j, 0) => layer(j, LayerParam::BetaO),
            Kernel::Beta(j, 2) => layer(j, LayerParam::BetaE),
            Kernel::Delta(..) | Kernel::Beta(..) | Kernel::Euler(..) => None,
            Kernel::Energy => Some(Param::Energy),
            Kernel::QOffset => Some(Param::QOffset),
            Kernel::Resolution => Some(Param::Resolution),
        }
    }

    /// The 4×4 method's parameter.
    fn general(self) -> Result<GeneralParam, ReflError> {
        Ok(match self {
            Kernel::Thickness(j) => GeneralParam::Thickness(j),
            Kernel::Roughness(j) => GeneralParam::Roughness(j),
            Kernel::Delta(j, a) => GeneralParam::Delta(j, a),
            Kernel::Beta(j, a) => GeneralParam::Beta(j, a),
            Kernel::Euler(j, i) => GeneralParam::Euler(j, i),
            Kernel::Energy => GeneralParam::Energy,
            Kernel::QOffset | Kernel::Resolution => {
                return Err(ReflError::input(
                    "model Jacobian",
                    "q-offset and resolution-width derivatives of tilted/biaxial (4×4) models are not available yet; fix those parameters",
                ))
            }
        })
    }
}

/// Kernel derivatives needed and, per requested model parameter, weighted contributions.
struct Chain {
    kernel: Vec<Kernel>,
    terms: Vec<Vec<(usize, f64)>>,
}

impl Chain {
    fn add(&mut self, k: usize, param: Kernel, factor: f64) {
        let idx = match self.kernel.iter().position(|p| *p == param) {
            Some(i) => i,
            None => {
                self.kernel.push(param);
                self.kernel.len() - 1
            }
        };
        self.terms[k].push((idx, factor));
    }

    /// Adds a per-axis (δ, β) contribution for layer j.
    fn add_axes(&mut self, k: usize, j: usize, delta: [f64; 3], beta: [f64; 3]) {
        for a in 0..3 {
            self.add(k, Kernel::Delta(j, a), delta[a]);
            self.add(k, Kernel::Beta(j, a), beta[a]);
        }
    }
}

impl Model {
    /// Curves and ∂curves/∂`values[wrt[k]]` for every dataset, at the full parameter vector `values`.
    pub fn jacobian(&self, values: &[f64], wrt: &[usize]) -> Result<ModelJacobian, ReflError> {
        self.check_values(values)?;
        if let Some(&bad) = wrt.iter().find(|&&i| i >= values.len()) {
            return Err(ReflError::input(format!("parameter index {bad}"), format!("the model has {} parameters", values.len())));
        }
        let mut out = ModelJacobian { curves: Vec::new(), d: Vec::new() };
        for (i, d) in self.compiled.datasets.iter().enumerate() {
            let probe = self.probe(d, values);
            let chain = self.chain(i, values, wrt)?;
            // Kernel value and derivative rows (one per chain.kernel entry), before scale/background.
            let (r, dr) = match self.stack(i, values)? {
                BuiltStack::Uniaxial(stack) => {
                    let mapped: Vec<Option<Param>> = chain.kernel.iter().map(|kp| kp.uniaxial()).collect();
                    let params: Vec<Param> = mapped.iter().flatten().copied().collect();
                    let request =
                        SmearedRequest { curve: CurveRequest { stack: &stack, energy_ev: probe.energy_ev, q: &probe.q }, resolution: &probe.resolution, smearing: probe.smearing };
                    let g = smeared_gradient(&request, &params).map_err(|e| in_dataset(e, i, &d.name))?;
                    let (r, rows) = match d.polarization {
                        Polarization::S | Polarization::Ss => (g.r_s, g.d_r_s),
                        Polarization::P | Polarization::Pp => (g.r_p, g.d_r_p),
                        Polarization::Sp | Polarization::Ps => (vec![0.0; probe.q.len()], vec![vec![0.0; probe.q.len()]; params.len()]),
                    };
                    let zero = vec![0.0; r.len()];
                    let dr: Vec<Vec<f64>> =
                        mapped.iter().map(|m| m.and_then(|p| params.iter().position(|x| *x == p)).map_or_else(|| zero.clone(), |idx| rows[idx].clone())).collect();
                    (r, dr)
                }
                BuiltStack::General(stack) => {
                    let params: Vec<GeneralParam> = chain.kernel.iter().map(|kp| kp.general()).collect::<Result<_, _>>()?;
                    let scales = StackScales::of_general(&stack, probe.energy_ev);
                    let nodes = expand_nodes(&probe.q, &probe.resolution, probe.energy_ev, probe.smearing, &scales).map_err(|e| in_dataset(e, i, &d.name))?;
                    let g = general_gradient(&stack, probe.energy_ev, &nodes.q, &params).map_err(|e| in_dataset(e, i, &d.name))?;
                    let pick = |ss: &[f64], pp: &[f64], sp: &[f64], ps: &[f64]| -> Vec<f64> {
                        let channel: Vec<f64> = (0..ss.len())
                            .map(|n| match d.polarization {
                                Polarization::S => ss[n] + ps[n],
                                Polarization::P => pp[n] + sp[n],
                                Polarization::Ss => ss[n],
                                Polarization::Pp => pp[n],
                                Polarization::Sp => sp[n],
                                Polarization::Ps => ps[n],
                            })
                            .collect();
                        nodes.fold(&channel)
                    };
                    let g_r = &g.reflectivity;
                    let r = pick(&g_r.r_ss, &g_r.r_pp, &g_r.r_sp, &g_r.r_ps);
                    let dr = (0..params.len()).map(|n| pick(&g.d_ss[n], &g.d_pp[n], &g.d_sp[n], &g.d_ps[n])).collect();
                    (r, dr)
                }
            };
            let (scale, bg) = (d.scale.get(values), d.background.get(values));
            let rows = wrt
                .iter()
                .enumerate()
                .map(|(k, &p)| {
                    let mut row = vec![0.0; r.len()];
                    for &(idx, f) in &chain.terms[k] {
                        row.iter_mut().zip(&dr[idx]).for_each(|(a, b): (&mut f64, &f64)| *a += scale * f * b);
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
            let curve: Vec<f64> = r.iter().map(|x| scale * x + bg).collect();
            check_curve(&curve, &d.q, i, &d.name)?;
            // A non-finite derivative would turn the LM step into NaN without a word.
            let rows: Vec<Vec<f64>> = rows;
            for (k, row) in rows.iter().enumerate() {
                check_curve(row, &d.q, i, &d.name).map_err(|e| e.map_object(|o| format!("{o} ∂R/∂{}", self.compiled.names[wrt[k]])))?;
            }
            out.curves.push(curve);
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
                let object = || format!("layer {j} '{}'", l.name);
                if is(l.thickness) {
                    chain.add(k, Kernel::Thickness(j), 1.0);
                }
                if is(l.roughness) {
                    chain.add(k, Kernel::Roughness(j), 1.0);
                }
                if let Some(euler) = l.euler_deg {
                    for (a, slot) in euler.iter().enumerate() {
                        if is(*slot) {
                            chain.add(k, Kernel::Euler(j, a), 1.0);
                        }
                    }
                }
                let optics = &self.compiled.optics[l.optics];
                let s = l.density_scale.get(values);
                let (delta, beta) = principal_constants(optics, d.energy_ev, energy, values, &object)?;
                if is(l.density_scale) {
                    chain.add_axes(k, j, delta, beta);
                }
                match optics {
                    Optics::Compound { compound, density } if is(*density) => {
                        let rho = density.get(values);
                        let (dr, br) = if rho != 0.0 {
                            (delta.map(|c| s * c / rho), beta.map(|c| s * c / rho))
                        } else {
                            let c = compound.optical_constants(energy)?;
                            let per = |x: f64| s * x / compound.density_g_cm3;
                            ([per(c.delta_o), per(c.delta_o), per(c.delta_e)], [per(c.beta_o), per(c.beta_o), per(c.beta_e)])
                        };
                        chain.add_axes(k, j, dr, br);
                    }
                    Optics::Principal { delta: ds, beta: bs } => {
                        for a in 0..3 {
                            if is(ds[a].at(d.energy_ev, &object)?) {
                                chain.add(k, Kernel::Delta(j, a), s);
                            }
                            if is(bs[a].at(d.energy_ev, &object)?) {
                                chain.add(k, Kernel::Beta(j, a), s);
                            }
                        }
                    }
                    _ => {}
                }
                if is(d.energy_offset) && matches!(optics, Optics::Compound { .. } | Optics::Table(_)) {
                    let h = 1e-3;
                    let (dp, bp) = principal_constants(optics, d.energy_ev, energy + h, values, &object)?;
                    let (dm, bm) = principal_constants(optics, d.energy_ev, energy - h, values, &object)?;
                    let slope = |p: [f64; 3], m: [f64; 3]| std::array::from_fn(|a| s * (p[a] - m[a]) / (2.0 * h));
                    chain.add_axes(k, j, slope(dp, dm), slope(bp, bm));
                }
            }
            if is(d.q_offset) {
                chain.add(k, Kernel::QOffset, 1.0);
            }
            if is(d.energy_offset) {
                chain.add(k, Kernel::Energy, 1.0);
            }
            if let super::compile::CompiledResolution::Constant(slot) = d.resolution {
                if is(slot) {
                    chain.add(k, Kernel::Resolution, 1.0);
                }
            }
        }
        Ok(chain)
    }
}
