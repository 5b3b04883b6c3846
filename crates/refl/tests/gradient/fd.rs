//! The finite-difference reference for the gradient tests: Ridders' extrapolation (Richardson on a
//! shrinking step, Numerical Recipes `dfridr`) of differences of the plain engine, point by point.

use crate::gradient_steps::{field, first_step};
use scatterlab_refl::gradient::{Gradient, LayerParam, Param};
use scatterlab_refl::resolution::{expand_nodes, Smearing, StackScales};
use scatterlab_refl::{cpu, CurveRequest, Resolution, Stack};

/// A curve to differentiate.
pub struct Curve {
    pub id: String,
    pub stack: Stack,
    pub energy_ev: f64,
    pub q: Vec<f64>,
}

impl Curve {
    pub fn request(&self) -> CurveRequest<'_> {
        CurveRequest { stack: &self.stack, energy_ev: self.energy_ev, q: &self.q }
    }
}

const FIELDS: [LayerParam; 6] = [LayerParam::Thickness, LayerParam::Roughness, LayerParam::DeltaO, LayerParam::BetaO, LayerParam::DeltaE, LayerParam::BetaE];

/// Energy, q offset, then every field of every layer.
pub fn all_params(n_layers: usize) -> Vec<Param> {
    let mut params = vec![Param::Energy, Param::QOffset];
    for layer in 0..n_layers {
        params.extend(FIELDS.iter().map(|&param| Param::Layer { layer, param }));
    }
    params
}

/// R_s and R_p at point `i` of the curve with `param` moved by `h`.
fn evaluate(curve: &Curve, param: Param, h: f64, resolution: Option<&Resolution>, i: usize) -> [f64; 2] {
    let mut stack = curve.stack.clone();
    let mut energy = curve.energy_ev;
    let mut q = [curve.q[i]];
    let mut resolution = resolution.map(|r| match r {
        Resolution::Pointwise(dq) => Resolution::Pointwise(vec![dq[i]]),
        other => other.clone(),
    });
    match param {
        // R depends on σ² only, so R(σ − h) = R(|σ − h|): central differences also at σ = 0.
        Param::Layer { layer, param: LayerParam::Roughness } => {
            let x = field(&mut stack, layer, LayerParam::Roughness);
            *x = (*x + h).abs();
        }
        Param::Layer { layer, param } => *field(&mut stack, layer, param) += h,
        Param::Energy => energy += h,
        Param::QOffset => q[0] += h,
        Param::Resolution => match resolution.as_mut() {
            Some(Resolution::ConstantDqOverQ(f)) => *f += h,
            _ => unreachable!("resolution parameter without a constant dQ/Q"),
        },
    }
    match &resolution {
        None => {
            let r = cpu::reflectivity_reference(&CurveRequest { stack: &stack, energy_ev: energy, q: &q }).unwrap();
            [r.r_s[0], r.r_p[0]]
        }
        Some(resolution) => {
            // The converged scheme places nodes by the stack's scales (critical edges, thickness),
            // which `smeared_gradient` holds at the unperturbed stack's: so does the difference.
            // Otherwise a parameter that moves a critical edge also moves the nodes, and the
            // difference picks up the quadrature's own change (within its 1e-4; seen 1.6e-4 of the
            // row's maximum derivative at one seed), which is no part of ∂R/∂p.
            let scales = StackScales::of_stack(&curve.stack, curve.energy_ev);
            let nodes = expand_nodes(&q, resolution, energy, Smearing::default(), &scales).unwrap();
            let r = cpu::reflectivity_reference(&CurveRequest { stack: &stack, energy_ev: energy, q: &nodes.q }).unwrap();
            [nodes.fold(&r.r_s)[0], nodes.fold(&r.r_p)[0]]
        }
    }
}

/// Ridders' extrapolated derivative of R_s and R_p at point `i`, with error estimates, and the
/// first step. Three tableaux, started at h0, h0/16 and h0/256; per polarisation the median
/// estimate is kept. One tableau alone is not robust: near a β = 0 layer's critical edge the first
/// step can be outside the asymptotic range (q offset at an edge: 2704 ± 140 against the 2355.70
/// that smaller steps converge to), and where the error terms change sign between the first steps
/// two crude differences can agree by chance (a thickness difference at d = 0 claimed ± 1.6e-14
/// while 3e-3 off). A bad start rarely repeats at 1/16 and 1/256 of the step.
fn ridders(curve: &Curve, param: Param, resolution: Option<&Resolution>, i: usize) -> ([(f64, f64); 2], f64) {
    let (h0, one_sided) = first_step(curve, param, resolution, i);
    let runs = [1.0, 16.0, 256.0].map(|d| ridders_from(curve, param, resolution, i, h0 / d, one_sided));
    let median = |p: usize| {
        let mut v = runs.map(|r| r[p]);
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v[1]
    };
    ([median(0), median(1)], h0)
}

