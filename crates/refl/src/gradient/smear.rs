//! Gradients through Gaussian resolution smearing ([`crate::resolution`]).
//!
//! The smeared R at q_i is Σ_j w_j R(ν_ij) over the quadrature nodes ν_ij = |q_i + t_j σ_i|
//! of [`expand_nodes`] (clamped to ≥ 1e-12 exactly as `compute_smeared` does, the same scheme and
//! per-point node count), so ∂R_sm/∂θ is the same
//! weighted sum of ∂R/∂θ at the nodes for a layer or energy parameter. The q-like parameters act
//! through the nodes: ∂R_sm/∂p = Σ_j w_j R′(ν_ij) ∂ν_ij/∂p with R′ = ∂R/∂q.
//! * q offset: the model is evaluated at q + Δq, with the resolution of that q (dQ = f·(q + Δq) for
//!   constant dQ/Q, as refnx's `q_offset` does; pointwise dQ stays with its point):
//!   ∂ν/∂Δq = s (1 + t_j c f) for constant dQ/Q, s for pointwise, with s = sign(q_i + t_j σ_i)
//!   (0 where the node is clamped) and c = 1/2.35482 (σ = c · FWHM).
//! * resolution width f of a constant dQ/Q: ∂ν/∂f = s t_j c q_i.
//!
//! The node count of a point is held fixed while differentiating (it changes in steps with σ and
//! the stack thickness, where the converged rule's value moves by far less than 1e-4 relative).
//!
//! Without resolution each q is evaluated once (weight 1), as the unsmeared curve.

use super::{block, check_param, Direction, Gradient, Param};
use crate::resolution::{expand_nodes, StackScales, FWHM_PER_SIGMA};
use crate::{CurveRequest, ReflError, Resolution, SmearedRequest};

/// How one requested parameter maps onto the node-level directions.
#[derive(Clone, Copy)]
enum Row {
    /// The same weighted sum of direction `k`'s row.
    Direct(usize),
    /// q offset, through q's direction `k`.
    QOffset(usize),
    /// Resolution width, through q's direction `k`.
    Width(usize),
}

/// Maps the parameters to rows, naming a parameter the resolution cannot have.
fn plan(params: &[Param], resolution: &Resolution, n_layers: usize) -> Result<(Vec<Direction>, Vec<Row>), ReflError> {
    let mut directions = Vec::new();
    let mut q_direction = None;
    let mut rows = Vec::with_capacity(params.len());
    for (i, param) in params.iter().enumerate() {
        check_param(param, i, n_layers)?;
        let direct = match *param {
            Param::Layer { layer, param } => Some(Direction::Layer(layer, param)),
            Param::Energy => Some(Direction::Energy),
            Param::QOffset | Param::Resolution => None,
        };
        if let Some(d) = direct {
            directions.push(d);
            rows.push(Row::Direct(directions.len() - 1));
            continue;
        }
        if *param == Param::Resolution && !matches!(resolution, Resolution::ConstantDqOverQ(_)) {
            return Err(ReflError::input(
                format!("parameter {i} (resolution dQ/Q)"),
                format!("only a constant dQ/Q resolution has a width parameter, this curve has {}", kind(resolution)),
            ));
        }
        let k = *q_direction.get_or_insert_with(|| {
            directions.push(Direction::Q);
            directions.len() - 1
        });
        rows.push(if *param == Param::QOffset { Row::QOffset(k) } else { Row::Width(k) });
    }
    Ok((directions, rows))
}

fn kind(resolution: &Resolution) -> &'static str {
    match resolution {
        Resolution::None => "no resolution",
        Resolution::ConstantDqOverQ(_) => "constant dQ/Q",
        Resolution::Pointwise(_) => "a pointwise dQ",
    }
}

/// Smeared R_s, R_p and their derivatives for each of `params` (CPU, f64), validated as
/// `compute_smeared` validates (curve, resolution, window below 2k0) plus each parameter.
/// [`Param::Resolution`] needs a [`Resolution::ConstantDqOverQ`]; it is an error otherwise.
pub fn smeared_gradient(request: &SmearedRequest<'_>, params: &[Param]) -> Result<Gradient, ReflError> {
    let curve = &request.curve;
    curve.validate()?;
    let resolution = request.resolution;
    resolution.validate(curve.q.len())?;
    let (directions, rows) = plan(params, resolution, curve.stack.layers.len())?;
    if matches!(resolution, Resolution::None) {
        // No smearing: one evaluation per q; the q offset is ∂R/∂q itself (plan put Q last if asked).
        let raw = block::evaluate(curve, &directions);
        let pick = |d: &[Vec<f64>]| -> Vec<Vec<f64>> {
            rows.iter()
                .map(|r| match *r {
                    Row::Direct(k) | Row::QOffset(k) | Row::Width(k) => d[k].clone(),
                })
                .collect()
        };
        return Ok(Gradient { d_r_s: pick(&raw.d_r_s), d_r_p: pick(&raw.d_r_p), r_s: raw.r_s, r_p: raw.r_p });
    }
    let c = 1.0 / FWHM_PER_SIGMA;
    let fraction = match resolution {
        Resolution::ConstantDqOverQ(f) => *f,
        Resolution::None | Resolution::Pointwise(_) => 0.0,
    };
    let scales = StackScales::of_stack(curve.stack, curve.energy_ev);
    let nodes = expand_nodes(curve.q, resolution, curve.energy_ev, request.smearing, &scales)?;
    // ∂ν/∂Δq and ∂ν/∂f per node.
    let (mut d_offset, mut d_width) = (Vec::with_capacity(nodes.q.len()), Vec::with_capacity(nodes.q.len()));
    for (i, &q) in curve.q.iter().enumerate() {
        // The same rounding as expand_nodes's node positions, so the clamp test below is exact.
        let sigma = resolution.fwhm(i, q) / FWHM_PER_SIGMA;
        for n in nodes.offsets[i]..nodes.offsets[i + 1] {
            let (t, node) = (nodes.t[n], nodes.q[n]);
            let raw = q + t * sigma;
            let sign = if node == raw.abs() { raw.signum() } else { 0.0 };
            d_offset.push(sign * (1.0 + t * c * fraction));
            d_width.push(sign * t * c * q);
        }
    }
    let expanded = CurveRequest { stack: curve.stack, energy_ev: curve.energy_ev, q: &nodes.q };
    let raw = block::evaluate(&expanded, &directions);
    let fold = |values: &[f64], factor: Option<&[f64]>| -> Vec<f64> {
        match factor {
            None => nodes.fold(values),
            Some(f) => nodes.fold_scaled(values, f),
        }
    };
    let row = |d: &[Vec<f64>], r: &Row| match *r {
        Row::Direct(k) => fold(&d[k], None),
        Row::QOffset(k) => fold(&d[k], Some(&d_offset)),
        Row::Width(k) => fold(&d[k], Some(&d_width)),
    };
    Ok(Gradient {
        r_s: fold(&raw.r_s, None),
        r_p: fold(&raw.r_p, None),
        d_r_s: rows.iter().map(|r| row(&raw.d_r_s, r)).collect(),
        d_r_p: rows.iter().map(|r| row(&raw.d_r_p, r)).collect(),
    })
}
