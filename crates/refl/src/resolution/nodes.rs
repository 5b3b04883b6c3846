//! Quadrature nodes of the Gaussian resolution convolution, per q point.
//!
//! A smeared point is R_sm(q) = ∫ R(|q + tσ|) φ(t) dt with φ the unit normal density. Both schemes
//! place nodes at fixed positions t_j (in units of σ) with fixed weights w_j, so ν_j = |q + t_j σ|
//! moves linearly with q and σ: the gradient code differentiates the same rule it evaluates.
//! * [`Smearing::Converged`]: composite Gauss–Legendre panels of [`PANEL_ORDER`] points over
//!   ±[`CONVERGED_WINDOW_SIGMA`] σ, each panel at most [`MAX_PANEL_SIGMA`] σ and at most
//!   [`FRINGE_PANEL`] / D wide in q (D = total thickness of the interior layers: R(q) holds cos(qD)
//!   and its harmonics, so a panel spans ≤ 1/π of the fundamental fringe period 2π/D). The node
//!   count therefore varies per point: 10·⌈max(12, 12σD)⌉ nodes. R(q) has a square-root kink at
//!   each critical edge q_c = 2k0·√(2δ) (kz² = χk0² + q²/4 changes sign there; mirrored, also at
//!   −q_c and 0): the panel holding
//!   one is split 4-fold, [`KINK_LEVELS`] times towards it (+120 nodes per edge in the window), so
//!   the kink sits in a panel 256 times narrower. Panel edges stay fixed in t between the
//!   thresholds where a count or a split changes, so derivatives of the rule are exact there.
//! * [`Smearing::Refnx17`]: refnx's default, 17 Gauss–Legendre nodes over ±3.5σ (weights
//!   normalised to 1), kept for comparison with refnx; it is up to ~8e-2 off the convolution.

use serde::{Deserialize, Serialize};

use super::{gauss_legendre, Resolution, FWHM_PER_SIGMA, QUADRATURE_ORDER, WINDOW_SIGMA};
use crate::ReflError;

/// Gauss–Legendre order of one panel of the converged rule.
pub const PANEL_ORDER: usize = 10;
/// Half-width of the converged window in σ: the Gaussian mass beyond ±6σ is 2e-9.
pub const CONVERGED_WINDOW_SIGMA: f64 = 6.0;
/// Largest panel of the converged rule in σ (a Gaussian over 1σ needs far fewer than 10 nodes).
pub const MAX_PANEL_SIGMA: f64 = 1.0;
/// Largest panel of the converged rule in q, times the stack's total thickness D (Å·Å⁻¹).
pub const FRINGE_PANEL: f64 = 1.0;
/// Levels of 4-fold panel splitting towards a critical edge.
pub const KINK_LEVELS: usize = 4;
/// Interior layers thinner than this (Å) get no refinement at their critical edges.
pub const KINK_MIN_THICKNESS_A: f64 = 100.0;
/// Most quadrature nodes one q point may need; beyond it the point is an error naming it.
pub const MAX_NODES_PER_POINT: usize = 20_000;

/// How the Gaussian resolution convolution is evaluated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Smearing {
    /// The full Gaussian convolution to ≤ 1e-4 relative (see the module notes); the default.
    #[default]
    Converged,
    /// refnx's default 17-point Gauss–Legendre over ±3.5σ (normalised), for comparison with refnx.
    Refnx17,
}

/// The flattened quadrature of one curve: point i sums `q[offsets[i]..offsets[i + 1]]` with the
/// matching `weights`. Without resolution every point is one node of weight 1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Nodes {
    /// Node positions |q_i + t_j σ_i| (clamped to ≥ 1e-12), Å⁻¹.
    pub q: Vec<f64>,
    /// Node weights; each point's weights sum to 1.
    pub weights: Vec<f64>,
    /// The node position in units of σ (t_j), for derivatives with respect to q and σ.
    pub t: Vec<f64>,
    /// Start of each point's nodes, plus the total at the end (length = points + 1).
    pub offsets: Vec<usize>,
}

impl Nodes {
    /// The weighted sum of `values` (one per node) per point.
    pub fn fold(&self, values: &[f64]) -> Vec<f64> {
        self.offsets.windows(2).map(|r| (r[0]..r[1]).map(|n| values[n] * self.weights[n]).sum()).collect()
    }

    /// Like [`Nodes::fold`], each node's value also multiplied by `factor[node]`.
    pub fn fold_scaled(&self, values: &[f64], factor: &[f64]) -> Vec<f64> {
        self.offsets.windows(2).map(|r| (r[0]..r[1]).map(|n| values[n] * self.weights[n] * factor[n]).sum()).collect()
    }

