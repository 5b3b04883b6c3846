//! Differential evolution as a resumable state machine: [`DeRun::start`], then one
//! [`DeRun::step`] per generation until [`DeRun::is_done`].
//!
//! Why a state machine: the CLI runs DE in one call, while the desktop app and the web worker
//! must return to their event loop between generations. All of them drive this one type, so they
//! share the random stream, the stop rule and the counts. Each generation draws from its own
//! generator, seeded by [`generation_seed`]`(seed, global generation)`, and the state between
//! generations is exactly a [`DeResult`] (population in parameter units, χ², counts): a run
//! stopped anywhere and resumed from its result continues bit for bit as if never stopped.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::de::{argmin, de_converged, distinct3, generation_seed, latin_hypercube, DeOptions, DeResult, Strategy};
use super::{FitProgress, Objective};
use crate::{Engine, ReflError};

/// A differential-evolution run between generations.
#[derive(Clone, Debug)]
pub struct DeRun {
    options: DeOptions,
    bounds: Vec<[f64; 2]>,
    /// The population and its χ² after the last generation (NaN χ² stored as +∞).
    state: DeResult,
    /// The global generation this run started from (a resumed state's).
    first_generation: usize,
}

impl DeRun {
    /// Checks the options, then continues `resume` (its population, χ² and counts), or draws and
    /// evaluates a Latin-hypercube start population (popsize × free parameters, at least 5) with
    /// the seed of generation 0. A resume with an empty population starts fresh.
    pub async fn start(objective: &Objective<'_>, engine: Engine<'_>, options: &DeOptions, resume: Option<&DeResult>) -> Result<DeRun, ReflError> {
        let dim = objective.dimension();
        let bounds: Vec<[f64; 2]> = (0..dim).map(|k| objective.bounds(k)).collect();
        if let Some(k) = bounds.iter().position(|b| !b[0].is_finite() || !b[1].is_finite()) {
            return Err(ReflError::input(format!("parameter '{}'", objective.names()[k]), "differential evolution needs finite bounds"));
        }
        // Written so that NaN settings fail too.
        let (lo, hi) = options.mutation;
        if !((0.0..=1.0).contains(&options.recombination) && lo > 0.0 && lo <= hi && hi < 2.0) {
            return Err(ReflError::input("differential evolution options", "recombination must be in [0, 1] and mutation 0 < lo ≤ hi < 2"));
        }
        let (population, energies, evaluations, generations) = match resume {
            Some(r) if !r.population.is_empty() => {
                if let Some((i, x)) = r.population.iter().enumerate().find(|(_, x)| x.len() != dim) {
                    return Err(ReflError::input(format!("differential evolution resume population[{i}]"), format!("has {} values for {dim} free parameters", x.len())));
                }
                if r.energies.len() != r.population.len() {
                    return Err(ReflError::input("differential evolution resume", format!("{} members but {} χ² values", r.population.len(), r.energies.len())));
                }
                (r.population.clone(), r.energies.clone(), r.evaluations, r.generations)
            }
            _ => {
                let n = (options.popsize * dim).max(5);
                let mut rng = StdRng::seed_from_u64(generation_seed(options.seed, 0));
                let population: Vec<Vec<f64>> = latin_hypercube(n, dim, &mut rng).iter().map(|u| to_x(&bounds, u)).collect();
                let energies = objective.chi2_batch(engine, &population).await?;
                (population, energies, n, 0)
            }
        };
        let n = population.len();
        if n < 4 {
            return Err(ReflError::input("differential evolution population", format!("needs at least 4 members, has {n}")));
        }
        let energies: Vec<f64> = energies.into_iter().map(sanitize).collect();
        if energies.len() != n {
            return Err(ReflError::input("differential evolution", format!("{n} members but {} χ² values from the objective", energies.len())));
        }
        let best = argmin(&energies);
        let state = DeResult { x: population[best].clone(), chi2: energies[best], evaluations, generations, converged: false, population, energies };
        Ok(DeRun { options: options.clone(), bounds, state, first_generation: generations })
    }

