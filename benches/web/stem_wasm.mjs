#!/usr/bin/env node
// 4D-STEM chunk decoding as wasm in headless Chromium: the dev_medium data files (bitshuffle+LZ4,
// 16,384 frames of 96 × 96 u16, 302 MB decoded), best and median of 5 passes after a warm-up,
// so scripts/bench.sh can set it beside stem_decode_bench's native rows (goal ≥ 0.5 GB/s).
//   node benches/web/stem_wasm.mjs ['{"stem_decode_gbs": {"raw": …, "read_chunks": …, "h5py_ds": …}}']
// Reads the files from ../shared/fixtures/stem (or $SCATTERLAB_FIXTURES/stem) and serves them to
// the page under /__stem/ (page.route). Needs dist/pkg (scripts/build-web.sh). Prints decoded
// GB/s and the checksum, then one JSON line {"stem_wasm_gbs": …}; given stem_decode_bench's JSON
// line, also native/wasm for the same path and wasm vs h5py.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { CHROMIUM_BASE_ARGS, launchBrowser, repoRoot, startServer } from "../../tests/e2e/harness.mjs";

const REPS = 5;
// Decoded bytes: frames × 96 × 96 × 2 (the pixel sum is the check that every frame was decoded).
const DECODED = 16_384 * 96 * 96 * 2;
const CHECKSUM = 6_713_165_579; // every pixel of the 4 files, as h5py + hdf5plugin sum them
const native = process.argv[2] ? JSON.parse(process.argv[2]).stem_decode_gbs : null;

const dir = join(process.env.SCATTERLAB_FIXTURES ?? join(repoRoot, "..", "shared", "fixtures"), "stem");
const names = readdirSync(dir).filter((n) => /^dev_medium_data_\d+\.h5$/.test(n)).sort();
if (names.length === 0) throw new Error(`no dev_medium_data_* files in ${dir}`);
const bodies = new Map(names.map((n) => [n, readFileSync(join(dir, n))]));

const server = await startServer();
// The e2e flags without WebGPU: the decoder needs no adapter, and no SwiftShader competing for the cores.
const browser = await launchBrowser(CHROMIUM_BASE_ARGS);
try {
  const page = await browser.context.newPage();
  browser.watch(page, "stem_wasm");
  await page.route(`${server.url}__stem/*`, (route) => {
    const body = bodies.get(new URL(route.request().url()).pathname.split("/").pop());
    return body ? route.fulfill({ status: 200, contentType: "application/octet-stream", body }) : route.fulfill({ status: 404 });
  });
  await page.goto(`${server.url}benches/web/stem_wasm.html`, { waitUntil: "load" });
  await page.waitForFunction(() => window.stemBenchReady || window.stemBenchError, null, { timeout: 60_000, polling: 100 });
  const error = await page.evaluate(() => window.stemBenchError);
  if (error) throw new Error(`wasm did not start: ${error}`);
  const r = await page.evaluate(([n, reps]) => window.stemBench(n, reps), [names, REPS]);
  if (browser.problems.length > 0) throw new Error(`browser problems:\n  ${browser.problems.join("\n  ")}`);
  const gbs = (s) => DECODED / s / 1e9;
  const ok = r.checksum === CHECKSUM;
  console.log(`wasm in Chromium ${browser.context.browser()?.version() ?? "?"}: dev_medium, ${names.length} files, ` +
              `${(r.stored / 1e6).toFixed(1)} MB stored → ${(DECODED / 1e6).toFixed(1)} MB decoded; one thread, best/median of ${REPS}`);
  console.log(`wasm read_chunks + decode (memory)  | ${gbs(r.best).toFixed(3)} GB/s best, ${gbs(r.median).toFixed(3)} median | ` +
              `checksum ${r.checksum} (${ok ? "agrees" : `DIFFERS from ${CHECKSUM}`})`);
  if (native) {
    const ratio = (key, label) => {
      if (typeof native[key] === "number") console.log(`  ${label.padEnd(38)} ${native[key].toFixed(3)} GB/s = ${(native[key] / gbs(r.best)).toFixed(2)}x wasm`);
    };
    ratio("read_chunks", "native read_chunks + decode (memory)");
    ratio("raw", "native raw decode (memory)");
    ratio("h5py_ds", "h5py ds[...] + hdf5plugin (disk)");
  }
  console.log(`wasm decode: ${gbs(r.best).toFixed(3)} GB/s (goal >= 0.5 GB/s: ${gbs(r.best) >= 0.5 ? "met" : "NOT met"})`);
  console.log(JSON.stringify({ stem_wasm_gbs: { best: gbs(r.best), median: gbs(r.median), checksum: r.checksum } }));
  if (!ok) process.exitCode = 1;
} finally {
  await browser.close();
  server.stop();
}
