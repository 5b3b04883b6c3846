//! Differential evolution (Storn & Price), as scipy's `differential_evolution` does it: Latin-hypercube
//! start, best1bin or rand1bin, dithered mutation, binomial crossover, convergence when the spread of
//! the population's χ² falls below `atol + tol·|mean|`. Updating is *deferred*: a whole generation of
//! trial vectors is built first and evaluated as one batch (one GPU dispatch, or all CPU cores).

use rand::rngs::StdRng;
use rand::Rng;
use scatterlab_core::CancelToken;

pub use super::de_run::DeRun;
use super::{FitProgress, Objective};
use crate::{Engine, ReflError};

/// How mutants are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// best + F·(x_r1 − x_r2).
    Best1Bin,
    /// x_r0 + F·(x_r1 − x_r2).
    Rand1Bin,
}

/// Differential-evolution settings (scipy's defaults).
#[derive(Clone, Debug, PartialEq)]
pub struct DeOptions {
    /// Mutation strategy.
    pub strategy: Strategy,
    /// Population size = popsize × number of free parameters (at least 5).
    pub popsize: usize,
    /// Dithering range of the mutation factor F, drawn once per generation.
    pub mutation: (f64, f64),
    /// Crossover probability.
    pub recombination: f64,
    /// Generations to run in this call, counted from a resumed state's (a fresh run's limit).
    pub max_generations: usize,
    /// Relative convergence tolerance on the spread of χ².
    pub tol: f64,
    /// Absolute convergence tolerance.
    pub atol: f64,
    /// Random seed: the base of every generation's seed ([`generation_seed`]).
    pub seed: u64,
}

impl Default for DeOptions {
    fn default() -> Self {
        DeOptions { strategy: Strategy::Best1Bin, popsize: 15, mutation: (0.5, 1.0), recombination: 0.7, max_generations: 1000, tol: 0.01, atol: 0.0, seed: 0 }
    }
}

/// The outcome, including the final population so a run can be resumed.
#[derive(Clone, Debug, PartialEq)]
pub struct DeResult {
    /// Best free-parameter vector.
    pub x: Vec<f64>,
    /// Its χ².
    pub chi2: f64,
    /// Objective evaluations (model curve sets) used.
    pub evaluations: usize,
    /// Generations of this population, those of resumed runs included (the global generation).
    pub generations: usize,
    /// Whether the convergence criterion was met in this run (false: generation limit or cancel).
    pub converged: bool,
    /// Final population (free-parameter vectors) and their χ², for resuming.
    pub population: Vec<Vec<f64>>,
    /// χ² of each member.
    pub energies: Vec<f64>,
}

/// The seed of global generation `generation` of a run seeded with `seed`: generation 0 draws the
/// start population, generation g ≥ 1 the g-th set of trial vectors. It is the (generation + 1)-th
/// output of splitmix64 started at `seed`. Every front end reaches DE through [`DeRun`], which
/// reseeds each generation from this, so a run stopped after n generations and resumed from its
/// [`DeResult`] draws exactly what one uninterrupted run draws (CLI, desktop app, web worker alike).
pub fn generation_seed(seed: u64, generation: usize) -> u64 {
    let mut z = seed.wrapping_add((generation as u64).wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// DE's convergence test (scipy's): every member's χ² is finite and their standard deviation is
/// at most `atol + tol·|mean|`. The one rule every front end stops on ([`DeRun::is_done`]).
pub fn de_converged(energies: &[f64], options: &DeOptions) -> bool {
    let n = energies.len();
    if n == 0 || energies.iter().any(|e| !e.is_finite()) {
        return false;
    }
    let mean = energies.iter().sum::<f64>() / n as f64;
    let std = (energies.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    std <= options.atol + options.tol * mean.abs()
}

/// Runs differential evolution: up to `options.max_generations` generations (counted from
/// `resume`'s, which this run continues), stopping early at convergence ([`de_converged`]) or a
/// cancel. The same as driving a [`DeRun`] step by step, which the interactive front ends do.
pub async fn differential_evolution(
    objective: &Objective<'_>,
    engine: Engine<'_>,
    options: &DeOptions,
    resume: Option<&DeResult>,
    progress: &mut dyn FnMut(&FitProgress),
    cancel: &CancelToken,
) -> Result<DeResult, ReflError> {
    let mut run = DeRun::start(objective, engine, options, resume).await?;
    while !run.is_done() && !cancel.is_cancelled() {
        let p = run.step(objective, engine).await?;
        progress(&p);
    }
    run.finish()
}

/// n points in [0, 1]^dim, one in each of n equal slices per dimension.
pub fn latin_hypercube(n: usize, dim: usize, rng: &mut StdRng) -> Vec<Vec<f64>> {
    let mut pop = vec![vec![0.0; dim]; n];
    for j in 0..dim {
        let mut slots: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            slots.swap(i, index_below(i + 1, rng));
        }
        for (i, s) in slots.into_iter().enumerate() {
            pop[i][j] = (s as f64 + rng.gen::<f64>()) / n as f64;
        }
    }
    pop
}

/// A uniform index in `0..n`, drawn as a u64 so that wasm32 (32-bit `usize`) and 64-bit native
/// builds take the same draws from one seed (rand 0.8 samples a `usize` range at `usize` width).
pub(super) fn index_below(n: usize, rng: &mut StdRng) -> usize {
    rng.gen_range(0..n as u64) as usize
}

/// Index of the smallest value (the first of equals).
pub(super) fn argmin(values: &[f64]) -> usize {
    values.iter().enumerate().fold(0, |best, (i, &v)| if v < values[best] { i } else { best })
}

/// Three distinct indices different from `i`.
pub(super) fn distinct3(n: usize, i: usize, rng: &mut StdRng) -> [usize; 3] {
    let mut out = [usize::MAX; 3];
    let mut k = 0;
    while k < 3 {
        let c = index_below(n, rng);
        if c != i && !out[..k].contains(&c) {
            out[k] = c;
            k += 1;
        }
    }
    out
}
