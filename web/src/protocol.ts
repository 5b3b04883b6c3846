/**
 * Messages between the {@link Scatterlab} wrapper (UI thread) and its Web Worker.
 * Every request carries an `id`; the worker answers each with exactly one response of that id.
 * Column arrays travel as transferred `Float64Array`s (copies the wrapper made, never the caller's).
 */
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

/** Everything the worker accepts. */
export type WorkerRequest = InitRequest | ReflectivityRequest;

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
  | { id: number; ok: true; result: InitResult | ReflectivityPayload }
  | { id: number; ok: false; error: string };
