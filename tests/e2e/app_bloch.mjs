#!/usr/bin/env node
// End to end: the egui app's Bloch workspace (index.html) in headless Chromium, driven by host
// commands (`window.scatterlabApp.command`) as a page embedding it would. The Si crystal of
// reference.json opens; its case Si-200kV-00 (zone [1 1 0], reference (0 0 1), 200 kV, five
// thicknesses) simulates in the npm Worker on the CPU (f64: ≤ 1e-6 of the fixture's I_ref) and on
// the page's WebGPU (f32: ≤ 1e-4); a ~300-beam, 100-tilt rocking sweep runs in the Worker while
// the page records its main thread's long tasks (none over 250 ms) with progress and a cancel; the
// synthetic quartz experiment refines two iterations through the Worker with progress, and the
// workspace's pages are saved as screenshots (tests/e2e/out/app_bloch_*.png).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appCommand, blochCase, blochReference, checker, decodePng, finish, imageStats, log, openApp, outDir, quartzExperiment, untilStatus, withPage } from "./harness.mjs";

const reference = blochReference();
const si = blochCase(reference, "Si-200kV-00");
const experiment = quartzExperiment();
// A sweep on the main thread would block it for seconds (9 s here); handling the result as it
// arrives is one short task, which a loaded machine stretched past 50 ms (55 ms seen at the end
// of the sweep, 2026-12-05): the bound separates the two without timing the machine.
const LONG_TASK_MS = 250;

/** @type {string[]} */
const failures = [];
const check = checker("app bloch", failures);

/**
 * Max |I_app − I_ref| over the fixture's beams (absent in the app: a failure).
 * @param {{ hkl: number[][], I: number[][] }} result the app's status.bloch.simulate.result
 * @param {number} tolerance
 * @param {string} what
 */
function against(result, tolerance, what) {
  const index = new Map(result.hkl.map((h, j) => [h.join(","), j]));
  let worst = 0;
  let missing = 0;
  si.beams.hkl.forEach((h, j) => {
    const k = index.get(h.join(","));
    if (k === undefined) return void missing++;
    si.intensities.I_ref.forEach((row, t) => { worst = Math.max(worst, Math.abs(result.I[t][k] - row[j])); });
  });
  check(`${what}: every fixture beam, max |I − I_ref| ≤ ${tolerance}`, missing === 0 && worst <= tolerance && result.hkl.length === si.n_beams, `${result.hkl.length} beams (fixture ${si.n_beams}), ${missing} missing, max ${worst.toExponential(2)}`);
}

