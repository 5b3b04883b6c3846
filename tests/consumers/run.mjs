#!/usr/bin/env node
// Consumer tests of the npm package: dist/scatterlab-<version>.tgz (scripts/build-web.sh packs it)
// is unpacked into tests/consumers/node_modules/scatterlab, each app is built with its bundler's
// production build exactly as the package README says (and served from its own origin), Vite's dev
// server is started once, and every page is opened in headless Chromium (WebGPU on SwiftShader):
// CPU and GPU reflectivity must equal the CLI's numbers (expected.json), a NaN thickness must reject
// naming "layer 1 thickness", and no page may log an error or load a missing file. The package's
// types are checked first, as a strict TypeScript consumer with lib ES2022 and ESNext sees them.
// The viewer (`scatterlab/viewer`) in a page built by webpack, Vite and esbuild (esm): it must start,
// report its events, and run a Bloch simulation in the engines' worker it located.
//   node tests/consumers/run.mjs [app…]   apps: vite webpack esbuild-esm esbuild-iife rollup parcel esbuild-bare viewer-webpack viewer-vite viewer-esbuild vite-dev
// (esbuild-bare is built without the README's line and must fail readably.)
// (scripts/test-consumers.sh installs the pinned bundlers first.)
import { spawn, spawnSync } from "node:child_process";
import { cpSync, createReadStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, extname, join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { isDeepStrictEqual } from "node:util";
import { CHROMIUM_ARGS, launchBrowser } from "../e2e/harness.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const out = join(here, "out");
const bin = (name) => join(here, "node_modules", ".bin", name);
const log = (...parts) => console.log("consumers:", ...parts);
const expected = JSON.parse(readFileSync(join(here, "expected.json"), "utf8"));
const failures = [];

/** The README's one line per bundler: the build command (run in tests/consumers) and its output folder. */
const BUILDS = {
  vite: { cmd: [bin("vite"), "build", "vite", "--outDir", "../out/vite", "--emptyOutDir", "--logLevel", "warn"], page: null },
  webpack: { cmd: [bin("webpack"), "--mode", "production", "--entry", "./webpack/main.js", "--output-path", "out/webpack", "--no-stats"], page: "webpack/index.html" },
  "esbuild-esm": { cmd: esbuild("esm"), page: "esbuild/esm.html" },
  "esbuild-iife": { cmd: esbuild("iife"), page: "esbuild/iife.html" },
  rollup: { cmd: [bin("rollup"), "-c", "rollup/rollup.config.mjs", "--silent"], page: "rollup/index.html" },
  parcel: { cmd: [bin("parcel"), "build", "parcel/index.html", "--dist-dir", "out/parcel", "--no-cache", "--cache-dir", "out/.parcel-cache", "--no-source-maps", "--log-level", "warn"], page: null },
  // Without the README's line: the worker is not emitted, and create() must say so (URL, 404, option).
  "esbuild-bare": { cmd: [bin("esbuild"), "esbuild/main.js", "--bundle", "--format=iife", "--outdir=out/esbuild-bare", "--log-level=warning"], page: "esbuild/iife.html",
    expectError: /^scatterlab worker failed: cannot load http:\/\/127\.0\.0\.1:\d+\/worker\.js \(HTTP 404\).*`workerUrl`/ },
  // The viewer: the same one-liners (esbuild adds the app's wasm as a third file).
  "viewer-webpack": { cmd: [bin("webpack"), "--mode", "production", "--entry", "./viewer/main.js", "--output-path", "out/viewer-webpack", "--no-stats"], page: "viewer/index.html", viewer: true },
  "viewer-vite": { cmd: [bin("vite"), "build", "viewer", "--outDir", "../out/viewer-vite", "--emptyOutDir", "--logLevel", "warn"], page: null, viewer: true },
  "viewer-esbuild": { cmd: [bin("esbuild"), "viewer/main.js", "worker=scatterlab/worker.js", "pkg/scatterlab_web_bg=scatterlab/scatterlab_web_bg.wasm",
    "viewer-app/scatterlab_app_bg=scatterlab/scatterlab_app_bg.wasm", "--bundle", "--format=esm", "--loader:.wasm=copy", "--outdir=out/viewer-esbuild", "--log-level=warning"], page: "viewer/index.html", viewer: true },
};

/** esbuild with the worker and the wasm as extra entry points, emitted beside the bundle. */
function esbuild(format) {
  return [bin("esbuild"), "esbuild/main.js", "worker=scatterlab/worker.js", "pkg/scatterlab_web_bg=scatterlab/scatterlab_web_bg.wasm",
    "--bundle", `--format=${format}`, "--loader:.wasm=copy", `--outdir=out/esbuild-${format}`, "--log-level=warning"];
}

const apps = process.argv.length > 2 ? process.argv.slice(2) : [...Object.keys(BUILDS), "vite-dev"];
const expectError = (app) => BUILDS[app]?.expectError;
for (const app of apps) if (!(app in BUILDS) && app !== "vite-dev") throw new Error(`unknown app ${app} (expected ${Object.keys(BUILDS).join(", ")}, vite-dev)`);

// --- the package, from the tarball -----------------------------------------------------------
const tarballs = readdirSync(join(repo, "dist")).filter((n) => /^scatterlab-.*\.tgz$/.test(n));
if (tarballs.length !== 1) throw new Error(`expected one dist/scatterlab-*.tgz (scripts/build-web.sh packs it), found ${tarballs.length}`);
const installed = join(here, "node_modules", "scatterlab");
rmSync(installed, { recursive: true, force: true });
mkdirSync(installed, { recursive: true });
const untar = spawnSync("tar", ["-xzf", join(repo, "dist", tarballs[0]), "-C", installed, "--strip-components=1"], { encoding: "utf8" });
if (untar.status !== 0) throw new Error(`tar: ${untar.stderr}`);
log(`unpacked dist/${tarballs[0]} into tests/consumers/node_modules/scatterlab`);

// --- types: a strict TypeScript consumer of the tarball, lib ES2022 (no Symbol.dispose) and ESNext --
for (const lib of ["es2022", "esnext"]) {
  const tsc = spawnSync(process.execPath, [join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", join(here, "types", `tsconfig.${lib}.json`)], { encoding: "utf8" });
  if (tsc.status !== 0) failures.push(`types (lib ${lib}): tsc --strict failed:\n${tsc.stdout}${tsc.stderr}`);
  else log(`types: tsc --strict with lib ${lib}: ok`);
}

// --- builds ----------------------------------------------------------------------------------
rmSync(out, { recursive: true, force: true });
for (const app of apps.filter((a) => a in BUILDS)) {
  const { cmd, page } = BUILDS[app];
  const t0 = Date.now();
  const run = spawnSync(cmd[0], cmd.slice(1), { cwd: here, encoding: "utf8" });
  const text = `${run.stdout}${run.stderr}`.trim();
  if (run.status !== 0) {
    failures.push(`${app}: build failed (exit ${run.status}):\n${text}`);
    continue;
  }
  // Warnings are failures, except webpack's advice that a 5 MB wasm is big (--no-stats hides it).
  if (/\[WARNING\]|\(!\)|warning/i.test(text)) failures.push(`${app}: the build warned:\n${text}`);
  if (page !== null) cpSync(join(here, page), join(out, app, "index.html"));
  log(`${app}: built in ${Date.now() - t0} ms`);
}

// --- static servers, one origin per app --------------------------------------------------------
const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".wasm": "application/wasm", ".json": "application/json" };

/** Serves `root` on 127.0.0.1 (CORS open, for the cross-origin check); resolves to its base URL and a stop function. */
function serve(root) {
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname)).replace(/^[/\\]+/, "");
    const file = join(root, path === "" ? "index.html" : path);
    const headers = { "access-control-allow-origin": "*", "cache-control": "no-store" };
    if (!file.startsWith(root + sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { ...headers, "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { ...headers, "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ port: server.address().port, stop: () => server.close() })));
}

