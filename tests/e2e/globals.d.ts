// What the pages the end-to-end scripts drive put on `window` (and read from it), for the callbacks
// those scripts run in the page (`page.evaluate`, `page.waitForFunction`). Type-checked with the
// scripts by tests/e2e/tsconfig.json; nothing here exists at run time.

/** The egui app's handle on index.html (crates/app/src/web.rs): JSON texts in and out. */
interface ScatterlabAppHandle {
  /** The app's status as JSON (`ViewerStatus` and more: fit, bloch, stem.ssb, stem.browse, …). */
  status(): string;
  /** A host command as JSON (`ViewerCommand`). */
  command(json: string): void;
  open_files(files: File[]): void;
  /** The wasm's linear memory in bytes. */
  heap_bytes(): number;
  /** A widget's rectangle on the canvas [x, y, width, height] in CSS pixels. */
  landmark(name: string): Float32Array | undefined;
}

/** `mountViewer`'s `Viewer` (web/src/viewer.ts) as web/examples/viewer.html exposes it. */
interface ScatterlabViewerHandle {
  readonly canvas: HTMLCanvasElement;
  command(command: import("../../web/src/viewer_types.js").ViewerCommand | string): void;
  openFiles(files: File[]): void;
  status(): import("../../web/src/viewer_types.js").ViewerStatus;
  landmark(name: string): [number, number, number, number] | undefined;
  destroy(): void;
}

interface Window {
  scatterlabApp: ScatterlabAppHandle;
  scatterlabViewer: ScatterlabViewerHandle;
  /** Every event web/examples/viewer.html received, in order. */
  scatterlabViewerEvents?: import("../../web/src/viewer_types.js").ViewerEvent[];
  /** Why mountViewer failed on web/examples/viewer.html. */
  scatterlabViewerError?: string;
  /** app_bloch.mjs: the page's long tasks. */
  __long: { at: number; ms: number }[];
  /** app_fit.mjs: the page's 10 ms clock. */
  __gaps: { last: number; max: number; ticks: number };
  __tick: ReturnType<typeof setInterval>;
}

/** dist/viewer.js as a page imports it by URL from the e2e server (`scatterlab/viewer`). */
interface ScatterlabViewerModule {
  mountViewer(target: HTMLElement, options?: { wasmUrl?: string }): Promise<ScatterlabViewerHandle>;
}
