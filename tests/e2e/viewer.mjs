#!/usr/bin/env node
// End to end for the npm package's viewer (`scatterlab/viewer`, issue 22 item 5): the example host
// page web/examples/viewer.html embeds the app with mountViewer (dist/viewer.js: the app's wasm,
// worker and engine wasm located beside it) and records every event. In headless Chromium:
// the viewer is ready on its own canvas with WebGPU (the canvas is marked, not the page); dev_small's
// four files through viewer.openFiles give file-opened (name, scan and detector shapes of
// params.json) then file-loaded (256 frames) and the fixture's total counts; the BF reference
// detector set by viewer.command gives a detector-changed event (source "command") carrying that
// geometry, and the displayed image equals the reference (sum, limits, LUT digest); a drag on the
// diffraction pattern gives detector-changed events with source "ui" moving the disc; a command
// that fails while applying gives an error event; destroy() removes the canvas and later calls throw;
// a wasm that is not there rejects mountViewer naming its URL, the 404 and `wasmUrl`.
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { finish, log, outDir, withPage } from "./harness.mjs";
import { DEV_SMALL_FILES, compareImage, detectorCommands, openStemFiles, referenceDisplay, stemParams } from "./stem_reference.mjs";

/** @typedef {import("../../web/src/viewer_types.js").ViewerEvent} ViewerEvent */

const READY_TIMEOUT_MS = Number(process.env.E2E_READY_TIMEOUT_MS ?? 90_000);
const STEM_TIMEOUT_MS = 60_000;
const params = stemParams("dev_small");
// references.virtual_detectors bf.total + df.total (as tests/e2e/app.mjs).
const STEM_TOTAL = params.references.virtual_detectors.bf.total + params.references.virtual_detectors.df.total;

/** @type {string[]} */
const failures = [];
/**
 * @param {boolean} ok
 * @param {string} what
 */
