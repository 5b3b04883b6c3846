// Checks of tests/e2e/bloch.html on the simulation side (loaded by the page, not run by node):
// reference cases of the fixture's reference.json through `blochSimulateCases` on the CPU
// (≤ 1e-6 of I_ref) and on the page's WebGPU adapter (≤ 1e-4; no adapter fails these checks:
// the e2e browser is started with WebGPU on), a zone-axis case on both devices, a 100-tilt
// ~300-beam rocking sweep through the worker while the page measures its own main thread (long
// tasks by PerformanceObserver, the longest gap of a 10 ms timer, the longest frame gap), and a
// cancel mid-sweep. Bounds: crates/web/src/bloch/tests_device.rs (the same runs natively).

/** @typedef {import("../../web/src/index.js").Scatterlab} Scatterlab */
/** @typedef {import("../../web/src/index.js").BlochCaseResult} BlochCaseResult */
/** @typedef {import("../../web/src/index.js").BlochSimulateOptions} BlochSimulateOptions */
/** @typedef {import("../../web/src/index.js").BlochRockingOptions} BlochRockingOptions */
/** @typedef {import("./harness.mjs").BlochReference} BlochReference */
/** @typedef {import("./harness.mjs").Check} Check the page's check: records `ok` with `detail` (as text) */
/** The page's log. @typedef {(line: string) => void} Log */

const CASE_IDS = ["urea-300kV-11", "Si-200kV-00"];

/**
 * Max |I − I_ref| of one `blochSimulateCases` answer, beams matched by hkl; NaN when a beam is missing.
 * @param {BlochReference} reference
 * @param {BlochCaseResult} answer
 */
function worstVsReference(reference, answer) {
  const ref = reference.cases.find((c) => c.id === answer.id);
  if (!ref || answer.error !== undefined) return NaN;
  const n = answer.nBeams;
  const index = new Map();
  for (let j = 0; j < n; j++) index.set(`${answer.hkl[3 * j]},${answer.hkl[3 * j + 1]},${answer.hkl[3 * j + 2]}`, j);
  if (ref.beams.hkl.length !== n) return NaN;
  let worst = 0;
  ref.intensities.I_ref.forEach((row, t) => {
    ref.beams.hkl.forEach((h, k) => {
      const j = index.get(h.join(","));
      worst = Math.max(worst, j === undefined ? NaN : Math.abs(answer.intensities[t * n + j] - row[k]));
    });
  });
  return worst;
}

/**
 * Reference cases and a zone-axis case on the CPU and on WebGPU.
 * @param {Scatterlab} lab
 * @param {string} referenceText reference.json
 * @param {string} cif
 * @param {Check} check
 * @param {Log} log
 */
