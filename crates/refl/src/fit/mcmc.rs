//! Affine-invariant ensemble sampler (Goodman & Weare 2010, the "stretch move" of emcee).
//!
//! The posterior is exp(−χ²/2) with uniform priors inside the bounds. Walkers are split into two
//! halves; each half moves using the other, so a half's proposals are one batch (one GPU dispatch,
//! or all CPU cores). Reported: acceptance fraction, integrated autocorrelation time per parameter
//! (Sokal's automatic window, c = 5, on the walker-averaged autocorrelation function, as emcee),
//! and median with the 16th/84th percentiles (the 68 % interval) of the kept samples.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scatterlab_core::CancelToken;

use super::{FitProgress, Objective};
use crate::{Engine, ReflError};

/// Sampler settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct McmcOptions {
    /// Number of walkers (even, ≥ 2 × free parameters); 0 = 4 × free parameters.
    pub walkers: usize,
    /// Steps per walker, burn-in included.
    pub steps: usize,
    /// Steps discarded at the start.
    pub burn: usize,
    /// Keep every `thin`-th step after burn-in.
    pub thin: usize,
    /// Stretch scale a (emcee: 2).
    pub stretch: f64,
    /// Random seed.
    pub seed: u64,
}

impl Default for McmcOptions {
    fn default() -> Self {
        McmcOptions { walkers: 0, steps: 2000, burn: 500, thin: 1, stretch: 2.0, seed: 0 }
    }
}

/// Samples and their summary.
#[derive(Clone, Debug, PartialEq)]
pub struct McmcResult {
    /// Kept samples (after burn-in and thinning), each a free-parameter vector.
    pub samples: Vec<Vec<f64>>,
    /// χ² of each kept sample.
    pub chi2: Vec<f64>,
    /// Accepted proposals / all proposals.
    pub acceptance_fraction: f64,
    /// Integrated autocorrelation time per parameter, in steps.
    pub autocorrelation_time: Vec<f64>,
    /// Median per parameter.
    pub median: Vec<f64>,
    /// 16th percentile per parameter.
    pub lower_68: Vec<f64>,
    /// 84th percentile per parameter.
    pub upper_68: Vec<f64>,
    /// Objective evaluations used.
    pub evaluations: usize,
}

