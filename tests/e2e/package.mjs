#!/usr/bin/env node
// End to end for the npm package: tests/e2e/package.html imports dist/index.js (the wrapper), which
// runs the wasm in its Web Worker on the CPU and on WebGPU; every check on that page must pass.
// A second browser without WebGPU checks that device "gpu" then fails loudly (no silent fallback).
import { CHROMIUM_ARGS, CHROMIUM_BASE_ARGS, launchBrowser, log, startServer } from "./harness.mjs";

const failures = [];
const server = await startServer();

/** Opens package.html in a fresh browser with `args` and collects its checks. */
async function run(label, args, query) {
  const browser = await launchBrowser(args);
  try {
    const page = await browser.context.newPage();
    browser.watch(page, label);
    await page.goto(`${server.url}tests/e2e/package.html${query}`, { waitUntil: "load" });
    const handle = await page.waitForFunction(() => window.__scatterlabPackageResult, null, { timeout: 60_000, polling: 100 });
    const result = await handle.jsonValue();
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
  await run("package (WebGPU)", CHROMIUM_ARGS, "");
  await run("package (no WebGPU adapter)", CHROMIUM_BASE_ARGS, "?expect=no-adapter");
} finally {
  server.stop();
}
if (failures.length > 0) {
  console.error(`e2e package: FAILED\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("package: ok");
