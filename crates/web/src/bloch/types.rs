//! TypeScript declarations of `blochSimulate`, `blochSimulateCases`, `blochRocking` and
//! `blochRefine` (emitted into `scatterlab_web.d.ts`; web/src/bloch.ts declares the same for the
//! wrapper).

use wasm_bindgen::prelude::*;

#[wasm_bindgen(typescript_custom_section)]
const TS_BLOCH_TYPES: &'static str = r#"
/** Options of `Scatterlab.blochSimulate` (the flags of `scatterlab bloch simulate --cif …`). NaN, ∞, a wrong type or an unknown key is an error naming the option. */
export interface BlochSimulateOptions {
  /** Accelerating voltage, kV. */
  kv: number;
  /** Zone axis [u, v, w] (integers; real-space direction along the beam, towards the gun). */
  zone: [number, number, number];
  /** Crystal thicknesses, Å (at least one). */
  thicknesses: ArrayLike<number>;
  /** Beam radius |g| ≤ gMax, Å⁻¹ (default 1.6). */
  gMax?: number;
  /** Excitation-error radius |Sg| ≤ sgMax, Å⁻¹ (default 0.04). */
  sgMax?: number;
  /** Where it runs: "cpu" (f64, default, whatever the handle's device) or "gpu" (WebGPU f32; no adapter rejects naming device "gpu"). */
  device?: "cpu" | "gpu";
  /** CPU: "expm" (default, any case) or "eigen" (one decomposition for all thicknesses; no absorption); GPU: "taylor" (default, its only one). */
  solver?: "eigen" | "expm" | "taylor";
  /** Tilts [tx, ty] in degrees about lab x then y (default [0, 0]). */
  tilt?: [number, number];
  /** Reflection [h, k, l] whose direction (made perpendicular to the zone) is lab +x (default: the CLI's choice). */
  reference?: [number, number, number];
  /** Absorptive structure factors ("expm" only). */
  absorption?: boolean;
  /** The crystal's name in the case id (default "crystal"). */
  name?: string;
}
/** Result of `Scatterlab.blochSimulate`. */
export interface BlochSimulation {
  /** Case id, `{name}-{kv}kV-[u,v,w]`. */
  id: string;
  /** Beams (h, k, l), n × 3 row-major, sorted by (h, k, l). */
  hkl: Int32Array;
  /** Intensities, thickness-major: `intensities[t * nBeams + j]` (fractions of the incident beam). */
  intensities: Float64Array;
  /** The thicknesses, Å. */
  thicknesses: Float64Array;
  /** Lab-frame (g_x, g_y) of each beam, Å⁻¹, n × 2 row-major. */
  gXY: Float64Array;
  /** Number of beams. */
  nBeams: number;
  /** The propagator that ran. */
  solver: "eigen" | "expm" | "taylor";
  /** The device that ran it. */
  device: "cpu" | "gpu";
  /** "cpu f64", or the GPU adapter and wgpu backend. */
  backend: string;
  /** Wall time, s. */
  seconds: number;
}
/** Options of `Scatterlab.blochSimulateCases`; every field is optional. */
export interface BlochCasesOptions {
  /** "cpu" (default) or "gpu". */
  device?: "cpu" | "gpu";
  /** The propagator (the device's default). */
  solver?: "eigen" | "expm" | "taylor";
  /** The case ids to run, in this order (default all). */
  ids?: string[];
}
/** One case of `Scatterlab.blochSimulateCases`: its intensities (thickness-major), or its error. */
export type BlochCaseResult =
  | { id: string; hkl: Int32Array; intensities: Float64Array; thicknesses: Float64Array; nBeams: number; device: "cpu" | "gpu"; solver: "eigen" | "expm" | "taylor"; backend: string; error?: undefined }
  | { id: string; error: string };
/** Tilt offsets in degrees about lab x or y (default "x"), added to `tilt`. */
export type BlochTiltSweep =
  | { axis?: "x" | "y"; fromDeg: number; toDeg: number; n: number }
  | { axis?: "x" | "y"; anglesDeg: ArrayLike<number> };
/** Options of `Scatterlab.blochRocking`: `blochSimulate`'s and the sweep. */
export interface BlochRockingOptions extends BlochSimulateOptions {
  tilts: BlochTiltSweep;
}
/** Progress of `Scatterlab.blochRocking`, after every tilt. */
export interface BlochRockingProgress {
  done: number;
  total: number;
  seconds: number;
}
/** Result of `Scatterlab.blochRocking`: intensities [tilt][thickness][beam] on the union of the tilts' beams (0 where absent). */
export interface BlochRocking {
  id: string;
  hkl: Int32Array;
  intensities: Float64Array;
  /** The offsets solved, degrees. */
  tilts: Float64Array;
  thicknesses: Float64Array;
  nBeams: number;
  nTilts: number;
  axis: "x" | "y";
  device: "cpu" | "gpu";
  solver: "eigen" | "expm" | "taylor";
  backend: string;
  /** Whether an abort stopped the sweep early. */
  cancelled: boolean;
  seconds: number;
}
/** Options of `Scatterlab.blochRefine`; every field is optional. */
export interface BlochRefineOptions {
  /** "lm" (default), "adam" (diffBloch's optimiser and learning rate) or "lbfgs". */
  optimizer?: "lm" | "adam" | "lbfgs";
  /** Most iterations (epochs for "adam"); default 50, "adam": the YAML's refinement.steps. */
  maxIterations?: number;
  /** The experiment YAML's name among the files (default "experiment.yaml", else the only YAML). */
  experiment?: string;
}
/** A progress report: after the start point (iteration 0) and after every iteration. */
export interface BlochRefineProgress {
  iteration: number;
  maxIterations: number;
  /** Model evaluations so far (each solves every frame). */
  evaluations: number;
  /** Mean per-frame wR2 now. */
  wR2: number;
  /** The optimiser's cost now (Σ r² for "lm"). */
  cost: number;
  /** Seconds since the call started. */
  seconds: number;
}
/** `result.json` of `scatterlab bloch refine`. */
export interface BlochRefineResultJson {
  wR2: number;
  R_obs: number;
  start: { wR2: number; R_obs: number };
  per_frame: { id: number; n: number; wR2: number; R_obs: number; scale: number }[];
  parameters: Record<string, { value: number; stderr: number | null }>;
  correlations: number[][] | null;
  parameter_order: string[];
  atoms: { label: string; element: string; frac: [number, number, number]; u_iso: number; u_aniso?: number[]; occupancy: number }[];
  iterations: number;
  evaluations: number;
  /** "converged", "stationary", "max_iterations", or "cancelled". */
  stop: string;
  seconds: number;
  device: string;
  optimizer: string;
  /** What it minimised ("chi2" or "wr2"), where the engine reports it. */
  objective?: string;
  version: string;
  history: { iteration: number; evaluations: number; cost: number; wR2: number; max_shift_su: number | null }[];
}
/** Result of `Scatterlab.blochRefine`: the three files `scatterlab bloch refine` writes. */
export interface BlochRefineResult {
  result: BlochRefineResultJson;
  /** refined.cif. */
  refinedCif: string;
  /** observed_vs_calculated.csv. */
  csv: string;
  /** Whether the run was cancelled (the structure is then the last one reached). */
  cancelled: boolean;
  /** Non-fatal findings while loading. */
  warnings: string[];
}
"#;
