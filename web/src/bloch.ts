/**
 * Bloch-wave electron diffraction in the package's worker:
 * - {@link Scatterlab.blochSimulate} runs one static zone-axis case as `scatterlab bloch simulate
 *   --cif … --kv … --zone … --thickness …` does;
 * - {@link Scatterlab.blochSimulateCases} runs the cases of a cases file (the CLI's
 *   `scatterlab bloch simulate <cases.json>` format, e.g. the fixture's `reference.json` with its
 *   explicit orientation matrices), picked by id;
 * - {@link Scatterlab.blochRocking} runs a tilt series of the zone-axis case (each tilt its own
 *   static case, one tilt per worker turn: progress, cancel), on the union of the tilts' beams;
 * - {@link Scatterlab.blochRefine} refines a diffBloch experiment as `scatterlab bloch refine`
 *   does, one iteration per worker turn (progress, cancel).
 *
 * Simulations run on `options.device`: `"cpu"` (f64, the default whatever the instance's device)
 * or `"gpu"` (the f32 WGSL kernel on the worker's WebGPU device, Taylor propagation). It is never
 * substituted: without a WebGPU adapter a `"gpu"` call rejects with an error naming device
 * "gpu". Every result's `device` says what ran. Refinement runs on the CPU.
 *
 * ```ts
 * const sim = await lab.blochSimulate(cifText, { kv: 200, zone: [0, 0, 1], thicknesses: [100, 200] });
 * const I = sim.intensities.subarray(1 * sim.nBeams, 2 * sim.nBeams);    // the 200 Å row
 * const [si] = await lab.blochSimulateCases(referenceJsonText, { device: "gpu", ids: ["Si-200kV-00"] });
 * const controller = new AbortController();
 * const rocking = await lab.blochRocking(cifText, { kv: 200, zone: [0, 0, 1], thicknesses: [300],
 *   tilts: { axis: "x", fromDeg: -1, toDeg: 1, n: 41 } }, (p) => console.log(p.done, p.total), controller.signal);
 * const { result, refinedCif } = await lab.blochRefine(input.files, { maxIterations: 10 },
 *   (p) => console.log(p.iteration, p.wR2), controller.signal);
 * ```
 * @module
 */
import type { Scatterlab } from "./index.js";

/** The propagator: on the CPU `"expm"` (default, any case) or `"eigen"` (one decomposition for all thicknesses; no absorption); on the GPU `"taylor"` (f32, its only one). */
export type BlochSolver = "eigen" | "expm" | "taylor";

/** Where a simulation runs: `"cpu"` (f64, the default) or `"gpu"` (f32 WGSL on the worker's WebGPU device; never substituted). */
export type BlochDevice = "cpu" | "gpu";

/** What ran a simulation: its device, propagator and backend in words (`"cpu f64"`, or the adapter). */
export interface BlochEngineInfo {
  /** The device that ran it. */
  device: BlochDevice;
  /** The propagator that ran. */
  solver: BlochSolver;
  /** `"cpu f64"`, or the GPU adapter and wgpu backend. */
  backend: string;
}

/** Options of {@link Scatterlab.blochSimulate}. NaN, ∞, a wrong type or an unknown key rejects naming the option. */
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
  /** Where it runs (default `"cpu"`, whatever the instance's device). */
  device?: BlochDevice;
  /** The propagator: the device's default (`"expm"` on the CPU, `"taylor"` on the GPU); one the device cannot run rejects. */
  solver?: BlochSolver;
  /** Tilts [tx, ty] in degrees about lab x then y (default [0, 0]). */
  tilt?: [number, number];
  /** Reflection [h, k, l] whose direction (made perpendicular to the zone) is lab +x (default: the CLI's choice; only matters with `tilt`). */
  reference?: [number, number, number];
  /** Absorptive structure factors (`"expm"` only). */
  absorption?: boolean;
  /** The crystal's name in the case id (default `"crystal"`). */
  name?: string;
}

/** Result of {@link Scatterlab.blochSimulate} (its arrays transferred: yours to keep). */
export interface BlochSimulation extends BlochEngineInfo {
  /** Case id, `{name}-{kv}kV-[u,v,w]`. */
  id: string;
  /** Beams (h, k, l), `nBeams` × 3 row-major, sorted by (h, k, l). */
  hkl: Int32Array;
  /** Intensities (fractions of the incident beam), thickness-major: `intensities[t * nBeams + j]`. */
  intensities: Float64Array;
  /** The thicknesses, Å (the rows of `intensities`). */
  thicknesses: Float64Array;
  /** Lab-frame (g_x, g_y) of each beam, Å⁻¹, `nBeams` × 2 row-major: where its spot is drawn. */
  gXY: Float64Array;
  /** Number of beams. */
  nBeams: number;
  /** Wall time, s. */
  seconds: number;
}

