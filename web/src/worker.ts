/**
 * The Web Worker behind {@link Scatterlab}: loads the wasm (wasm-bindgen `--target web` glue,
 * bundled in), opens one engine handle and answers requests in order of arrival. A fit posts
 * progress messages while it runs; it returns to this worker's event loop between generations, so
 * a `cancel` message is handled meanwhile and aborts the fit's `AbortSignal`.
 *
 * Opened files live here too (one `H5Session`; `FileReaderSync` exists only in workers). A stream
 * posts its batches with transfer, keeps at most {@link STREAM_AHEAD} unacknowledged, and returns
 * to the event loop between batches, so a `cancel` stops it after the batch in progress.
 * @module
 */
import init, { H5Session, Scatterlab as WasmScatterlab } from "../../dist/pkg/scatterlab_web.js";
import type { BlochRefineProgress, BlochRockingProgress } from "./bloch.js";
import type { FitProgress, FitResult } from "./fit.js";
import type { H5Pixels, H5StreamResult } from "./h5.js";
import type { H5Request, WorkerAnswer, WorkerMessage, WorkerRequest } from "./protocol.js";

/** The slice of `DedicatedWorkerGlobalScope` used here (the DOM lib types `self` as a Window). */
interface WorkerScope {
  addEventListener(type: "message", listener: (event: MessageEvent<WorkerRequest>) => void): void;
  postMessage(message: WorkerMessage, transfer: Transferable[]): void;
}
const scope = self as unknown as WorkerScope;

let engine: WasmScatterlab | null = null;
/** Running fits and Bloch refinements by request id: `cancel` aborts the controller, the run sees it at its next pause. */
const fits = new Map<number, AbortController>();

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** Batches a stream may post before the wrapper acknowledges them (bounds the UI thread's backlog). */
const STREAM_AHEAD = 4;

/** The opened files and the number of their set (requests for an older set are refused). */
let h5: H5Session | null = null;
let h5Number = 0;
/** Running streams by request id. */
const streams = new Map<number, { cancelled: boolean; unacked: number; wake: (() => void) | null }>();

/** Returns to the event loop as one macrotask (queued messages, a cancel, are handled first). */
const channel = new MessageChannel();
const yields: (() => void)[] = [];
channel.port1.onmessage = () => yields.shift()?.();
function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => {
    yields.push(resolve);
    channel.port2.postMessage(null);
  });
}

/**
 * Fetches the wasm and checks that it is one: a bundler that did not emit the file gives a 404, or
 * a dev server's HTML fallback page, and the glue's own message for those ("expected magic word")
 * does not say what to do.
 */
async function fetchWasm(url: string): Promise<Response> {
  const hint = "the bundler did not emit scatterlab_web_bg.wasm there; pass `wasmUrl` to Scatterlab.create (see the package README, \"Bundlers\")";
  let response: Response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new Error(`cannot load the scatterlab wasm from ${url}: ${describe(error)} (${hint})`);
  }
  if (!response.ok) throw new Error(`cannot load the scatterlab wasm from ${url}: HTTP ${response.status} (${hint})`);
  const type = response.headers.get("content-type") ?? "";
  if (/html|javascript|json|text\//.test(type)) throw new Error(`cannot load the scatterlab wasm from ${url}: served as ${type}, not wasm (${hint})`);
  return response;
}

/**
 * The engine's "no GPU adapter" message speaks to native users too (mesa packages); in a browser
 * say what the page can do about it, keeping the engine's words at the end.
 */
function browserGpuMessage(message: string): string {
  if (!message.includes("no GPU adapter available")) return message;
  const gpu = (navigator as Navigator & { gpu?: unknown }).gpu;
  const why = gpu === undefined
    ? "navigator.gpu is missing: WebGPU needs a secure context (https, or http on localhost) and a browser with WebGPU enabled"
    : "navigator.gpu.requestAdapter() found no adapter";
  return `device "gpu": this browser has no WebGPU adapter (${why}); use device "cpu" (engine: ${message})`;
}

function session(n: number): H5Session {
  if (h5 === null) throw new Error("scatterlab worker: no files open (call openFiles first)");
  if (n !== h5Number) throw new Error("scatterlab worker: these files were closed by a later openFiles");
  return h5;
}

async function stream(request: Extract<H5Request, { op: "streamFrames" }>): Promise<H5StreamResult> {
  const state = { cancelled: false, unacked: 0, wake: null as (() => void) | null };
  streams.set(request.id, state);
  try {
    const framesTotal = session(request.session).streamStart(request.mask);
    let batches = 0;
    let framesDone = 0;
    for (;;) {
      while (state.unacked >= STREAM_AHEAD && !state.cancelled) await new Promise<void>((wake) => (state.wake = wake));
      if (state.cancelled) return { framesDone, framesTotal, batches, cancelled: true };
      const step = session(request.session).streamNext(request.maxFrames);
      framesDone = step.framesDone;
      if (step.n > 0) {
        batches += 1;
        state.unacked += 1;
        const batch = { first: step.first, n: step.n, data: step.data, framesDone, framesTotal };
        scope.postMessage({ id: request.id, batch }, [step.data.buffer]);
      }
      if (step.done) return { framesDone, framesTotal, batches, cancelled: false };
      await yieldToEventLoop();
    }
  } finally {
    streams.delete(request.id);
  }
}

