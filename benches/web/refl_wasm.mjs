#!/usr/bin/env node
// The CPU f64 reflectivity engine as wasm in headless Chromium, on refloxide's shape (N = 1 and
// 10,000 slabs), so scripts/bench.sh can set it beside refl_bench's native CPU column.
//   node benches/web/refl_wasm.mjs ['{"native_cpu": {"1": s, "10000": s}}']
// Needs dist/pkg (scripts/build-web.sh), or SCATTERLAB_BENCH_PKG=<folder under the repository
// root> for another wasm-bindgen output (a before/after comparison). Prints a table, then one
// JSON line {"wasm_cpu": {N: s}}; given refl_bench's native JSON line, the table also shows native seconds and wasm/native.
import { CHROMIUM_BASE_ARGS, launchBrowser, startServer } from "../../tests/e2e/harness.mjs";

const SIZES = [1, 10_000];
const REPS = 5;
const native = process.argv[2] ? JSON.parse(process.argv[2]).native_cpu : null;

const server = await startServer();
// The e2e flags without WebGPU: the CPU engine needs no adapter, and no SwiftShader competing for the cores.
const browser = await launchBrowser(CHROMIUM_BASE_ARGS);
const wasm = {};
try {
  const page = await browser.context.newPage();
  browser.watch(page, "refl_wasm");
  const pkg = process.env.SCATTERLAB_BENCH_PKG ? `?pkg=/${encodeURIComponent(process.env.SCATTERLAB_BENCH_PKG).replaceAll("%2F", "/")}` : "";
  await page.goto(`${server.url}benches/web/refl_wasm.html${pkg}`, { waitUntil: "load" });
  await page.waitForFunction(() => window.reflBenchReady || window.reflBenchError, null, { timeout: 60_000, polling: 100 });
  const error = await page.evaluate(() => window.reflBenchError);
  if (error) throw new Error(`wasm did not start: ${error}`);
  console.log(`wasm (${process.env.SCATTERLAB_BENCH_PKG ?? "dist/pkg"}) in Chromium ${browser.context.browser()?.version() ?? "?"}, refloxide shape: 250 eV, 256 q, vacuum | N uniaxial slabs | Si`);
  const row = (...cells) => console.log(cells.map((c, i) => String(c).padStart(i === 0 ? 7 : 12)).join(" "));
  row("N", "wasm s", "µs/step", "calls/run", ...(native ? ["native s", "wasm/native"] : []));
  for (const n of SIZES) {
    const r = await page.evaluate(([n, reps]) => window.reflBench(n, reps), [n, REPS]);
    wasm[n] = r.seconds;
    const steps = 256 * (n + 1);
    const nat = native?.[n];
    row(n, r.seconds.toExponential(3), (r.seconds / steps * 1e6).toFixed(4), r.inner,
        ...(native ? [nat ? nat.toExponential(3) : "-", nat ? `${(r.seconds / nat).toFixed(2)}x` : "-"] : []));
  }
  if (browser.problems.length > 0) throw new Error(`browser problems:\n  ${browser.problems.join("\n  ")}`);
  if (native?.[10_000]) {
    const ratio = wasm[10_000] / native[10_000];
    console.log(`wasm vs native, N=10000: ${ratio.toFixed(2)}x (goal <= 2x${ratio <= 2 ? ", met" : ", NOT met"})`);
  }
  console.log(JSON.stringify({ wasm_cpu: wasm }));
} finally {
  await browser.close();
  server.stop();
}
