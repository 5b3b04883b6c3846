// Type-checks the built package as a consumer sees it (package.json "exports" and dist/*.d.ts);
// never run. scripts/build-web.sh runs `tsc -p web/check` after bundling.
import { Scatterlab, type FitProgress, type FitResult, type ReflectivityResult, type StackColumns } from "scatterlab";
import type { H5FrameBatch, H5Files, H5Pixels, H5StreamResult, H5Tree, SsbResult, StemInfo } from "scatterlab";
import type { BlochCaseResult, BlochDevice, BlochRefineProgress, BlochRefineResult, BlochRefineResultJson, BlochRocking, BlochRockingProgress, BlochSimulation } from "scatterlab";
import initWasm, { H5Session, Scatterlab as WasmScatterlab } from "scatterlab/pkg";
import { mountViewer, type DetectorChangedEvent, type DetectorShape, type FileOpenedEvent, type Viewer, type ViewerEvent, type ViewerStatus } from "scatterlab/viewer";

export async function example(): Promise<number> {
  const lab: Scatterlab = await Scatterlab.create({ device: "gpu", wasmUrl: "/dist/pkg/scatterlab_web_bg.wasm" });
  const stack: StackColumns = {
    thickness: [0, 100, 0], roughness: [0, 3, 3],
    delta_o: [0, 1e-5, 7e-6], beta_o: [0, 1e-6, 1e-7], delta_e: [0, 1e-5, 7e-6], beta_e: [0, 1e-6, 1e-7],
  };
  const r: ReflectivityResult = await lab.reflectivity(8047.8, new Float64Array([0.01, 0.02]), stack);
  const device: "cpu" | "gpu" = r.device;
  const controller = new AbortController();
  const seen: FitProgress[] = [];
  const fitted: FitResult = await lab.fit("{}", { method: "de", seed: 1, maxGenerations: 10, signal: controller.signal }, (p) => seen.push(p));
  controller.abort();
  const polished = await lab.fit(fitted.model, { method: "lm", resume: fitted.state });
  const stderr: number = polished.parameters["film_thick"]!.stderr;
  // @ts-expect-error: the method is "de" | "lm" | "mcmc" only.
  await lab.fit("{}", { method: "nelder-mead" });
  lab.dispose();
  await initWasm({ module_or_path: "/dist/pkg/scatterlab_web_bg.wasm" });
  const raw = await WasmScatterlab.create("cpu");
  const rawFit = await raw.fit("{}", { seed: 2, popsize: 5 }, (p) => p.bestChi2, new AbortController().signal);
  const direct = await raw.reflectivity(8047.8, [0.01], [0, 0], [0, 0], [0, 1e-5], [0, 1e-7], [0, 1e-5], [0, 1e-7]);
  raw.free();
  // @ts-expect-error: the device is "cpu" | "gpu" only.
  await Scatterlab.create({ device: "tpu" });
  return r.R_s[0]! + direct.R_p[0]! + (device === "gpu" ? 1 : 0) + stderr + rawFit.chi2 + seen.length;
}

// HDF5 / 4D-STEM files through the wrapper, and the raw handle (worker-only at run time).
export async function h5Example(picked: FileList, lab: Scatterlab): Promise<number> {
  const files: H5Files = await lab.openFiles(picked);
  const info: StemInfo = await files.stemInfo(files.names[0]!);
  const tree: H5Tree = await files.tree(info.master);
  const frames: H5Pixels = await files.readFrames(0, 2, { mask: "keep" });
  const controller = new AbortController();
  const done: H5StreamResult = await files.streamFrames((b: H5FrameBatch) => void b.data.length, { maxFrames: 64, signal: controller.signal });
  // @ts-expect-error: the mask policy is "zero" | "keep" only.
  await files.readFrames(0, 1, { mask: "drop" });
  const ssb: SsbResult = await files.ssb({ aberrations: { C10_nm: 3 }, fit: { maxFullEvaluations: 30 } }, (p) => void (p.done / p.total));
  const phase: Float32Array = ssb.phase;
  const [rows, cols]: [number, number] = ssb.shape;
  const fitted: boolean = ssb.record.fitted;
  // @ts-expect-error: unknown SSB options are not accepted.
  await files.ssb({ radius: 3 });
  const raw = H5Session.open([...picked]);
  const step = raw.streamNext(8);
  const rawSsb = await raw.ssb({ bfRadius: 9 }, (done: number, total: number) => void (done / total));
  return tree.nodes.length + frames.length + done.framesDone + (info.det_shape[0] ?? 0) + step.framesTotal + phase.length + rows * cols + (fitted ? 1 : 0) + rawSsb.shape[0] + ssb.aberrations.C12_nm;
}