async function handle(request: Exclude<WorkerRequest, { op: "cancel" | "ack" }>): Promise<[WorkerAnswer, Transferable[]]> {
  switch (request.op) {
    case "h5Open": {
      if (engine === null) throw new Error("scatterlab worker: not initialised");
      const opened = H5Session.open(request.files);
      h5?.free();
      h5 = opened;
      h5Number += 1;
      return [{ session: h5Number, names: opened.names }, []];
    }
    case "h5Tree":
      return [session(request.session).tree(request.name), []];
    case "stemInfo":
      return [session(request.session).stemInfo(request.master), []];
    case "readFrames": {
      const data: H5Pixels = session(request.session).readFrames(request.first, request.n, request.mask);
      return [data, [data.buffer]];
    }
    case "streamFrames":
      return [await stream(request), []];
    case "stemReduce": {
      // Registered under its id like a fit: a `cancel` aborts it between batches (the wasm turns the loop).
      const controller = new AbortController();
      const id = request.id;
      fits.set(id, controller);
      try {
        const r = await session(request.session).reduce(request.options, (done, total) => scope.postMessage({ id, ssbProgress: { done, total } }, []), controller.signal);
        return [r, [...Object.values(r.products).map((p) => p.data.buffer), r.present.buffer]];
      } finally {
        fits.delete(id);
      }
    }
    case "stemDisplay": {
      const rgba = H5Session.displayRgba(request.values, request.options);
      return [rgba, [rgba.buffer]];
    }
    case "ssb": {
      const id = request.id;
      const r = await session(request.session).ssb(request.options, (done, total) => scope.postMessage({ id, ssbProgress: { done, total } }, []));
      return [r, [r.phase.buffer]];
    }
    case "init": {
      if (engine !== null) throw new Error("scatterlab worker: already initialised");
      await init({ module_or_path: await fetchWasm(request.wasmUrl) }).catch((error: unknown) => {
        throw new Error(`cannot load the scatterlab wasm from ${request.wasmUrl}: ${describe(error)}`);
      });
      engine = await WasmScatterlab.create(request.device, request.precision).catch((error: unknown) => {
        throw new Error(browserGpuMessage(describe(error)));
      });
      return [{ device: engine.device, precision: engine.precision, backend: engine.backend }, []];
    }
    case "reflectivity": {
      if (engine === null) throw new Error("scatterlab worker: not initialised");
      const s = request.stack;
      const r = await engine.reflectivity(request.energyEv, request.q, s.thickness, s.roughness, s.delta_o, s.beta_o, s.delta_e, s.beta_e);
      return [{ R_s: r.R_s, R_p: r.R_p, device: r.device }, [r.R_s.buffer, r.R_p.buffer]];
    }
    case "blochSimulate": {
      if (engine === null) throw new Error("scatterlab worker: not initialised");
      const r = await engine.blochSimulate(request.cif, request.options);
      return [r, [r.hkl.buffer, r.intensities.buffer, r.thicknesses.buffer, r.gXY.buffer]];
    }
    case "blochSimulateCases": {
      if (engine === null) throw new Error("scatterlab worker: not initialised");
      const cases = await engine.blochSimulateCases(request.cases, request.options);
      const buffers = cases.flatMap((c) => (c.error === undefined ? [c.hkl.buffer, c.intensities.buffer, c.thicknesses.buffer] : []));
      return [cases, buffers];
    }
    case "blochRocking": {
      // Like a refinement: registered under its id, so a `cancel` stops it after the tilt in progress.
      if (engine === null) throw new Error("scatterlab worker: not initialised");
      const controller = new AbortController();
      const id = request.id;
      fits.set(id, controller);
      try {
        const onProgress = (blochProgress: BlochRockingProgress): void => scope.postMessage({ id, blochProgress }, []);
        const r = await engine.blochRocking(request.cif, request.options, onProgress, controller.signal);
        return [r, [r.hkl.buffer, r.intensities.buffer, r.tilts.buffer, r.thicknesses.buffer]];
      } finally {
        fits.delete(id);
      }
    }
    case "blochRefine": {
      // Like a fit: registered under its id, so a `cancel` aborts it at its next pause.
      if (engine === null) throw new Error("scatterlab worker: not initialised");
      const controller = new AbortController();
      const id = request.id;
      fits.set(id, controller);
      try {
        const onProgress = (blochProgress: BlochRefineProgress): void => scope.postMessage({ id, blochProgress }, []);
        return [await engine.blochRefine(request.files, request.options, onProgress, controller.signal), []];
      } finally {
        fits.delete(id);
      }
    }
    case "fit": {
      if (engine === null) throw new Error("scatterlab worker: not initialised");
      const controller = new AbortController();
      const id = request.id;
      fits.set(id, controller);
      try {
        const onProgress = (progress: FitProgress): void => scope.postMessage({ id, progress }, []);
        const result: FitResult = await engine.fit(request.model, request.options, onProgress, controller.signal);
        return [result, []];
      } finally {
        fits.delete(id);
      }
    }
  }
}

scope.addEventListener("message", (event) => {
  const request = event.data;
  if (request.op === "cancel" || request.op === "ack") {
    const s = streams.get(request.id);
    if (s && request.op === "ack") s.unacked -= 1;
    if (s && request.op === "cancel") s.cancelled = true;
    s?.wake?.();
    if (request.op === "cancel") fits.get(request.id)?.abort();
    return;
  }
  handle(request).then(
    ([result, transfer]) => scope.postMessage({ id: request.id, ok: true, result }, transfer),
    (error: unknown) => scope.postMessage({ id: request.id, ok: false, error: describe(error) }, []),
  );
});
