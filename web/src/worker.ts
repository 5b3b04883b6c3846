/**
 * The Web Worker behind {@link Scatterlab}: loads the wasm (wasm-bindgen `--target web` glue,
 * bundled in), opens one engine handle and answers requests in order of arrival. A fit posts
 * progress messages while it runs; it returns to this worker's event loop between generations, so
 * a `cancel` message is handled meanwhile and aborts the fit's `AbortSignal`.
 * @module
 */
import init, { Scatterlab as WasmScatterlab } from "../../dist/pkg/scatterlab_web.js";
import type { FitProgress, FitResult } from "./fit.js";
import type { InitResult, ReflectivityPayload, WorkerMessage, WorkerRequest } from "./protocol.js";

/** The slice of `DedicatedWorkerGlobalScope` used here (the DOM lib types `self` as a Window). */
interface WorkerScope {
  addEventListener(type: "message", listener: (event: MessageEvent<WorkerRequest>) => void): void;
  postMessage(message: WorkerMessage, transfer: Transferable[]): void;
}
const scope = self as unknown as WorkerScope;

let engine: WasmScatterlab | null = null;
/** Running fits by request id: `cancel` aborts the controller, the fit sees it at its next pause. */
const fits = new Map<number, AbortController>();

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

type Answer = InitResult | ReflectivityPayload | FitResult;

async function handle(request: Exclude<WorkerRequest, { op: "cancel" }>): Promise<[Answer, Transferable[]]> {
  switch (request.op) {
    case "init": {
      if (engine !== null) throw new Error("scatterlab worker: already initialised");
      try {
        await init({ module_or_path: request.wasmUrl });
      } catch (error) {
        throw new Error(`cannot load the scatterlab wasm from ${request.wasmUrl}: ${describe(error)}`);
      }
      engine = await WasmScatterlab.create(request.device);
      return [{ device: engine.device, backend: engine.backend }, []];
    }
    case "reflectivity": {
      if (engine === null) throw new Error("scatterlab worker: not initialised");
      const s = request.stack;
      const r = await engine.reflectivity(request.energyEv, request.q, s.thickness, s.roughness, s.delta_o, s.beta_o, s.delta_e, s.beta_e);
      return [{ R_s: r.R_s, R_p: r.R_p, device: r.device }, [r.R_s.buffer, r.R_p.buffer]];
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
  if (request.op === "cancel") {
    fits.get(request.id)?.abort();
    return;
  }
  handle(request).then(
    ([result, transfer]) => scope.postMessage({ id: request.id, ok: true, result }, transfer),
    (error: unknown) => scope.postMessage({ id: request.id, ok: false, error: describe(error) }, []),
  );
});
