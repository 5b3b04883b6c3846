#!/usr/bin/env node
// End to end: index.html served on 127.0.0.1 in headless Chromium. The egui app must mark itself
// ready within 90 s, render with the WebGPU backend, log no console/page error, and paint a
// non-blank canvas (screenshot in tests/e2e/out/app.png). Then dev_small's four files go to
// app.open_files (the page's drop path): the app opens them read in pieces, switches to 4D-STEM
// and loads every frame; the total counts equal the fixture's (bf + df totals of params.json).
// Each reference detector (stem_reference.mjs) is set through app.command: the displayed image's
// sum and LUT digest equal the reference's (screenshot app_stem_bf.png). Then dev_medium: the
// wasm heap's growth is bounded by its decoded frames plus one data file (plus an allowance).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { appCommand, appStatus, decodePng, finish, fixtures, imageStats, log, outDir, withPage } from "./harness.mjs";
import { DEV_SMALL_FILES, compareImage, detectorCommands, openStemFiles, referenceDisplay, stemParams } from "./stem_reference.mjs";

const READY_TIMEOUT_MS = Number(process.env.E2E_READY_TIMEOUT_MS ?? 90_000);
const EXPECTED_BACKEND = "browserwebgpu";
// A blank page has 1 colour and an error message ~250 on ~1 % of the page; the egui app paints
// ~1300 colours on ~40 % of it (panels, text, plot).
const MIN_DISTINCT_COLOURS = 300;
const MIN_NON_BACKGROUND = 0.05;

const STEM_TIMEOUT_MS = 60_000;
// dev_small_params.json: references.virtual_detectors bf.total + df.total (disc ≤ 9.5 px and beyond).
const STEM_TOTAL = 754651 + 16503;
// Heap beyond the frames and one data file: products, textures, the opening's metadata ranges
// (≤ 2.5 MB for dev_medium, unit-tested) and allocator slack: 6.2 MB measured on 2026-12-04.
const HEAP_ALLOWANCE = 12e6;