/** Vite's dev server on the app (no config file), `--force` so that a new tarball is pre-bundled afresh. */
function viteDev() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin("vite"), "vite", "--host", "127.0.0.1", "--port", "0", "--force", "--clearScreen", "false"], { cwd: here, stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    const timer = setTimeout(() => { child.kill(); reject(new Error(`vite dev did not start within 30 s:\n${text}`)); }, 30_000);
    const seen = (chunk) => {
      text += chunk;
      const match = text.replace(/\x1b\[[0-9;]*m/g, "").match(/Local:\s+http:\/\/127\.0\.0\.1:(\d+)\//);
      if (match) {
        clearTimeout(timer);
        resolve({ port: Number(match[1]), stop: () => child.kill("SIGTERM"), output: () => text });
      }
    };
    child.stdout.on("data", seen);
    child.stderr.on("data", seen);
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`vite dev exited (${code}):\n${text}`)); });
  });
}

// --- checks ----------------------------------------------------------------------------------
/** Worst |a − b| / (tol·|b| + floor) over both polarisations; > 1 fails. */
function worst(got, tol, floor) {
  let w = 0;
  for (const pol of ["R_s", "R_p"]) {
    if (!got || got[pol]?.length !== expected[pol].length) return Infinity;
    for (let i = 0; i < expected[pol].length; i++) w = Math.max(w, Math.abs(got[pol][i] - expected[pol][i]) / (tol * Math.abs(expected[pol][i]) + floor));
  }
  return w;
}

