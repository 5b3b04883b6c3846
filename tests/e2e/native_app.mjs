#!/usr/bin/env node
// The desktop app under Xvfb, the same flow as the browser's (app.mjs): `scatterlab-app --script`
// opens dev_small_master.h5, waits for every frame, sets each reference virtual detector
// (bf, abf, adf, df of dev_small_params.json) and a linear gray display between min and max,
// and writes its status and a screenshot (tests/e2e/out/native_<name>.png). Each image's sum and
// the FNV-1a digest of its displayed colormap indices must equal the reference file's through
// the fixtures' display pipeline (h5py); the render backend must be Vulkan (lavapipe here). Then the
// Bloch workspace: a reference case simulated and the quartz experiment refined (screenshots).
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blochCase, blochReference, decodePng, finish, fixtures, imageStats, log, outDir } from "./harness.mjs";
import { compareImage, detectorCommands, referenceDisplay } from "./stem_reference.mjs";

const app = process.env.SCATTERLAB_APP ?? join(process.env.CARGO_TARGET_DIR ?? "target", "debug", "scatterlab-app");
const reference = referenceDisplay("dev_small");
/** @type {string[]} */
const failures = [];
mkdirSync(outDir, { recursive: true });

/**
 * Runs `scatterlab-app --script` under Xvfb on `script` (written to tests/e2e/out/<base>.json with
 * the paths of its status, <base>_status.json, and screenshot, <base>.png); returns the parsed
 * status and the screenshot's path, or null after recording the failure under `label`.
 * @param {string} label
 * @param {string} base
 * @param {{ open?: string, commands: object[], timeoutS: number }} script
 * @param {number} timeout ms
 * @returns {{ status: any, screenshot: string } | null}
 */
function runScript(label, base, script, timeout) {
  const path = join(outDir, `${base}.json`);
  const status = join(outDir, `${base}_status.json`);
  const screenshot = join(outDir, `${base}.png`);
  writeFileSync(path, JSON.stringify({ ...script, status, screenshot }));
  try {
    execFileSync("xvfb-run", ["-a", "-s", "-screen 0 1280x800x24", app, "--script", path], { stdio: ["ignore", "inherit", "inherit"], timeout });
  } catch (e) {
    const error = /** @type {{ status?: number | null, message?: string }} */ (e);
    failures.push(`${label}: scatterlab-app --script failed (${error.status ?? error.message})`);
    return null;
  }
  return { status: JSON.parse(readFileSync(status, "utf8")), screenshot };
}

/**
 * Records a failure when the screenshot at `path` looks blank.
 * @param {string} label
 * @param {string} path
 */
function notBlank(label, path) {
  const stats = imageStats(decodePng(readFileSync(path)));
  if (stats.distinct < 300) failures.push(`${label}: screenshot ${path} looks blank (${stats.distinct} colours)`);
}

for (const { name, commands } of detectorCommands("dev_small")) {
  const t0 = Date.now();
  const run = runScript(name, `native_${name}`, { open: join(fixtures, "stem", "dev_small_master.h5"), commands, timeoutS: 120 }, 180_000);
  if (!run) continue;
  const s = run.status;
  log(`native ${name}: ${JSON.stringify(s.stem.image)} · ${s.renderBackend} · ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (s.renderBackend !== "vulkan") failures.push(`${name}: render backend ${s.renderBackend}, expected vulkan`);
  if (s.stem.framesLoaded !== 256) failures.push(`${name}: ${s.stem.framesLoaded} frames loaded, expected 256`);
  failures.push(...compareImage(`native ${name}`, s.stem.image, reference[name]));
  notBlank(name, run.screenshot);
}
// The Bloch workspace on the desktop: reference.json's Si-200kV-00 simulated on the CPU (≤ 1e-6 of
// I_ref) and the synthetic quartz experiment refined two iterations on a thread; a screenshot each.
const blochFixtures = join(fixtures, "bloch");
const bloch = blochReference();
const si = blochCase(bloch, "Si-200kV-00");
const blochRuns = {
  simulate: [{ do: "blochOpenCif", name: "Si.cif", text: bloch.crystals.Si.cif },
    { do: "blochSimulate", kv: 200, zone: si.orientation_spec[1], reference: si.orientation_spec[2], thicknesses: si.thicknesses_A, gMax: si.g_solve_invA, sgMax: si.sg_max_invA, solver: "expm", device: "cpu" }],
  refine: [{ do: "blochOpenExperiment", path: join(blochFixtures, "synthetic_quartz") }, { do: "blochRefine", steps: 2 }],
};
for (const [name, commands] of Object.entries(blochRuns)) {
  const run = runScript(`bloch ${name}`, `native_bloch_${name}`, { commands, timeoutS: 240 }, 300_000);
  if (!run) continue;
  const b = run.status.bloch;
  if (name === "simulate") {
    const r = b.simulate.result;
    const index = new Map((r?.hkl ?? []).map((/** @type {number[]} */ h, /** @type {number} */ j) => [h.join(","), j]));
    let worst = Infinity;
    if (r && r.hkl.length === si.n_beams) {
      worst = 0;
      si.beams.hkl.forEach((h, j) => si.intensities.I_ref.forEach((row, t) => { const k = index.get(h.join(",")); worst = Math.max(worst, k === undefined ? Infinity : Math.abs(r.I[t][k] - row[j])); }));
    }
    log(`native bloch simulate: ${r?.hkl.length} beams, max |I − I_ref| ${worst.toExponential(2)}`);
    if (!(worst <= 1e-6)) failures.push(`bloch simulate: ${r?.hkl.length} beams, max |I − I_ref| ${worst} (≤ 1e-6 expected; error ${b.simulate.error})`);
  } else {
    const r = b.refine.result;
    log(`native bloch refine: ${JSON.stringify(r)}`);
    if (!(r?.iterations === 2 && r.wR2 < r.startWR2)) failures.push(`bloch refine: ${JSON.stringify(b.refine).slice(0, 400)}`);
  }
  notBlank(`bloch ${name}`, run.screenshot);
}
finish("native app", failures);
