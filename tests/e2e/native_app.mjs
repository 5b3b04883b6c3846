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
import { decodePng, imageStats, log, outDir } from "./harness.mjs";
import { compareImage, detectorCommands, fixtures, referenceDisplay } from "./stem_reference.mjs";

const app = process.env.SCATTERLAB_APP ?? join(process.env.CARGO_TARGET_DIR ?? "target", "debug", "scatterlab-app");
const reference = referenceDisplay("dev_small");
const failures = [];
mkdirSync(outDir, { recursive: true });
for (const { name, commands } of detectorCommands("dev_small")) {
  const script = join(outDir, `native_${name}.json`);
  const status = join(outDir, `native_${name}_status.json`);
  const screenshot = join(outDir, `native_${name}.png`);
  writeFileSync(script, JSON.stringify({ open: join(fixtures, "stem", "dev_small_master.h5"), commands, status, screenshot, timeoutS: 120 }));
  const t0 = Date.now();
  try {
    execFileSync("xvfb-run", ["-a", "-s", "-screen 0 1280x800x24", app, "--script", script], { stdio: ["ignore", "inherit", "inherit"], timeout: 180_000 });
  } catch (e) {
    failures.push(`${name}: scatterlab-app --script failed (${e.status ?? e.message})`);
    continue;
  }
  const s = JSON.parse(readFileSync(status, "utf8"));
  log(`native ${name}: ${JSON.stringify(s.stem.image)} · ${s.renderBackend} · ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  if (s.renderBackend !== "vulkan") failures.push(`${name}: render backend ${s.renderBackend}, expected vulkan`);
  if (s.stem.framesLoaded !== 256) failures.push(`${name}: ${s.stem.framesLoaded} frames loaded, expected 256`);
  failures.push(...compareImage(`native ${name}`, s.stem.image, reference[name]));
  const stats = imageStats(decodePng(readFileSync(screenshot)));
  if (stats.distinct < 300) failures.push(`${name}: screenshot ${screenshot} looks blank (${stats.distinct} colours)`);
}
// The Bloch workspace on the desktop: reference.json's Si-200kV-00 simulated on the CPU (≤ 1e-6 of
// I_ref) and the synthetic quartz experiment refined two iterations on a thread; a screenshot each.
const blochFixtures = join(fixtures, "bloch");
const blochReference = JSON.parse(readFileSync(join(blochFixtures, "reference.json"), "utf8"));
const si = blochReference.cases.find((c) => c.id === "Si-200kV-00");
const blochRuns = {
  simulate: [{ do: "blochOpenCif", name: "Si.cif", text: blochReference.crystals.Si.cif },
    { do: "blochSimulate", kv: 200, zone: si.orientation_spec[1], reference: si.orientation_spec[2], thicknesses: si.thicknesses_A, gMax: si.g_solve_invA, sgMax: si.sg_max_invA, solver: "expm", device: "cpu" }],
  refine: [{ do: "blochOpenExperiment", path: join(blochFixtures, "synthetic_quartz") }, { do: "blochRefine", steps: 2 }],
};
for (const [name, commands] of Object.entries(blochRuns)) {
  const script = join(outDir, `native_bloch_${name}.json`);
  const status = join(outDir, `native_bloch_${name}_status.json`);
  const screenshot = join(outDir, `native_bloch_${name}.png`);
  writeFileSync(script, JSON.stringify({ commands, status, screenshot, timeoutS: 240 }));
  try {
    execFileSync("xvfb-run", ["-a", "-s", "-screen 0 1280x800x24", app, "--script", script], { stdio: ["ignore", "inherit", "inherit"], timeout: 300_000 });
  } catch (e) {
    failures.push(`bloch ${name}: scatterlab-app --script failed (${e.status ?? e.message})`);
    continue;
  }
  const b = JSON.parse(readFileSync(status, "utf8")).bloch;
  if (name === "simulate") {
    const r = b.simulate.result;
    const index = new Map((r?.hkl ?? []).map((h, j) => [h.join(","), j]));
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
  const stats = imageStats(decodePng(readFileSync(screenshot)));
  if (stats.distinct < 300) failures.push(`bloch ${name}: screenshot ${screenshot} looks blank (${stats.distinct} colours)`);
}
if (failures.length > 0) {
  console.error(`e2e native app: FAILED\n  ${failures.join("\n  ")}`);
  process.exit(1);
}
log("native app: ok");
