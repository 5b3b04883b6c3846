/**
 * The Web Worker behind {@link Scatterlab}: loads the wasm (wasm-bindgen `--target web` glue,
 * bundled in), opens one engine handle and answers requests in order of arrival.
 * @module
 */
import init, { Scatterlab as WasmScatterlab } from "../../dist/pkg/scatterlab_web.js";
import type { InitResult, ReflectivityPayload, WorkerRequest, WorkerResponse } from "./protocol.js";

/** The slice of `DedicatedWorkerGlobalScope` used here (the DOM lib types `self` as a Window). */
interface WorkerScope {
  addEventListener(type: "message", listener: (event: MessageEvent<WorkerRequest>) => void): void;
  postMessage(message: WorkerResponse, transfer: Transferable[]): void;
}
const scope = self as unknown as WorkerScope;

let engine: WasmScatterlab | null = null;

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

async function handle(request: WorkerRequest): Promise<[InitResult | ReflectivityPayload, Transferable[]]> {
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
  }
}

scope.addEventListener("message", (event) => {
  const request = event.data;
  handle(request).then(
    ([result, transfer]) => scope.postMessage({ id: request.id, ok: true, result }, transfer),
    (error: unknown) => scope.postMessage({ id: request.id, ok: false, error: describe(error) }, []),
  );
});
