// Shared pieces of the end-to-end tests: the static server, headless Chromium with a visible
// WebGPU canvas (SwiftShader), console/page-error capture, the check pages' runner, the app's
// handle (status, commands), the checks' report, and a tiny PNG decoder.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inflateSync } from "node:zlib";
import { chromium } from "playwright-core";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const outDir = join(repoRoot, "tests", "e2e", "out");
/** $SCATTERLAB_FIXTURES or ../shared/fixtures beside the repository. */
export const fixtures = process.env.SCATTERLAB_FIXTURES ?? join(repoRoot, "..", "shared", "fixtures");

/** @typedef {import("playwright-core").Page} Page */
/** @typedef {import("playwright-core").BrowserContext} BrowserContext */
/** @typedef {{ url: string, stop: () => void }} Server web/tools/serve.mjs on 127.0.0.1; `url` ends in "/". */
/**
 * @typedef {object} Browser
 * @property {BrowserContext} context
 * @property {string[]} problems console errors, page errors, failed requests and HTTP errors seen so far
 * @property {(page: Page, label: string) => void} watch records `page`'s problems under `label`
 * @property {() => Promise<void>} close
 */
/** @typedef {(name: string, ok: boolean, detail?: unknown) => void} Check */

/** Headless Chromium without WebGPU enabled (shared/TOOLCHAIN.md): `requestAdapter()` gives null. */
export const CHROMIUM_BASE_ARGS = [
  "--headless=new", "--no-sandbox", "--disable-gpu-sandbox", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-quic",
  "--disable-dev-shm-usage",
];

/** Flags from shared/TOOLCHAIN.md: headless, WebGPU and a canvas that shows in screenshots. */
export const CHROMIUM_ARGS = [
  ...CHROMIUM_BASE_ARGS, "--enable-unsafe-webgpu", "--enable-unsafe-swiftshader",
  "--use-angle=swiftshader", "--enable-features=Vulkan", "--use-vulkan=swiftshader",
  "--use-webgpu-adapter=swiftshader",
];

/** @param {...unknown} parts */
export const log = (...parts) => console.log("e2e:", ...parts);

/**
 * Starts web/tools/serve.mjs on a free port of 127.0.0.1; resolves to { url, stop }.
 * @returns {Promise<Server>}
 */
export function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, "web", "tools", "serve.mjs"), "0"], { stdio: ["ignore", "pipe", "inherit"] });
    const timer = setTimeout(() => { child.kill(); reject(new Error("server did not start within 10 s")); }, 10_000);
    let buffered = "";
    child.stdout.on("data", (/** @type {Buffer} */ chunk) => {
      buffered += chunk;
      const match = buffered.match(/serving (http:\/\/127\.0\.0\.1:\d+\/)/);
      if (match) {
        clearTimeout(timer);
        resolve({ url: match[1], stop: () => child.kill("SIGTERM") });
      }
    });
    child.on("exit", (code) => { clearTimeout(timer); reject(new Error(`server exited early (${code})`)); });
  });
}

/**
 * Launches /usr/bin/chromium with a fresh profile; every console error, page error, failed
 * request and HTTP error status is recorded in `problems`.
 * @param {string[]} [args]
 * @returns {Promise<Browser>}
 */
export async function launchBrowser(args = CHROMIUM_ARGS) {
  const profile = mkdtempSync(join(tmpdir(), "scatterlab-e2e-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args,
    headless: true,
    viewport: { width: 1280, height: 800 },
  });
  /** @type {string[]} */
  const problems = [];
  /** @type {Browser["watch"]} */
  const watch = (page, label) => {
    page.on("console", (msg) => {
      const text = `${label} console.${msg.type()}: ${msg.text()}`;
      if (msg.type() === "error") problems.push(text);
      if (process.env.E2E_VERBOSE || msg.type() === "error" || msg.type() === "warning") log(text);
    });
    page.on("pageerror", (error) => { problems.push(`${label} page error: ${error.message}`); log(`${label} page error: ${error.stack ?? error.message}`); });
    page.on("requestfailed", (request) => problems.push(`${label} request failed: ${request.url()} (${request.failure()?.errorText})`));
    page.on("response", (response) => { if (response.status() >= 400) problems.push(`${label} HTTP ${response.status()}: ${response.url()}`); });
    page.on("worker", (worker) => worker.on("console", (msg) => {
      if (msg.type() === "error") problems.push(`${label} worker console.error: ${msg.text()}`);
    }));
  };
  const close = async () => {
    await context.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
  };
  return { context, problems, watch, close };
}

/** @typedef {{ width: number, height: number, channels: number, pixels: Buffer }} Png */

/**
 * Decodes an 8-bit RGB/RGBA (non-interlaced) PNG, as Chromium's screenshots are.
 * @param {Buffer} buffer
 * @returns {Png}
 */
