#!/usr/bin/env node
// Fits the fixture task (../shared/fixtures/refl/fit_task.json or $SCATTERLAB_FIXTURES) in headless
// Chromium through the npm package's Web Worker with the default DE (+ LM polish) settings, and prints
// wall time, evaluations and χ² per seed, and the median — the browser side of the ≤ 5 s goal.
//   node benches/web/fit_wasm.mjs [seeds…]      (default seeds 1 2 3; needs scripts/build-web.sh)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_BASE_ARGS, launchBrowser, repoRoot, startServer } from "../../tests/e2e/harness.mjs";

const fixtures = process.env.SCATTERLAB_FIXTURES ?? join(repoRoot, "..", "shared", "fixtures");
const taskText = readFileSync(join(fixtures, "refl", "fit_task.json"), "utf8");
const chi2Truth = JSON.parse(taskText).chi2_at_truth;
const seeds = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [1, 2, 3];

const server = await startServer();
const browser = await launchBrowser(CHROMIUM_BASE_ARGS);
try {
  const page = await browser.context.newPage();
  browser.watch(page, "fit_wasm");
  await page.addInitScript((text) => { window.__fitTask = text; }, taskText);
  await page.goto(`${server.url}benches/web/fit_wasm.html`, { waitUntil: "load" });
  await page.waitForFunction(() => window.fitBenchReady, null, { timeout: 60_000, polling: 100 });
  console.log(`browser fit (Chromium ${browser.context.browser()?.version() ?? "?"}, Web Worker, CPU f64 wasm): fixture task, DE default settings + LM`);
  const row = (...c) => console.log(c.map((x, i) => String(x).padStart(i === 0 ? 5 : 12)).join(" "));
  row("seed", "wall s", "evaluations", "DE evals/s", "generations", "chi2", "chi2/truth");
  const walls = [];
  for (const seed of seeds) {
    const r = await page.evaluate((s) => window.fitBench(s), seed);
    walls.push(r.wall);
    row(seed, r.wall.toFixed(2), r.evaluations, r.deRate.toFixed(0), r.generations, r.chi2.toFixed(2), (r.chi2 / chi2Truth).toFixed(4));
  }
  if (browser.problems.length > 0) throw new Error(`browser problems:\n  ${browser.problems.join("\n  ")}`);
  const median = [...walls].sort((a, b) => a - b)[Math.floor(walls.length / 2)];
  console.log(`browser fit median wall ${median.toFixed(2)} s (goal <= 5 s${median <= 5 ? ", met" : ", NOT met"})`);
  console.log(JSON.stringify({ browser_fit_seconds: median }));
} finally {
  await browser.close();
  server.stop();
}
