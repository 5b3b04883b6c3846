/**
 * The types of `scatterlab/viewer`: the app's events (as `crates/app/src/events.rs` writes them),
 * its host commands (`crates/app/src/script.rs`) and the parts of its status a host reads.
 * @module
 */

/**
 * A virtual detector's geometry in detector pixels, centres as (row, col), pixel centres at
 * integer indices; an annulus's `outer` of `null` reaches the detector's edge (dark field).
 */
export type DetectorShape =
  | { kind: "disc"; center: [number, number]; radius: number }
  | { kind: "annulus"; center: [number, number]; inner: number; outer: number | null }
  | { kind: "rect"; rows: [number, number]; cols: [number, number] };

/** The app painted its first frame. */
export interface ViewerReadyEvent {
  type: "ready";
  /** The renderer: `"browserwebgpu"` (WebGPU) or `"gl"` (WebGL2). */
  renderBackend: string;
}

/**
 * A 4D-STEM acquisition opened (its metadata read; frames follow): from {@link Viewer.openFiles},
 * a drop, or the built-in example the 4D-STEM workspace shows when first opened.
 */
export interface FileOpenedEvent {
  type: "file-opened";
  /** The master (or single) file's name, or `"built-in example"`. */
  name: string;
  /** Scan positions (rows, cols). */
  scanShape: [number, number];
  /** Detector pixels (rows, cols). */
  detectorShape: [number, number];
  /** Frames in the scan. */
  frames: number;
}

/** Every frame of the open acquisition is in memory. */
export interface FileLoadedEvent {
  type: "file-loaded";
  name: string;
  frames: number;
  /** Frames holding data (fewer when data files are missing). */
  framesPresent: number;
}

/**
 * A virtual detector's name or geometry changed, or it became the selected one. `source` is
 * `"command"` when a host command did it in that frame, else `"ui"`: the user (dragging,
 * resizing, a preset button, arrow keys) or the app placing its default detectors (BF, ADF) on
 * the probe it found. A drag reports once per frame while it moves.
 */
export interface DetectorChangedEvent {
  type: "detector-changed";
  index: number;
  name: string;
  /** Whether it is the detector whose virtual image is on display. */
  selected: boolean;
  source: "command" | "ui";
  shape: DetectorShape;
}

/**
 * Something failed: a host command while applying (`source: "command"`; bad fields already throw
 * from {@link Viewer.command}), or opening / reading files (`"stem"`, the message naming the file).
 */
export interface ViewerErrorEvent {
  type: "error";
  source: "command" | "stem";
  message: string;
}

/** Every event of the viewer. */
export type ViewerEvent = ViewerReadyEvent | FileOpenedEvent | FileLoadedEvent | DetectorChangedEvent | ViewerErrorEvent;

/** Event types and their events, for {@link Viewer.on} (`"*"`: all of them). */
export interface ViewerEventMap {
  ready: ViewerReadyEvent;
  "file-opened": FileOpenedEvent;
  "file-loaded": FileLoadedEvent;
  "detector-changed": DetectorChangedEvent;
  error: ViewerErrorEvent;
  "*": ViewerEvent;
}

/**
 * A host command, applied at the start of the next frame (`crates/app/src/script.rs` documents
 * each; its JSON text may be passed as well), e.g.
 * `{ do: "workspace", name: "Stem" }`,
 * `{ do: "stemDetector", index: 0, name: "BF", shape: { kind: "disc", center: [32, 32], radius: 9.5 } }`,
 * `{ do: "stemDisplay", target: "image", colormap: "gray", transform: "linear", percentiles: [0, 100] }`.
 */
export type ViewerCommand =
  | { do: "workspace"; name: "Reflectivity" | "Stem" | "Bloch" }
  | { do: "stemDetector"; index?: number; name?: string; shape: DetectorShape }
  | { do: "stemDisplay"; target: "image" | "dp" | "idpc"; colormap?: string; transform?: "linear" | "log" | "sqrt" | "gamma"; gamma?: number; percentiles?: [number, number]; limits?: [number, number] }
  | { do: "stemDevice"; name: "cpu" | "gpu" }
  | { do: "stemPage"; name: "workspace" | "browse" | "ssb" }
  | { do: "stemSsb"; device?: "cpu" | "gpu"; aberrations?: [number, number, number] }
  | { do: "stemBrowse"; file: string; path: string }
  | { do: "blochOpenCif"; path?: string; name?: string; text?: string }
  | { do: "blochSimulate"; kv?: number; zone?: [number, number, number]; reference?: [number, number, number]; tilt?: [number, number]; thicknesses?: number[]; gMax?: number; sgMax?: number; solver?: "eigen" | "expm"; device?: "cpu" | "gpu"; euler?: [number, number, number] }
  | { do: "blochView"; thicknessIndex?: number; log?: boolean }
  | { do: "blochOpenExperiment"; path?: string; files?: Record<string, string> }
  | { do: "blochRefine"; steps: number }
  | { do: "blochCancel" }
  | { do: "blochRocking"; axis?: "x" | "y"; fromDeg?: number; toDeg?: number; n?: number; cancel?: boolean };

/** The app's status (what hosts usually read; the JSON has more). */
export interface ViewerStatus {
  /** Frames drawn so far. */
  frames: number;
  /** `"Reflectivity"`, `"Stem"` or `"Bloch"`. */
  workspace: string;
  /** `"browserwebgpu"` or `"gl"`. */
  renderBackend: string;
  /** Why the last host command failed, or `null`. */
  commandError: string | null;
  /** The 4D-STEM workspace. */
  stem: {
    name: string | null;
    loading: boolean;
    framesLoaded: number | null;
    framesTotal: number | null;
    /** Total counts of the loaded frames. */
    countsTotal: number | null;
    error: string | null;
    /** The virtual image on display: its detector, exact sum, display limits. */
    image: { detector: string | null; sum: number | null; lutFnv1a64: string; limits: [number, number] } | null;
    [field: string]: unknown;
  };
  [field: string]: unknown;
}