await withPage("app bloch", async (page, server, browser) => {
  try {
    await openApp(page, server);
    /** @param {object} c */
    const command = (c) => appCommand(page, c);
    /**
     * @param {string} what
     * @param {(status: any) => unknown} predicate
     */
    const until = (what, predicate, timeout = 120_000) => untilStatus(page, what, predicate, {
      timeout, commandErrors: true, show: (s) => `bloch status ${JSON.stringify(s.bloch).slice(0, 600)}`,
    });
    mkdirSync(outDir, { recursive: true });
    /** @param {string} name */
    const shot = async (name) => {
      await page.waitForTimeout(500);
      const png = await page.screenshot({ type: "png" });
      writeFileSync(join(outDir, name), png);
      const stats = imageStats(decodePng(png));
      check(`screenshot ${name} is not blank`, stats.distinct >= 300, `${stats.distinct} colours`);
    };

    await command({ do: "blochOpenCif", name: "Si.cif", text: reference.crystals.Si.cif });
    await until("the CIF", (s) => s.bloch.crystal.name === "Si");
    const [zone, ref] = [si.orientation_spec[1], si.orientation_spec[2]];
    const simulate = { do: "blochSimulate", kv: si.energy_eV / 1e3, zone, reference: ref, thicknesses: si.thicknesses_A, gMax: si.g_solve_invA, sgMax: si.sg_max_invA, solver: "expm" };
    for (const [device, tolerance] of /** @type {const} */ ([["cpu", 1e-6], ["gpu", 1e-4]])) {
      await command({ ...simulate, device });
      const s = await until(`the ${device} simulation`, (s) => !s.bloch.simulate.running && s.bloch.simulate.result?.device === device && s.bloch.simulate.result?.I);
      check(`${device}: no error`, s.bloch.simulate.error === null, String(s.bloch.simulate.error));
      against(s.bloch.simulate.result, tolerance, `${device} (${s.bloch.simulate.result.seconds.toFixed(2)} s in the worker)`);
    }
    await shot("app_bloch_simulate.png");

    // A ~300-beam, 100-tilt sweep: SrTiO3 [001], gMax 3.0 (the npm e2e's case), in the Worker.
    await command({ do: "blochOpenCif", name: "SrTiO3.cif", text: reference.crystals.SrTiO3.cif });
    await until("SrTiO3", (s) => s.bloch.crystal.name === "SrTiO3");
    await page.evaluate(() => {
      window.__long = [];
      new PerformanceObserver((list) => window.__long.push(...list.getEntries().map((e) => ({ at: Math.round(e.startTime), ms: e.duration })))).observe({ type: "longtask" });
    });
    await command({ do: "blochSimulate", kv: 200, zone: [0, 0, 1], reference: [1, 0, 0], thicknesses: [100, 200, 400], gMax: 3.0, sgMax: 0.08, solver: "eigen", device: "cpu" });
    await until("the sweep's base case", (s) => !s.bloch.simulate.running && s.bloch.simulate.result?.id.startsWith("SrTiO3"));
    const t0 = Date.now();
    const sweepStart = await page.evaluate(() => Math.round(performance.now()));
    await command({ do: "blochRocking", axis: "x", fromDeg: -0.5, toDeg: 0.5, n: 100 });
    /** @type {Set<number>} */
    const seen = new Set();
    const swept = await until("the sweep", (s) => { const r = s.bloch.simulate.rocking; if (r.running) seen.add(r.done); return !r.running && r.result; }, 300_000);
    const sweepEnd = await page.evaluate(() => Math.round(performance.now()));
    const longTasks = (await page.evaluate(() => window.__long)).map((t) => t.ms);
    const when = (await page.evaluate(() => window.__long)).map((t) => `${Math.round(t.ms)} ms at +${t.at - sweepStart} ms`);
    const r = swept.bloch.simulate.rocking;
    log(`app bloch: sweep ${r.result.tilts} tilts × ${r.result.beams} beams in ${((Date.now() - t0) / 1e3).toFixed(1)} s; ${seen.size} progress values; long tasks ${JSON.stringify(when)} (sweep +0…+${sweepEnd - sweepStart} ms)`);
    check("the sweep ran every tilt", r.result.tilts === 100 && !r.result.cancelled && r.error === null, JSON.stringify(r));
    check("~300 beams", r.result.beams >= 250, `${r.result.beams} in the union`);
    check("progress while it ran", seen.size >= 3, `${seen.size} distinct progress values`);
    check(`no main-thread task over ${LONG_TASK_MS} ms`, longTasks.every((d) => d <= LONG_TASK_MS), JSON.stringify(longTasks.map((d) => Math.round(d))));
    await shot("app_bloch_rocking.png");
    await command({ do: "blochRocking", n: 400 });
    // The command applies at the app's next frame: wait for the new 400-tilt sweep itself (the
    // finished 100-tilt sweep's `done` and `running: false` would otherwise pass at once).
    await until("two tilts", (s) => { const r = s.bloch.simulate.rocking; return r.running && r.total === 400 && r.done >= 2; });
    await command({ do: "blochRocking", cancel: true });
    const cancelled = await until("the cancel", (s) => !s.bloch.simulate.rocking.running);
    check("a cancelled sweep keeps its tilts", cancelled.bloch.simulate.rocking.result?.cancelled === true && cancelled.bloch.simulate.rocking.result.tilts < 400, JSON.stringify(cancelled.bloch.simulate.rocking.result));

    // Refinement in the Worker: two iterations, progress, a lower wR2, the refined CIF.
    await command({ do: "blochOpenExperiment", files: experiment });
    await until("the experiment", (s) => s.bloch.refine.experiment === "synthetic-quartz");
    await command({ do: "blochRefine", steps: 2 });
    /** @type {Set<number>} */
    const steps = new Set();
    const refined = await until("the refinement", (s) => { if (s.bloch.refine.running) steps.add(s.bloch.refine.steps); return !s.bloch.refine.running && s.bloch.refine.result; }, 300_000);
    const res = refined.bloch.refine.result;
    log(`app bloch: refine ${JSON.stringify(res)}`);
    check("the refinement ran two iterations in the worker", res.iterations === 2 && refined.bloch.refine.steps === 2 && refined.bloch.refine.error === null, JSON.stringify(refined.bloch.refine).slice(0, 300));
    check("wR2 decreased", res.wR2 < res.startWR2, `${res.startWR2} → ${res.wR2}`);
    check("the refined CIF and the frame browser", res.refinedCif === true && Number.isInteger(refined.bloch.refine.frame), JSON.stringify(refined.bloch.refine.frame));
    await shot("app_bloch_refine.png");
  } catch (e) {
    failures.push(String((e instanceof Error ? e.stack : undefined) ?? e));
  } finally {
    failures.push(...browser.problems);
  }
});
finish("app bloch", failures);
