//! TypeScript declarations of `Scatterlab.fit`'s options, progress reports and result (emitted into
//! `scatterlab_web.d.ts`; web/src/fit.ts declares the same for the wrapper).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_FIT_TYPES: &'static str = r#"
/** Options of `Scatterlab.fit`; every field is optional. */
export interface FitOptions {
  /** "de" (differential evolution + LM polish, default), "lm" (from the model's values) or "mcmc" (DE, LM, ensemble sampler). */
  method?: "de" | "lm" | "mcmc";
  /** Random seed (integer, default 0): one seed gives one result. */
  seed?: number;
  /** DE generations to run (default 1000; the fit stops earlier when DE converges). */
  maxGenerations?: number;
  /** DE population = popsize × free parameters (default 15). */
  popsize?: number;
  /** Sampler steps per walker for "mcmc" (default 2000, a quarter burn-in). */
  steps?: number;
  /** Fit ln R instead of R. */
  log?: boolean;
  /** A previous result's `state`: DE continues from its population, LM starts from its best member. */
  resume?: FitState;
}
/** A progress report, sent after each DE generation, LM iteration and sampler step. */
export interface FitProgress {
  /** The phase: "de", "lm" or "mcmc". */
  method: "de" | "lm" | "mcmc";
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
/** A DE population and its χ², to resume a fit from. */
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
/** The result of a fit: the fields of `scatterlab refl fit`'s output, plus the state to go on from. */
export interface FitResult {
  /** Fitted value and 1σ uncertainty per free parameter (stderr NaN when cancelled before LM). */
  parameters: Record<string, { value: number; stderr: number }>;
  /** χ² at the fitted values. */
  chi2: number;
  /** Data points fitted. */
  n_points: number;
  /** Objective evaluations. */
  evaluations: number;
  /** Wall time, s. */
  seconds: number;
  /** The handle's device. */
  device: ScatterlabDevice;
  /** The method. */
  method: "de" | "lm" | "mcmc";
  /** The engines in words. */
  backend: string;
  /** Whether the fit was cancelled (the values are then the best point reached). */
  cancelled: boolean;
  /** Whether DE met its convergence criterion. */
  converged: boolean;
  /** DE generations run (resumed ones included). */
  generations: number;
  /** The final DE state (absent for "lm"): pass it as `resume` to continue. */
  state?: FitState;
  /** The model file with the fitted values, JSON: fit it with method "lm" to polish. */
  model: string;
  /** The sampler's summary ("mcmc" only). */
  mcmc?: { acceptance_fraction: number; autocorrelation_time: number[]; lower_68: number[]; upper_68: number[]; lm_value: number[]; lm_stderr: number[]; samples: number; sample_values: Float64Array };
}
"#;
