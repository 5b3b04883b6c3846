//! Differential evolution (Storn & Price), as scipy's `differential_evolution` does it: Latin-hypercube
//! start, best1bin or rand1bin, dithered mutation, binomial crossover, convergence when the spread of
//! the population's χ² falls below `atol + tol·|mean|`. Updating is *deferred*: a whole generation of
//! trial vectors is built first and evaluated as one batch (one GPU dispatch, or all CPU cores).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scatterlab_core::CancelToken;

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
    /// Maximum number of generations.
    pub max_generations: usize,
    /// Relative convergence tolerance on the spread of χ².
    pub tol: f64,
    /// Absolute convergence tolerance.
    pub atol: f64,
    /// Random seed.
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
    /// Generations run.
    pub generations: usize,
    /// Whether the convergence criterion was met (false: generation limit).
    pub converged: bool,
    /// Final population (free-parameter vectors) and their χ², for resuming.
    pub population: Vec<Vec<f64>>,
    /// χ² of each member.
    pub energies: Vec<f64>,
}

/// Runs differential evolution. `resume` continues from a previous result's population.
pub async fn differential_evolution(
    objective: &Objective<'_>,
    engine: Engine<'_>,
    options: &DeOptions,
    resume: Option<&DeResult>,
    progress: &mut dyn FnMut(&FitProgress),
    cancel: &CancelToken,
) -> Result<DeResult, ReflError> {
    let dim = objective.dimension();
    let bounds: Vec<[f64; 2]> = (0..dim).map(|k| objective.bounds(k)).collect();
    if let Some(k) = bounds.iter().position(|b| !(b[0].is_finite() && b[1].is_finite())) {
        return Err(ReflError::input(format!("parameter '{}'", objective.names()[k]), "differential evolution needs finite bounds"));
    }
    if !(0.0..=1.0).contains(&options.recombination) || !(options.mutation.0 > 0.0 && options.mutation.0 <= options.mutation.1 && options.mutation.1 < 2.0) {
        return Err(ReflError::input("differential evolution options", "recombination must be in [0, 1] and mutation 0 < lo ≤ hi < 2"));
    }
    let to_x = |u: &[f64]| -> Vec<f64> { u.iter().zip(&bounds).map(|(u, b)| b[0] + u * (b[1] - b[0])).collect() };
    let to_u = |x: &[f64]| -> Vec<f64> { x.iter().zip(&bounds).map(|(x, b)| ((x - b[0]) / (b[1] - b[0])).clamp(0.0, 1.0)).collect() };
    let mut rng = StdRng::seed_from_u64(options.seed);

    let (mut pop, mut energies, mut evaluations) = match resume {
        Some(r) if !r.population.is_empty() && r.population.iter().all(|x| x.len() == dim) => {
            (r.population.iter().map(|x| to_u(x)).collect::<Vec<_>>(), r.energies.clone(), r.evaluations)
        }
        _ => {
            let n = (options.popsize * dim).max(5);
            let pop = latin_hypercube(n, dim, &mut rng);
            let xs: Vec<Vec<f64>> = pop.iter().map(|u| to_x(u)).collect();
            let e = objective.chi2_batch(engine, &xs).await?;
            (pop, e, n)
        }
    };
    let n = pop.len();
    if n < 4 {
        return Err(ReflError::input("differential evolution population", format!("needs at least 4 members, has {n}")));
    }
    let sanitize = |e: f64| if e.is_nan() { f64::INFINITY } else { e };
    energies.iter_mut().for_each(|e| *e = sanitize(*e));
    let mut best = argmin(&energies);
    let mut converged = false;
    let mut generation = 0;
    while generation < options.max_generations {
        if cancel.is_cancelled() {
            break;
        }
        generation += 1;
        let f = rng.gen_range(options.mutation.0..=options.mutation.1);
        let trials: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                let [r0, r1, r2] = distinct3(n, i, &mut rng);
                let base = match options.strategy {
                    Strategy::Best1Bin => best,
                    Strategy::Rand1Bin => r0,
                };
                let j_rand = rng.gen_range(0..dim);
                (0..dim)
                    .map(|j| {
                        if j == j_rand || rng.gen::<f64>() < options.recombination {
                            let v = pop[base][j] + f * (pop[r1][j] - pop[r2][j]);
                            if (0.0..=1.0).contains(&v) {
                                v
                            } else {
                                rng.gen::<f64>()
                            }
                        } else {
                            pop[i][j]
                        }
                    })
                    .collect()
            })
            .collect();
        let xs: Vec<Vec<f64>> = trials.iter().map(|u| to_x(u)).collect();
        let trial_energies = objective.chi2_batch(engine, &xs).await?;
        evaluations += n;
        for (i, (u, e)) in trials.into_iter().zip(trial_energies).enumerate() {
            let e = sanitize(e);
            if e <= energies[i] {
                pop[i] = u;
                energies[i] = e;
            }
        }
        best = argmin(&energies);
        progress(&FitProgress { method: "de", iteration: generation, max_iterations: options.max_generations, best_chi2: energies[best], evaluations });
        let finite: Vec<f64> = energies.iter().copied().filter(|e| e.is_finite()).collect();
        if finite.len() == n {
            let mean = finite.iter().sum::<f64>() / n as f64;
            let std = (finite.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
            if std <= options.atol + options.tol * mean.abs() {
                converged = true;
                break;
            }
        }
    }
    if !energies[best].is_finite() {
        return Err(ReflError::input("differential evolution", "no population member has a finite χ²"));
    }
    Ok(DeResult {
        x: to_x(&pop[best]),
        chi2: energies[best],
        evaluations,
        generations: generation,
        converged,
        population: pop.iter().map(|u| to_x(u)).collect(),
        energies,
    })
}

/// n points in [0, 1]^dim, one in each of n equal slices per dimension.
pub fn latin_hypercube(n: usize, dim: usize, rng: &mut StdRng) -> Vec<Vec<f64>> {
    let mut pop = vec![vec![0.0; dim]; n];
    for j in 0..dim {
        let mut slots: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            slots.swap(i, rng.gen_range(0..=i));
        }
        for (i, s) in slots.into_iter().enumerate() {
            pop[i][j] = (s as f64 + rng.gen::<f64>()) / n as f64;
        }
    }
    pop
}

fn argmin(values: &[f64]) -> usize {
    values.iter().enumerate().fold(0, |best, (i, &v)| if v < values[best] { i } else { best })
}

/// Three distinct indices different from `i`.
fn distinct3(n: usize, i: usize, rng: &mut StdRng) -> [usize; 3] {
    let mut out = [usize::MAX; 3];
    let mut k = 0;
    while k < 3 {
        let c = rng.gen_range(0..n);
        if c != i && !out[..k].contains(&c) {
            out[k] = c;
            k += 1;
        }
    }
    out
}
