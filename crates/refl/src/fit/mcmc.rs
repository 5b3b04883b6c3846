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
/// standard errors), clipped to the bounds: [`EnsembleSampler`] run to its end in one call.
pub async fn ensemble_sampler(
    objective: &Objective<'_>,
    engine: Engine<'_>,
    x0: &[f64],
    spread: &[f64],
    options: &McmcOptions,
    progress: &mut dyn FnMut(&FitProgress),
    cancel: &CancelToken,
) -> Result<McmcResult, ReflError> {
    let mut sampler = EnsembleSampler::start(objective, engine, x0, spread, options).await?;
    sampler.run_steps(objective, engine, options.steps, progress, cancel).await?;
    sampler.finish()
}

/// The ensemble sampler as a resumable state, so a caller that must return to an event loop (a
/// browser worker, a UI thread) can run it a few steps at a time: [`Self::start`], then
/// [`Self::run_steps`] until [`Self::is_done`] (or a cancel), then [`Self::finish`]. The random
/// stream lives in the state, so any split of the steps gives the same samples as one call.
#[derive(Clone, Debug)]
pub struct EnsembleSampler {
    options: McmcOptions,
    walkers: usize,
    bounds: Vec<[f64; 2]>,
    rng: StdRng,
    pos: Vec<Vec<f64>>,
    chi2: Vec<f64>,
    evaluations: usize,
    accepted: usize,
    proposed: usize,
    /// Positions after each step: `[step][walker][dim]`.
    chain: Vec<Vec<Vec<f64>>>,
    chain_chi2: Vec<Vec<f64>>,
}

impl EnsembleSampler {
    /// Checks the options, places the walkers around `x0` and evaluates them (one batch).
    pub async fn start(objective: &Objective<'_>, engine: Engine<'_>, x0: &[f64], spread: &[f64], options: &McmcOptions) -> Result<Self, ReflError> {
        let dim = objective.dimension();
        let walkers = if options.walkers == 0 { 4 * dim } else { options.walkers };
        if walkers < 2 * dim || walkers % 2 != 0 || x0.len() != dim || spread.len() != dim {
            return Err(ReflError::input("MCMC options", format!("need an even number of walkers ≥ 2 × {dim} and start/spread vectors of length {dim}")));
        }
        if options.burn >= options.steps || options.thin == 0 || !(options.stretch > 1.0) {
            return Err(ReflError::input("MCMC options", "need burn < steps, thin ≥ 1 and stretch > 1"));
        }
        let bounds: Vec<[f64; 2]> = (0..dim).map(|k| objective.bounds(k)).collect();
        let mut rng = StdRng::seed_from_u64(options.seed);
        let pos: Vec<Vec<f64>> = (0..walkers)
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
        let chi2 = objective.chi2_batch(engine, &pos).await?;
        Ok(EnsembleSampler {
            options: *options,
            walkers,
            bounds,
            rng,
            pos,
            chi2,
            evaluations: walkers,
            accepted: 0,
            proposed: 0,
            chain: Vec::with_capacity(options.steps),
            chain_chi2: Vec::with_capacity(options.steps),
        })
    }

    /// Steps taken so far.
    pub fn steps_done(&self) -> usize {
        self.chain.len()
    }

    /// Whether all `options.steps` steps have been taken.
    pub fn is_done(&self) -> bool {
        self.chain.len() >= self.options.steps
    }

    /// Objective evaluations so far (the starting batch included).
    pub fn evaluations(&self) -> usize {
        self.evaluations
    }

    /// Takes up to `n` more steps (fewer at the end of the run or on a cancel); returns how many.
    /// `progress` is called after each step.
    pub async fn run_steps(
        &mut self,
        objective: &Objective<'_>,
        engine: Engine<'_>,
        n: usize,
        progress: &mut dyn FnMut(&FitProgress),
        cancel: &CancelToken,
    ) -> Result<usize, ReflError> {
        let mut taken = 0;
        while taken < n && !self.is_done() && !cancel.is_cancelled() {
            self.step(objective, engine).await?;
            taken += 1;
            let best = self.chi2.iter().copied().fold(f64::INFINITY, f64::min);
            progress(&FitProgress { method: "mcmc", iteration: self.chain.len(), max_iterations: self.options.steps, best_chi2: best, evaluations: self.evaluations });
        }
        Ok(taken)
    }

    /// One stretch-move step of both halves.
    async fn step(&mut self, objective: &Objective<'_>, engine: Engine<'_>) -> Result<(), ReflError> {
        let (walkers, half, a) = (self.walkers, self.walkers / 2, self.options.stretch);
        let dim = self.bounds.len();
        let bounds = &self.bounds;
        let inside = |x: &[f64]| x.iter().zip(bounds).all(|(v, b)| *v >= b[0] && *v <= b[1]);
        for (active, other) in [(0..half, half..walkers), (half..walkers, 0..half)] {
            let mut proposals = Vec::with_capacity(half);
            let mut log_z = Vec::with_capacity(half);
            for j in active.clone() {
                // Drawn at 64-bit width: a usize range samples differently on wasm32, and the same
                // seed must give the same chain in the browser as natively.
                let k = self.rng.gen_range(other.start as u64..other.end as u64) as usize;
                let z = ((a - 1.0) * self.rng.gen::<f64>() + 1.0).powi(2) / a;
                proposals.push(self.pos[k].iter().zip(&self.pos[j]).map(|(xk, xj)| xk + z * (xj - xk)).collect::<Vec<f64>>());
                log_z.push(z.ln());
            }
            let in_bounds: Vec<Vec<f64>> = proposals.iter().filter(|p| inside(p)).cloned().collect();
            let mut values = objective.chi2_batch(engine, &in_bounds).await?.into_iter();
            self.evaluations += in_bounds.len();
            for ((j, p), lz) in active.zip(proposals).zip(log_z) {
                self.proposed += 1;
                if !inside(&p) {
                    continue;
                }
                let c = values.next().unwrap_or(f64::INFINITY);
                let log_ratio = (dim as f64 - 1.0) * lz - 0.5 * (c - self.chi2[j]);
                if c.is_finite() && self.rng.gen::<f64>().ln() < log_ratio {
                    self.pos[j] = p;
                    self.chi2[j] = c;
                    self.accepted += 1;
                }
            }
        }
        self.chain.push(self.pos.clone());
        self.chain_chi2.push(self.chi2.clone());
        Ok(())
    }

    /// The samples after burn-in and thinning and their summary; an error if the run stopped
    /// (cancelled) before the end of burn-in.
    pub fn finish(self) -> Result<McmcResult, ReflError> {
        let (options, chain, chain_chi2) = (self.options, self.chain, self.chain_chi2);
        let dim = self.bounds.len();
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
            acceptance_fraction: self.accepted as f64 / self.proposed.max(1) as f64,
            autocorrelation_time,
            median,
            lower_68,
            upper_68,
            evaluations: self.evaluations,
        })
    }
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
