#!/usr/bin/env node
// End to end for fitting through the npm package: tests/e2e/fit.html runs short seeded fits in the
// package's Web Worker (progress events, same seed → same result, cancel from the UI thread, resume,
// LM polish, errors, a short WebGPU fit); every check on that page must pass. The fixture's fit task
// ($SCATTERLAB_FIXTURES or ../shared/fixtures beside the repository) is injected into the page.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_ARGS, launchBrowser, log, repoRoot, startServer } from "./harness.mjs";

const fixtures = process.env.SCATTERLAB_FIXTURES ?? join(repoRoot, "..", "shared", "fixtures");
const task = readFileSync(join(fixtures, "refl", "fit_task.json"), "utf8");
const failures = [];
const server = await startServer();
const browser = await launchBrowser(CHROMIUM_ARGS);
try {
  const page = await browser.context.newPage();
  browser.watch(page, "fit");
  await page.addInitScript((text) => { window.__fitTask = text; }, task);
  await page.goto(`${server.url}tests/e2e/fit.html`, { waitUntil: "load" });
  const handle = await page.waitForFunction(() => window.__scatterlabFitResult, null, { timeout: 180_000, polling: 100 });
  const result = await handle.jsonValue();
  for (const line of result.log) log(`fit: ${line}`);
  for (const c of result.checks) {
    log(`fit: ${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail ? ` — ${c.detail}` : ""}`);
    if (!c.ok) failures.push(`${c.name}: ${c.detail}`);
  }
  failures.push(...result.errors.map((e) => `page threw: ${e}`));
  if (result.checks.length === 0) failures.push("no checks ran");
  failures.push(...browser.problems);
} finally {
  await browser.close();
  server.stop();
}
if (failures.length > 0) {
  console.error(`e2e fit: FAILED\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("fit: ok");
