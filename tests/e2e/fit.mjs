#!/usr/bin/env node
// End to end for fitting through the npm package: tests/e2e/fit.html runs short seeded fits in the
// package's Web Worker (progress events, same seed → same result, cancel from the UI thread, resume,
// LM polish, errors, a short WebGPU fit); every check on that page must pass. The fixture's fit task
// ($SCATTERLAB_FIXTURES or ../shared/fixtures beside the repository) is injected into the page.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { finish, fixtures, runCheckPage, withServer } from "./harness.mjs";

const task = readFileSync(join(fixtures, "refl", "fit_task.json"), "utf8");
const failures = await withServer((server) => runCheckPage(server, {
  label: "fit", path: "tests/e2e/fit.html", globals: { __fitTask: task }, resultName: "__scatterlabFitResult", timeout: 180_000,
}));
finish("fit", failures);
