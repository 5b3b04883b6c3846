#!/usr/bin/env node
// End to end: the egui app (index.html) fits the fixture's task in the browser, driven through its
// real widgets: the Fit tab, "Open file…" (the browser's file dialog, answered with
// ../shared/fixtures/refl/fit_task.json or $SCATTERLAB_FIXTURES), "Run fit" (DE + LM in the npm
// package's Web Worker), progress while the page keeps running, the result, "Cancel", and the
// "model JSON" and "plots PNG" downloads, and an MCMC run whose samples reach the app. Buttons are found through the app's handle
// (`window.scatterlabApp.landmark(name)`) and clicked with the mouse; the state is read from
// `window.scatterlabApp.status()`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { appStatus, checker, decodePng, finish, fixtures, log, openApp, untilStatus, withPage } from "./harness.mjs";

const taskPath = join(fixtures, "refl", "fit_task.json");
/** @type {number} */
const chi2Truth = JSON.parse(readFileSync(taskPath, "utf8")).chi2_at_truth;
/** @type {string[]} */
const failures = [];
const check = checker("app fit", failures);

await withPage("app fit", async (page, server, browser) => {
  try {
    await openApp(page, server);
    const status = () => appStatus(page);
    /**
     * @param {string} what
     * @param {(status: any) => unknown} predicate
     */
    const until = (what, predicate, timeout = 30_000) => untilStatus(page, what, predicate, { timeout });
    /**
     * The widget `name`'s rectangle on the page [x, y, width, height], or null.
     * @param {string} name
     */
    const where = (name) => page.evaluate((n) => {
      const r = window.scatterlabApp.landmark(n);
      const canvas = document.getElementById("scatterlab_canvas");
      if (!canvas) throw new Error("index.html has no #scatterlab_canvas");
      const c = canvas.getBoundingClientRect();
      return r ? [c.left + r[0], c.top + r[1], r[2], r[3]] : null;
    }, name);
    /**
     * Scrolls the panel under the widget with the mouse wheel until the widget is on screen.
     * @param {string} name
     */
    const reveal = async (name) => {
      const height = await page.evaluate(() => window.innerHeight);
      let box = await where(name);
      for (let i = 0; box && i < 20; i++) {
        const dy = box[1] + box[3] > height ? 300 : box[1] < 0 ? -300 : 0;
        if (dy === 0) break;
        if (process.env.E2E_VERBOSE) log(`scroll ${dy} for ${name} at y ${box[1].toFixed(0)}`);
        await page.mouse.move(box[0] + box[2] / 2, 400);
        await page.mouse.wheel(0, dy);
        await page.waitForTimeout(150);
        box = await where(name);
      }
      if (!box) throw new Error(`no widget "${name}" on screen`);
      // A wheel scroll animates over a few frames, and the app paints only on events: nudge the
      // pointer so frames are painted, until the widget holds still across two painted frames.
      for (let i = 0, frames = (await status()).frames; i < 30; i++) {
        await page.mouse.move(box[0] + box[2] / 2 + (i % 2), box[1] + box[3] / 2);
        await page.waitForTimeout(100);
        const now = (await status()).frames;
        const again = await where(name);
        if (!again) throw new Error(`widget "${name}" vanished`);
        const still = now > frames && again[1] === box[1];
        frames = now;
        box = again;
        if (still) break;
      }
      return box;
    };
    /** @param {string} name */
    const click = async (name) => {
      const box = await reveal(name);
      if (process.env.E2E_VERBOSE) log(`click ${name} at ${box.map((v) => v.toFixed(0)).join(",")}`);
      // Hover first (egui sees the pointer arrive in one frame), then press and release.
      await page.mouse.move(box[0] + box[2] / 2, box[1] + box[3] / 2);
      await page.waitForTimeout(100);
      await page.mouse.down();
      await page.waitForTimeout(50);
      await page.mouse.up();
    };
    /**
     * Clicks `name` and returns the download it starts.
     * @param {string} name
     */
    const download = async (name) => {
      await reveal(name);
      const started = page.waitForEvent("download", { timeout: 15_000 });
      await click(name);
      return started;
    };
    /**
     * Types `value` into the number field `name` (a click starts egui's text edit).
     * @param {string} name
     * @param {number} value
     */
    const setNumber = async (name, value) => {
      await click(name);
      await page.keyboard.press("End");
      for (let i = 0; i < 8; i++) await page.keyboard.press("Backspace");
      await page.keyboard.type(String(value));
      await page.keyboard.press("Enter");
      await page.waitForTimeout(100);
    };
    /** @param {string} name */
    const landmark = (name) => page.waitForFunction((n) => window.scatterlabApp.landmark(n), name, { timeout: 10_000, polling: 50 });

    await landmark("tab Fit");
    await click("tab Fit");
    await landmark("Open file…");
    const chooser = page.waitForEvent("filechooser", { timeout: 10_000 });
    await click("Open file…");
    await (await chooser).setFiles(taskPath);
    const loaded = await until("the task to load", (s) => s.fit.model !== null);
    check("the file dialog loads the fit task", loaded.fit.model === "fit_task.json", JSON.stringify(loaded.fit.model));

    // The page's own clock during the fit: the longest gap between 10 ms ticks shows whether the UI thread froze.
    await page.evaluate(() => {
      window.__gaps = { last: performance.now(), max: 0, ticks: 0 };
      window.__tick = setInterval(() => { const now = performance.now(); window.__gaps.max = Math.max(window.__gaps.max, now - window.__gaps.last); window.__gaps.last = now; window.__gaps.ticks++; }, 10);
    });
    const t0 = Date.now();
    await click("Run fit");
    /** @type {{ stage: string, iteration: number }[]} */
    const seen = [];
    const done = await until("the fit to finish", (s) => {
      if (s.fit.progress && s.fit.running) seen.push(s.fit.progress);
      return !s.fit.running && s.fit.result;
    }, 120_000);
    const wall = (Date.now() - t0) / 1e3;
    const gaps = await page.evaluate(() => { clearInterval(window.__tick); return window.__gaps; });
    const r = done.fit.result;
    log(`app fit: χ² ${r.startChi2.toExponential(3)} → ${r.chi2.toFixed(3)} (truth ${chi2Truth.toFixed(3)}) in ${wall.toFixed(1)} s, ${r.evaluations} evaluations, ${r.engine}; ${seen.length} progress reads, longest UI gap ${gaps.max.toFixed(0)} ms over ${gaps.ticks} ticks`);
    check("progress shown while the fit runs", seen.some((p) => p.stage === "DE generation") && seen.length >= 3, `${seen.length} reads, last ${JSON.stringify(seen.at(-1))}`);
    check("the fit ran in the web worker", r.engine.startsWith("web worker: cpu f64"), r.engine);
    check("χ² ≤ 1.01 × χ²(truth)", r.chi2 <= 1.01 * chi2Truth, `${r.chi2} vs ${chi2Truth}`);
    check("uncertainties from the LM polish", r.hasErrors === true && r.cancelled === false, JSON.stringify(r));
    check("the UI thread never froze", gaps.max < 500 && gaps.ticks > 10, `longest gap ${gaps.max.toFixed(0)} ms`);

    // Downloads: the model with the fitted values, and the plots as PNG.
    const modelFile = await (await download("model JSON")).path();
    const model = JSON.parse(readFileSync(modelFile, "utf8"));
    check("model JSON download", model.format === "scatterlab-refl-model" && typeof model.parameters === "object", Object.keys(model).join());
    const png = decodePng(readFileSync(await (await download("plots PNG")).path()));
    check("plots PNG download", png.width > 200 && png.height > 100, `${png.width}×${png.height}`);

    // Cancel a second fit from its button once it reports progress. Its population is the
    // largest (200 × free): from the fitted values the default one converges in ~3 s, which a
    // loaded machine's click can miss.
    await setNumber("population × free", 200);
    await click("Run fit");
    await until("the second fit's progress", (s) => s.fit.running && s.fit.progress && s.fit.progress.iteration >= 2);
    await click("Cancel");
    const cut = await until("the cancel", (s) => !s.fit.running, 30_000);
    check("Cancel stops the fit with its best point", cut.fit.result?.cancelled === true, JSON.stringify(cut.fit.result));
    // Cancelled early from the fitted values, its best point is worse: the table keeps the fitted values.
    check("a cancelled fit worse than its start leaves the values", (cut.fit.result.chi2 >= cut.fit.result.startChi2) === /values kept/.test(cut.fit.message?.ok ?? ""), JSON.stringify(cut.fit.message));

    await setNumber("population × free", 15);

    // MCMC in the worker: the samples reach the app's histograms.
    await click("MCMC (after DE + LM)");
    await click("Run fit");
    await until("the MCMC fit to start", (s) => s.fit.running);
    const mc = await until("the MCMC fit to finish", (s) => !s.fit.running, 180_000);
    log(`app fit: MCMC ${JSON.stringify(mc.fit.result)}`);
    check("MCMC samples arrive from the worker", mc.fit.result?.mcmcSamples >= 48 * 300 && mc.fit.result?.hasErrors === true, JSON.stringify(mc.fit.result));
    const rows = readFileSync(await (await download("MCMC samples CSV")).path(), "utf8").trim().split("\n");
    check("MCMC samples CSV download", rows.length === mc.fit.result.mcmcSamples + 1 && rows[0].split(",").length === 12
      && rows.slice(1).every((r) => r.split(",").length === 12 && r.split(",").every((v) => Number.isFinite(Number(v)))), `${rows.length} rows, header ${rows[0]}`);
    failures.push(...browser.problems);
  } catch (e) {
    failures.push(e instanceof Error ? e.message : String(e));
  }
});
finish("app fit", failures);
