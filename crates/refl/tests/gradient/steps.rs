//! First steps of the finite differences: per point and parameter, small enough that every kz
//! moves by at most a tenth of itself (a β = 0 layer at its critical edge has a branch point
//! there) and every phase by a fifth of a radian, so the extrapolation starts in its asymptotic range.

use crate::gradient_fd::Curve;
use num_complex::Complex64 as C64;
use scatterlab_refl::gradient::{LayerParam, Param};
use scatterlab_refl::resolution::{expand_nodes, Smearing, StackScales};
use scatterlab_refl::{Resolution, Stack};

/// The number `param` names in a stack.
pub fn field(stack: &mut Stack, layer: usize, param: LayerParam) -> &mut f64 {
    let l = &mut stack.layers[layer];
    match param {
        LayerParam::Thickness => &mut l.thickness,
        LayerParam::Roughness => &mut l.roughness,
        LayerParam::DeltaO => &mut l.delta_o,
        LayerParam::BetaO => &mut l.beta_o,
        LayerParam::DeltaE => &mut l.delta_e,
        LayerParam::BetaE => &mut l.beta_e,
    }
}

/// The quadrature nodes of point `i` under the default scheme (just q without resolution).
fn nodes(curve: &Curve, resolution: Option<&Resolution>, i: usize) -> Vec<f64> {
    let q = curve.q[i];
    let resolution = match resolution {
        None | Some(Resolution::None) => return vec![q],
        Some(Resolution::ConstantDqOverQ(f)) => Resolution::ConstantDqOverQ(*f),
        Some(Resolution::Pointwise(dq)) => Resolution::Pointwise(vec![dq[i]]),
    };
    let scales = StackScales::of_stack(&curve.stack, curve.energy_ev);
    expand_nodes(&[q], &resolution, curve.energy_ev, Smearing::default(), &scales).unwrap().q
}

/// Per layer and mode (s, p): the smallest |kz| over the nodes and the largest phase length
/// 1/|kz| + 2d (how strongly a change of that kz moves R).
struct Scales {
    layers: Vec<[(f64, f64); 2]>,
    k02: f64,
    top_node: f64,
}

fn scales(curve: &Curve, nodes: &[f64]) -> Scales {
    let k02 = scatterlab_core::units::photon_k0(curve.energy_ev).powi(2);
    let layers = curve
        .stack
        .layers
        .iter()
        .map(|l| {
            let chi_o = C64::new(-2.0 * l.delta_o, 2.0 * l.beta_o);
            let chi_e = C64::new(-2.0 * l.delta_e, 2.0 * l.beta_e);
            let ratio = (1.0 + chi_o) / (1.0 + chi_e);
            [0, 1].map(|m| {
                nodes.iter().fold((f64::INFINITY, 0.0f64), |(k, len), &v| {
                    let kz2 = if m == 0 { chi_o * k02 + v * v / 4.0 } else { ratio * (chi_e * k02 + v * v / 4.0) };
                    let kz = kz2.norm().sqrt();
                    (k.min(kz), len.max(1.0 / kz + 2.0 * l.thickness))
                })
            })
        })
        .collect();
    Scales { layers, k02, top_node: nodes.iter().fold(0.0f64, |m, &v| m.max(v)) }
}

/// The largest step that moves no kz by more than a tenth of itself or a fifth of a radian of
/// phase, when a unit of the parameter moves kz² of layer j, mode m by `rate(j, m)`.
fn step_for(scales: &Scales, rate: impl Fn(usize, usize) -> f64) -> f64 {
    let mut h = f64::INFINITY;
    for (j, modes) in scales.layers.iter().enumerate() {
        for (m, &(kz, len)) in modes.iter().enumerate() {
            let r = rate(j, m);
            // Δkz = r h / (2 kz); keep Δkz · (1/kz + 2d) ≤ 0.1.
            if r > 0.0 {
                h = h.min(0.2 * kz / (r * len));
            }
        }
    }
    h
}

/// The first step at point `i` and whether the difference must be one-sided (parameter on its
/// bound 0): small enough that every kz moves by a tenth of itself at most (a β = 0 layer near
/// its critical edge has a branch point there) and every phase by a fifth of a radian.
pub fn first_step(curve: &Curve, param: Param, resolution: Option<&Resolution>, i: usize) -> (f64, bool) {
    let sc = scales(curve, &nodes(curve, resolution, i));
    let k02 = sc.k02;
    match param {
        Param::Layer { layer, param } => {
            let x = *field(&mut curve.stack.clone(), layer, param);
            // δ_o, β_o move the s kz² and (through ε_o/ε_e) the p kz²; δ_e, β_e only the p kz².
            let touches = |j: usize, m: usize| j == layer && (m == 1 || matches!(param, LayerParam::DeltaO | LayerParam::BetaO));
            let optical = step_for(&sc, |j, m| if touches(j, m) { 2.0 * k02 } else { 0.0 });
            let (scale, bounded) = match param {
                LayerParam::Thickness => ((0.1 / sc.layers[layer][0].0.min(sc.layers[layer][1].0)).min(0.5), true),
                LayerParam::Roughness => {
                    // Névot–Croce exp(−2 k_a k_b σ²): keep the exponent's change below 0.1.
                    let above = layer.saturating_sub(1);
                    let kk = (0..2).map(|m| sc.layers[above][m].0 * sc.layers[layer][m].0).fold(sc.top_node * sc.top_node / 4.0, f64::max);
                    ((0.025 / (kk * x + 1e-30)).min((0.05 / kk).sqrt()).min(0.3), false)
                }
                LayerParam::DeltaO | LayerParam::DeltaE => ((0.02 * x.abs().max(1e-4)).min(optical), false),
                // β = 0 sits on a branch cut above the critical edge: only β ≥ 0 is physical.
                LayerParam::BetaO | LayerParam::BetaE => ((0.05 * x.max(1e-5)).min(optical), true),
            };
            match (bounded, x) {
                (true, 0.0) => (scale, true),
                (true, _) => (scale.min(0.5 * x), false),
                (false, _) => (scale, false),
            }
        }
        // χ k0² moves by 2 χ k0² / E per eV.
        Param::Energy => {
            let chi = |j: usize| {
                let l = &curve.stack.layers[j];
                2.0 * l.delta_o.hypot(l.beta_o).max(l.delta_e.hypot(l.beta_e))
            };
            ((1e-4 * curve.energy_ev).min(step_for(&sc, |j, _| 2.0 * chi(j) * k02 / curve.energy_ev)), false)
        }
        // ν²/4 moves by ν/2 · 1.2 per unit Δq (a constant-dQ/Q window widens with q by ≤ 20 % here).
        Param::QOffset => (1e-4f64.min(step_for(&sc, |_, _| 0.6 * sc.top_node)).min(0.3 * curve.q[i]), false),
        Param::Resolution => match resolution {
            // ν moves by at most 1.5 q per unit f.
            Some(Resolution::ConstantDqOverQ(f)) => ((0.1 * f).min(step_for(&sc, |_, _| 0.75 * sc.top_node * curve.q[i])), false),
            _ => unreachable!(),
        },
    }
}
