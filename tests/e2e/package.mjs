#!/usr/bin/env node
// End to end for the npm package: tests/e2e/package.html imports dist/index.js (the wrapper), which
// runs the wasm in its Web Worker on the CPU and on WebGPU; every check on that page must pass.
import { launchBrowser, log, startServer } from "./harness.mjs";

const failures = [];
const server = await startServer();
const browser = await launchBrowser();
try {
  const page = await browser.context.newPage();
  browser.watch(page, "package.html");
  await page.goto(`${server.url}tests/e2e/package.html`, { waitUntil: "load" });
  const handle = await page.waitForFunction(() => window.__scatterlabPackageResult, null, { timeout: 60_000, polling: 100 });
  const result = await handle.jsonValue();
  for (const c of result.checks) {
    log(`package: ${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail ? ` — ${c.detail}` : ""}`);
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
  console.error(`e2e package: FAILED\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("package: ok");
