/**
 * Messages between the {@link Scatterlab} wrapper (UI thread) and its Web Worker.
 * Every request carries an `id`; the worker answers each with exactly one response of that id,
 * except `cancel`, which has none of its own. A fit sends {@link ProgressMessage}s of its `id`
 * before its response. Column arrays travel as transferred `Float64Array`s (copies the wrapper
 * made, never the caller's).
 */
import type { BlochCaseResult, BlochRefineProgress, BlochRefineResult, BlochRequestBody, BlochRocking, BlochRockingProgress, BlochSimulation } from "./bloch.js";
import type { FitOptions, FitProgress, FitResult } from "./fit.js";
import type { H5FrameBatch, H5Pixels, H5RequestBody, H5StreamResult, H5Tree, SsbProgress, SsbResult, StemInfo, StemReduction } from "./h5.js";
import type { ScatterlabDevice, ScatterlabPrecision, StackColumnArrays } from "./index.js";

/** Loads the wasm and opens a handle on `device`. */
export interface InitRequest {
  id: number;
  op: "init";
  device: ScatterlabDevice;
  /** The caller's precision; absent: the device's default (`"f64"` CPU, `"f32"` GPU). */
  precision?: ScatterlabPrecision;
  /** Absolute URL of `scatterlab_web_bg.wasm`. */
  wasmUrl: string;
}

/** One reflectivity curve. */
export interface ReflectivityRequest {
  id: number;
  op: "reflectivity";
  energyEv: number;
  q: Float64Array;
  stack: StackColumnArrays;
}

/** A fit of a model (or fixture fit task) to its data on the worker's handle. */
export interface FitRequest {
  id: number;
  op: "fit";
  /** Model JSON or fit-task JSON text. */
  model: string;
  /** The caller's options without `signal` (which cannot cross to the worker). */
  options: Omit<FitOptions, "signal">;
}

/**
 * Stops the running fit or stream whose request had this `id`; no response of its own: the fit
 * resolves at its next pause, a stream after its current batch, with `cancelled: true`. A cancel
 * for one that has ended is ignored.
 */
export interface CancelRequest {
  id: number;
  op: "cancel";
}

/**
 * The H5 requests ({@link H5RequestBody} in h5.ts lists each op) with their `id`. `h5Open` answers
 * an {@link H5OpenResult}, `h5Tree` an {@link H5Tree}, `stemInfo` a {@link StemInfo}, `readFrames`
 * {@link H5Pixels} (transferred), `ssb` {@link SsbProgressMessage}s then an {@link SsbResult} (its phase transferred). `streamFrames` sends {@link BatchMessage}s of its `id` (pixels
 * transferred), at most a few ahead of the {@link AckRequest}s, then an {@link H5StreamResult}; the
 * worker returns to its event loop between batches, so a `cancel` of that `id` stops it.
 */
export type H5Request = H5RequestBody & { id: number };

/**
 * The Bloch requests ({@link BlochRequestBody} in bloch.ts) with their `id`. `blochSimulate`
 * answers a {@link BlochSimulation} and `blochSimulateCases` a {@link BlochCaseResult} list (their
 * arrays transferred); `blochRefine` and `blochRocking` send {@link BlochProgressMessage}s then a
 * {@link BlochRefineResult} / {@link BlochRocking}, returning to the worker's event loop after
 * every iteration / tilt, so a `cancel` of that `id` stops them there.
 */
export type BlochRequest = BlochRequestBody & { id: number };

/** The wrapper has consumed one batch of stream `id`; no response. */
export interface AckRequest {
  id: number;
  op: "ack";
}

/** Everything the worker accepts. */
export type WorkerRequest = InitRequest | ReflectivityRequest | FitRequest | CancelRequest | H5Request | AckRequest | BlochRequest;

/** Answer to {@link InitRequest}. */
export interface InitResult {
  device: ScatterlabDevice;
  precision: ScatterlabPrecision;
  backend: string;
}

/** Answer to {@link ReflectivityRequest}. */
export interface ReflectivityPayload {
  R_s: Float64Array;
  R_p: Float64Array;
  device: ScatterlabDevice;
}

/** Answer to {@link H5OpenRequest}: the set's number (later requests name it) and its file names. */
export interface H5OpenResult {
  session: number;
  names: string[];
}

/** What a request can answer. */
export type WorkerAnswer = InitResult | ReflectivityPayload | FitResult | H5OpenResult | H5Tree | StemInfo | H5Pixels | H5StreamResult | SsbResult | StemReduction | Uint8Array | BlochSimulation | BlochCaseResult[] | BlochRocking | BlochRefineResult;

/** A success or a failure (with the engine's message) for request `id`. */
export type WorkerResponse = { id: number; ok: true; result: WorkerAnswer } | { id: number; ok: false; error: string };

/** A fit's progress, sent before the fit's response (same `id`). */
export interface ProgressMessage {
  id: number;
  progress: FitProgress;
}

/** A stream's batch, sent before the stream's response (same `id`). */
export interface BatchMessage {
  id: number;
  batch: H5FrameBatch;
}

/** An SSB reconstruction's progress, sent before its response (same `id`). */
export interface SsbProgressMessage {
  id: number;
  ssbProgress: SsbProgress;
}

/** A Bloch refinement's or rocking sweep's progress, sent before its response (same `id`). */
export interface BlochProgressMessage {
  id: number;
  blochProgress: BlochRefineProgress | BlochRockingProgress;
}

/** Everything the worker sends. */
export type WorkerMessage = WorkerResponse | ProgressMessage | BatchMessage | SsbProgressMessage | BlochProgressMessage;