/** @type {string[]} */
const failures = [];
await withPage("index.html", async (page, server, browser) => {
  /**
   * Waits until the acquisition `name` is loaded (or failed) in the 4D-STEM workspace; false on a timeout.
   * @param {string} name
   * @param {number} timeout
   */
  const stemLoaded = async (name, timeout) => {
    try {
      await page.waitForFunction((name) => {
        const s = JSON.parse(window.scatterlabApp.status()).stem;
        return s?.error || (s?.name === name && !s.loading && s.countsTotal != null);
      }, name, { timeout, polling: 250 });
      return true;
    } catch {
      return false;
    }
  };
  const t0 = Date.now();
  await page.goto(`${server.url}index.html`, { waitUntil: "load" });
  try {
    await page.waitForFunction(() => document.documentElement.dataset.appReady === "1", null, { timeout: READY_TIMEOUT_MS, polling: 250 });
    log(`app ready after ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } catch {
    const status = await page.locator("#scatterlab_status").textContent().catch(() => "");
    failures.push(`data-app-ready="1" not set within ${READY_TIMEOUT_MS / 1000} s (page says: ${status?.trim() || "nothing"})`);
  }
  const backend = await page.evaluate(() => document.documentElement.dataset.renderBackend ?? null);
  log(`data-render-backend = ${JSON.stringify(backend)}`);
  if (backend !== EXPECTED_BACKEND) failures.push(`render backend is ${JSON.stringify(backend)}, expected ${JSON.stringify(EXPECTED_BACKEND)} (WebGPU)`);
  const adapter = await page.evaluate(async () => {
    const a = await navigator.gpu?.requestAdapter();
    return a ? { vendor: a.info?.vendor, architecture: a.info?.architecture, fallback: a.info?.isFallbackAdapter } : null;
  });
  log(`page WebGPU adapter: ${JSON.stringify(adapter)}`);

  // Let a few more frames paint, then look at the pixels.
  await page.waitForTimeout(1000);
  mkdirSync(outDir, { recursive: true });
  const shot = await page.screenshot({ type: "png" });
  const shotPath = join(outDir, "app.png");
  writeFileSync(shotPath, shot);
  const stats = imageStats(decodePng(shot));
  log(`screenshot ${shotPath}: ${stats.distinct} distinct colours, ${(stats.nonBackground * 100).toFixed(1)} % non-background pixels`);
  if (stats.distinct < MIN_DISTINCT_COLOURS || stats.nonBackground < MIN_NON_BACKGROUND) {
    failures.push(`screenshot looks blank: ${stats.distinct} colours (need ≥ ${MIN_DISTINCT_COLOURS}), ${(stats.nonBackground * 100).toFixed(2)} % non-background (need ≥ ${MIN_NON_BACKGROUND * 100} %)`);
  }

  const t1 = Date.now();
  await openStemFiles(page, DEV_SMALL_FILES, "app");
  if (!await stemLoaded("dev_small_master.h5", STEM_TIMEOUT_MS)) failures.push(`dev_small not loaded from open_files within ${STEM_TIMEOUT_MS / 1000} s`);
  const status = await appStatus(page);
  log(`open_files: ${JSON.stringify(status.stem)} in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  if (status.stem?.error) failures.push(`open_files: ${status.stem.error}`);
  if (status.workspace !== "Stem") failures.push(`open_files: the workspace is ${status.workspace}, expected Stem`);
  if (status.stem?.framesLoaded !== 256) failures.push(`open_files: ${status.stem?.framesLoaded} frames loaded, expected 256`);
  if (status.stem?.countsTotal !== STEM_TOTAL) failures.push(`open_files: total counts ${status.stem?.countsTotal}, expected ${STEM_TOTAL}`);
  await page.waitForTimeout(500);
  writeFileSync(join(outDir, "app_stem_files.png"), await page.screenshot({ type: "png" }));

  // Each reference detector through the display pipeline: sum, limits and the LUT digest of the
  // image on display equal the reference file's (h5py; adf: the fixture's own LUT indices).
  const reference = referenceDisplay("dev_small");
  for (const { name, commands } of detectorCommands("dev_small")) {
    await appCommand(page, ...commands);
    const want = { label: name.toUpperCase(), ...reference[name] };
    try {
      await page.waitForFunction((w) => {
        const s = JSON.parse(window.scatterlabApp.status());
        const im = s.stem?.image;
        return s.commandError || (im?.detector === w.label && im.sum === w.sum && im.lutFnv1a64 === w.lutFnv1a64);
      }, want, { timeout: 20_000, polling: 100 });
    } catch { /* compared below */ }
    const s = await appStatus(page);
    log(`browser ${name}: ${JSON.stringify(s.stem.image)}`);
    if (s.commandError) failures.push(`${name}: command failed: ${s.commandError}`);
    failures.push(...compareImage(`browser ${name}`, s.stem.image, reference[name]));
    if (name === "bf") writeFileSync(join(outDir, "app_stem_bf.png"), await page.screenshot({ type: "png" }));
  }

  // The GPU live path on the page's WebGPU device: the frames resident there, BF recomputed on
  // it equals the reference through the display pipeline.
  await appCommand(page, { do: "stemDevice", name: "gpu" }, ...detectorCommands("dev_small")[0].commands);
  try {
    await page.waitForFunction(() => { const s = JSON.parse(window.scatterlabApp.status()); return s.commandError || s.stem?.device === "gpu"; }, null, { timeout: 60_000, polling: 100 });
  } catch { failures.push("GPU live path: no GPU images within 60 s"); }
  const g = await appStatus(page);
  log(`browser bf on the GPU: ${JSON.stringify(g.stem.image)} · ${g.stem.device} · ${g.stem.frameTimeMs?.toFixed(1)} ms`);
  if (g.commandError) failures.push(`GPU live path: ${g.commandError}`);
  failures.push(...compareImage("browser bf on the GPU", g.stem.image, reference.bf));
  await appCommand(page, { do: "stemDevice", name: "cpu" });

  // SSB in the app: the CPU phase (the library's defaults: Σ|phase| of crates/web/src/h5/ssb_tests.rs
  // E2E_SSB), then the same on the page's WebGPU device (f32) and with the sliders moved there.
  /**
   * Runs SSB with `command`'s settings; returns status.stem.ssb once its phase (or error) is there.
   * @param {{ device: "cpu" | "gpu", aberrations?: [number, number, number] }} command
   */
  const ssbOn = async (command) => {
    await appCommand(page, { do: "stemSsb", ...command });
    try {
      // Commands apply at the next frame: wait for this one's settings, then for their result.
      await page.waitForFunction((want) => {
        const s = JSON.parse(window.scatterlabApp.status());
        const ssb = s.stem?.ssb;
        const r = ssb?.result;
        const applied = ssb?.device.startsWith(want.device) && (!want.aberrations || r?.aberrations.join() === want.aberrations.join());
        return s.commandError || ssb?.blocked || (applied && r?.current && (r.absPhaseSum != null || r.error));
      }, command, { timeout: 120_000, polling: 100 });
    } catch { failures.push(`SSB ${JSON.stringify(command)}: no phase within 120 s`); }
    const s = await appStatus(page);
    if (s.commandError) failures.push(`SSB ${JSON.stringify(command)}: ${s.commandError}`);
    log(`browser SSB ${JSON.stringify(command)}: ${JSON.stringify(s.stem.ssb)}`);
    return s.stem.ssb;
  };
  const SSB_ABS_PHASE_SUM = 6.569376548519358;
  const cpuSsb = await ssbOn({ device: "cpu" });
  // E2E_SSB sums the f32 phases the package returns: 1e-6 as tests/e2e/h5.html allows.
  if (!(Math.abs(cpuSsb.result?.absPhaseSum - SSB_ABS_PHASE_SUM) < 1e-6 * SSB_ABS_PHASE_SUM)) failures.push(`SSB on the CPU: Σ|phase| ${cpuSsb.result?.absPhaseSum}, want ${SSB_ABS_PHASE_SUM}`);
  const gpuSsb = await ssbOn({ device: "gpu" });
  if (!gpuSsb.result?.device.startsWith("gpu") || !(Math.abs(gpuSsb.result?.absPhaseSum - SSB_ABS_PHASE_SUM) < 1e-5 * SSB_ABS_PHASE_SUM)) failures.push(`SSB on WebGPU: ${JSON.stringify(gpuSsb.result)}`);
  const moved = await ssbOn({ device: "gpu", aberrations: [3, 0.6, 0.7] });
  if (!moved.result?.device.startsWith("gpu") || moved.result?.aberrations.join() !== "3,0.6,0.7" || moved.result?.error) failures.push(`SSB on WebGPU after the sliders moved: ${JSON.stringify(moved.result)}`);
  writeFileSync(join(outDir, "app_stem_ssb_gpu.png"), await page.screenshot({ type: "png" }));
  // Browse follows the master's external link into a picked data file (issue 17 item 7): the
  // data file's dataset (100 frames of 64 × 64) and a quick view read from its bytes in ranges.
  await appCommand(page, { do: "stemBrowse", file: "dev_small_master.h5", path: "/entry/data/data_000001" });
  try {
    await page.waitForFunction(() => { const s = JSON.parse(window.scatterlabApp.status()); const v = s.stem?.browse?.view; return s.commandError || (v && v.rows != null); }, null, { timeout: 60_000, polling: 100 });
  } catch { failures.push("Browse: no quick view of the linked dataset within 60 s"); }
  const browse = await appStatus(page);
  log(`browser Browse: ${JSON.stringify(browse.stem.browse)}`);
  const bt = browse.stem.browse?.target;
  if (browse.commandError || bt?.file !== "dev_small_data_000001.h5" || bt?.path !== "/entry/data/data" || bt?.shape?.join() !== "100,64,64"
    || browse.stem.browse?.view?.rows !== 64 || browse.stem.browse?.view?.cols !== 64) failures.push(`Browse into the linked data file: ${browse.commandError ?? JSON.stringify(browse.stem.browse)}`);
  writeFileSync(join(outDir, "app_stem_browse_link.png"), await page.screenshot({ type: "png" }));

  // Back to the workspace page: the SSB page would gather a BF stack for the next acquisition.
  await appCommand(page, { do: "stemPage", name: "workspace" });

  // Memory: dev_medium's five files, served to the page as Blobs, through open_files. The wasm
  // heap (linear memory only grows, so its size is the peak) may grow by the resident frames,
  // one data file's compressed bytes and HEAP_ALLOWANCE for the rest.
  const medium = stemParams("dev_medium");
  const mediumNames = Object.keys(medium.files).filter((n) => !n.endsWith("_reference.h5"));
  await page.route("**/__fixtures/**", (route) => route.fulfill({ body: readFileSync(join(fixtures, "stem", basename(new URL(route.request().url()).pathname))) }));
  const before = await page.evaluate(() => window.scatterlabApp.heap_bytes());
  const t2 = Date.now();
  await page.evaluate(async (names) => {
    const files = await Promise.all(names.map(async (n) => new File([await (await fetch(`/__fixtures/${n}`)).blob()], n)));
    window.scatterlabApp.open_files(files);
  }, mediumNames);
  if (!await stemLoaded("dev_medium_master.h5", 120_000)) failures.push("dev_medium not loaded from open_files within 120 s");
  const after = await page.evaluate(() => window.scatterlabApp.heap_bytes());
  const m = (await appStatus(page)).stem;
  const [frames, px] = [medium.scan[0] * medium.scan[1], medium.det[0] * medium.det[1]];
  const resident = frames * px * 2;
  const largest = Math.max(...mediumNames.filter((n) => n.includes("_data_")).map((n) => medium.files[n].bytes));
  const mb = (/** @type {number} */ b) => (b / 1e6).toFixed(1);
  log(`dev_medium: ${m.framesLoaded} frames in ${((Date.now() - t2) / 1000).toFixed(1)} s; wasm heap ${mb(before)} → ${mb(after)} MB (resident frames ${mb(resident)} MB, largest data file ${mb(largest)} MB)`);
  if (m.error) failures.push(`dev_medium: ${m.error}`);
  if (m.framesLoaded !== frames) failures.push(`dev_medium: ${m.framesLoaded} frames loaded, expected ${frames}`);
  const vd = medium.references.virtual_detectors;
  if (m.countsTotal !== vd.bf.total + vd.df.total) failures.push(`dev_medium: total counts ${m.countsTotal}, expected ${vd.bf.total + vd.df.total}`);
  if (after - before > resident + largest + HEAP_ALLOWANCE) {
    failures.push(`dev_medium: the wasm heap grew by ${mb(after - before)} MB, more than the frames (${mb(resident)}) + one data file (${mb(largest)}) + ${mb(HEAP_ALLOWANCE)} MB`);
  }
  failures.push(...browser.problems);
});
finish("app", failures);