/** Options of {@link Scatterlab.blochSimulateCases}; every field is optional. */
export interface BlochCasesOptions {
  /** Where the cases run (default `"cpu"`). */
  device?: BlochDevice;
  /** The propagator (the device's default: `"expm"` on the CPU, `"taylor"` on the GPU). */
  solver?: BlochSolver;
  /** The ids of the cases to run, in this order (default: every case of the file). An unknown id rejects naming it. */
  ids?: string[];
}

/** One case of {@link Scatterlab.blochSimulateCases} that ran (its arrays transferred). */
export interface BlochCaseIntensities extends BlochEngineInfo {
  /** The case id. */
  id: string;
  /** Beams (h, k, l), `nBeams` × 3 row-major, sorted by (h, k, l) (rocking cases: the union over tilts). */
  hkl: Int32Array;
  /** Intensities, thickness-major: `intensities[t * nBeams + j]`. */
  intensities: Float64Array;
  /** The case's thicknesses, Å. */
  thicknesses: Float64Array;
  /** Number of beams. */
  nBeams: number;
  error?: undefined;
}

/** One case of {@link Scatterlab.blochSimulateCases} that failed (the others still ran). */
export interface BlochCaseError {
  /** The case id. */
  id: string;
  /** Why it failed, naming the object at fault. */
  error: string;
}

/** One case's answer: its intensities, or its error. */
export type BlochCaseResult = BlochCaseIntensities | BlochCaseError;

/** The tilt offsets of {@link Scatterlab.blochRocking}, degrees, added to `tilt` on one axis (default `"x"`). */
export type BlochTiltSweep =
  | { axis?: "x" | "y"; fromDeg: number; toDeg: number; n: number }
  | { axis?: "x" | "y"; anglesDeg: ArrayLike<number> };

/** Options of {@link Scatterlab.blochRocking}: {@link BlochSimulateOptions} and the sweep. */
export interface BlochRockingOptions extends BlochSimulateOptions {
  /** The tilt offsets: `n` evenly from `fromDeg` to `toDeg` (both included), or the listed `anglesDeg`. */
  tilts: BlochTiltSweep;
}

/** A progress report of {@link Scatterlab.blochRocking}, after every tilt. */
export interface BlochRockingProgress {
  /** Tilts solved so far. */
  done: number;
  /** Tilts in the sweep. */
  total: number;
  /** Seconds since the call started. */
  seconds: number;
}

/** Result of {@link Scatterlab.blochRocking} (its arrays transferred). */
export interface BlochRocking extends BlochEngineInfo {
  /** Case id at zero offset, `{name}-{kv}kV-[u,v,w]`. */
  id: string;
  /** The union of the tilts' beams (h, k, l), `nBeams` × 3 row-major, sorted by (h, k, l). */
  hkl: Int32Array;
  /** Intensities `[tilt][thickness][beam]`: `intensities[(i * thicknesses.length + t) * nBeams + j]`; 0 where beam j is not in tilt i's set. */
  intensities: Float64Array;
  /** The offsets solved, degrees (all of the sweep's unless cancelled). */
  tilts: Float64Array;
  /** The thicknesses, Å. */
  thicknesses: Float64Array;
  /** Number of beams in the union. */
  nBeams: number;
  /** Number of tilts solved. */
  nTilts: number;
  /** The sweep's axis. */
  axis: "x" | "y";
  /** Whether an abort stopped the sweep early (the arrays then hold the tilts done). */
  cancelled: boolean;
  /** Wall time, s. */
  seconds: number;
}

/** Options of {@link Scatterlab.blochRefine}; every field is optional. */
export interface BlochRefineOptions {
  /** `"lm"` (Levenberg–Marquardt, default), `"adam"` (diffBloch's optimiser and learning rate) or `"lbfgs"`. */
  optimizer?: "lm" | "adam" | "lbfgs";
  /** Most iterations (epochs for `"adam"`); default 50, `"adam"`: the YAML's `refinement.steps`. */
  maxIterations?: number;
  /** The experiment YAML's name among the files (default `"experiment.yaml"`, else the only YAML). */
  experiment?: string;
}

/** A progress report: after the start point is evaluated (iteration 0) and after every iteration. */
export interface BlochRefineProgress {
  /** Taken iterations (epochs) so far. */
  iteration: number;
  /** The iteration budget. */
  maxIterations: number;
  /** Model evaluations so far (each solves every frame). */
  evaluations: number;
  /** Mean per-frame wR2 now. */
  wR2: number;
  /** The optimiser's cost now (Σ r² for `"lm"`). */
  cost: number;
  /** Seconds since the call started. */
  seconds: number;
}

