/**
 * `scatterlab`: X-ray reflectivity of stratified (uniaxial) films in the browser, on WebGPU (f32
 * WGSL kernel) or the CPU (f64), computed in a dedicated Web Worker so the caller's thread never
 * blocks.
 *
 * ```ts
 * import { Scatterlab } from "scatterlab";
 * const lab = await Scatterlab.create({ device: "gpu" });
 * const { R_s, R_p } = await lab.reflectivity(8047.8, q, {
 *   thickness: [0, 120, 0], roughness: [0, 3, 4],
 *   delta_o: [0, 1.2e-5, 7.6e-6], beta_o: [0, 1.1e-6, 1.7e-7],
 *   delta_e: [0, 1.3e-5, 7.6e-6], beta_e: [0, 1.0e-6, 1.7e-7],
 * });
 * lab.dispose();
 * ```
 *
 * Fitting runs in the same worker, with progress and cancel (the worker stays responsive):
 * ```ts
 * const controller = new AbortController();
 * const result = await lab.fit(modelJson, { method: "de", seed: 1, signal: controller.signal },
 *   (p) => console.log(p.iteration, p.bestChi2, p.evaluationsPerSecond));
 * const more = await lab.fit(modelJson, { resume: result.state });          // continue DE
 * const polished = await lab.fit(result.model, { method: "lm" });           // polish with LM
 * ```
 *
 * HDF5 / 4D-STEM files open in the same worker, read range by range, never whole ({@link H5Files}):
 * ```ts
 * const files = await lab.openFiles(input.files);
 * const info = await files.stemInfo("scan_master.h5");
 * await files.streamFrames((b) => accumulate(b.data), { maxFrames: 256 });
 * ```
 *
 * Bloch-wave electron diffraction runs there too ({@link Scatterlab.blochSimulate},
 * {@link Scatterlab.blochSimulateCases} and {@link Scatterlab.blochRocking} on the CPU or the GPU
 * by `options.device`, {@link Scatterlab.blochRefine}; progress and cancel; see bloch.ts).
 *
 * The device is the caller's choice: `"gpu"` where WebGPU has no adapter rejects with an `Error`
 * saying so, it never falls back to the CPU. Invalid inputs reject with an `Error` naming the
 * offending object (`"layer 1 thickness: not a finite number (NaN)"`).
 * @module
 */

import { blochRefineVia, steppedVia, type BlochCaseResult, type BlochCasesOptions, type BlochFiles, type BlochPort, type BlochRefineOptions, type BlochRefineProgress, type BlochRefineResult, type BlochRequestBody, type BlochRocking, type BlochRockingOptions, type BlochRockingProgress, type BlochSimulateOptions, type BlochSimulation } from "./bloch.js";
import type { FitOptions, FitProgress, FitResult } from "./fit.js";
import { defaultUrl, diagnoseWorker, workerScriptUrl } from "./locate.js";
import { H5Files, type H5FrameBatch } from "./h5.js";
import type { H5RequestBody, SsbProgress } from "./h5.js";
import type { FitRequest, H5OpenResult, InitResult, WorkerAnswer, WorkerMessage, WorkerRequest } from "./protocol.js";

export type { BlochCaseError, BlochCaseIntensities, BlochCaseResult, BlochCasesOptions, BlochDevice, BlochEngineInfo, BlochFiles, BlochRefineOptions, BlochRefineProgress, BlochRefineResult, BlochRefineResultJson, BlochRocking, BlochRockingOptions, BlochRockingProgress, BlochSimulateOptions, BlochSimulation, BlochSolver, BlochTiltSweep } from "./bloch.js";
export type { FitMethod, FitOptions, FitProgress, FitResult, FitState } from "./fit.js";
export { H5Files } from "./h5.js";
export type { H5FrameBatch, H5MaskPolicy, H5Pixels, H5StreamOptions, H5StreamResult, H5Tree, SsbAberrations, SsbFitOptions, SsbOptions, SsbProgress, SsbRecord, SsbResult, StemDisplayOptions, StemInfo, StemProduct, StemReduceOptions, StemReduction } from "./h5.js";