// Bloch-wave simulation and refinement through the wrapper, and the raw handle.
export async function blochExample(lab: Scatterlab, cif: string, picked: FileList): Promise<number> {
  const sim: BlochSimulation = await lab.blochSimulate(cif, { kv: 200, zone: [0, 0, 1], thicknesses: new Float64Array([100, 200]), gMax: 1.2, solver: "eigen", tilt: [0.1, 0] });
  const hkl: Int32Array = sim.hkl;
  const row: Float64Array = sim.intensities.subarray(sim.nBeams, 2 * sim.nBeams);
  // @ts-expect-error: the solver is "eigen" | "expm" | "taylor" only.
  await lab.blochSimulate(cif, { kv: 200, zone: [0, 0, 1], thicknesses: [100], solver: "lu" });
  const onGpu: BlochSimulation = await lab.blochSimulate(cif, { kv: 200, zone: [0, 0, 1], thicknesses: [100], device: "gpu", solver: "taylor" });
  const ran: BlochDevice = onGpu.device;
  // @ts-expect-error: the device is "cpu" | "gpu" only.
  await lab.blochSimulate(cif, { kv: 200, zone: [0, 0, 1], thicknesses: [100], device: "tpu" });
  const cases: BlochCaseResult[] = await lab.blochSimulateCases("{…}", { device: "gpu", ids: ["Si-200kV-00"] });
  const firstCase = cases[0];
  const caseBeams = firstCase !== undefined && firstCase.error === undefined ? firstCase.hkl.length / 3 + firstCase.intensities[0]! : 0;
  const rockingSeen: BlochRockingProgress[] = [];
  const rocking: BlochRocking = await lab.blochRocking(cif, { kv: 200, zone: [0, 0, 1], thicknesses: [300], tilts: { axis: "y", fromDeg: -1, toDeg: 1, n: 21 } }, (p) => rockingSeen.push(p), new AbortController().signal);
  const listed: BlochRocking = await lab.blochRocking(cif, { kv: 200, zone: [0, 0, 1], thicknesses: [300], device: "gpu", tilts: { anglesDeg: new Float64Array([0, 0.5]) } });
  // @ts-expect-error: a sweep is required.
  await lab.blochRocking(cif, { kv: 200, zone: [0, 0, 1], thicknesses: [300] });
  // @ts-expect-error: kv, zone and thicknesses are required.
  await lab.blochSimulate(cif, { kv: 200 });
  const controller = new AbortController();
  const seen: BlochRefineProgress[] = [];
  const refined: BlochRefineResult = await lab.blochRefine(picked, { maxIterations: 2 }, (p) => seen.push(p), controller.signal);
  const fromTexts = await lab.blochRefine({ "experiment.yaml": "…", "start.cif": new Blob(["…"]) }, { optimizer: "adam" });
  const json: BlochRefineResultJson = refined.result;
  // @ts-expect-error: the optimiser is "lm" | "adam" | "lbfgs" only.
  await lab.blochRefine({}, { optimizer: "sgd" });
  const raw = await WasmScatterlab.create("cpu");
  const rawSim = await raw.blochSimulate(cif, { kv: 300, zone: [1, 1, 0], thicknesses: [50] });
  const rawCases = await raw.blochSimulateCases("{…}", { ids: ["urea-300kV-11"] });
  const rawRocking = await raw.blochRocking(cif, { kv: 300, zone: [1, 1, 0], thicknesses: [50], tilts: { fromDeg: 0, toDeg: 1, n: 3 } }, (p) => p.done / p.total, null);
  const rawRefine = await raw.blochRefine({ "experiment.yaml": "…" }, { maxIterations: 1 }, (p) => p.wR2, new AbortController().signal);
  return hkl.length + row.length + seen.length + json.wR2 + fromTexts.refinedCif.length + refined.csv.length + rawSim.nBeams + rawRefine.result.iterations + (refined.cancelled ? 1 : 0)
    + (ran === "gpu" ? 1 : 0) + caseBeams + rockingSeen.length + rocking.intensities[rocking.nTilts * rocking.thicknesses.length * rocking.nBeams - 1]! + listed.tilts.length
    + rawCases.length + rawRocking.nTilts + (rawRocking.cancelled ? 1 : 0) + rocking.backend.length;
}

// The viewer (scatterlab/viewer): mount, commands, files, events, status, destroy.
export async function viewerExample(host: HTMLElement, picked: FileList): Promise<number> {
  const viewer: Viewer = await mountViewer(host, { wasmUrl: "/static/scatterlab_app_bg.wasm", dropFiles: false, onEvent: (e: ViewerEvent) => void e.type });
  const canvasViewer = await mountViewer(document.createElement("canvas"));
  const { renderBackend } = await viewer.ready;
  const shapes: DetectorShape[] = [];
  const stop = viewer.on("detector-changed", (e: DetectorChangedEvent) => shapes.push(e.shape));
  viewer.on("file-opened", (e: FileOpenedEvent) => void (e.scanShape[0] * e.detectorShape[1]));
  viewer.on("error", (e) => void e.message.length);
  viewer.openFiles(picked);
  viewer.command({ do: "stemDetector", index: 0, shape: { kind: "annulus", center: [32, 32], inner: 10, outer: null } });
  viewer.command('{"do":"workspace","name":"Stem"}');
  // @ts-expect-error: a disc has a radius.
  viewer.command({ do: "stemDetector", shape: { kind: "disc", center: [1, 2] } });
  // @ts-expect-error: no such event.
  viewer.on("frame", () => {});
  const status: ViewerStatus = viewer.status();
  stop();
  viewer.destroy();
  canvasViewer.destroy();
  return (status.stem.countsTotal ?? 0) + shapes.length + renderBackend.length + status.frames;
}
