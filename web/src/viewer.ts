/**
 * `scatterlab/viewer`: the scatterlab app (egui, WebGPU or WebGL2) as a component of a host page —
 * the 4D-STEM, reflectivity and Bloch workspaces on a canvas of the page, driven by commands and
 * reporting what happens as events. A separate subpath so that users of the engines alone
 * (`scatterlab`) never download the app's wasm.
 *
 * ```ts
 * import { mountViewer } from "scatterlab/viewer";
 * const viewer = await mountViewer(document.getElementById("viewer")!);
 * viewer.on("file-opened", (e) => console.log(e.name, e.scanShape, e.detectorShape));
 * viewer.on("detector-changed", (e) => console.log(e.index, e.shape, e.source));
 * viewer.openFiles(input.files!);                       // a Dectris master + data files, read in pieces
 * viewer.command({ do: "stemDetector", index: 0, shape: { kind: "disc", center: [32, 32], radius: 9.5 } });
 * viewer.destroy();
 * ```
 *
 * Events come from the app itself: at the end of each UI frame it compares the workspace with
 * what it last reported and calls the viewer's listener once per change (so a drag reports once
 * per frame while it moves); handlers run just after that frame, never inside it.
 * @module
 */

import init, { start_on_canvas, set_engine_urls, type AppControl } from "../../dist/viewer-app/scatterlab_app.js";
import { defaultUrl, scriptUrl, workerScriptUrl } from "./locate.js";
import type { ViewerCommand, ViewerEvent, ViewerEventMap, ViewerStatus } from "./viewer_types.js";

export type { DetectorChangedEvent, DetectorShape, FileLoadedEvent, FileOpenedEvent, ViewerCommand, ViewerErrorEvent, ViewerEvent, ViewerEventMap, ViewerReadyEvent, ViewerStatus } from "./viewer_types.js";

/** Options of {@link mountViewer}. */
export interface ViewerOptions {
  /**
   * Where the app's wasm is (`scatterlab/viewer-app/scatterlab_app_bg.wasm`, about 14 MB); by default
   * beside this module (`new URL("./viewer-app/scatterlab_app_bg.wasm", import.meta.url)`, which webpack,
   * Vite, Parcel and Rollup's import-meta-assets emit), or beside the `<script src>` of an iife bundle.
   */
  wasmUrl?: string | URL;
  /** The engines' worker script the app runs fits and Bloch work in (as `Scatterlab.create`'s `workerUrl`). */
  workerUrl?: string | URL;
  /** The engines' wasm that worker loads (as `Scatterlab.create`'s `wasmUrl`). */
  engineWasmUrl?: string | URL;
  /** A worker URL on another origin: refuse it (default) or start it from a fetched `blob:` URL. */
  crossOriginWorker?: "reject" | "blob";
  /** Open HDF5 files dropped on the viewer (default `true`); other drops go to the app. */
  dropFiles?: boolean;
  /** Receives every event from the start (the first `ready` and `file-opened` included). */
  onEvent?: (event: ViewerEvent) => void;
}

/** Where the app's wasm is by default; the literal `new URL` stays for the bundlers to find. */
function defaultAppWasmUrl(): URL {
  try {
    return new URL("./viewer-app/scatterlab_app_bg.wasm", import.meta.url);
  } catch {
    if (scriptUrl) return new URL("./viewer-app/scatterlab_app_bg.wasm", scriptUrl);
    throw new Error('scatterlab: cannot locate ./viewer-app/scatterlab_app_bg.wasm: this bundle has no import.meta.url and no script URL; pass `wasmUrl` to mountViewer (see the package README, "Viewer")');
  }
}

/** The app's wasm, instantiated once per page (every viewer shares it). */
let appModule: Promise<unknown> | undefined;

async function loadApp(url: URL): Promise<void> {
  appModule ??= (async () => {
    const response = await fetch(url).catch((error: unknown) => {
      throw new Error(`scatterlab: cannot load the viewer's wasm from ${url.href} (${error instanceof Error ? error.message : String(error)}); pass \`wasmUrl\` to mountViewer`);
    });
    if (!response.ok) throw new Error(`scatterlab: cannot load the viewer's wasm from ${url.href} (HTTP ${response.status}): the bundler did not emit scatterlab/viewer-app/scatterlab_app_bg.wasm there; pass \`wasmUrl\` to mountViewer (see the package README, "Viewer")`);
    return init({ module_or_path: response });
  })();
  try {
    await appModule;
  } catch (error) {
    appModule = undefined;
    throw error;
  }
}

