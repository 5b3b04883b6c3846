/**
 * HDF5 / 4D-STEM files in the package's worker: {@link Scatterlab.openFiles} returns an
 * {@link H5Files}. The worker reads the `File`s range by range (`FileReaderSync`), so an
 * acquisition of any size is never held whole, neither in wasm memory nor on this thread.
 *
 * ```ts
 * const files = await lab.openFiles(input.files);              // master + data files
 * const info = await files.stemInfo("scan_master.h5");         // shapes, dtype, calibration, missing files
 * const first = await files.readFrames(0, 16);                 // Uint16Array | Uint32Array
 * const controller = new AbortController();
 * await files.streamFrames((b) => accumulate(b.data, b.n), { maxFrames: 256, signal: controller.signal });
 * const { phase, shape, aberrations } = await files.ssb({ fit: true }); // SSB ptychography, Float32Array
 * ```
 * @module
 */
import type { Scatterlab } from "./index.js";
import type { H5MaskPolicy, H5Pixels, SsbOptions, SsbResult, StemDisplayOptions, StemReduceOptions, StemReduction } from "./generated/h5.js";

// The protocol's types are generated from the Rust definitions (crates/web/src/protocol/h5.rs).
export type { H5MaskPolicy, H5Pixels, SsbAberrations, SsbFitOptions, SsbOptions, SsbRecord, SsbResult, StemDisplayOptions, StemProduct, StemReduceOptions, StemReduction } from "./generated/h5.js";

/** One filter of a dataset's pipeline. */
export interface H5Filter {
  /** HDF5 filter id (32008 bitshuffle, 32004 lz4, 1 deflate, ...). */
  id: number;
  /** Its name. */
  name: string;
  /** The name the writer stored, if any. */
  stored_name: string | null;
  /** cd_values. */
  client_data: number[];
  /** Whether scatterlab decodes it. */
  supported: boolean;
}

/** What a tree node is (`type` tells which). */
export type H5NodeKind =
  | { type: "group"; storage: "symbol_table" | "compact" | "dense" }
  | {
      type: "dataset";
      shape: number[];
      max_shape: number[] | null;
      dtype: string;
      element_size: number;
      layout: { type: "compact" | "contiguous"; bytes: number } | { type: "chunked"; chunks: number[]; index: string };
      filters: H5Filter[];
      /** Why the data cannot be read, if it cannot. */
      unsupported: string | null;
    }
  | { type: "external_link"; file: string; path: string; resolved: boolean | null }
  | { type: "soft_link"; target: string }
  | { type: "hard_link"; target: string }
  | { type: "other"; what: string }
  | { type: "error"; message: string };

/** A file's tree: every group, dataset and link in depth-first order (the first is `/`). */
export interface H5Tree {
  file: string;
  superblock_version: number;
  nodes: { path: string; kind: H5NodeKind; attrs: { name: string; dtype: string; shape: number[]; value: string }[] }[];
}

/** Summary of a 4D-STEM acquisition (`scatterlab stem info`); absent values are `null` ("not in file"). */
export interface StemInfo {
  master: string;
  single_file: boolean;
  frames: number;
  /** `[frames, det_rows, det_cols]`. */
  shape: [number, number, number];
  det_shape: [number, number];
  dtype: "u8" | "u16" | "u32";
  scan_shape: [number, number] | null;
  /** Where the scan shape came from, or why there is none. */
  scan_source: string;
  chunks: number[] | null;
  filters: H5Filter[];
  /** Lengths in Å unless named; detector values `[row, col]`. */
  calibration: {
    wavelength_a: number | null;
    voltage_kv: number | null;
    convergence_mrad: number | null;
    det_sampling_mrad: [number, number] | null;
    scan_step_a: number | null;
    beam_centre_rc: [number, number] | null;
    pixel_size_m: [number, number] | null;
    detector_distance_m: number | null;
    count_time_s: number | null;
    frame_time_s: number | null;
    description: string | null;
    from_hints: string[];
  };
  mask_bad_pixels: number | null;
  data_files: { link: string; file: string; first_frame: number; n_frames: number; size: number | null }[];
  /** Linked data files that were not opened, with the frames they would hold. */
  missing: { link: string; file: string; frames: [number, number] | null }[];
  complete: boolean;
  warnings: string[];
}