const expect = (ok, what) => { if (!ok) failures.push(what); };
await withPage("viewer.html", async (page, server, browser) => {
  await page.goto(`${server.url}web/examples/viewer.html`, { waitUntil: "load" });
  /** The events the page received so far. */
  const events = () => page.evaluate(() => window.scatterlabViewerEvents ?? []);
  /**
   * Waits until an event matching `test` (its source runs in the page) arrived after index `from`.
   * @param {string} label
   * @param {(e: any) => boolean} test
   * @returns {Promise<any>} the event (undefined on a timeout or when the viewer did not start: a failure)
   */
  const waitEvent = async (label, test, from = 0, timeout = STEM_TIMEOUT_MS) => {
    try {
      const handle = await page.waitForFunction(([src, from]) => {
        const match = /** @type {(e: ViewerEvent) => boolean} */ (new Function("e", `return (${src})(e)`));
        return (window.scatterlabViewerEvents ?? []).slice(from).find((e) => match(e)) ?? window.scatterlabViewerError;
      }, /** @type {[string, number]} */ ([test.toString(), from]), { timeout, polling: 100 });
      const found = await handle.jsonValue();
      if (typeof found === "string") failures.push(`${label}: the viewer did not start: ${found}`);
      return typeof found === "string" ? undefined : found;
    } catch {
      failures.push(`${label}: no such event within ${timeout / 1000} s (events: ${JSON.stringify((await events()).slice(from)).slice(0, 2000)})`);
      return undefined;
    }
  };

  const ready = await waitEvent("ready", (e) => e.type === "ready", 0, READY_TIMEOUT_MS);
  log(`ready: ${JSON.stringify(ready)}`);
  expect(ready?.renderBackend === "browserwebgpu", `ready: render backend ${ready?.renderBackend}, expected browserwebgpu`);
  const marks = await page.evaluate(() => {
    const canvas = document.querySelector("#viewer canvas");
    if (canvas !== null && !(canvas instanceof HTMLCanvasElement)) throw new Error("#viewer canvas is not a canvas");
    return { canvas: canvas?.dataset.appReady, backend: canvas?.dataset.renderBackend, root: document.documentElement.dataset.appReady ?? null, same: canvas === window.scatterlabViewer?.canvas };
  });
  log(`marks: ${JSON.stringify(marks)}`);
  expect(marks.canvas === "1" && marks.backend === "browserwebgpu" && marks.root === null && marks.same, `the viewer's canvas is not the one marked ready: ${JSON.stringify(marks)}`);

  // dev_small through viewer.openFiles.
  const before = (await events()).length;
  await openStemFiles(page, DEV_SMALL_FILES, "viewer");
  const opened = await waitEvent("file-opened", (e) => e.type === "file-opened" && e.name === "dev_small_master.h5", before);
  log(`file-opened: ${JSON.stringify(opened)}`);
  expect(JSON.stringify(opened?.scanShape) === JSON.stringify(params.scan), `file-opened: scanShape ${JSON.stringify(opened?.scanShape)}, expected ${JSON.stringify(params.scan)}`);
  expect(JSON.stringify(opened?.detectorShape) === JSON.stringify(params.det), `file-opened: detectorShape ${JSON.stringify(opened?.detectorShape)}, expected ${JSON.stringify(params.det)}`);
  expect(opened?.frames === 256, `file-opened: ${opened?.frames} frames, expected 256`);
  const loaded = await waitEvent("file-loaded", (e) => e.type === "file-loaded" && e.name === "dev_small_master.h5", before);
  log(`file-loaded: ${JSON.stringify(loaded)}`);
  expect(loaded?.frames === 256 && loaded?.framesPresent === 256, `file-loaded: ${JSON.stringify(loaded)}, expected 256 frames present`);
  const order = (await events()).slice(before).map((e) => e.type);
  expect(order.indexOf("file-opened") < order.indexOf("file-loaded"), `file-opened must come before file-loaded: ${order.join(", ")}`);
  try {
    await page.waitForFunction((total) => window.scatterlabViewer.status().stem.countsTotal === total, STEM_TOTAL, { timeout: 20_000, polling: 100 });
  } catch { /* reported below */ }
  const counts = await page.evaluate(() => window.scatterlabViewer.status().stem.countsTotal);
  expect(counts === STEM_TOTAL, `status: total counts ${counts}, expected ${STEM_TOTAL}`);

  // The BF reference detector by command: a detector-changed event with its geometry, the image = reference.
  const bf = detectorCommands("dev_small").find((d) => d.name === "bf");
  if (!bf) throw new Error("dev_small_params.json has no bf detector");
  const { commands } = bf;
  const atCommand = (await events()).length;
  await page.evaluate((cs) => cs.forEach((c) => window.scatterlabViewer.command(c)), commands);
  const changed = await waitEvent("detector-changed (command)", (e) => e.type === "detector-changed" && e.source === "command", atCommand, 20_000);
  log(`detector-changed: ${JSON.stringify(changed)}`);
  expect(changed?.index === 0 && changed?.name === "BF" && changed?.selected === true, `detector-changed: ${JSON.stringify(changed)}, expected index 0 "BF" selected`);
  expect(isDeepStrictEqual(changed?.shape, commands[0].shape), `detector-changed: shape ${JSON.stringify(changed?.shape)}, expected the command's ${JSON.stringify(commands[0].shape)}`);
  const reference = referenceDisplay("dev_small");
  try {
    await page.waitForFunction((w) => window.scatterlabViewer.status().stem.image?.lutFnv1a64 === w, reference.bf.lutFnv1a64, { timeout: 20_000, polling: 100 });
  } catch { /* compared below */ }
  const image = await page.evaluate(() => window.scatterlabViewer.status().stem.image);
  log(`BF image: ${JSON.stringify(image)}`);
  failures.push(...compareImage("viewer bf", image, reference.bf));
  mkdirSync(outDir, { recursive: true });
  writeFileSync(join(outDir, "viewer_bf.png"), await page.screenshot({ type: "png" }));

  // The user drags the BF disc 6 detector pixels to the right on the diffraction pattern.
  const geometry = await page.evaluate(() => ({ dp: window.scatterlabViewer.landmark("stem dp"), canvas: window.scatterlabViewer.canvas.getBoundingClientRect().toJSON() }));
  if (!geometry.dp) failures.push("landmark(\"stem dp\") is undefined");
  else {
    const [x, y, w, h] = geometry.dp;
    const [row, col] = commands[0].shape.center;
    const [det0, det1] = params.det;
    /**
     * The page coordinates of detector pixel (r, c) on the diffraction pattern.
     * @param {number} r
     * @param {number} c
     */
    const at = (r, c) => [geometry.canvas.left + x + ((c + 0.5) * w) / det1, geometry.canvas.top + y + ((r + 0.5) * h) / det0];
    const atDrag = (await events()).length;
    const [x0, y0] = at(row, col);
    const [x1] = at(row, col + 6);
    await page.mouse.move(x0, y0);
    await page.mouse.down();
    for (let i = 1; i <= 6; i++) await page.mouse.move(x0 + ((x1 - x0) * i) / 6, y0, { steps: 2 });
    await page.mouse.up();
    await waitEvent("detector-changed (drag)", (e) => e.type === "detector-changed" && e.source === "ui" && e.index === 0, atDrag, 20_000);
    await page.waitForTimeout(500);
    const dragged = (await events()).slice(atDrag).filter((e) => e.type === "detector-changed").filter((e) => e.source === "ui" && e.index === 0);
    const last = dragged.at(-1);
    log(`drag: ${dragged.length} events, last ${JSON.stringify(last)}`);
    const moved = last && last.shape.kind !== "rect" ? last.shape.center[1] - col : NaN;
    expect(last?.shape.kind === "disc" && last.shape.radius === 9.5 && Math.abs(last.shape.center[0] - row) < 0.5 && moved > 4 && moved < 8,
      `drag: the disc should move ~6 px along the columns, keeping r = 9.5: ${JSON.stringify(last)}`);
  }

  // A command that parses but fails while applying: an error event naming it.
  const atError = (await events()).length;
  await page.evaluate(() => window.scatterlabViewer.command({ do: "stemDetector", index: 7, shape: { kind: "disc", center: [1, 1], radius: 2 } }));
  const error = await waitEvent("error", (e) => e.type === "error", atError, 20_000);
  log(`error: ${JSON.stringify(error)}`);
  expect(error?.source === "command" && /index 7/.test(error?.message ?? ""), `error event: ${JSON.stringify(error)}, expected source "command" naming index 7`);
  const thrown = await page.evaluate(() => { try { window.scatterlabViewer.command({ do: "stemDetector", shape: { kind: "disc", center: [1, 1], radius: -1 } }); return null; } catch (e) { return e instanceof Error ? e.message : String(e); } });
  expect(/radius/.test(thrown ?? ""), `a bad field must throw naming it: ${thrown}`);

  // destroy: the canvas goes, later calls throw.
  const after = await page.evaluate(() => {
    const v = window.scatterlabViewer;
    v.destroy();
    v.destroy();
    let message = null;
    try { v.status(); } catch (e) { message = e instanceof Error ? e.message : String(e); }
    return { canvases: document.querySelectorAll("#viewer canvas").length, message };
  });
  log(`destroy: ${JSON.stringify(after)}`);
  expect(after.canvases === 0 && /destroyed/.test(after.message ?? ""), `destroy: ${JSON.stringify(after)}`);
  await page.waitForTimeout(300);
  failures.push(...browser.problems);

  // A wasm the bundler did not emit: mountViewer rejects naming the URL, the 404 and `wasmUrl`
  // (a fresh page on the same origin, not watched: the 404s are expected there).
  const bare = await browser.context.newPage();
  await bare.goto(`${server.url}no-such-page`, { waitUntil: "load" });
  const missing = await bare.evaluate(async () => {
    const url = "/dist/viewer.js";
    const { mountViewer } = /** @type {ScatterlabViewerModule} */ (await import(url));
    try { await mountViewer(document.body, { wasmUrl: "/dist/viewer-app/missing.wasm" }); return "resolved"; } catch (e) { return e instanceof Error ? e.message : String(e); }
  });
  log(`missing wasm: ${missing}`);
  expect(/missing\.wasm \(HTTP 404\).*`wasmUrl`/.test(missing), `a missing wasm must reject naming its URL, the 404 and wasmUrl: ${missing}`);
});
finish("viewer", failures);