/** HDF5 files by name (what a drop hands the app; anything else goes to the app's own handler). */
const isHdf5 = (f: File): boolean => /\.(h5|hdf5|hdf|nxs)$/i.test(f.name);

type Handler = (event: never) => void;

/** What mountViewer does to a viewer that users cannot (set in the class's static block). */
let internals: {
  create(canvas: HTMLCanvasElement, ready: Promise<{ renderBackend: string }>): Viewer;
  attach(viewer: Viewer, control: AppControl, cleanup: (() => void)[]): void;
  dispatch(viewer: Viewer, event: ViewerEvent): void;
};

/** A running viewer (see {@link mountViewer}). */
export class Viewer {
  /** The canvas the app draws on (created by {@link mountViewer} when given an element). */
  readonly canvas: HTMLCanvasElement;
  /** Resolves after the first frame is painted, with the render backend (`"browserwebgpu"`, `"gl"`). */
  readonly ready: Promise<{ renderBackend: string }>;
  #control: AppControl | undefined;
  readonly #handlers = new Map<string, Set<Handler>>();
  readonly #cleanup: (() => void)[] = [];

  static {
    internals = {
      create: (canvas, ready) => new Viewer(canvas, ready),
      attach: (viewer, control, cleanup) => {
        viewer.#control = control;
        viewer.#cleanup.push(...cleanup);
      },
      dispatch: (viewer, event) => viewer.#dispatch(event),
    };
  }

  /** Use {@link mountViewer}. */
  private constructor(canvas: HTMLCanvasElement, ready: Promise<{ renderBackend: string }>) {
    this.canvas = canvas;
    this.ready = ready;
  }

  #app(): AppControl {
    if (!this.#control) throw new Error("scatterlab: this viewer was destroyed");
    return this.#control;
  }

  /**
   * Queues a host command for the next frame (an object or its JSON text; the commands are listed
   * in the package README, "Viewer"). Throws an `Error` naming the field if it does not parse or a
   * field is bad; a failure while applying it is an `error` event (`source: "command"`).
   */
  command(command: ViewerCommand | string): void {
    this.#app().command(typeof command === "string" ? command : JSON.stringify(command));
  }

  /**
   * Opens a 4D-STEM acquisition (a Dectris master with its data files, or one HDF5 file) read in
   * pieces, never whole; returns at once. `file-opened` follows once its metadata is read,
   * `file-loaded` once every frame is in, an `error` event if it cannot be opened.
   */
  openFiles(files: FileList | Iterable<File> | ArrayLike<File>): void {
    this.#app().open_files(Array.from(files as Iterable<File>));
  }