/** One batch of a stream. */
export interface H5FrameBatch {
  /** Global index of the first frame. */
  first: number;
  /** Frames in the batch. */
  n: number;
  /** Its pixels (transferred from the worker: yours to keep). */
  data: H5Pixels;
  /** Frames delivered so far, this batch included. */
  framesDone: number;
  /** Total frames. */
  framesTotal: number;
}

/** Options of {@link H5Files.streamFrames}. */
export interface H5StreamOptions {
  /** Frames per batch (default 0 = about 4 MiB); a batch never spans two data files. */
  maxFrames?: number;
  /** Bad-pixel policy (default `"zero"`). */
  mask?: H5MaskPolicy;
  /** Aborting it stops the stream after the batch in progress; it then resolves with `cancelled: true`. */
  signal?: AbortSignal;
}

/** How a stream ended. */
export interface H5StreamResult {
  framesDone: number;
  framesTotal: number;
  batches: number;
  cancelled: boolean;
}

/** Progress of {@link H5Files.ssb}: work units of the current stage — frames of each pass over the data, then loss evaluations of the fit. */
export interface SsbProgress {
  done: number;
  total: number;
}

/** The H5 requests to the worker, before the wrapper adds their `id` (protocol.ts). */
export type H5RequestBody =
  /** Opens `File`s (structured-cloneable: a handle crosses, never the bytes), replacing the open set. */
  | { op: "h5Open"; files: File[] }
  /** The tree of one file of open set `session`. */
  | { op: "h5Tree"; session: number; name: string }
  /** Opens the acquisition of `master` (ending a running stream) and summarises it. */
  | { op: "stemInfo"; session: number; master: string }
  /** Frames `first .. first + n` of the open acquisition. */
  | { op: "readFrames"; session: number; first: number; n: number; mask: H5MaskPolicy }
  /** Every frame of the open acquisition in batches of `maxFrames` (0 = about 4 MiB). */
  | { op: "streamFrames"; session: number; maxFrames: number; mask: H5MaskPolicy }
  /** Single-sideband ptychography of the open acquisition (one call in the worker, to its end). */
  | { op: "ssb"; session: number; options: SsbOptions }
  /** The CLI's 4D-STEM products of the open acquisition (progress per batch; a `cancel` stops it between batches). */
  | { op: "stemReduce"; session: number; options: StemReduceOptions }
  /** RGBA8 of an image through the display pipeline. */
  | { op: "stemDisplay"; values: Float64Array; options: StemDisplayOptions };

/** How {@link H5Files} talks to its {@link Scatterlab}'s worker (internal). */
export interface H5Port {
  /** Sends a request; its id and its answer. `onBatch` gets a stream's batch messages. */
  request(body: H5RequestBody, onBatch?: (batch: H5FrameBatch) => void, onSsbProgress?: (progress: SsbProgress) => void): { id: number; result: Promise<unknown> };
  /** Sends a message that has no answer: stop stream `id`, or one batch of it consumed. */
  post(message: { id: number; op: "cancel" | "ack" }): void;
}

/**
 * Files opened in a {@link Scatterlab}'s worker; made by {@link Scatterlab.openFiles}. A later
 * `openFiles` on the same instance closes this set (its calls then reject). Every method rejects
 * with an `Error` naming the file or object (e.g. a missing data file).
 */
export class H5Files {
  /** The opened file names, sorted. */
  readonly names: readonly string[];
  readonly #port: H5Port;
  readonly #session: number;

  /** @internal Use {@link Scatterlab.openFiles}. */
  constructor(port: H5Port, session: number, names: string[]) {
    this.#port = port;
    this.#session = session;
    this.names = names;
  }

  /** The HDF5 tree of file `name` (external links marked resolved when their file was opened). */
  tree(name: string): Promise<H5Tree> {
    return this.#port.request({ op: "h5Tree", session: this.#session, name }).result as Promise<H5Tree>;
  }

  /** Opens the acquisition of `master` for reading (ending a running stream) and summarises it. */
  stemInfo(master: string): Promise<StemInfo> {
    return this.#port.request({ op: "stemInfo", session: this.#session, master }).result as Promise<StemInfo>;
  }

