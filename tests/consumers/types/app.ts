// A strict TypeScript consumer of the unpacked tarball (tests/consumers/node_modules/scatterlab):
// run.mjs type-checks it with `lib` ES2022 and ESNext; never run.
import { Scatterlab, type ReflectivityResult } from "scatterlab";
import init, { Scatterlab as WasmScatterlab } from "scatterlab/pkg";
import { mountViewer, type DetectorChangedEvent } from "scatterlab/viewer";

export async function example(): Promise<number> {
  const lab = await Scatterlab.create({ device: "cpu", workerUrl: "/static/worker.js", wasmUrl: new URL("/static/x.wasm", location.href), crossOriginWorker: "blob" });
  const r: ReflectivityResult = await lab.reflectivity(8047.8, [0.01], { thickness: [0, 0], roughness: [0, 0], delta_o: [0, 1e-5], beta_o: [0, 1e-7], delta_e: [0, 1e-5], beta_e: [0, 1e-7] });
  lab.dispose();
  await init({ module_or_path: "/static/x.wasm" });
  const raw = await WasmScatterlab.create("cpu");
  raw.free();
  // @ts-expect-error: only "reject" | "blob".
  await Scatterlab.create({ device: "cpu", crossOriginWorker: "inline" });
  return r.R_s[0] ?? 0;
}

export async function viewer(host: HTMLElement): Promise<number> {
  const v = await mountViewer(host, { wasmUrl: "/static/scatterlab_app_bg.wasm" });
  const seen: DetectorChangedEvent[] = [];
  v.on("detector-changed", (e) => seen.push(e));
  v.command({ do: "stemDetector", shape: { kind: "disc", center: [32, 32], radius: 9.5 } });
  // @ts-expect-error: an annulus needs its inner radius.
  v.command({ do: "stemDetector", shape: { kind: "annulus", center: [32, 32], outer: null } });
  v.destroy();
  return seen.length;
}
