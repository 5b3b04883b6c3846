/**
 * Messages between the {@link Scatterlab} wrapper (UI thread) and its Web Worker.
 * Every request carries an `id`; the worker answers each with exactly one response of that id,
 * except `cancel`, which has none of its own. A fit sends {@link ProgressMessage}s of its `id`
 * before its response. Column arrays travel as transferred `Float64Array`s (copies the wrapper
 * made, never the caller's).
 */
import type { FitOptions, FitProgress, FitResult } from "./fit.js";
import type { ScatterlabDevice, StackColumnArrays } from "./index.js";

/** Loads the wasm and opens a handle on `device`. */
export interface InitRequest {
  id: number;
  op: "init";
  device: ScatterlabDevice;
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
 * Stops the running fit whose request had this `id`; no response of its own: the fit resolves at
 * its next pause with `cancelled: true`. A cancel for a fit that has ended is ignored.
 */
export interface CancelRequest {
  id: number;
  op: "cancel";
}

/** Everything the worker accepts. */
export type WorkerRequest = InitRequest | ReflectivityRequest | FitRequest | CancelRequest;

/** Answer to {@link InitRequest}. */
export interface InitResult {
  device: ScatterlabDevice;
  backend: string;
}

/** Answer to {@link ReflectivityRequest}. */
export interface ReflectivityPayload {
  R_s: Float64Array;
  R_p: Float64Array;
  device: ScatterlabDevice;
}

/** A success or a failure (with the engine's message) for request `id`. */
export type WorkerResponse =
  | { id: number; ok: true; result: InitResult | ReflectivityPayload | FitResult }
  | { id: number; ok: false; error: string };

/** A fit's progress, sent before the fit's response (same `id`). */
export interface ProgressMessage {
  id: number;
  progress: FitProgress;
}

/** Everything the worker sends. */
export type WorkerMessage = WorkerResponse | ProgressMessage;