/// One Ridders tableau from the first step `h0`.
fn ridders_from(curve: &Curve, param: Param, resolution: Option<&Resolution>, i: usize, h0: f64, one_sided: bool) -> [(f64, f64); 2] {
    const NTAB: usize = 14;
    // Central differences have an error series in h²; one-sided ones in h, extrapolated on halvings.
    let (con, factor) = if one_sided { (2.0, 2.0) } else { (1.4, 1.96) };
    let base = one_sided.then(|| evaluate(curve, param, 0.0, resolution, i));
    let difference = |k: usize| {
        let h = h0 / f64::powi(con, k as i32);
        let up = evaluate(curve, param, h, resolution, i);
        let down = base.unwrap_or_else(|| evaluate(curve, param, -h, resolution, i));
        let width = if one_sided { h } else { 2.0 * h };
        [(up[0] - down[0]) / width, (up[1] - down[1]) / width]
    };
    // One tableau per polarisation, rows added until both have stopped.
    let mut a = [[[0.0f64; NTAB]; NTAB]; 2];
    let first = difference(0);
    let mut best = [(first[0], f64::INFINITY), (first[1], f64::INFINITY)];
    let mut done = [false; 2];
    a[0][0][0] = first[0];
    a[1][0][0] = first[1];
    for k in 1..NTAB {
        let d = difference(k);
        for p in 0..2 {
            if done[p] {
                continue;
            }
            let t = &mut a[p];
            t[k][0] = d[p];
            let mut fac = factor;
            for j in 1..=k {
                t[k][j] = (t[k][j - 1] * fac - t[k - 1][j - 1]) / (fac - 1.0);
                fac *= factor;
                let e = (t[k][j] - t[k][j - 1]).abs().max((t[k][j] - t[k - 1][j - 1]).abs());
                if e <= best[p].1 {
                    best[p] = (t[k][j], e);
                }
            }
            // Stop once higher orders get worse, but not before a few rows: an early, chance
            // agreement of two crude estimates otherwise passes for a tiny error.
            done[p] = k >= 4 && (t[k][k] - t[k - 1][k - 1]).abs() >= 2.0 * best[p].1;
        }
        if done[0] && done[1] {
            break;
        }
    }
    best
}

/// How a set of rows compared.
#[derive(Default)]
pub struct Summary {
    /// The worst |a − b| / (tolerance of that point), ≤ 1 when all passed.
    pub worst: f64,
    /// Where it was.
    pub place: String,
    /// Comparisons where the difference's own error estimate exceeded the relative tolerance.
    pub limited: usize,
    /// All comparisons.
    pub total: usize,
}

impl Summary {
    /// Folds another summary in.
    pub fn merge(&mut self, other: Summary) {
        if other.worst > self.worst {
            (self.worst, self.place) = (other.worst, other.place);
        }
        self.limited += other.limited;
        self.total += other.total;
    }
}

/// Compares every row of `got` with the extrapolated differences. With a the jet derivative, b
/// the difference and e_b its Ridders error estimate, b_max the largest |b| of that parameter's
/// row (same polarisation), R the reflectance and h0 the first step at that point:
///   |a − b| ≤ 1e-6 · max(|b|, 1e-3 · b_max, 1e-4 · R / h0, 1e-6) + 2 e_b.
/// A derivative is compared relatively unless it is tiny: below 1e-3 of its row's peak, or
/// moving R by less than 1e-4·R over the step h0 (which keeps every kz within a tenth of
/// itself): the differences of an f64 R cannot resolve those to 1e-6. 1e-12 is the floor for
/// exact zeros (a layer the light never reaches). Where the difference itself is uncertain
/// beyond the tolerance (2 e_b larger than the first term) that uncertainty is allowed, and the
/// comparison counted as `limited`. Returns the summary, or every failure.
pub fn check_rows(curve: &Curve, params: &[Param], got: &Gradient, resolution: Option<&Resolution>) -> Result<Summary, String> {
    let n_q = curve.q.len();
    let mut summary = Summary::default();
    let mut failures = Vec::new();
    for (k, &param) in params.iter().enumerate() {
        let fd: Vec<([(f64, f64); 2], f64)> = (0..n_q).map(|i| ridders(curve, param, resolution, i)).collect();
        for (p, (pol, jet, r)) in [("R_s", &got.d_r_s[k], &got.r_s), ("R_p", &got.d_r_p[k], &got.r_p)].into_iter().enumerate() {
            let row_max = fd.iter().fold(0.0f64, |m, (r, _)| m.max(r[p].0.abs()));
            for (i, (a, (estimates, h0))) in jet.iter().zip(&fd).enumerate() {
                let (b, err) = estimates[p];
                let scale = b.abs().max(ROW_FRACTION * row_max).max(R_FRACTION * r[i] / h0).max(1e-12 / TOL);
                let allowed = TOL * scale + 2.0 * err;
                let excess = (a - b).abs() / allowed;
                summary.total += 1;
                summary.limited += usize::from(2.0 * err > TOL * scale);
                let place = || {
                    format!(
                        "{} {} {pol} q[{i}]={:.5}: jet {a:.9e}, difference {b:.9e} (± {err:.1e}, row max {row_max:.2e}, R {:.3e}, h0 {h0:.2e})",
                        curve.id,
                        param.describe(),
                        curve.q[i],
                        r[i]
                    )
                };
                if excess > summary.worst || excess.is_nan() {
                    (summary.worst, summary.place) = (excess, place());
                }
                if excess.is_nan() || excess > 1.0 {
                    failures.push(format!("{}: |a − b| = {:.2e} > allowed {allowed:.2e}", place(), (a - b).abs()));
                }
            }
        }
    }
    match failures.len() {
        0 => Ok(summary),
        n => Err(format!("{n} failures:\n{}", failures.join("\n"))),
    }
}

/// The agreement required, relative to the scale of each comparison.
const TOL: f64 = 1e-6;
/// Below this fraction of a row's largest derivative, a derivative counts as tiny.
const ROW_FRACTION: f64 = 1e-3;
/// Below this fraction of R per first step, a derivative counts as tiny.
const R_FRACTION: f64 = 1e-4;