export async function referenceChecks(lab, referenceText, cif, check, log) {
  /** @type {BlochReference} */
  const reference = JSON.parse(referenceText);
  for (const [device, gate] of /** @type {const} */ ([["cpu", 1e-6], ["gpu", 1e-4]])) {
    let answers;
    try {
      answers = await lab.blochSimulateCases(referenceText, { device, ids: CASE_IDS });
    } catch (e) {
      check(`reference cases on ${device} ran`, false, e instanceof Error ? e.message : String(e));
      continue;
    }
    for (const a of answers) {
      const worst = worstVsReference(reference, a);
      const ran = a.error === undefined ? a : undefined;
      log(`reference ${a.id} on ${device} (${ran?.backend ?? a.error}): ${ran?.nBeams} beams, max |I − I_ref| = ${worst.toExponential(2)}`);
      check(`${a.id} on ${device} equals I_ref within ${gate}`, ran?.device === device && worst <= gate, `${worst} (${a.error ?? ran?.solver})`);
    }
    check(`reference cases on ${device}: the ids' order`, answers.map((a) => a.id).join() === CASE_IDS.join(), answers.map((a) => a.id).join());
  }
  /** @type {BlochSimulateOptions} */
  const options = { kv: 200, zone: [0, 0, 1], thicknesses: [100, 250], gMax: 1.2, sgMax: 0.05, tilt: [0.3, -0.2] };
  const cpu = await lab.blochSimulate(cif, options);
  const gpu = await lab.blochSimulate(cif, { ...options, device: "gpu" });
  const diff = Math.max(...gpu.intensities.map((v, i) => Math.abs(v - cpu.intensities[i])));
  log(`zone case: ${cpu.nBeams} beams, cpu ${cpu.seconds.toFixed(3)} s, gpu ${gpu.seconds.toFixed(3)} s (${gpu.backend}), max |ΔI| = ${diff.toExponential(2)}`);
  check("blochSimulate on the GPU: device, solver and CPU agreement within 1e-4", gpu.device === "gpu" && gpu.solver === "taylor" && cpu.device === "cpu"
    && gpu.hkl.join() === cpu.hkl.join() && diff <= 1e-4, `${gpu.device}/${gpu.solver}, ${diff}`);
  /** @type {BlochRockingOptions} */
  const sweep = { ...options, tilts: { axis: "y", anglesDeg: [-0.4, 0, 0.4] } };
  const [rc, rg] = [await lab.blochRocking(cif, sweep), await lab.blochRocking(cif, { ...sweep, device: "gpu" })];
  const rdiff = Math.max(...rg.intensities.map((v, i) => Math.abs(v - rc.intensities[i])));
  check("blochRocking on the GPU equals the CPU within 1e-4", rg.device === "gpu" && rc.device === "cpu" && rg.hkl.join() === rc.hkl.join() && rg.nTilts === 3 && rdiff <= 1e-4, rdiff);
  const unknown = await rejected(lab.blochSimulateCases(referenceText, { ids: ["nope"] }));
  check("an unknown case id rejects, naming it", unknown.includes("options.ids[0]") && unknown.includes("\"nope\""), unknown);
  const pairing = await rejected(lab.blochSimulate(cif, { ...options, device: "gpu", solver: "eigen" }));
  check("a solver the device cannot run rejects, naming both", pairing.includes("options.solver \"eigen\" runs on the CPU only"), pairing);
}

/**
 * What `promise` rejected with (an Error's message), or "resolved".
 * @param {Promise<unknown>} promise
 * @returns {Promise<string>}
 */
export async function rejected(promise) {
  try {
    await promise;
    return "resolved";
  } catch (e) {
    return e instanceof Error ? e.message : `non-Error ${e}`;
  }
}

/**
 * The main thread's own measures while `run()` is awaited: long tasks, timer and frame gaps (ms).
 * @template T
 * @param {() => Promise<T>} run
 */
async function measureMainThread(run) {
  /** @type {number[]} */
  const longTasks = [];
  const supported = typeof PerformanceObserver !== "undefined" && (PerformanceObserver.supportedEntryTypes ?? []).includes("longtask");
  const observer = supported ? new PerformanceObserver((list) => longTasks.push(...list.getEntries().map((e) => e.duration))) : null;
  observer?.observe({ type: "longtask" });
  let last = performance.now();
  let timerGap = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    timerGap = Math.max(timerGap, now - last);
    last = now;
    ticks++;
  }, 10);
  /** @type {number | null} */
  let lastFrame = null;
  let frameGap = 0;
  let frames = 0;
  let running = true;
  /** @param {number} t */
  const frame = (t) => {
    if (lastFrame !== null) frameGap = Math.max(frameGap, t - lastFrame);
    lastFrame = t;
    frames++;
    if (running) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
  try {
    return { value: await run(), longTasks, supported, timerGap, ticks, frameGap, frames };
  } finally {
    running = false;
    clearInterval(timer);
    // Entries of the last task are delivered asynchronously.
    await new Promise((r) => setTimeout(r, 50));
    observer?.disconnect();
  }
}

