#!/usr/bin/env node
// End to end: index.html served on 127.0.0.1 in headless Chromium. The egui app must mark itself
// ready within 90 s, render with the WebGPU backend, log no console/page error, and paint a
// non-blank canvas (screenshot in tests/e2e/out/app.png). Then dev_small's four files go to
// app.open_files (the page's drop path): the app opens them read in pieces, switches to 4D-STEM
// and loads every frame; the total counts equal the fixture's (bf + df totals of params.json).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { decodePng, imageStats, launchBrowser, log, outDir, startServer } from "./harness.mjs";

const READY_TIMEOUT_MS = Number(process.env.E2E_READY_TIMEOUT_MS ?? 90_000);
const EXPECTED_BACKEND = "browserwebgpu";
// A blank page has 1 colour and an error message ~250 on ~1 % of the page; the egui app paints
// ~1300 colours on ~40 % of it (panels, text, plot).
const MIN_DISTINCT_COLOURS = 300;
const MIN_NON_BACKGROUND = 0.05;

const STEM_TIMEOUT_MS = 60_000;
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const fixtures = process.env.SCATTERLAB_FIXTURES ?? join(repoRoot, "..", "shared", "fixtures");
const stemNames = ["dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5"];
// dev_small_params.json: references.virtual_detectors bf.total + df.total (disc ≤ 9.5 px and beyond).
const STEM_TOTAL = 754651 + 16503;

const failures = [];
const server = await startServer();
const browser = await launchBrowser();
try {
  const page = await browser.context.newPage();
  browser.watch(page, "index.html");
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

  const data = Object.fromEntries(stemNames.map((n) => [n, readFileSync(join(fixtures, "stem", n)).toString("base64")]));
  const t1 = Date.now();
  await page.evaluate((data) => {
    const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    window.scatterlabApp.open_files(Object.entries(data).map(([name, b64]) => new File([bytes(b64)], name)));
  }, data);
  try {
    await page.waitForFunction(() => {
      const s = JSON.parse(window.scatterlabApp.status()).stem;
      return s?.error || (s?.name === "dev_small_master.h5" && !s.loading && s.countsTotal != null);
    }, null, { timeout: STEM_TIMEOUT_MS, polling: 250 });
  } catch {
    failures.push(`dev_small not loaded from open_files within ${STEM_TIMEOUT_MS / 1000} s`);
  }
  const status = await page.evaluate(() => JSON.parse(window.scatterlabApp.status()));
  log(`open_files: ${JSON.stringify(status.stem)} in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  if (status.stem?.error) failures.push(`open_files: ${status.stem.error}`);
  if (status.workspace !== "Stem") failures.push(`open_files: the workspace is ${status.workspace}, expected Stem`);
  if (status.stem?.framesLoaded !== 256) failures.push(`open_files: ${status.stem?.framesLoaded} frames loaded, expected 256`);
  if (status.stem?.countsTotal !== STEM_TOTAL) failures.push(`open_files: total counts ${status.stem?.countsTotal}, expected ${STEM_TOTAL}`);
  await page.waitForTimeout(500);
  writeFileSync(join(outDir, "app_stem_files.png"), await page.screenshot({ type: "png" }));
  failures.push(...browser.problems);
} finally {
  await browser.close();
  server.stop();
}

if (failures.length > 0) {
  console.error(`e2e app: FAILED\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("app: ok");