/** `result.json` of `scatterlab bloch refine`. */
export interface BlochRefineResultJson {
  /** Mean per-frame wR2 of the refined model (diffBloch's metric). */
  wR2: number;
  R_obs: number;
  /** The start model's agreement. */
  start: { wR2: number; R_obs: number };
  per_frame: { id: number; n: number; wR2: number; R_obs: number; scale: number }[];
  /** Every refined parameter by name, with its standard error (null when JᵀJ is singular). */
  parameters: Record<string, { value: number; stderr: number | null }>;
  correlations: number[][] | null;
  parameter_order: string[];
  atoms: { label: string; element: string; frac: [number, number, number]; u_iso: number; u_aniso?: number[]; occupancy: number }[];
  iterations: number;
  evaluations: number;
  /** `"converged"`, `"stationary"`, `"max_iterations"`, or `"cancelled"`. */
  stop: string;
  seconds: number;
  device: string;
  optimizer: string;
  /** What it minimised ("chi2" or "wr2"), where the engine reports it. */
  objective?: string;
  version: string;
  history: { iteration: number; evaluations: number; cost: number; wR2: number; max_shift_su: number | null }[];
}

/** Result of {@link Scatterlab.blochRefine}: the three files `scatterlab bloch refine` writes. */
export interface BlochRefineResult {
  /** `result.json`. */
  result: BlochRefineResultJson;
  /** `refined.cif`. */
  refinedCif: string;
  /** `observed_vs_calculated.csv`. */
  csv: string;
  /** Whether the run was cancelled (the structure is then the last one reached). */
  cancelled: boolean;
  /** Non-fatal findings while loading (e.g. a CIF cell 1–5 % off the PETS cell). */
  warnings: string[];
}

/** An experiment's files: `{name: text or Blob}`, or picked / dropped `File`s (read as text, named by `file.name`). */
export type BlochFiles = Record<string, string | Blob> | Iterable<File> | ArrayLike<File>;

/** The Bloch requests to the worker, before the wrapper adds their `id` (protocol.ts). */
export type BlochRequestBody =
  | { op: "blochSimulate"; cif: string; options: BlochSimulateOptions }
  | { op: "blochSimulateCases"; cases: string; options: BlochCasesOptions }
  | { op: "blochRocking"; cif: string; options: BlochRockingOptions }
  | { op: "blochRefine"; files: Record<string, string>; options: BlochRefineOptions };

/** Reads {@link BlochFiles} into `{name: text}` (a `Blob` or `File` with `text()`). */
export async function readBlochFiles(files: BlochFiles): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const isList = typeof (files as Iterable<File>)[Symbol.iterator] === "function" || typeof (files as ArrayLike<File>).length === "number";
  if (isList) {
    for (const file of Array.from(files as ArrayLike<File>)) out[file.name] = await file.text();
    return out;
  }
  for (const [name, value] of Object.entries(files as Record<string, string | Blob>)) {
    out[name] = typeof value === "string" ? value : await value.text();
  }
  return out;
}

/** How {@link Scatterlab} sends a stepped run (refinement, rocking) to its worker (internal). */
export interface BlochPort {
  /** Sends a request; its id and its answer. `onProgress` gets its progress messages. */
  request(body: BlochRequestBody, onProgress: (progress: never) => void): { id: number; result: Promise<unknown> };
  /** Stops request `id` at its next pause (no answer of its own). */
  cancel(id: number): void;
}

/**
 * A stepped run through `port`: progress relayed to `onProgress` (a throw cancels the run, which
 * then rejects with `"{op}: onProgress threw: …"`), `signal` turned into a cancel.
 */
export async function steppedVia<P, R>(port: BlochPort, body: BlochRequestBody, onProgress?: (progress: P) => void, signal?: AbortSignal): Promise<R> {
  let thrown: Error | null = null;
  let id = -1;
  const cancel = (): void => port.cancel(id);
  const progress = (p: P): void => {
    if (thrown !== null || onProgress === undefined) return;
    try {
      onProgress(p);
    } catch (error) {
      thrown = new Error(`${body.op}: onProgress threw: ${error instanceof Error ? error.message : String(error)}`);
      cancel();
    }
  };
  const sent = port.request(body, progress as (progress: never) => void);
  id = sent.id;
  if (signal?.aborted) cancel();
  else signal?.addEventListener("abort", cancel, { once: true });
  const result = await sent.result.finally(() => signal?.removeEventListener("abort", cancel));
  if (thrown !== null) throw thrown;
  return result as R;
}

/** {@link Scatterlab.blochRefine} through `port`: files read, then a stepped run. */
export async function blochRefineVia(port: BlochPort, files: BlochFiles, options: BlochRefineOptions, onProgress?: (progress: BlochRefineProgress) => void, signal?: AbortSignal): Promise<BlochRefineResult> {
  const texts = await readBlochFiles(files);
  return steppedVia<BlochRefineProgress, BlochRefineResult>(port, { op: "blochRefine", files: texts, options }, onProgress, signal);
}
