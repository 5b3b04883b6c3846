//! Differential evolution as a resumable state machine: [`DeRun::start`], then one
//! [`DeRun::step`] per generation until [`DeRun::is_done`]. A caller that evaluates χ² itself
//! splits both: [`DeRun::start_population`] / [`DeRun::start_evaluated`], [`DeRun::trials`] /
//! [`DeRun::accept`].
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
        match resume {
            Some(r) if !r.population.is_empty() => {
                let bounds = checked_bounds(objective, options)?;
                let dim = bounds.len();
                if let Some((i, x)) = r.population.iter().enumerate().find(|(_, x)| x.len() != dim) {
                    return Err(ReflError::input(format!("differential evolution resume population[{i}]"), format!("has {} values for {dim} free parameters", x.len())));
                }
                if r.energies.len() != r.population.len() {
                    return Err(ReflError::input("differential evolution resume", format!("{} members but {} χ² values", r.population.len(), r.energies.len())));
                }
                DeRun::from_state(options, bounds, r.population.clone(), r.energies.clone(), r.evaluations, r.generations)
            }
            _ => {
                let population = DeRun::start_population(objective, options)?;
                let energies = objective.chi2_batch(engine, &population).await?;
                DeRun::start_evaluated(objective, options, population, energies)
            }
        }
    }

    /// The first half of a fresh [`DeRun::start`] for callers that evaluate χ² themselves (the
    /// Python `map=` hook spreads them over Dask workers): checks the options and returns the
    /// Latin-hypercube start population in parameter units, drawn with the seed of generation 0.
    /// Pass it with its χ² (same order) to [`DeRun::start_evaluated`].
    pub fn start_population(objective: &Objective<'_>, options: &DeOptions) -> Result<Vec<Vec<f64>>, ReflError> {
        let bounds = checked_bounds(objective, options)?;
        let n = (options.popsize * bounds.len()).max(5);
        let mut rng = StdRng::seed_from_u64(generation_seed(options.seed, 0));
        Ok(latin_hypercube(n, bounds.len(), &mut rng).iter().map(|u| to_x(&bounds, u)).collect())
    }

    /// The second half of a fresh start: the run whose generation 0 is `population` (from
    /// [`DeRun::start_population`] with the same options) with χ² `energies`, one per member in
    /// order. The same state [`DeRun::start`] reaches, so the run continues identically.
    pub fn start_evaluated(objective: &Objective<'_>, options: &DeOptions, population: Vec<Vec<f64>>, energies: Vec<f64>) -> Result<DeRun, ReflError> {
        let bounds = checked_bounds(objective, options)?;
        if let Some((i, x)) = population.iter().enumerate().find(|(_, x)| x.len() != bounds.len()) {
            return Err(ReflError::input(format!("differential evolution start population[{i}]"), format!("has {} values for {} free parameters", x.len(), bounds.len())));
        }
        let n = population.len();
        DeRun::from_state(options, bounds, population, energies, n, 0)
    }

    /// The run at a given state (NaN χ² stored as +∞), after checking its counts.
    fn from_state(options: &DeOptions, bounds: Vec<[f64; 2]>, population: Vec<Vec<f64>>, energies: Vec<f64>, evaluations: usize, generations: usize) -> Result<DeRun, ReflError> {
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

    /// Runs one generation: [`DeRun::trials`], their χ² as one batch, then [`DeRun::accept`].
    /// Returns the generation's progress report (iteration = generations run in this run, of
    /// `max_generations`).
    pub async fn step(&mut self, objective: &Objective<'_>, engine: Engine<'_>) -> Result<FitProgress, ReflError> {
        let dim = self.bounds.len();
        if objective.dimension() != dim {
            return Err(ReflError::input("differential evolution step", format!("the objective has {} free parameters, the run {dim}", objective.dimension())));
        }
        let trials = self.trials();
        let energies = objective.chi2_batch(engine, &trials).await?;
        self.accept(trials, energies)
    }

    /// The trial vectors of the next generation (parameter units, one per member in population
    /// order), built from that generation's own seed and the current population only, so the
    /// same state always gives the same trials. For callers that evaluate χ² themselves (the
    /// Python `map=` hook); hand them back with their χ² to [`DeRun::accept`].
    pub fn trials(&self) -> Vec<Vec<f64>> {
        let o = &self.options;
        let dim = self.bounds.len();
        let mut rng = StdRng::seed_from_u64(generation_seed(o.seed, self.state.generations + 1));
        // Unit-cube coordinates recomputed from the stored parameter values every generation, so
        // the state between generations is the DeResult alone (resuming changes nothing).
        let pop: Vec<Vec<f64>> = self.state.population.iter().map(|x| to_u(&self.bounds, x)).collect();
        let n = pop.len();
        let best = argmin(&self.state.energies);
        let f = rng.gen_range(o.mutation.0..=o.mutation.1);
        (0..n)
            .map(|i| {
                let [r0, r1, r2] = distinct3(n, i, &mut rng);
                let base = match o.strategy {
                    Strategy::Best1Bin => best,
                    Strategy::Rand1Bin => r0,
                };
                let j_rand = super::de::index_below(dim, &mut rng);
                let u: Vec<f64> = (0..dim)
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
                    .collect();
                to_x(&self.bounds, &u)
            })
            .collect()
    }

    /// Completes the generation [`DeRun::trials`] built: `trials` (those vectors) with their χ²
    /// `energies`, in the same order. Keeps each trial no worse than its parent (a NaN χ² ranks
    /// last), counts the evaluations and the generation, applies the convergence test and
    /// returns the generation's progress report. A count or width that does not match the
    /// population is an error and leaves the run unchanged.
    pub fn accept(&mut self, trials: Vec<Vec<f64>>, energies: Vec<f64>) -> Result<FitProgress, ReflError> {
        let (n, dim) = (self.state.population.len(), self.bounds.len());
        if trials.len() != n {
            return Err(ReflError::input("differential evolution", format!("{} trials for {n} population members", trials.len())));
        }
        if let Some((i, x)) = trials.iter().enumerate().find(|(_, x)| x.len() != dim) {
            return Err(ReflError::input(format!("differential evolution trial[{i}]"), format!("has {} values for {dim} free parameters", x.len())));
        }
        if energies.len() != n {
            return Err(ReflError::input("differential evolution", format!("{n} trials but {} χ² values from the objective", energies.len())));
        }
        let o = &self.options;
        for (i, (x, e)) in trials.into_iter().zip(energies).enumerate() {
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
        self.state.generations += 1;
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

/// The bounds of every free parameter, after checking they are finite and the options valid.
fn checked_bounds(objective: &Objective<'_>, options: &DeOptions) -> Result<Vec<[f64; 2]>, ReflError> {
    let bounds: Vec<[f64; 2]> = (0..objective.dimension()).map(|k| objective.bounds(k)).collect();
    if let Some(k) = bounds.iter().position(|b| !b[0].is_finite() || !b[1].is_finite()) {
        return Err(ReflError::input(format!("parameter '{}'", objective.names()[k]), "differential evolution needs finite bounds"));
    }
    // Written so that NaN settings fail too.
    let (lo, hi) = options.mutation;
    if !((0.0..=1.0).contains(&options.recombination) && lo > 0.0 && lo <= hi && hi < 2.0) {
        return Err(ReflError::input("differential evolution options", "recombination must be in [0, 1] and mutation 0 < lo ≤ hi < 2"));
    }
    Ok(bounds)
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
