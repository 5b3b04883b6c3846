// Shared pieces of the end-to-end tests: the static server, headless Chromium with a visible
// WebGPU canvas (SwiftShader), console/page-error capture, and a tiny PNG decoder.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { inflateSync } from "node:zlib";
import { chromium } from "playwright-core";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const outDir = join(repoRoot, "tests", "e2e", "out");

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

export const log = (...parts) => console.log("e2e:", ...parts);

/** Starts web/tools/serve.mjs on a free port of 127.0.0.1; resolves to { url, stop }. */
export function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, "web", "tools", "serve.mjs"), "0"], { stdio: ["ignore", "pipe", "inherit"] });
    const timer = setTimeout(() => { child.kill(); reject(new Error("server did not start within 10 s")); }, 10_000);
    let buffered = "";
    child.stdout.on("data", (chunk) => {
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
 */
export async function launchBrowser(args = CHROMIUM_ARGS) {
  const profile = mkdtempSync(join(tmpdir(), "scatterlab-e2e-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args,
    headless: true,
    viewport: { width: 1280, height: 800 },
  });
  const problems = [];
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

/** Decodes an 8-bit RGB/RGBA (non-interlaced) PNG, as Chromium's screenshots are. */
export function decodePng(buffer) {
  const signature = "89504e470d0a1a0a";
  if (buffer.subarray(0, 8).toString("hex") !== signature) throw new Error("not a PNG");
  let offset = 8;
  let width = 0, height = 0, colorType = 0;
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

/** Distinct RGB colours and the share of pixels that differ from the most common one. */
export function imageStats(png) {
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
