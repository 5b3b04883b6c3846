#!/usr/bin/env node
// The CPU f64 reflectivity engine as wasm in headless Chromium, on refloxide's shape (N = 1 and
// 10,000 slabs), so scripts/bench.sh can set it beside refl_bench's native CPU column; then the
// general 4×4 method on refl_general_bench's tilted biaxial stack (smooth and rough), on the CPU
// and in df64 on the page's WebGPU (SwiftShader here: a second Chromium with the e2e WebGPU flags).
//   node benches/web/refl_wasm.mjs ['{"native_cpu": {"1": s, "10000": s}}'] ['{"native_general": {...}}']
// Needs dist/pkg (scripts/build-web.sh), or SCATTERLAB_BENCH_PKG=<folder under the repository
// root> for another wasm-bindgen output (a before/after comparison). Prints a table, then one
// JSON line {"wasm_cpu": {N: s}, "wasm_general": {variant: s}}; given refl_bench's and
// refl_general_bench's native JSON lines, the tables also show native seconds and wasm/native
// (goals: recursion at 10,000 slabs ≤ 2×, 4×4 ≤ 2.5×), and the 4×4 checksums are compared.
import { CHROMIUM_ARGS, CHROMIUM_BASE_ARGS, launchBrowser, startServer } from "../../tests/e2e/harness.mjs";

const SIZES = [1, 10_000];
const REPS = 5;
const native = process.argv[2] ? JSON.parse(process.argv[2]).native_cpu : null;
const nativeGeneral = process.argv[3] ? JSON.parse(process.argv[3]).native_general : null;
const GENERAL_VARIANTS = ["smooth", "rough"];
/** Curves per dispatch of the GPU rows, as refl_general_bench's (one curve; a DE population of 8). */
const GPU_CURVES = [1, 8];
const GPU_REPS = 3;

const server = await startServer();
// The e2e flags without WebGPU: the CPU engine needs no adapter, and no SwiftShader competing for the cores.
const browser = await launchBrowser(CHROMIUM_BASE_ARGS);
const wasm = {};
const wasmGeneral = {};
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
  console.log("general 4×4, refl_general_bench's stack: 250 eV, 256 q, vacuum | 100 tilted biaxial slabs | Si");
  row("variant", "wasm s", "µs/step", "calls/run", ...(nativeGeneral ? ["native s", "wasm/native", "Δchecksum"] : []));
  for (const variant of GENERAL_VARIANTS) {
    const r = await page.evaluate(([v, reps]) => window.reflGeneralBench(v, reps), [variant, REPS]);
    if (r === null) {
      console.log(`${variant.padStart(7)} this wasm has no reflGeneralBench export (older build): skipped`);
      continue;
    }
    wasmGeneral[variant] = r.seconds;
    const nat = nativeGeneral?.[variant];
    const dev = nat ? Math.abs(r.checksum - nat.checksum) / Math.abs(nat.checksum) : null;
    row(variant, r.seconds.toExponential(3), (r.seconds / (256 * 101) * 1e6).toFixed(4), r.inner,
        ...(nativeGeneral ? [nat ? nat.seconds.toExponential(3) : "-", nat ? `${(r.seconds / nat.seconds).toFixed(2)}x` : "-", dev === null ? "-" : dev.toExponential(1)]
                         : []));
    // The same f64 code, but wasm's libm (Rust's port of musl's) is not glibc's: last-bit differences.
    if (dev !== null && !(dev <= 1e-9)) console.log(`WARNING 4×4 ${variant}: wasm checksum ${r.checksum} differs from native ${nat.checksum} by ${dev.toExponential(2)} relative`);
  }
  if (browser.problems.length > 0) throw new Error(`browser problems:\n  ${browser.problems.join("\n  ")}`);
  if (native?.[10_000]) {
    const ratio = wasm[10_000] / native[10_000];
    console.log(`wasm vs native, recursion N=10000: ${ratio.toFixed(2)}x (goal <= 2x${ratio <= 2 ? ", met" : ", NOT met"})`);
  }
  for (const variant of GENERAL_VARIANTS) {
    const nat = nativeGeneral?.[variant]?.seconds;
    if (nat && wasmGeneral[variant]) {
      const ratio = wasmGeneral[variant] / nat;
      console.log(`wasm vs native, 4×4 ${variant}: ${ratio.toFixed(2)}x (goal <= 2.5x${ratio <= 2.5 ? ", met" : ", NOT met"})`);
    }
  }
  console.log(JSON.stringify({ wasm_cpu: wasm, wasm_general: wasmGeneral, wasm_general_gpu: await gpuRows() }));
} finally {
  await browser.close();
  server.stop();
}