    /// The largest node count of any point (1 without resolution).
    pub fn max_per_point(&self) -> usize {
        self.offsets.windows(2).map(|r| r[1] - r[0]).max().unwrap_or(0)
    }
}

/// One point's rule: positions in σ and normalised weights.
type Rule = (Vec<f64>, Vec<f64>);

/// Normalises Gaussian-weighted Gauss–Legendre weights so a flat R stays flat.
fn gaussian_rule(t: Vec<f64>, gl_weights: impl Iterator<Item = f64>) -> Rule {
    let raw: Vec<f64> = t.iter().zip(gl_weights).map(|(t, w)| w * (-0.5 * t * t).exp()).collect();
    let total: f64 = raw.iter().sum();
    (t, raw.iter().map(|w| w / total).collect())
}

/// refnx's 17-point rule over ±3.5σ.
fn refnx_rule() -> Rule {
    let (x, w) = gauss_legendre(QUADRATURE_ORDER);
    gaussian_rule(x.iter().map(|x| x * WINDOW_SIGMA).collect(), w.into_iter())
}

/// `panels` equal Gauss–Legendre panels over ±[`CONVERGED_WINDOW_SIGMA`], each panel holding one of
/// the `kinks` (positions in σ) split towards it; `gl` is the [`PANEL_ORDER`]-point rule on [−1, 1].
fn converged_rule(panels: usize, kinks: &[f64], gl: &(Vec<f64>, Vec<f64>)) -> Rule {
    let h = 2.0 * CONVERGED_WINDOW_SIGMA / panels as f64;
    let mut edges: Vec<(f64, f64)> = (0..panels).map(|p| (-CONVERGED_WINDOW_SIGMA + h * p as f64, -CONVERGED_WINDOW_SIGMA + h * (p + 1) as f64)).collect();
    for &k in kinks {
        // Graded towards the kink on both sides: a panel closer to it than half its width is
        // split, so no panel sees the square root nearer than its own half-width.
        for _ in 0..KINK_LEVELS {
            edges = edges
                .into_iter()
                .flat_map(|(a, b)| {
                    let near = (a - k).max(k - b) < 0.5 * (b - a);
                    let parts = if near { 4 } else { 1 };
                    let step = (b - a) / parts as f64;
                    (0..parts).map(move |s| (a + step * s as f64, if s + 1 == parts { b } else { a + step * (s + 1) as f64 }))
                })
                .collect();
        }
    }
    let (x, w) = gl;
    let t = edges.iter().flat_map(|&(a, b)| x.iter().map(move |x| a + 0.5 * (b - a) * (1.0 + x))).collect();
    gaussian_rule(t, edges.iter().flat_map(|&(a, b)| w.iter().map(move |w| 0.5 * (b - a) * w)))
}

/// The number of converged panels for width σ over a stack of total thickness D.
fn panel_count(sigma: f64, thickness_a: f64) -> f64 {
    let by_sigma = 2.0 * CONVERGED_WINDOW_SIGMA / MAX_PANEL_SIGMA;
    let by_fringe = 2.0 * CONVERGED_WINDOW_SIGMA * sigma * thickness_a / FRINGE_PANEL;
    by_sigma.max(by_fringe).ceil()
}

/// What the converged rule needs to know of a stack: how fast R(q) can oscillate and where it has kinks.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StackScales {
    /// Total thickness of the interior layers, Å (the fronting medium and substrate are
    /// semi-infinite); it sets the fastest fringe of R(q).
    pub thickness_a: f64,
    /// Critical edges q_c = 2k0·√(2δ), Å⁻¹, sorted, deduplicated, of every axis with δ > 0 of the
    /// fronting medium, the substrate and interior layers at least [`KINK_MIN_THICKNESS_A`] thick.
    pub critical_q: Vec<f64>,
}