    /// The stop rule of every front end: converged in this run, or `max_generations` generations
    /// run since [`DeRun::start`]. (A cancel is the caller's to check between steps.)
    pub fn is_done(&self) -> bool {
        self.state.converged || self.generations_this_run() >= self.options.max_generations
    }

    /// Generations run since [`DeRun::start`].
    pub fn generations_this_run(&self) -> usize {
        self.state.generations - self.first_generation
    }

    /// The state after the last generation: best member, population, counts.
    pub fn state(&self) -> &DeResult {
        &self.state
    }

    /// Runs one generation: builds every trial vector from the generation's own seed, evaluates
    /// them as one batch, keeps each trial that is no worse than its parent, then applies the
    /// convergence test. Returns the generation's progress report (iteration = generations run in
    /// this run, of `max_generations`).
    pub async fn step(&mut self, objective: &Objective<'_>, engine: Engine<'_>) -> Result<FitProgress, ReflError> {
        let dim = self.bounds.len();
        if objective.dimension() != dim {
            return Err(ReflError::input("differential evolution step", format!("the objective has {} free parameters, the run {dim}", objective.dimension())));
        }
        let o = &self.options;
        let generation = self.state.generations + 1;
        let mut rng = StdRng::seed_from_u64(generation_seed(o.seed, generation));
        // Unit-cube coordinates recomputed from the stored parameter values every generation, so
        // the state between generations is the DeResult alone (resuming changes nothing).
        let pop: Vec<Vec<f64>> = self.state.population.iter().map(|x| to_u(&self.bounds, x)).collect();
        let n = pop.len();
        let best = argmin(&self.state.energies);
        let f = rng.gen_range(o.mutation.0..=o.mutation.1);
        let trials: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                let [r0, r1, r2] = distinct3(n, i, &mut rng);
                let base = match o.strategy {
                    Strategy::Best1Bin => best,
                    Strategy::Rand1Bin => r0,
                };
                let j_rand = super::de::index_below(dim, &mut rng);
                (0..dim)
                    .map(|j| {
                        if j == j_rand || rng.gen::<f64>() < o.recombination {
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
        let xs: Vec<Vec<f64>> = trials.iter().map(|u| to_x(&self.bounds, u)).collect();
        let trial_energies = objective.chi2_batch(engine, &xs).await?;
        if trial_energies.len() != n {
            return Err(ReflError::input("differential evolution", format!("{n} trials but {} χ² values from the objective", trial_energies.len())));
        }
        for (i, (x, e)) in xs.into_iter().zip(trial_energies).enumerate() {
            let e = sanitize(e);
            if e <= self.state.energies[i] {
                self.state.population[i] = x;
                self.state.energies[i] = e;
            }
        }
        let best = argmin(&self.state.energies);
        self.state.x.clone_from(&self.state.population[best]);
        self.state.chi2 = self.state.energies[best];
        self.state.evaluations += n;
        self.state.generations = generation;
        self.state.converged = de_converged(&self.state.energies, o);
        Ok(FitProgress { method: "de", iteration: self.generations_this_run(), max_iterations: o.max_generations, best_chi2: self.state.chi2, evaluations: self.state.evaluations })
    }

    /// The result: the best member and the population to resume from. An error when no member
    /// has a finite χ².
    pub fn finish(self) -> Result<DeResult, ReflError> {
        if !self.state.chi2.is_finite() {
            return Err(ReflError::input("differential evolution", "no population member has a finite χ²"));
        }
        Ok(self.state)
    }
}

/// A NaN χ² ranks last.
fn sanitize(e: f64) -> f64 {
    if e.is_nan() {
        f64::INFINITY
    } else {
        e
    }
}

fn to_x(bounds: &[[f64; 2]], u: &[f64]) -> Vec<f64> {
    u.iter().zip(bounds).map(|(u, b)| b[0] + u * (b[1] - b[0])).collect()
}

fn to_u(bounds: &[[f64; 2]], x: &[f64]) -> Vec<f64> {
    x.iter().zip(bounds).map(|(x, b)| ((x - b[0]) / (b[1] - b[0])).clamp(0.0, 1.0)).collect()
}