  /** Global frames `first .. first + n` of the acquisition opened by {@link stemInfo} (at most 256 MiB). */
  readFrames(first: number, n: number, options: { mask?: H5MaskPolicy } = {}): Promise<H5Pixels> {
    const body = { op: "readFrames", session: this.#session, first, n, mask: options.mask ?? "zero" } as const;
    return this.#port.request(body).result as Promise<H5Pixels>;
  }

  /**
   * Single-sideband ptychography of the acquisition opened by {@link stemInfo} (CPU f64 in the
   * worker, frames streamed from the files, BF pixels only held), fitting C10, C12, φ12 first when
   * `options.fit` asks. It runs to its end in the worker (no cancel midway; the page stays free);
   * `onProgress` gets its progress messages. Rejects naming a bad option, a missing calibration
   * value or a missing data file.
   */
  ssb(options: SsbOptions = {}, onProgress?: (progress: SsbProgress) => void): Promise<SsbResult> {
    return this.#port.request({ op: "ssb", session: this.#session, options }, undefined, onProgress).result as Promise<SsbResult>;
  }

  /**
   * The 4D-STEM products of `scatterlab stem reduce` for the acquisition opened by
   * {@link stemInfo}: virtual detectors (BF, ABF, ADF, DF), sum/max patterns, centre of mass, DPC
   * rotation and iDPC, keyed and shaped like the CLI's `.npy` files, on `options.device`.
   * `onProgress` gets `{done, total}` frames per batch of each pass over the data. Aborting
   * `signal` stops it after the batch in progress and rejects with "reduce: cancelled". Rejects
   * naming a bad option, a missing data file (unless `allowMissing`) or a missing GPU.
   */
  reduce(options: StemReduceOptions = {}, onProgress?: (progress: SsbProgress) => void, signal?: AbortSignal): Promise<StemReduction> {
    const { id, result } = this.#port.request({ op: "stemReduce", session: this.#session, options }, undefined, onProgress);
    const cancel = (): void => this.#port.post({ id, op: "cancel" });
    if (signal?.aborted) cancel();
    else signal?.addEventListener("abort", cancel, { once: true });
    return (result as Promise<StemReduction>).finally(() => signal?.removeEventListener("abort", cancel));
  }

  /**
   * RGBA8 of a row-major image (e.g. a product of {@link reduce}; NaN = no data, transparent)
   * through the fixtures' display pipeline, for `new ImageData(new Uint8ClampedArray(rgba.buffer), cols, rows)`.
   * Rejects naming a bad option (an unknown colormap, percentiles out of order).
   */
  display(values: Float64Array, options: StemDisplayOptions = {}): Promise<Uint8Array> {
    return this.#port.request({ op: "stemDisplay", values, options }).result as Promise<Uint8Array>;
  }

  /**
   * Streams every frame of the acquisition opened by {@link stemInfo}, in order, in batches. The
   * worker keeps at most a few batches ahead of `onBatch`; if `onBatch` returns a Promise, the
   * batch counts as consumed when it settles. An exception in `onBatch` cancels the stream and
   * rejects with it. Aborting `options.signal` stops after the batch in progress and resolves with
   * `cancelled: true`.
   */
  streamFrames(onBatch: (batch: H5FrameBatch) => void | Promise<void>, options: H5StreamOptions = {}): Promise<H5StreamResult> {
    const { signal, maxFrames = 0, mask = "zero" } = options;
    let thrown: Error | null = null;
    let id = -1;
    const cancel = (): void => this.#port.post({ id, op: "cancel" });
    const consume = async (batch: H5FrameBatch): Promise<void> => {
      try {
        if (thrown === null) await onBatch(batch);
      } catch (error) {
        thrown ??= error instanceof Error ? error : new Error(String(error));
        cancel();
      }
      this.#port.post({ id, op: "ack" });
    };
    // Batches still being consumed when the worker's answer arrives are awaited before resolving.
    const consuming = new Set<Promise<void>>();
    const onMessage = (b: H5FrameBatch): void => {
      const p = consume(b).finally(() => consuming.delete(p));
      consuming.add(p);
    };
    const sent = this.#port.request({ op: "streamFrames", session: this.#session, maxFrames, mask }, onMessage);
    id = sent.id;
    if (signal?.aborted) cancel();
    else signal?.addEventListener("abort", cancel, { once: true });
    return sent.result
      .finally(() => signal?.removeEventListener("abort", cancel))
      .then(async (result) => {
        await Promise.all(consuming);
        if (thrown !== null) throw thrown;
        return result as H5StreamResult;
      });
  }
}
