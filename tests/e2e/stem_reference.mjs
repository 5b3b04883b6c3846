// The 4D-STEM pieces shared by the browser (app.mjs, viewer.mjs) and desktop (native_app.mjs)
// flows: the fixture's parameters and reference detector geometry for dev_small, the commands that
// set each detector and a linear gray display between the image's min and max (percentiles 0 and
// 100), the expected sums and LUT digests from tests/e2e/reference_display.py (h5py on the
// reference file), and the fixture files handed to a page as `File`s.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fixtureBase64, fixtures, repoRoot } from "./harness.mjs";

/** @typedef {import("./harness.mjs").Page} Page */
/** @typedef {import("../../web/src/viewer_types.js").ViewerCommand} ViewerCommand */
/** @typedef {Extract<import("../../web/src/viewer_types.js").DetectorShape, { kind: "disc" | "annulus" }>} RoundShape */
/** @typedef {{ do: "stemDetector", index: number, name: string, shape: RoundShape }} DetectorCommand */
/**
 * A reference virtual detector of `<prefix>_params.json` (references.virtual_detectors).
 * @typedef {object} VirtualDetector
 * @property {[number, number]} center_row_col
 * @property {number} inner_px
 * @property {number | "inf"} outer_px
 * @property {number} total the counts inside it over the whole scan
 */
/**
 * The parts of `<prefix>_params.json` read by the e2e scripts.
 * @typedef {object} StemParams
 * @property {[number, number]} scan
 * @property {[number, number]} det
 * @property {Record<string, { bytes: number }>} files every file of the acquisition by name
 * @property {{ virtual_detectors: Record<string, VirtualDetector> }} references
 */
/** @typedef {{ sum: number, limits: [number, number], lutFnv1a64: string }} DisplayReference */

/** dev_small's master and data files. */
export const DEV_SMALL_FILES = ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"];

/**
 * `shared/fixtures/stem/<prefix>_params.json`.
 * @param {string} prefix
 * @returns {StemParams}
 */
export function stemParams(prefix) {
  return JSON.parse(readFileSync(join(fixtures, "stem", `${prefix}_params.json`), "utf8"));
}

/**
 * `<prefix>_params.json` references.virtual_detectors as app commands, one list per detector.
 * @param {string} prefix
 * @returns {{ name: string, commands: [DetectorCommand, ViewerCommand] }[]}
 */
export function detectorCommands(prefix) {
  const params = stemParams(prefix);
  /** @type {ViewerCommand} */
  const display = { do: "stemDisplay", target: "image", colormap: "gray", transform: "linear", percentiles: [0, 100] };
  return Object.entries(params.references.virtual_detectors).map(([name, d]) => {
    const outer = d.outer_px === "inf" ? null : d.outer_px;
    /** @type {RoundShape} */
    const shape = d.inner_px === 0 && outer !== null
      ? { kind: "disc", center: d.center_row_col, radius: outer }
      : { kind: "annulus", center: d.center_row_col, inner: d.inner_px, outer };
    return { name, commands: [{ do: "stemDetector", index: 0, name: name.toUpperCase(), shape }, display] };
  });
}

/**
 * Sums, limits and LUT digests of `<prefix>_reference.h5`'s virtual images (h5py, Debian's python3).
 * @param {string} prefix
 * @returns {Record<string, DisplayReference>} by detector name (bf, abf, adf, df)
 */
export function referenceDisplay(prefix) {
  const script = join(repoRoot, "tests", "e2e", "reference_display.py");
  const out = execFileSync("/usr/bin/python3", [script, join(fixtures, "stem", `${prefix}_reference.h5`)], { encoding: "utf8" });
  const reference = JSON.parse(out);
  if (!reference.adfDefinitionAgrees) throw new Error("display_adf_lut_index disagrees with the README's definition");
  return reference;
}

/**
 * Problems with the displayed image `image` (status.stem.image) against `want`.
 * @param {string} label
 * @param {{ sum: number | null, limits: [number, number], lutFnv1a64: string } | null | undefined} image
 * @param {DisplayReference} want
 * @returns {string[]}
 */
export function compareImage(label, image, want) {
  const problems = [];
  if (image?.sum !== want.sum) problems.push(`${label}: sum ${image?.sum}, expected ${want.sum}`);
  if (JSON.stringify(image?.limits) !== JSON.stringify(want.limits)) problems.push(`${label}: limits ${JSON.stringify(image?.limits)}, expected ${JSON.stringify(want.limits)}`);
  if (image?.lutFnv1a64 !== want.lutFnv1a64) problems.push(`${label}: LUT digest ${image?.lutFnv1a64}, expected ${want.lutFnv1a64}`);
  return problems;
}

/**
 * Hands the fixture files `names` (shared/fixtures/stem) to the page as `File`s: to the app's
 * `open_files` on index.html (the page's drop path) or to the viewer's `openFiles` on
 * web/examples/viewer.html.
 * @param {Page} page
 * @param {string[]} names
 * @param {"app" | "viewer"} to
 */
export async function openStemFiles(page, names, to) {
  await page.evaluate(({ data, to }) => {
    /** @param {string} b64 */
    const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const files = Object.entries(data).map(([name, b64]) => new File([bytes(b64)], name));
    if (to === "viewer") window.scatterlabViewer.openFiles(files);
    else window.scatterlabApp.open_files(files);
  }, { data: fixtureBase64("stem", names), to });
}
