//! Instrument resolution: Gaussian smearing of R(q), pointwise dQ or constant dQ/Q.
//!
//! dQ is always the **FWHM** of the Gaussian (σ = FWHM / 2√(2 ln 2) = FWHM / 2.35482), as in
//! refnx. The default scheme, [`Smearing::Converged`], equals the full normalised Gaussian
//! convolution within 1e-4 relative (composite Gauss–Legendre over ±6σ, panels fine enough for
//! the stack's fringes, [`nodes`]); [`Smearing::Refnx17`] is refnx's `_smeared_kernel_pointwise`
//! (17-point Gauss–Legendre over ±3.5σ) with weights normalised to sum to 1, so a flat R stays
//! flat (refnx's sum to erf(3.5/√2) = 0.999535, scaling R down by 4.7e-4).
//! Constant dQ/Q uses the same quadrature with dQ = (dQ/Q)·q at every point (refnx instead
//! interpolates on a log grid for that case).
//! Quadrature nodes that fall at q ≤ 0 are mirrored to |q| (the kernel depends on q² only);
//! nodes at or beyond 2k0 are an error naming the point.

use crate::{compute_unchecked_output, CurveRequest, Engine, ReflError, Reflectivity};

pub mod nodes;
pub use nodes::{expand_nodes, Nodes, Smearing, StackScales};

/// Gauss–Legendre order of refnx's smearing quadrature ([`Smearing::Refnx17`]).
pub const QUADRATURE_ORDER: usize = 17;
/// Half-width of refnx's integration window in σ ([`Smearing::Refnx17`]).
pub const WINDOW_SIGMA: f64 = 3.5;
/// FWHM / σ of a Gaussian, 2√(2 ln 2).
pub const FWHM_PER_SIGMA: f64 = 2.354_820_045_030_949_3;

/// The resolution of a dataset.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolution {
    /// No smearing.
    None,
    /// dQ = fraction · q (FWHM), e.g. 0.05 for 5 %.
    ConstantDqOverQ(f64),
    /// dQ (FWHM, Å⁻¹) per q point.
    Pointwise(Vec<f64>),
}

impl Resolution {
    /// The FWHM at q point `i`, after checking the resolution against `n_q` points.
    pub(crate) fn fwhm(&self, i: usize, q: f64) -> f64 {
        match self {
            Resolution::None => 0.0,
            Resolution::ConstantDqOverQ(f) => f * q,
            Resolution::Pointwise(dq) => dq[i],
        }
    }

    /// Checks finite, non-negative values and the length of pointwise dQ.
    pub fn validate(&self, n_q: usize) -> Result<(), ReflError> {
        match self {
            Resolution::None => Ok(()),
            Resolution::ConstantDqOverQ(f) if f.is_finite() && *f >= 0.0 => Ok(()),
            Resolution::ConstantDqOverQ(f) => Err(ReflError::input("resolution dQ/Q", format!("must be finite and ≥ 0, got {f}"))),
            Resolution::Pointwise(dq) if dq.len() != n_q => Err(ReflError::input("resolution dQ", format!("has {} values for {n_q} q points", dq.len()))),
            Resolution::Pointwise(dq) => match dq.iter().position(|d| !(d.is_finite() && *d >= 0.0)) {
                Some(i) => Err(ReflError::input(format!("resolution dQ[{i}]"), format!("must be finite and ≥ 0, got {}", dq[i]))),
                None => Ok(()),
            },
        }
    }
}

/// Gauss–Legendre nodes and weights on [−1, 1] (Newton on the Legendre recurrence).
pub fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut nodes = vec![0.0; n];
    let mut weights = vec![0.0; n];
    for i in 0..n.div_ceil(2) {
        let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut derivative = 1.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                (p0, p1) = (p1, ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64);
            }
            let pn = if n == 0 {
                1.0
            } else if n == 1 {
                x
            } else {
                p1
            };
            let pn_1 = if n == 1 { 1.0 } else { p0 };
            derivative = n as f64 * (x * pn - pn_1) / (x * x - 1.0);
            let step = pn / derivative;
            x -= step;
            if step.abs() < 1e-16 {
                break;
            }
        }
        nodes[i] = -x;
        nodes[n - 1 - i] = x;
        let w = 2.0 / ((1.0 - x * x) * derivative * derivative);
        weights[i] = w;
        weights[n - 1 - i] = w;
    }
    (nodes, weights)
}

/// A curve plus its resolution.
#[derive(Clone, Copy, Debug)]
pub struct SmearedRequest<'a> {
    /// The curve (stack, energy, nominal q).
    pub curve: CurveRequest<'a>,
    /// Its resolution.
    pub resolution: &'a Resolution,
    /// How the convolution is evaluated.
    pub smearing: Smearing,
}

/// Smeared reflectivities of a batch: every quadrature node of every curve goes to the engine
/// in one call (one GPU dispatch), then the nodes are summed with their Gaussian weights. A
/// non-finite smeared R is an error naming the curve and its nominal q point.
pub async fn compute_smeared(engine: Engine<'_>, requests: &[SmearedRequest<'_>]) -> Result<Vec<Reflectivity>, ReflError> {
    compute_smeared_each(engine, requests).await?.into_iter().enumerate().map(|(c, r)| r.map_err(|e| e.in_curve(c))).collect()
}

/// Like [`compute_smeared`], but a curve with a non-finite R fails alone (its entry is the error
/// naming the first bad nominal q point); invalid inputs and engine failures fail the batch.
pub async fn compute_smeared_each(engine: Engine<'_>, requests: &[SmearedRequest<'_>]) -> Result<Vec<Result<Reflectivity, ReflError>>, ReflError> {
    let mut expanded = Vec::with_capacity(requests.len());
    for (c, request) in requests.iter().enumerate() {
        request.curve.validate().map_err(|e| e.in_curve(c))?;
        let scales = StackScales::of_stack(request.curve.stack, request.curve.energy_ev);
        let nodes = expand_nodes(request.curve.q, request.resolution, request.curve.energy_ev, request.smearing, &scales).map_err(|e| e.in_curve(c))?;
        expanded.push(nodes);
    }
    let node_requests: Vec<CurveRequest<'_>> =
        requests.iter().zip(&expanded).map(|(r, nodes)| CurveRequest { stack: r.curve.stack, energy_ev: r.curve.energy_ev, q: &nodes.q }).collect();
    let raw_results = compute_unchecked_output(engine, &node_requests).await?;
    // Checked after folding: a NaN node makes its point NaN, and the point is what the user knows.
    Ok(raw_results
        .into_iter()
        .zip(&expanded)
        .zip(requests)
        .map(|((r, nodes), request)| {
            let r = match nodes.q.len() == request.curve.q.len() {
                true => r,
                false => Reflectivity { r_s: nodes.fold(&r.r_s), r_p: nodes.fold(&r.r_p) },
            };
            r.check_finite(request.curve.q).map(|()| r)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauss_legendre_integrates_polynomials_exactly() {
        let (x, w) = gauss_legendre(QUADRATURE_ORDER);
        assert!((w.iter().sum::<f64>() - 2.0).abs() < 1e-14);
        // Exact up to degree 2n − 1 = 33: ∫ x^32 dx over [−1, 1] = 2/33.
        let integral: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(32)).sum();
        assert!((integral - 2.0 / 33.0).abs() < 1e-14, "{integral}");
        assert!(x.windows(2).all(|p| p[0] < p[1]));
    }
}