/**
 * The df64 4×4 on the page's WebGPU in its own Chromium (the e2e flags: SwiftShader's Vulkan on
 * the CPU here, so the figures show the path works in a browser and its cost there, not a real
 * GPU's speed). Each row: seconds per dispatch of 1 and 8 curves, µs per curve-step, the ratio to
 * the wasm CPU's one curve, and the checksum's difference from the CPU's (df64 gate 1e-6).
 * @returns {Promise<Record<string, Record<string, number>>>} seconds by variant, then curves
 */
async function gpuRows() {
  const out = {};
  const gpuBrowser = await launchBrowser(CHROMIUM_ARGS);
  try {
    const page = await gpuBrowser.context.newPage();
    gpuBrowser.watch(page, "refl_wasm_gpu");
    const pkg = process.env.SCATTERLAB_BENCH_PKG ? `?pkg=/${encodeURIComponent(process.env.SCATTERLAB_BENCH_PKG).replaceAll("%2F", "/")}` : "";
    await page.goto(`${server.url}benches/web/refl_wasm.html${pkg}`, { waitUntil: "load" });
    await page.waitForFunction(() => window.reflBenchReady || window.reflBenchError, null, { timeout: 60_000, polling: 100 });
    const row = (...cells) => console.log(cells.map((c, i) => String(c).padStart(i === 0 ? 7 : 12)).join(" "));
    let heading = false;
    for (const variant of GENERAL_VARIANTS) {
      const cpu = await page.evaluate((v) => window.reflGeneralBench(v, 1), variant);
      for (const curves of GPU_CURVES) {
        let r;
        try {
          r = await page.evaluate(([v, c, reps]) => window.reflGeneralGpuBench(v, c, reps), [variant, curves, GPU_REPS]);
        } catch (e) {
          console.log(`general 4×4 on WebGPU: not run (${String(e).split("\n")[0]})`);
          return out;
        }
        if (r === null) {
          console.log("general 4×4 on WebGPU: this wasm has no GeneralGpuBench export (older build): skipped");
          return out;
        }
        if (!heading) {
          console.log(`general 4×4 in df64 on the page's WebGPU (${r.backend}), same stack; ${GPU_REPS} timed dispatches after one that compiles`);
          row("variant", "curves", "gpu s", "µs/step", "vs wasm cpu", "Δchecksum");
          heading = true;
        }
        (out[variant] ??= {})[curves] = r.seconds;
        const dev = cpu ? Math.abs(r.checksum - cpu.checksum) / Math.abs(cpu.checksum) : null;
        row(variant, curves, r.seconds.toExponential(3), (r.seconds / (256 * 101 * curves) * 1e6).toFixed(4),
            cpu ? `${(cpu.seconds * curves / r.seconds).toFixed(2)}x` : "-", dev === null ? "-" : dev.toExponential(1));
        if (dev !== null && !(dev <= 1e-6)) console.log(`WARNING 4×4 gpu ${variant}: checksum ${r.checksum} differs from the wasm CPU's ${cpu.checksum} by ${dev.toExponential(2)} relative`);
      }
    }
    if (gpuBrowser.problems.length > 0) throw new Error(`browser problems (WebGPU page):\n  ${gpuBrowser.problems.join("\n  ")}`);
  } finally {
    await gpuBrowser.close();
  }
  return out;
}