  /**
   * The app's state as of its last frame (workspace, 4D-STEM acquisition and image, fit, Bloch);
   * an empty object before the first frame ({@link Viewer.ready}).
   */
  status(): ViewerStatus {
    return JSON.parse(this.#app().status()) as ViewerStatus;
  }

  /**
   * `[x, y, width, height]` in CSS pixels relative to the canvas of the widget last drawn under
   * `name` (e.g. `"stem dp"`, the diffraction pattern; `"workspace 4D-STEM"`), or `undefined`:
   * for guided tours and tests that point at the app's own widgets.
   */
  landmark(name: string): [number, number, number, number] | undefined {
    const r = this.#app().landmark(name);
    return r && r.length === 4 ? [r[0]!, r[1]!, r[2]!, r[3]!] : undefined;
  }

  /** Calls `handler` for each event of `type` (`"*"`: every event); returns a function that removes it. */
  on<K extends keyof ViewerEventMap>(type: K, handler: (event: ViewerEventMap[K]) => void): () => void {
    let set = this.#handlers.get(type);
    if (!set) this.#handlers.set(type, (set = new Set()));
    set.add(handler as Handler);
    return () => this.off(type, handler);
  }

  /** Removes a handler added with {@link Viewer.on}. */
  off<K extends keyof ViewerEventMap>(type: K, handler: (event: ViewerEventMap[K]) => void): void {
    this.#handlers.get(type)?.delete(handler as Handler);
  }

  /** Delivers one event to its handlers; one that throws is reported, the others still run. */
  #dispatch(event: ViewerEvent): void {
    for (const type of [event.type, "*"]) {
      for (const handler of [...(this.#handlers.get(type) ?? [])]) {
        try {
          (handler as (e: ViewerEvent) => void)(event);
        } catch (error) {
          reportError(error);
        }
      }
    }
  }

  /**
   * Stops the app (eframe's `WebRunner::destroy`: frames, page listeners, renderer), removes the
   * canvas if {@link mountViewer} created it, and drops every handler. Later calls do nothing;
   * other methods then throw.
   */
  destroy(): void {
    const control = this.#control;
    if (!control) return;
    this.#control = undefined;
    control.destroy();
    control.free();
    this.#handlers.clear();
    for (const f of this.#cleanup.splice(0)) f();
  }
}

/**
 * Starts the scatterlab app in `target`: a `<canvas>` it then draws on, or an element it fills
 * with a new canvas. Resolves once the app runs (its first frame follows: {@link Viewer.ready});
 * rejects with a readable `Error` if the wasm cannot be loaded (naming the URL and `wasmUrl`) or
 * neither WebGPU nor WebGL2 is available.
 */
export async function mountViewer(target: HTMLCanvasElement | HTMLElement, options: ViewerOptions = {}): Promise<Viewer> {
  const wasmUrl = options.wasmUrl !== undefined ? new URL(options.wasmUrl, location.href) : defaultAppWasmUrl();
  await loadApp(wasmUrl);
  const worker = await workerScriptUrl(options.workerUrl, options.crossOriginWorker);
  const engineWasm = options.engineWasmUrl !== undefined ? new URL(options.engineWasmUrl, location.href) : defaultUrl("wasm");
  set_engine_urls(worker.url.href, engineWasm.href);

  const cleanup: (() => void)[] = [];
  let canvas: HTMLCanvasElement;
  if (target instanceof HTMLCanvasElement) {
    canvas = target;
  } else {
    canvas = document.createElement("canvas");
    canvas.style.cssText = "display:block;width:100%;height:100%;outline:none";
    target.appendChild(canvas);
    cleanup.push(() => canvas.remove());
  }
  let readyResolve: (r: { renderBackend: string }) => void = () => {};
  const ready = new Promise<{ renderBackend: string }>((resolve) => (readyResolve = resolve));
  const viewer = internals.create(canvas, ready);
  const listener = (json: string): void => {
    let event: ViewerEvent;
    try {
      event = JSON.parse(json) as ViewerEvent;
    } catch {
      return;
    }
    if (event.type === "ready") readyResolve({ renderBackend: event.renderBackend });
    // After the app's frame, never inside it (a handler may call destroy or command).
    queueMicrotask(() => {
      if (options.onEvent) {
        try {
          options.onEvent(event);
        } catch (error) {
          reportError(error);
        }
      }
      internals.dispatch(viewer, event);
    });
  };
  if (options.dropFiles ?? true) {
    const dropTarget: HTMLElement = target;
    const onDrop = (event: DragEvent): void => {
      const files = [...(event.dataTransfer?.files ?? [])];
      if (!files.some(isHdf5)) return;
      // Before eframe's own drop handler, which would read every file whole.
      event.preventDefault();
      event.stopImmediatePropagation();
      viewer.openFiles(files);
    };
    dropTarget.addEventListener("drop", onDrop, { capture: true });
    cleanup.push(() => dropTarget.removeEventListener("drop", onDrop, { capture: true }));
  }
  if (worker.revoke) cleanup.push(() => URL.revokeObjectURL(worker.url.href));
  let control: AppControl;
  try {
    control = await start_on_canvas(canvas, listener);
  } catch (error) {
    for (const f of cleanup) f();
    throw error instanceof Error ? error : new Error(`scatterlab: the viewer could not start: ${String(error)}`);
  }
  internals.attach(viewer, control, cleanup);
  return viewer;
}