/** The device a {@link Scatterlab} computes on: `"cpu"` (f64) or `"gpu"` (WebGPU, f32 or df64). */
export type ScatterlabDevice = "cpu" | "gpu";

/**
 * The arithmetic of a {@link Scatterlab}'s curves: `"f64"` on the CPU; on the GPU `"f32"` (the
 * default, within 2e-3 of f64) or `"df64"` (hi/lo f32 pairs, within 1e-6 of the CPU's f64, several
 * times slower). Never chosen for you.
 */
export type ScatterlabPrecision = "f64" | "f32" | "df64";

/** Numbers per layer, in any array-like form (`number[]`, `Float64Array`, ...). */
export type Column = ArrayLike<number>;

/**
 * A layer stack as per-layer columns: index 0 is the fronting medium (vacuum), the last index the
 * substrate; all columns have the same length (≥ 2). n = 1 − δ + iβ per axis; "o" is the in-plane
 * (ordinary) axis, "e" the surface normal (extraordinary).
 */
export interface StackColumns {
  /** Thickness per layer, Å (ignored for the fronting medium and the substrate). */
  thickness: Column;
  /** RMS roughness of the interface above each layer, Å (entry 0 unused). */
  roughness: Column;
  /** Ordinary δ per layer. */
  delta_o: Column;
  /** Ordinary β per layer. */
  beta_o: Column;
  /** Extraordinary δ per layer. */
  delta_e: Column;
  /** Extraordinary β per layer. */
  beta_e: Column;
}

/** {@link StackColumns} as the worker receives them. */
export type StackColumnArrays = { [K in keyof StackColumns]: Float64Array };

/** One reflectivity curve: one entry per q. */
export interface ReflectivityResult {
  /** s-polarised (TE) power reflectance |r_s|². */
  R_s: Float64Array;
  /** p-polarised (TM) power reflectance |r_p|². */
  R_p: Float64Array;
  /** The device that computed it. */
  device: ScatterlabDevice;
}

/** Options of {@link Scatterlab.create}. */
export interface CreateOptions {
  /** The device to compute on. Required: there is no default and no fallback. */
  device: ScatterlabDevice;
  /**
   * The arithmetic: `"f64"` for `"cpu"`; `"f32"` (default) or `"df64"` for `"gpu"`. A precision
   * the device does not have rejects, naming both.
   */
  precision?: ScatterlabPrecision;
  /**
   * Where `scatterlab_web_bg.wasm` is served; default: `./pkg/scatterlab_web_bg.wasm` beside this
   * module (webpack 5, Vite and Parcel emit it; see the README for esbuild and Rollup).
   */
  wasmUrl?: string | URL;
  /**
   * Where the worker bundle (`scatterlab/worker.js`) is served; default: `./worker.js` beside this
   * module. Module workers start only from the page's own origin: a URL on another origin (a CDN)
   * rejects unless {@link CreateOptions.crossOriginWorker} is `"blob"`.
   */
  workerUrl?: string | URL;
  /**
   * `"blob"`: a worker script on another origin than the page (the package served from a CDN) is
   * fetched (the CDN must allow CORS, as npm CDNs do) and started from a same-origin `blob:` URL.
   * Default `"reject"`: such a URL rejects with an `Error` that says so.
   */
  crossOriginWorker?: "reject" | "blob";
}

const COLUMN_NAMES = ["thickness", "roughness", "delta_o", "beta_o", "delta_e", "beta_e"] as const;

type Answer = WorkerAnswer;

interface Pending {
  resolve(value: Answer): void;
  reject(error: Error): void;
  /** A fit's progress messages. */
  progress?(progress: FitProgress): void;
  /** A stream's batches. */
  batch?(batch: H5FrameBatch): void;
  /** An SSB reconstruction's progress. */
  ssbProgress?(progress: SsbProgress): void;
  /** A Bloch refinement's or rocking sweep's progress. */
  blochProgress?(progress: BlochRefineProgress | BlochRockingProgress): void;
}