/** The responsiveness sweep: SrTiO3 [001], g ≤ 3.0 Å⁻¹, |Sg| ≤ 0.08 Å⁻¹: 301–308 beams per tilt over ±0.5° (361 in the union; `measure_sweep_sizes` in tests_device.rs). */
/** @type {BlochRockingOptions} */
export const SWEEP = { kv: 200, zone: [0, 0, 1], thicknesses: [100, 200, 400], gMax: 3.0, sgMax: 0.08, solver: "eigen", name: "SrTiO3", tilts: { axis: "x", fromDeg: -0.5, toDeg: 0.5, n: 100 } };

/**
 * A 100-tilt rocking sweep with progress while the main thread is measured, a cross-check of one tilt, and a cancel.
 * @param {Scatterlab} lab
 * @param {string} cif
 * @param {Check} check
 * @param {Log} log
 */
export async function rockingChecks(lab, cif, check, log) {
  /** @type {import("../../web/src/index.js").BlochRockingProgress[]} */
  const events = [];
  const m = await measureMainThread(() => lab.blochRocking(cif, SWEEP, (p) => events.push(p)));
  const r = m.value;
  const longest = m.longTasks.length ? Math.max(...m.longTasks) : 0;
  const nt = r.thicknesses.length;
  log(`rocking: ${r.nTilts} tilts, ${r.nBeams} beams in the union, ${r.seconds.toFixed(1)} s (${(1e3 * r.seconds / r.nTilts).toFixed(0)} ms per tilt, ${r.backend});`
    + ` main thread: long tasks ${m.supported ? `${m.longTasks.length} (longest ${longest.toFixed(0)} ms)` : "unsupported"}, 10 ms timer: ${m.ticks} ticks, longest gap ${m.timerGap.toFixed(0)} ms;`
    + ` frames: ${m.frames}, longest gap ${m.frameGap.toFixed(0)} ms`);
  check("the PerformanceObserver sees long tasks here", m.supported, "longtask entry type");
  // A sweep on the main thread would block it for seconds; 250 ms leaves a loaded machine room
  // for the short tasks that handle progress and the result (app_bloch.mjs saw 55 ms once).
  check("no main-thread task over 250 ms during the sweep", m.supported && longest <= 250, `${m.longTasks.length} long tasks, longest ${longest.toFixed(1)} ms`);
  // The timer's and frames' gaps are reported, not gated: on a loaded machine the OS may deschedule the
  // page without any task of it running long; the long-task measure is the page's own blocking.
  check("the page's 10 ms timer ran during the sweep", m.ticks > 0 && m.frames > 0, `${m.ticks} ticks in ${r.seconds.toFixed(1)} s, longest gap ${m.timerGap.toFixed(0)} ms`);
  check("a progress event per tilt", events.length === 100 && events.every((p, i) => p.done === i + 1 && p.total === 100 && p.seconds >= 0), `${events.length} events`);
  let perTilt = 0;
  const shape = r.nTilts === 100 && !r.cancelled && r.tilts.length === 100 && r.intensities.length === 100 * nt * r.nBeams && r.hkl.length === 3 * r.nBeams;
  // Beams present at a tilt: its thinnest row's nonzero entries (every present beam is excited).
  for (let i = 0; i < r.nTilts; i++) perTilt = Math.max(perTilt, r.intensities.subarray(i * nt * r.nBeams, (i * nt + 1) * r.nBeams).filter((v) => v > 0).length);
  check("the sweep's shape: [tilt][thickness][beam] on the union", shape && r.device === "cpu" && r.solver === "eigen" && r.axis === "x"
    && Math.abs(r.tilts[0] + 0.5) < 1e-12 && r.tilts[99] === 0.5, `${r.nTilts} tilts × ${nt} × ${r.nBeams}`);
  check("about 300 beams per tilt", perTilt >= 295 && perTilt <= 400, `at most ${perTilt} beams at one tilt, ${r.nBeams} in the union`);
  // Tilt 37 equals blochSimulate at that tilt, beam for beam (absent beams read 0).
  const i = 37;
  const { tilts: _, ...single } = SWEEP;
  const s = await lab.blochSimulate(cif, { ...single, tilt: [r.tilts[i], 0] });
  const column = new Map();
  for (let j = 0; j < s.nBeams; j++) column.set(`${s.hkl[3 * j]},${s.hkl[3 * j + 1]},${s.hkl[3 * j + 2]}`, j);
  let diff = 0;
  for (let t = 0; t < nt; t++) {
    for (let j = 0; j < r.nBeams; j++) {
      const k = column.get(`${r.hkl[3 * j]},${r.hkl[3 * j + 1]},${r.hkl[3 * j + 2]}`);
      const want = k === undefined ? 0 : s.intensities[t * s.nBeams + k];
      diff = Math.max(diff, Math.abs(r.intensities[(i * nt + t) * r.nBeams + j] - want));
    }
  }
  check("tilt 37 equals blochSimulate at its tilt (≤ 1e-12)", diff <= 1e-12, diff);

  // Cancel from the UI thread after the 5th tilt: resolves with the tilts done.
  const controller = new AbortController();
  /** @type {number[]} */
  const seen = [];
  const cut = await lab.blochRocking(cif, SWEEP, (p) => {
    seen.push(p.done);
    if (p.done === 5) controller.abort();
  }, controller.signal);
  log(`rocking cancel: stopped after ${cut.nTilts} tilts (progress ${seen.join(",")})`);
  // It stops at the pause after the tilt in progress when the cancel message arrives (5 or 6 when idle; more under load).
  check("a cancel mid-sweep resolves with the tilts done", cut.cancelled === true && cut.nTilts >= 5 && cut.nTilts < 100 && cut.tilts.length === cut.nTilts
    && cut.intensities.length === cut.nTilts * nt * cut.nBeams, `${cut.cancelled} after ${cut.nTilts}`);
  const bad = await rejected(lab.blochRocking(cif, { ...SWEEP, tilts: { fromDeg: NaN, toDeg: 1, n: 3 } }));
  check("a NaN tilt rejects, naming it", bad.includes("options.tilts.fromDeg") && bad.includes("NaN"), bad);
  const thrown = await rejected(lab.blochRocking(cif, { ...SWEEP, tilts: { anglesDeg: [0, 0.1] } }, () => { throw new Error("boom"); }));
  check("a throwing onProgress cancels the sweep and rejects", thrown === "blochRocking: onProgress threw: boom", thrown);
}