/// Samples the posterior starting from a small ball around `x0` (`spread` per parameter, e.g. LM's
/// standard errors), clipped to the bounds.
pub async fn ensemble_sampler(
    objective: &Objective<'_>,
    engine: Engine<'_>,
    x0: &[f64],
    spread: &[f64],
    options: &McmcOptions,
    progress: &mut dyn FnMut(&FitProgress),
    cancel: &CancelToken,
) -> Result<McmcResult, ReflError> {
    let dim = objective.dimension();
    let walkers = if options.walkers == 0 { 4 * dim } else { options.walkers };
    if walkers < 2 * dim || walkers % 2 != 0 || x0.len() != dim || spread.len() != dim {
        return Err(ReflError::input("MCMC options", format!("need an even number of walkers ≥ 2 × {dim} and start/spread vectors of length {dim}")));
    }
    if options.burn >= options.steps || options.thin == 0 || !(options.stretch > 1.0) {
        return Err(ReflError::input("MCMC options", "need burn < steps, thin ≥ 1 and stretch > 1"));
    }
    let bounds: Vec<[f64; 2]> = (0..dim).map(|k| objective.bounds(k)).collect();
    let inside = |x: &[f64]| x.iter().zip(&bounds).all(|(v, b)| *v >= b[0] && *v <= b[1]);
    let mut rng = StdRng::seed_from_u64(options.seed);
    let mut pos: Vec<Vec<f64>> = (0..walkers)
        .map(|_| {
            (0..dim)
                .map(|k| {
                    let [lo, hi] = bounds[k];
                    let s = if spread[k].is_finite() && spread[k] > 0.0 { spread[k] } else { 1e-4 * (hi - lo) };
                    (x0[k] + s * (2.0 * rng.gen::<f64>() - 1.0)).clamp(lo, hi)
                })
                .collect()
        })
        .collect();
    let mut chi2 = objective.chi2_batch(engine, &pos).await?;
    let mut evaluations = walkers;
    let (mut accepted, mut proposed) = (0usize, 0usize);
    let mut chain: Vec<Vec<Vec<f64>>> = Vec::with_capacity(options.steps); // [step][walker][dim]
    let mut chain_chi2: Vec<Vec<f64>> = Vec::with_capacity(options.steps);
    let half = walkers / 2;
    let a = options.stretch;
    for step in 0..options.steps {
        if cancel.is_cancelled() {
            break;
        }
        for (active, other) in [(0..half, half..walkers), (half..walkers, 0..half)] {
            let mut proposals = Vec::with_capacity(half);
            let mut log_z = Vec::with_capacity(half);
            for j in active.clone() {
                let k = rng.gen_range(other.clone());
                let z = ((a - 1.0) * rng.gen::<f64>() + 1.0).powi(2) / a;
                proposals.push(pos[k].iter().zip(&pos[j]).map(|(xk, xj)| xk + z * (xj - xk)).collect::<Vec<f64>>());
                log_z.push(z.ln());
            }
            let in_bounds: Vec<Vec<f64>> = proposals.iter().filter(|p| inside(p)).cloned().collect();
            let mut values = objective.chi2_batch(engine, &in_bounds).await?.into_iter();
            evaluations += in_bounds.len();
            for ((j, p), lz) in active.zip(proposals).zip(log_z) {
                proposed += 1;
                if !inside(&p) {
                    continue;
                }
                let c = values.next().unwrap_or(f64::INFINITY);
                let log_ratio = (dim as f64 - 1.0) * lz - 0.5 * (c - chi2[j]);
                if c.is_finite() && rng.gen::<f64>().ln() < log_ratio {
                    pos[j] = p;
                    chi2[j] = c;
                    accepted += 1;
                }
            }
        }
        chain.push(pos.clone());
        chain_chi2.push(chi2.clone());
        let best = chi2.iter().copied().fold(f64::INFINITY, f64::min);
        progress(&FitProgress { method: "mcmc", iteration: step + 1, max_iterations: options.steps, best_chi2: best, evaluations });
    }
    if chain.len() <= options.burn {
        return Err(ReflError::input("MCMC", format!("stopped after {} steps, before the end of burn-in ({})", chain.len(), options.burn)));
    }
    let kept_steps: Vec<usize> = (options.burn..chain.len()).step_by(options.thin).collect();
    let samples: Vec<Vec<f64>> = kept_steps.iter().flat_map(|&s| chain[s].iter().cloned()).collect();
    let kept_chi2: Vec<f64> = kept_steps.iter().flat_map(|&s| chain_chi2[s].iter().copied()).collect();
    let autocorrelation_time = (0..dim).map(|k| integrated_time(&chain[options.burn..], k)).collect();
    let (mut median, mut lower_68, mut upper_68) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..dim {
        let mut v: Vec<f64> = samples.iter().map(|s| s[k]).collect();
        v.sort_by(f64::total_cmp);
        median.push(percentile(&v, 50.0));
        lower_68.push(percentile(&v, 15.865_525_393_145_7));
        upper_68.push(percentile(&v, 84.134_474_606_854_3));
    }
    Ok(McmcResult {
        samples,
        chi2: kept_chi2,
        acceptance_fraction: accepted as f64 / proposed.max(1) as f64,
        autocorrelation_time,
        median,
        lower_68,
        upper_68,
        evaluations,
    })
}

/// Linear-interpolated percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let pos = p / 100.0 * (sorted.len() - 1) as f64;
    let (i, f) = (pos.floor() as usize, pos - pos.floor());
    sorted[i] + f * (sorted[(i + 1).min(sorted.len() - 1)] - sorted[i])
}

/// Integrated autocorrelation time of parameter k over `chain[step][walker]`: the walker-averaged
/// normalised autocorrelation ρ(t), τ = 1 + 2 Σ_{t≤M} ρ(t) with the smallest M ≥ 5τ(M).
pub fn integrated_time(chain: &[Vec<Vec<f64>>], k: usize) -> f64 {
    let n = chain.len();
    let walkers = chain.first().map_or(0, Vec::len);
    if n < 2 || walkers == 0 {
        return f64::NAN;
    }
    let mut acf = vec![0.0; n];
    for w in 0..walkers {
        let x: Vec<f64> = chain.iter().map(|s| s[w][k]).collect();
        let mean = x.iter().sum::<f64>() / n as f64;
        let c0: f64 = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
        if c0 <= 0.0 {
            continue;
        }
        for (t, a) in acf.iter_mut().enumerate() {
            let c: f64 = (0..n - t).map(|i| (x[i] - mean) * (x[i + t] - mean)).sum::<f64>() / n as f64;
            *a += c / c0 / walkers as f64;
        }
    }
    let mut tau = 1.0;
    for m in 1..n {
        tau += 2.0 * acf[m];
        if m as f64 >= 5.0 * tau {
            return tau;
        }
    }
    tau
}