/** A reflectivity engine on one device, running in its own Web Worker. */
export class Scatterlab {
  /** The device this instance computes on. */
  readonly device: ScatterlabDevice;
  /** The arithmetic of its curves: `"f64"` (CPU), `"f32"` or `"df64"` (GPU). */
  readonly precision: ScatterlabPrecision;
  /** The backend in words: `"cpu f64"`, or the GPU adapter and wgpu backend. */
  readonly backend: string;
  readonly #worker: Worker;
  readonly #pending: Map<number, Pending>;
  #nextId: number;
  #closed: string | null = null;

  private constructor(worker: Worker, pending: Map<number, Pending>, nextId: number, info: InitResult) {
    this.#worker = worker;
    this.#pending = pending;
    this.#nextId = nextId;
    this.device = info.device;
    this.precision = info.precision;
    this.backend = info.backend;
  }

  /**
   * Starts a worker, loads the wasm there and opens the engine on `options.device`.
   * Rejects with the engine's message when the device cannot be had (e.g. no WebGPU adapter).
   */
  static async create(options: CreateOptions): Promise<Scatterlab> {
    const device = options.device;
    if (device !== "cpu" && device !== "gpu") {
      throw new Error(`device: unknown device ${JSON.stringify(device)} (expected "cpu" or "gpu")`);
    }
    const wasmUrl = (options.wasmUrl !== undefined ? new URL(options.wasmUrl, location.href) : defaultUrl("wasm")).href;
    const script = await workerScriptUrl(options.workerUrl, options.crossOriginWorker);
    const workerUrl = script.url;
    const worker = new Worker(workerUrl, { type: "module", name: `scatterlab ${device}` });
    const pending = new Map<number, Pending>();
    const failAll = (message: string): void => {
      for (const p of pending.values()) p.reject(new Error(message));
      pending.clear();
    };
    let instance: Scatterlab | null = null;
    worker.addEventListener("message", (event: MessageEvent<WorkerMessage>) => {
      const response = event.data;
      const p = pending.get(response.id);
      if (!p) return;
      if ("progress" in response) {
        p.progress?.(response.progress);
        return;
      }
      if ("batch" in response) {
        p.batch?.(response.batch);
        return;
      }
      if ("ssbProgress" in response) {
        p.ssbProgress?.(response.ssbProgress);
        return;
      }
      if ("blochProgress" in response) {
        p.blochProgress?.(response.blochProgress);
        return;
      }
      pending.delete(response.id);
      if (response.ok) p.resolve(response.result);
      else p.reject(new Error(response.error));
    });
    worker.addEventListener("error", (event: ErrorEvent) => {
      event.preventDefault();
      const fail = (message: string): void => {
        if (instance) instance.#closed = message;
        failAll(message);
      };
      // A script that did not load gives an event without a message: find out why.
      if (event.message) fail(`scatterlab worker failed: ${event.message}`);
      else void diagnoseWorker(workerUrl).then(fail);
    });
    worker.addEventListener("messageerror", () => failAll("scatterlab worker: a message could not be deserialised"));

    const id = 0;
    const info = await new Promise<Answer>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      const request: WorkerRequest = { id, op: "init", device, wasmUrl, ...(options.precision !== undefined ? { precision: options.precision } : {}) };
      worker.postMessage(request);
    })
      .catch((error: unknown) => {
        worker.terminate();
        throw error;
      })
      .finally(() => {
        if (script.revoke) URL.revokeObjectURL(workerUrl.href);
      });
    instance = new Scatterlab(worker, pending, id + 1, info as InitResult);
    return instance;
  }

  /**
   * Power reflectances of one stack at `energyEv` (eV) for every `q` (Å⁻¹, 0 < q < 2k0).
   * The inputs are copied; the caller's arrays are left untouched. Rejects with an `Error`
   * naming the offending input, or with the GPU failure.
   */
  reflectivity(energyEv: number, q: Column, stack: StackColumns): Promise<ReflectivityResult> {
    if (this.#closed !== null) return Promise.reject(new Error(this.#closed));
    const qArray = Float64Array.from(q);
    const columns = {} as StackColumnArrays;
    for (const name of COLUMN_NAMES) {
      const column = stack[name];
      if (column === undefined || column === null || typeof column.length !== "number") {
        return Promise.reject(new Error(`stack.${name}: missing (expected one number per layer)`));
      }
      columns[name] = Float64Array.from(column);
    }
    const transfer = [qArray.buffer, ...COLUMN_NAMES.map((n) => columns[n].buffer)];
    const id = this.#nextId++;
    return new Promise<Answer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      const request: WorkerRequest = { id, op: "reflectivity", energyEv, q: qArray, stack: columns };
      this.#worker.postMessage(request, transfer);
    }).then((payload) => payload as ReflectivityResult);
  }

  /**
   * Fits a model to its data in the worker: `model` is model JSON (text or object) or a fixture fit
   * task. `onProgress` receives a report after every DE generation, LM iteration and sampler step;
   * if it throws, the fit is cancelled and rejects with that error. Aborting `options.signal`
   * cancels the fit, which then resolves (it does not reject) with its best point,
   * `cancelled: true` and its `state`. Rejects with an `Error` naming a bad input or option.
   */
  fit(model: string | object, options: FitOptions = {}, onProgress?: (progress: FitProgress) => void): Promise<FitResult> {
    if (this.#closed !== null) return Promise.reject(new Error(this.#closed));
    const { signal, ...rest } = options;
    const text = typeof model === "string" ? model : JSON.stringify(model);
    const id = this.#nextId++;
    const cancel = (): void => {
      if (this.#closed === null) this.#worker.postMessage({ id, op: "cancel" } satisfies WorkerRequest);
    };
    let thrown: Error | null = null;
    const progress = (p: FitProgress): void => {
      if (thrown !== null || onProgress === undefined) return;
      try {
        onProgress(p);
      } catch (error) {
        thrown = new Error(`fit: onProgress threw: ${error instanceof Error ? error.message : String(error)}`);
        cancel();
      }
    };
    return new Promise<Answer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, progress });
      const request: FitRequest = { id, op: "fit", model: text, options: rest };
      try {
        this.#worker.postMessage(request satisfies WorkerRequest);
      } catch (error) {
        // Options that cannot be cloned (e.g. a function inside): nothing was sent.
        this.#pending.delete(id);
        throw error;
      }
      if (signal?.aborted) cancel();
      else signal?.addEventListener("abort", cancel, { once: true });
    })
      .finally(() => signal?.removeEventListener("abort", cancel))
      .then((result) => {
        if (thrown !== null) throw thrown;
        return result as FitResult;
      });
  }

  /**
   * Opens picked or dropped `File`s (an acquisition's master and data files, or any HDF5 files) in
   * the worker; replaces the files opened before. Rejects in a browser without workers' `FileReaderSync`.
   */
  async openFiles(files: Iterable<File> | ArrayLike<File>): Promise<H5Files> {
    const list = Array.from(files as Iterable<File>);
    const opened = (await this.#h5({ op: "h5Open", files: list }).result) as H5OpenResult;
    const port = { request: this.#h5.bind(this), post: (m: WorkerRequest) => void (this.#closed === null && this.#worker.postMessage(m)) };
    return new H5Files(port, opened.session, opened.names);
  }

  /**
   * One static zone-axis case of the crystal in `cifText`, as `scatterlab bloch simulate --cif …`
   * runs it, in the worker on `options.device` (`"cpu"` f64 by default, or `"gpu"`: WebGPU f32,
   * never substituted). Rejects naming a bad option, a bad CIF, a missing GPU or a failed solve.
   */
  blochSimulate(cifText: string, options: BlochSimulateOptions): Promise<BlochSimulation> {
    return this.#h5({ op: "blochSimulate", cif: cifText, options }).result as Promise<BlochSimulation>;
  }

  /**
   * The cases of a Bloch cases file (`casesJsonText`: the format of `scatterlab bloch simulate
   * <cases.json>`, e.g. the fixture's `reference.json`), those of `options.ids` (default all), on
   * `options.device`. Resolves to one entry per case: its intensities, or its `error` (the others
   * still run); rejects naming an unreadable file, an unknown id or a bad option.
   */
  blochSimulateCases(casesJsonText: string, options: BlochCasesOptions = {}): Promise<BlochCaseResult[]> {
    return this.#h5({ op: "blochSimulateCases", cases: casesJsonText, options }).result as Promise<BlochCaseResult[]>;
  }

  /**
   * A tilt series of {@link blochSimulate}'s case (`options.tilts`: offsets about lab x or y added
   * to `options.tilt`), each tilt solved as its own static case, one tilt per worker turn.
   * `onProgress` gets `{done, total, seconds}` after every tilt; if it throws, the sweep is
   * cancelled and rejects with that error. Aborting `signal` stops the sweep after the tilt in
   * progress: it resolves with the tilts done and `cancelled: true`.
   */
  blochRocking(cifText: string, options: BlochRockingOptions, onProgress?: (progress: BlochRockingProgress) => void, signal?: AbortSignal): Promise<BlochRocking> {
    return steppedVia<BlochRockingProgress, BlochRocking>(this.#blochPort(), { op: "blochRocking", cif: cifText, options }, onProgress, signal);
  }

  /**
   * Refines the start structure of a diffBloch experiment (`files`: the YAML, the `.cif_pets` and
   * the start CIF) as `scatterlab bloch refine` does, one iteration per worker turn. `onProgress`
   * gets a report after the start point and after every iteration; if it throws, the run is
   * cancelled and rejects with that error. Aborting `signal` stops the run after the iteration in
   * progress: it resolves with the structure reached and `cancelled: true`.
   */
  blochRefine(files: BlochFiles, options: BlochRefineOptions = {}, onProgress?: (progress: BlochRefineProgress) => void, signal?: AbortSignal): Promise<BlochRefineResult> {
    return blochRefineVia(this.#blochPort(), files, options, onProgress, signal);
  }

  /** Stepped Bloch runs' requests (progress relayed) and cancels. */
  #blochPort(): BlochPort {
    return {
      request: (body: BlochRequestBody, progress: (p: never) => void) => this.#h5(body, undefined, undefined, progress as (p: BlochRefineProgress | BlochRockingProgress) => void),
      cancel: (id: number) => void (this.#closed === null && this.#worker.postMessage({ id, op: "cancel" } satisfies WorkerRequest)),
    };
  }

  /** Sends an H5 or Bloch request with the next id. */
  #h5(body: H5RequestBody | BlochRequestBody, batch?: (b: H5FrameBatch) => void, ssbProgress?: (p: SsbProgress) => void, blochProgress?: (p: BlochRefineProgress | BlochRockingProgress) => void): { id: number; result: Promise<unknown> } {
    const id = this.#nextId++;
    if (this.#closed !== null) return { id, result: Promise.reject(new Error(this.#closed)) };
    const result = new Promise<Answer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, batch, ssbProgress, blochProgress });
      try {
        this.#worker.postMessage({ ...body, id } as WorkerRequest);
      } catch (error) {
        // Something that cannot be cloned (not a File): nothing was sent.
        this.#pending.delete(id);
        throw error;
      }
    });
    return { id, result };
  }

  /** Stops the worker; pending and later calls reject. */
  dispose(): void {
    if (this.#closed !== null) return;
    this.#closed = "scatterlab: this instance was disposed";
    this.#worker.terminate();
    for (const p of this.#pending.values()) p.reject(new Error(this.#closed));
    this.#pending.clear();
  }
}