impl StackScales {
    /// From per-layer thickness and δ values (every principal axis) at `energy_ev`.
    pub fn new<'a>(layers: impl ExactSizeIterator<Item = (f64, &'a [f64])>, energy_ev: f64) -> Self {
        let (n, k0) = (layers.len(), scatterlab_core::units::photon_k0(energy_ev));
        let mut out = StackScales::default();
        for (j, (thickness, deltas)) in layers.enumerate() {
            let interior = j > 0 && j + 1 < n;
            if interior {
                out.thickness_a += thickness.max(0.0);
            }
            // A thin layer's edge is smoothed over ~1/d; only semi-infinite media and thick layers
            // bend R sharply (graded stacks of many thin slices would otherwise add hundreds of edges).
            if !interior || thickness >= KINK_MIN_THICKNESS_A {
                out.critical_q.extend(deltas.iter().filter(|d| **d > 0.0).map(|d| 2.0 * k0 * (2.0 * d).sqrt()));
            }
        }
        out.critical_q.retain(|q| q.is_finite());
        out.critical_q.sort_by(f64::total_cmp);
        out.critical_q.dedup();
        out
    }

    /// The scales of a uniaxial stack.
    pub fn of_stack(stack: &crate::Stack, energy_ev: f64) -> Self {
        let deltas: Vec<[f64; 2]> = stack.layers.iter().map(|l| [l.delta_o, l.delta_e]).collect();
        Self::new(stack.layers.iter().zip(&deltas).map(|(l, d)| (l.thickness, &d[..])), energy_ev)
    }

    /// The scales of a tensor stack (its principal δ's bound where kz can vanish).
    pub fn of_general(stack: &crate::general::GeneralStack, energy_ev: f64) -> Self {
        Self::new(stack.layers.iter().map(|l| (l.thickness, &l.delta[..])), energy_ev)
    }
}

/// The q values at which R must be evaluated to smear one curve, and how to fold them back.
/// `scales` are the stack's [`StackScales`] (unused by [`Smearing::Refnx17`]). Checks the
/// resolution, that no window reaches 2k0 and that no point needs more than
/// [`MAX_NODES_PER_POINT`] nodes; nodes below zero are mirrored (R depends on q² only).
pub fn expand_nodes(q: &[f64], resolution: &Resolution, energy_ev: f64, smearing: Smearing, scales: &StackScales) -> Result<Nodes, ReflError> {
    resolution.validate(q.len())?;
    let mut out = Nodes { offsets: Vec::with_capacity(q.len() + 1), ..Nodes::default() };
    out.offsets.push(0);
    let q_max = 2.0 * scatterlab_core::units::photon_k0(energy_ev);
    let refnx = refnx_rule();
    let gl = gauss_legendre(PANEL_ORDER);
    let thickness_a = scales.thickness_a;
    let mut converged: Rule;
    for (i, &qi) in q.iter().enumerate() {
        let sigma = resolution.fwhm(i, qi) / FWHM_PER_SIGMA;
        if sigma == 0.0 {
            // No width: the convolution is R itself (also the whole curve without resolution).
            out.q.push(qi);
            out.weights.push(1.0);
            out.t.push(0.0);
            out.offsets.push(out.q.len());
            continue;
        }
        let (t, w) = match smearing {
            Smearing::Refnx17 => &refnx,
            Smearing::Converged => {
                let panels = panel_count(sigma, thickness_a);
                if !(panels * PANEL_ORDER as f64 <= MAX_NODES_PER_POINT as f64) {
                    return Err(ReflError::input(
                        format!("q[{i}]"),
                        format!(
                            "converged smearing needs {panels}×{PANEL_ORDER} nodes (σ = {sigma:.3e} Å⁻¹ over a {thickness_a:.0} Å stack), more than {MAX_NODES_PER_POINT}; use a smaller dQ or the refnx17 scheme"
                        ),
                    ));
                }
                // R(|ν|) also bends at ν = 0 and at the mirrored edges −q_c.
                let edges = scales.critical_q.iter().flat_map(|&qc| [qc, -qc]).chain([0.0]);
                let kinks: Vec<f64> = edges.map(|qc| (qc - qi) / sigma).filter(|t| t.abs() < CONVERGED_WINDOW_SIGMA).collect();
                converged = converged_rule(panels as usize, &kinks, &gl);
                if converged.0.len() > MAX_NODES_PER_POINT {
                    return Err(ReflError::input(
                        format!("q[{i}]"),
                        format!(
                            "converged smearing needs {} nodes with {} critical edges in its window, more than {MAX_NODES_PER_POINT}; use the refnx17 scheme",
                            converged.0.len(),
                            kinks.len()
                        ),
                    ));
                }
                &converged
            }
        };
        let reach = qi + t.last().copied().unwrap_or(0.0) * sigma;
        if reach >= q_max {
            return Err(ReflError::input(format!("q[{i}]"), format!("resolution window reaches {reach:.6} Å⁻¹, beyond 2k0 = {q_max:.6} Å⁻¹")));
        }
        // Mirror nodes below zero; keep a node at exactly 0 just above it (R → 1 there).
        out.q.extend(t.iter().map(|t| (qi + t * sigma).abs().max(1e-12)));
        out.weights.extend_from_slice(w);
        out.t.extend_from_slice(t);
        out.offsets.push(out.q.len());
    }
    Ok(out)
}
