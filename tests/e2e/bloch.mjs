#!/usr/bin/env node
// End to end for Bloch-wave simulation and refinement through the npm package: tests/e2e/bloch.html
// simulates a zone-axis case and refines the synthetic quartz experiment in the package's Web Worker
// (progress events, cancel from the UI thread, errors as Errors), runs reference cases of the
// fixture's reference.json on the CPU (≤ 1e-6 of I_ref) and on the page's WebGPU (≤ 1e-4), and a
// 100-tilt ~300-beam rocking sweep while the page measures its main thread (no task over 50 ms),
// with progress and a cancel; every check on that page must pass. A second browser without WebGPU
// checks that device "gpu" then rejects by name. The experiment's three files and reference.json
// ($SCATTERLAB_FIXTURES or ../shared/fixtures beside the repository) are injected as texts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_ARGS, CHROMIUM_BASE_ARGS, launchBrowser, log, repoRoot, startServer } from "./harness.mjs";

const fixtures = process.env.SCATTERLAB_FIXTURES ?? join(repoRoot, "..", "shared", "fixtures");
const dir = join(fixtures, "bloch", "synthetic_quartz");
const files = Object.fromEntries(["experiment.yaml", "exp_data.cif_pets", "start.cif"].map((n) => [n, readFileSync(join(dir, n), "utf8")]));
const reference = readFileSync(join(fixtures, "bloch", "reference.json"), "utf8");
const failures = [];
const server = await startServer();

async function run(label, args, query) {
  const browser = await launchBrowser(args);
  try {
    const page = await browser.context.newPage();
    browser.watch(page, label);
    await page.addInitScript(([texts, referenceText]) => {
      window.__blochFiles = texts;
      window.__blochReference = referenceText;
    }, [files, reference]);
    await page.goto(`${server.url}tests/e2e/bloch.html${query}`, { waitUntil: "load" });
    const handle = await page.waitForFunction(() => window.__scatterlabBlochResult, null, { timeout: 400_000, polling: 100 });
    const result = await handle.jsonValue();
    for (const line of result.log) log(`${label}: ${line}`);
    for (const c of result.checks) {
      log(`${label}: ${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail ? ` — ${c.detail}` : ""}`);
      if (!c.ok) failures.push(`${label}: ${c.name}: ${c.detail}`);
    }
    failures.push(...result.errors.map((e) => `${label}: page threw: ${e}`));
    if (result.checks.length === 0) failures.push(`${label}: no checks ran`);
    failures.push(...browser.problems);
  } finally {
    await browser.close();
  }
}

try {
  await run("bloch", CHROMIUM_ARGS, "");
  await run("bloch (no WebGPU adapter)", CHROMIUM_BASE_ARGS, "?expect=no-adapter");
} finally {
  server.stop();
}
if (failures.length > 0) {
  console.error(`e2e bloch: FAILED\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("bloch: ok");
