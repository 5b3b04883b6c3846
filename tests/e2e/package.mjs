#!/usr/bin/env node
// End to end for the npm package: tests/e2e/package.html imports dist/index.js (the wrapper), which
// runs the wasm in its Web Worker on the CPU and on WebGPU; every check on that page must pass.
// A second browser without WebGPU checks that device "gpu" then fails loudly (no silent fallback).
import { CHROMIUM_ARGS, CHROMIUM_BASE_ARGS, finish, runCheckPage, withServer } from "./harness.mjs";

const failures = await withServer(async (server) => {
  /**
   * Opens package.html in a fresh browser with `args` and collects its checks.
   * @param {string} label
   * @param {string[]} args
   * @param {string} query
   */
  const run = (label, args, query) => runCheckPage(server, {
    label, args, path: `tests/e2e/package.html${query}`, resultName: "__scatterlabPackageResult", timeout: 60_000, failurePrefix: `${label}: `,
  });
  return [...await run("package (WebGPU)", CHROMIUM_ARGS, ""), ...await run("package (no WebGPU adapter)", CHROMIUM_BASE_ARGS, "?expect=no-adapter")];
});
finish("package", failures);
