#!/usr/bin/env node
// End to end for Bloch-wave simulation and refinement through the npm package: tests/e2e/bloch.html
// simulates a zone-axis case and refines the synthetic quartz experiment in the package's Web Worker
// (progress events, cancel from the UI thread, errors as Errors); every check on that page must
// pass. The experiment's three files ($SCATTERLAB_FIXTURES or ../shared/fixtures beside the
// repository) are injected into the page as texts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_ARGS, launchBrowser, log, repoRoot, startServer } from "./harness.mjs";

const fixtures = process.env.SCATTERLAB_FIXTURES ?? join(repoRoot, "..", "shared", "fixtures");
const dir = join(fixtures, "bloch", "synthetic_quartz");
const files = Object.fromEntries(["experiment.yaml", "exp_data.cif_pets", "start.cif"].map((n) => [n, readFileSync(join(dir, n), "utf8")]));
const failures = [];
const server = await startServer();
const browser = await launchBrowser(CHROMIUM_ARGS);
try {
  const page = await browser.context.newPage();
  browser.watch(page, "bloch");
  await page.addInitScript((texts) => { window.__blochFiles = texts; }, files);
  await page.goto(`${server.url}tests/e2e/bloch.html`, { waitUntil: "load" });
  const handle = await page.waitForFunction(() => window.__scatterlabBlochResult, null, { timeout: 300_000, polling: 100 });
  const result = await handle.jsonValue();
  for (const line of result.log) log(`bloch: ${line}`);
  for (const c of result.checks) {
    log(`bloch: ${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail ? ` — ${c.detail}` : ""}`);
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
  console.error(`e2e bloch: FAILED\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("bloch: ok");
