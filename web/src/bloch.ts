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
import type { BlochCasesOptions, BlochRefineOptions, BlochRefineProgress, BlochRefineResult, BlochRockingOptions, BlochSimulateOptions } from "./generated/bloch.js";

// The protocol's types are generated from the Rust definitions (crates/web/src/protocol/bloch.rs).
export type { BlochCaseError, BlochCaseIntensities, BlochCaseResult, BlochCasesOptions, BlochDevice, BlochEngineInfo, BlochRefineOptions, BlochRefineProgress, BlochRefineResult, BlochRefineResultJson, BlochRocking, BlochRockingOptions, BlochRockingProgress, BlochSimulateOptions, BlochSimulation, BlochSolver, BlochTiltSweep } from "./generated/bloch.js";

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