function judge(app, r) {
  const check = (name, ok, detail) => {
    log(`${app}: ${ok ? "ok  " : "FAIL"} ${name}${detail ? ` — ${detail}` : ""}`);
    if (!ok) failures.push(`${app}: ${name}: ${detail}`);
  };
  if (BUILDS[app]?.viewer) {
    for (const e of r.errors) check("no exception", false, e);
    check("the viewer is ready on WebGPU", r.ready?.renderBackend === "browserwebgpu", JSON.stringify(r.ready));
    const opened = r.events.find((e) => e.type === "file-opened");
    check("file-opened: the built-in example", opened?.name === "built-in example" && opened.frames === opened.scanShape[0] * opened.scanShape[1], JSON.stringify(opened));
    const c = r.commanded;
    check("detector-changed from a command, with its geometry", c?.index === 1 && c.name === "ring" && isDeepStrictEqual(c.shape, { kind: "annulus", center: [20, 21], inner: 3, outer: null }), JSON.stringify(c));
    check("a Bloch simulation in the engines' worker (Σ I = 1 within 1e-6)", r.bloch?.error === null && r.bloch.beams > 1 && Math.abs(r.bloch.sum - 1) < 1e-6, JSON.stringify(r.bloch));
    return;
  }
  if (expectError(app)) {
    const first = r.errors[0]?.split("\n")[0] ?? "(no error)";
    check("a missing worker.js rejects naming the URL, the 404 and workerUrl", expectError(app).test(first), first);
    return;
  }
  for (const e of r.errors) check("no exception", false, e);
  const cpu = worst(r.cpu, 1e-9, 0);
  check("CPU equals the CLI within 1e-9 relative", r.cpu?.device === "cpu" && cpu <= 1, `${(cpu * 1e-9).toExponential(2)} of 1e-9 (${r.backends.cpu})`);
  const gpu = worst(r.gpu, 2e-3, 1e-10);
  check("GPU equals the CLI within 2e-3 relative + 1e-10", r.gpu?.device === "gpu" && gpu <= 1, `${(gpu * 2e-3).toExponential(2)} of 2e-3 (${r.backends.gpu})`);
  for (const device of ["cpu", "gpu"]) check(`${device}: NaN thickness rejects naming it`, /layer 1 thickness/.test(r.nan[device] ?? ""), r.nan[device]);
  if (r.crossOrigin !== null) {
    check("cross-origin worker URL rejects, naming the way around", /another origin/.test(r.crossOrigin.refused) && /crossOriginWorker/.test(r.crossOrigin.refused), r.crossOrigin.refused);
    const ok = r.crossOrigin.blob.every((v, i) => Math.abs(v - expected.R_s[i]) <= 1e-9 * expected.R_s[i]);
    check('crossOriginWorker: "blob" computes', ok && r.crossOrigin.blob.length === 3, r.crossOrigin.blob.join(", "));
  }
}

const browser = await launchBrowser(CHROMIUM_ARGS);
try {
  for (const app of apps) {
    if (app !== "vite-dev" && !existsSync(join(out, app, "index.html"))) continue;
    const t0 = Date.now();
    const server = app === "vite-dev" ? await viteDev().catch((e) => (failures.push(`vite-dev: ${e.message}`), null)) : await serve(join(out, app));
    if (server === null) continue;
    try {
      const page = await browser.context.newPage();
      if (!expectError(app)) browser.watch(page, app); // the expected 404 is not a problem there
      const query = app === "esbuild-esm" ? `?xo=${encodeURIComponent(`http://localhost:${server.port}/worker.js`)}` : "";
      await page.goto(`http://127.0.0.1:${server.port}/${query}`, { waitUntil: "load" });
      const handle = await page.waitForFunction(() => window.__consumerResult ?? window.__viewerResult, null, { timeout: 180_000, polling: 100 });
      judge(app, await handle.jsonValue());
      await page.close();
      log(`${app}: page done in ${Date.now() - t0} ms`);
    } catch (error) {
      failures.push(`${app}: ${error instanceof Error ? error.message : String(error)}${server.output ? `\n${server.output()}` : ""}`);
    } finally {
      server.stop();
    }
  }
  failures.push(...browser.problems);
} finally {
  await browser.close();
}

if (failures.length > 0) {
  console.error(`consumers: FAILED\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log(`ok (${apps.join(", ")})`);
