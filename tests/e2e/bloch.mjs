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
import { CHROMIUM_ARGS, CHROMIUM_BASE_ARGS, finish, fixtures, quartzExperiment, runCheckPage, withServer } from "./harness.mjs";

const files = quartzExperiment();
const reference = readFileSync(join(fixtures, "bloch", "reference.json"), "utf8");
const failures = await withServer(async (server) => {
  /**
   * bloch.html in a fresh browser with `args`.
   * @param {string} label
   * @param {string[]} args
   * @param {string} query
   */
  const run = (label, args, query) => runCheckPage(server, {
    label, args, path: `tests/e2e/bloch.html${query}`, globals: { __blochFiles: files, __blochReference: reference },
    resultName: "__scatterlabBlochResult", timeout: 400_000, failurePrefix: `${label}: `,
  });
  return [...await run("bloch", CHROMIUM_ARGS, ""), ...await run("bloch (no WebGPU adapter)", CHROMIUM_BASE_ARGS, "?expect=no-adapter")];
});
finish("bloch", failures);