export function decodePng(buffer) {
  const signature = "89504e470d0a1a0a";
  if (buffer.subarray(0, 8).toString("hex") !== signature) throw new Error("not a PNG");
  let offset = 8;
  let width = 0, height = 0, colorType = 0;
  /** @type {Buffer[]} */
  const idat = [];
  while (offset < buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString("latin1", offset + 4, offset + 8);
    const data = buffer.subarray(offset + 8, offset + 8 + length);
    if (type === "IHDR") {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8];
      colorType = data[9];
      if (depth !== 8 || (colorType !== 2 && colorType !== 6) || data[12] !== 0) {
        throw new Error(`unsupported PNG (depth ${depth}, colour type ${colorType}, interlace ${data[12]})`);
      }
    } else if (type === "IDAT") {
      idat.push(data);
    } else if (type === "IEND") {
      break;
    }
    offset += 12 + length;
  }
  const channels = colorType === 6 ? 4 : 3;
  const stride = width * channels;
  const raw = inflateSync(Buffer.concat(idat));
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const prev = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : null;
    for (let x = 0; x < stride; x++) {
      const a = x >= channels ? out[x - channels] : 0;
      const b = prev ? prev[x] : 0;
      const c = prev && x >= channels ? prev[x - channels] : 0;
      let value = line[x];
      switch (filter) {
        case 0: break;
        case 1: value += a; break;
        case 2: value += b; break;
        case 3: value += (a + b) >> 1; break;
        case 4: {
          const p = a + b - c;
          const pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
          value += pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default: throw new Error(`bad PNG filter ${filter}`);
      }
      out[x] = value & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/**
 * Distinct RGB colours and the share of pixels that differ from the most common one.
 * @param {Png} png
 */
export function imageStats(png) {
  /** @type {Map<number, number>} */
  const counts = new Map();
  const { pixels, channels } = png;
  for (let i = 0; i < pixels.length; i += channels) {
    const key = (pixels[i] << 16) | (pixels[i + 1] << 8) | pixels[i + 2];
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const total = pixels.length / channels;
  const background = Math.max(...counts.values());
  return { distinct: counts.size, nonBackground: 1 - background / total };
}

/**
 * `names` of the fixture folder `dir` (shared/fixtures/<dir>) as base64 texts by name, for a page
 * to build `File`s from (shared/ is not served).
 * @param {string} dir
 * @param {string[]} names
 * @returns {Record<string, string>}
 */
export function fixtureBase64(dir, names) {
  return Object.fromEntries(names.map((n) => [n, readFileSync(join(fixtures, dir, n)).toString("base64")]));
}

/**
 * A case of the Bloch fixtures' reference.json (the parts the e2e scripts read).
 * @typedef {object} BlochCase
 * @property {string} id
 * @property {number} n_beams
 * @property {[string, number[], number[], ...unknown[]]} orientation_spec ["zone", zone, reference, tilt]
 * @property {number} energy_eV
 * @property {number[]} thicknesses_A
 * @property {number} g_solve_invA
 * @property {number} sg_max_invA
 * @property {{ hkl: number[][] }} beams
 * @property {{ I_ref: number[][] }} intensities
 */
/** @typedef {{ cases: BlochCase[], crystals: Record<string, { cif: string }> }} BlochReference */

/**
 * shared/fixtures/bloch/reference.json.
 * @returns {BlochReference}
 */
export function blochReference() {
  return JSON.parse(readFileSync(join(fixtures, "bloch", "reference.json"), "utf8"));
}

/**
 * The synthetic quartz experiment of the Bloch fixtures (synthetic_quartz/: experiment.yaml,
 * exp_data.cif_pets, start.cif) as texts by file name.
 * @returns {Record<string, string>}
 */
export function quartzExperiment() {
  const dir = join(fixtures, "bloch", "synthetic_quartz");
  return Object.fromEntries(["experiment.yaml", "exp_data.cif_pets", "start.cif"].map((n) => [n, readFileSync(join(dir, n), "utf8")]));
}

/**
 * The case `id` of `reference`.
 * @param {BlochReference} reference
 * @param {string} id
 * @returns {BlochCase}
 */
export function blochCase(reference, id) {
  const found = reference.cases.find((c) => c.id === id);
  if (!found) throw new Error(`the Bloch fixtures' reference.json has no case ${id}`);
  return found;
}

/**
 * Starts the server, runs `body` with it and stops it.
 * @template T
 * @param {(server: Server) => Promise<T>} body
 * @returns {Promise<T>}
 */
export async function withServer(body) {
  const server = await startServer();
  try {
    return await body(server);
  } finally {
    server.stop();
  }
}

/**
 * Starts the server and a fresh browser (`args`), opens a page watched under `label`, runs
 * `body`, then closes the browser and stops the server (also when `body` throws).
 * @template T
 * @param {string} label
 * @param {(page: Page, server: Server, browser: Browser) => Promise<T>} body
 * @param {string[]} [args]
 * @returns {Promise<T>}
 */
export function withPage(label, body, args = CHROMIUM_ARGS) {
  return withServer(async (server) => {
    const browser = await launchBrowser(args);
    try {
      const page = await browser.context.newPage();
      browser.watch(page, label);
      return await body(page, server, browser);
    } finally {
      await browser.close();
    }
  });
}

/**
 * A check that logs `<prefix>: ok|FAIL <name> — <detail>` and records a failure in `failures`.
 * @param {string} prefix
 * @param {string[]} failures
 * @param {string} [failurePrefix] put before each failure (e.g. the run's label)
 * @returns {Check}
 */
export function checker(prefix, failures, failurePrefix = "") {
  return (name, ok, detail = "") => {
    log(`${prefix}: ${ok ? "ok  " : "FAIL"} ${name}${detail ? ` — ${detail}` : ""}`);
    if (!ok) failures.push(`${failurePrefix}${name}: ${detail}`);
  };
}

/**
 * What a check page (tests/e2e/*.html) leaves on `window` when it is done.
 * @typedef {object} PageResult
 * @property {{ name: string, ok: boolean, detail?: string }[]} checks
 * @property {string[]} errors what the page threw
 * @property {string[]} [log] lines to print
 */

/**
 * Opens the check page `path` (relative to the server's root) in a fresh browser with `args`,
 * with `globals` set on its `window` before its scripts run; waits up to `timeout` ms for the
 * page's result `window[resultName]`, prints its log and checks, and returns the failures: failed
 * checks, what the page threw, no checks at all, and the browser's problems (console errors, …).
 * @param {Server} server
 * @param {object} options
 * @param {string} options.label prefix of the printed lines
 * @param {string} options.path
 * @param {string} options.resultName
 * @param {number} options.timeout
 * @param {string[]} [options.args]
 * @param {Record<string, unknown>} [options.globals]
 * @param {string} [options.failurePrefix] put before each failure
 * @returns {Promise<string[]>}
 */
export async function runCheckPage(server, { label, path, resultName, timeout, args = CHROMIUM_ARGS, globals, failurePrefix = "" }) {
  /** @type {string[]} */
  const failures = [];
  const browser = await launchBrowser(args);
  try {
    const page = await browser.context.newPage();
    browser.watch(page, label);
    if (globals) await page.addInitScript((g) => { Object.assign(window, g); }, globals);
    await page.goto(`${server.url}${path}`, { waitUntil: "load" });
    const handle = await page.waitForFunction((name) => /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (window))[name], resultName, { timeout, polling: 100 });
    const result = /** @type {PageResult} */ (await handle.jsonValue());
    for (const line of result.log ?? []) log(`${label}: ${line}`);
    const check = checker(label, failures, failurePrefix);
    for (const c of result.checks) check(c.name, c.ok, c.detail);
    failures.push(...result.errors.map((e) => `${failurePrefix}page threw: ${e}`));
    if (result.checks.length === 0) failures.push(`${failurePrefix}no checks ran`);
    failures.push(...browser.problems);
  } finally {
    await browser.close();
  }
  return failures;
}

/**
 * The end of a script: prints the failures and exits with 1, or logs `<name>: ok`.
 * @param {string} name
 * @param {string[]} failures
 */
export function finish(name, failures) {
  if (failures.length > 0) {
    console.error(`e2e ${name}: FAILED\n  ${failures.join("\n  ")}`);
    process.exit(1);
  }
  log(`${name}: ok`);
}

/**
 * The egui app's status (index.html's `window.scatterlabApp`), parsed.
 * @param {Page} page
 * @returns {Promise<any>} `ViewerStatus` and more (fit, bloch, stem.ssb, stem.browse, …)
 */
export function appStatus(page) {
  return page.evaluate(() => JSON.parse(window.scatterlabApp.status()));
}

/**
 * Hands `commands` to the egui app in order, in one turn of the page (they apply at its next frame).
 * @param {Page} page
 * @param {...object} commands host commands (`ViewerCommand`)
 */
export async function appCommand(page, ...commands) {
  await page.evaluate((cs) => cs.forEach((c) => window.scatterlabApp.command(JSON.stringify(c))), commands);
}

/**
 * Opens index.html and waits up to 90 s for the app to mark itself ready.
 * @param {Page} page
 * @param {Server} server
 */
export async function openApp(page, server) {
  await page.goto(`${server.url}index.html`, { waitUntil: "load" });
  await page.waitForFunction(() => window.scatterlabApp && document.documentElement.dataset.appReady === "1", null, { timeout: 90_000, polling: 250 });
}

/**
 * Polls the app's status every 50 ms until `predicate` holds (returns that status); throws after
 * `timeout` ms naming `what` and the status (`show`), or, with `commandErrors`, at once when a host
 * command failed.
 * @param {Page} page
 * @param {string} what
 * @param {(status: any) => unknown} predicate
 * @param {{ timeout?: number, commandErrors?: boolean, show?: (status: any) => string }} [options]
 * @returns {Promise<any>}
 */
export async function untilStatus(page, what, predicate, { timeout = 30_000, commandErrors = false, show = (s) => `status ${JSON.stringify(s)}` } = {}) {
  const t0 = Date.now();
  for (;;) {
    const s = await appStatus(page);
    if (commandErrors && s.commandError) throw new Error(`${what}: command failed: ${s.commandError}`);
    if (predicate(s)) return s;
    if (Date.now() - t0 > timeout) throw new Error(`timed out waiting for ${what}; ${show(s)}`);
    await page.waitForTimeout(50);
  }
}
