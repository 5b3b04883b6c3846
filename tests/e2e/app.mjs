#!/usr/bin/env node
// End to end: index.html served on 127.0.0.1 in headless Chromium. The egui app must mark itself
// ready within 90 s, render with the WebGPU backend, log no console/page error, and paint a
// non-blank canvas (screenshot in tests/e2e/out/app.png).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodePng, imageStats, launchBrowser, log, outDir, startServer } from "./harness.mjs";

const READY_TIMEOUT_MS = Number(process.env.E2E_READY_TIMEOUT_MS ?? 90_000);
const EXPECTED_BACKEND = "browserwebgpu";
// A blank page has 1 colour and an error message ~250 on ~1 % of the page; the egui app paints
// ~1300 colours on ~40 % of it (panels, text, plot).
const MIN_DISTINCT_COLOURS = 300;
const MIN_NON_BACKGROUND = 0.05;

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