/**
 * Without a WebGPU adapter: `device: "gpu"` rejects naming the device; the CPU still works.
 * @param {Scatterlab} lab
 * @param {string} referenceText reference.json
 * @param {string} cif
 * @param {Check} check
 */
export async function noAdapterChecks(lab, referenceText, cif, check) {
  /** @type {BlochSimulateOptions} */
  const options = { kv: 200, zone: [0, 0, 1], thicknesses: [100], gMax: 1.0 };
  const sim = await rejected(lab.blochSimulate(cif, { ...options, device: "gpu" }));
  check("blochSimulate on gpu without an adapter rejects, naming device \"gpu\"", sim.includes("device \"gpu\""), sim);
  const cases = await rejected(lab.blochSimulateCases(referenceText, { device: "gpu", ids: ["urea-300kV-11"] }));
  check("blochSimulateCases on gpu without an adapter rejects, naming device \"gpu\"", cases.includes("device \"gpu\""), cases);
  const rocking = await rejected(lab.blochRocking(cif, { ...options, device: "gpu", tilts: { anglesDeg: [0] } }));
  check("blochRocking on gpu without an adapter rejects, naming device \"gpu\"", rocking.includes("device \"gpu\""), rocking);
  const cpu = await lab.blochSimulate(cif, options);
  check("the CPU still runs there", cpu.device === "cpu" && cpu.nBeams > 1, cpu.nBeams);
}
