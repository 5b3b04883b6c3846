/**
 * The types of {@link Scatterlab.fit} (re-exported by the package's entry point).
 * @module
 */
import type { Scatterlab, ScatterlabDevice } from "./index.js";

/** A fitting method: `"de"` (differential evolution + LM polish), `"lm"` (Levenberg–Marquardt), `"mcmc"` (DE, LM, ensemble sampler). */
export type FitMethod = "de" | "lm" | "mcmc";

/** Options of {@link Scatterlab.fit}; every field is optional. */
export interface FitOptions {
  /** The method (default `"de"`). `"lm"` starts from the model's values, or from the best member of `resume`. */
  method?: FitMethod;
  /** Random seed, a whole number (default 0): one seed gives one result. */
  seed?: number;
  /** DE generations to run (default 1000; DE stops earlier when it converges). */
  maxGenerations?: number;
  /** DE population = popsize × free parameters (default 15). */
  popsize?: number;
  /** Sampler steps per walker for `"mcmc"` (default 2000, a quarter of them burn-in). */
  steps?: number;
  /** Fit ln R instead of R. */
  log?: boolean;
  /** A previous result's `state`: DE continues from its population, LM starts from its best member. */
  resume?: FitState;
  /**
   * Aborting it cancels the fit: it stops at its next pause (within a DE generation plus ~20 ms) and
   * resolves with its best point, `cancelled: true` and its `state`. LM runs to its end once started;
   * the MCMC sampler stops at its next step (before the end of burn-in the result is LM's).
   */
  signal?: AbortSignal;
}

/** A progress report, after each DE generation, LM iteration and sampler step. */
export interface FitProgress {
  /** The running phase. */
  method: FitMethod;
  /** Generation, iteration or step within the phase (from 1). */
  iteration: number;
  /** Its limit. */
  maxIterations: number;
  /** Best χ² so far. */
  bestChi2: number;
  /** Objective evaluations so far (all phases, a resumed state's included). */
  evaluations: number;
  /** Seconds since the fit started. */
  seconds: number;
  /** Evaluations of this fit per second. */
  evaluationsPerSecond: number;
}

/** A DE population and its χ², to resume a fit from (plain arrays: it survives `JSON.stringify`). */
export interface FitState {
  /** Free-parameter vectors, one per member. */
  population: number[][];
  /** χ² of each member. */
  energies: number[];
  /** Evaluations so far. */
  evaluations: number;
  /** Generations so far. */
  generations: number;
}

/** The result of {@link Scatterlab.fit}: the fields of `scatterlab refl fit`'s output, plus what is needed to go on. */
export interface FitResult {
  /** Fitted value and 1σ uncertainty per free parameter (`stderr` NaN when cancelled before LM ran). */
  parameters: Record<string, { value: number; stderr: number }>;
  /** χ² at the fitted values. */
  chi2: number;
  /** Data points fitted. */
  n_points: number;
  /** Objective evaluations. */
  evaluations: number;
  /** Wall time, s. */
  seconds: number;
  /** The device of the instance (LM always runs on the CPU, f64). */
  device: ScatterlabDevice;
  /** The method. */
  method: FitMethod;
  /** The engines in words. */
  backend: string;
  /** Whether the fit was cancelled (the values are then the best point reached). */
  cancelled: boolean;
  /** Whether DE met its convergence criterion. */
  converged: boolean;
  /** DE generations run, resumed ones included. */
  generations: number;
  /** The final DE state (absent for `"lm"`): pass it as `resume` to continue. */
  state?: FitState;
  /** The model file with the fitted values, JSON: fit it with `method: "lm"` to polish. */
  model: string;
  /** The sampler's summary (`"mcmc"` only). */
  mcmc?: {
    acceptance_fraction: number;
    autocorrelation_time: number[];
    lower_68: number[];
    upper_68: number[];
    lm_value: number[];
    lm_stderr: number[];
    /** Kept samples. */
    samples: number;
    /** Their values, row-major: `samples` rows of one value per parameter (in the order of `parameters`). */
    sample_values: Float64Array;
  };
}
