#!/usr/bin/env node
// End to end for HDF5 / 4D-STEM files through the npm package: tests/e2e/h5.html builds `File`s
// from fixture bytes injected here (shared/ is not served), opens them in the package's Web
// Worker (read range by range with FileReaderSync), and checks stemInfo, the tree, readFrames,
// streamFrames (sums equal the native reference counts), a missing data file named, a cancel
// mid-stream and a throwing onBatch, and SSB ptychography (`files.ssb`: the native phase, a fit,
// a NaN option named); every check on that page must pass.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_ARGS, launchBrowser, log, repoRoot, startServer } from "./harness.mjs";

const fixtures = process.env.SCATTERLAB_FIXTURES ?? join(repoRoot, "..", "shared", "fixtures");
const names = [
  "dev_small_master.h5", "dev_small_data_000001.h5", "dev_small_data_000002.h5", "dev_small_data_000003.h5",
  "dev_oddtail_master.h5", "dev_oddtail_data_000001.h5", "dev_oddtail_data_000002.h5", "dev_oddtail_data_000003.h5",
];
const files = Object.fromEntries(names.map((n) => [n, readFileSync(join(fixtures, "stem", n)).toString("base64")]));
const failures = [];
const server = await startServer();
const browser = await launchBrowser(CHROMIUM_ARGS);
try {
  const page = await browser.context.newPage();
  browser.watch(page, "h5");
  await page.addInitScript((data) => { window.__h5Files = data; }, files);
  await page.goto(`${server.url}tests/e2e/h5.html`, { waitUntil: "load" });
  const handle = await page.waitForFunction(() => window.__scatterlabH5Result, null, { timeout: 120_000, polling: 100 });
  const result = await handle.jsonValue();
  for (const line of result.log) log(`h5: ${line}`);
  for (const c of result.checks) {
    log(`h5: ${c.ok ? "ok  " : "FAIL"} ${c.name}${c.detail ? ` — ${c.detail}` : ""}`);
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
  console.error(`e2e h5: FAILED\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("h5: ok");
