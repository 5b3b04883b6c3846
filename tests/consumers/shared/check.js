// The app every consumer build bundles: the package as a web developer uses it, with nothing but
// `import { Scatterlab } from "scatterlab"`. It computes the stack of tests/e2e/package.html on the
// CPU and on WebGPU, feeds a NaN thickness to both, and leaves everything in
// `window.__consumerResult` for tests/consumers/run.mjs, which compares it with expected.json.
// `?xo=<worker URL on another origin>` adds the cross-origin worker checks (esbuild esm app).
import { Scatterlab } from "scatterlab";

const stack = {
  thickness: [0, 120, 35, 0], roughness: [0, 3, 2, 4],
  delta_o: [0, 1.2e-5, 2.1e-5, 7.6e-6], beta_o: [0, 1.1e-6, 2.0e-6, 1.7e-7],
  delta_e: [0, 1.3e-5, 2.0e-5, 7.6e-6], beta_e: [0, 1.0e-6, 2.1e-6, 1.7e-7],
};
const q = Float64Array.from({ length: 200 }, (_, i) => 0.005 + i * 0.0025);

/** The rejection message of `promise`, or "resolved". */
async function rejection(promise) {
  try {
    await promise;
    return "resolved";
  } catch (error) {
    return error instanceof Error ? error.message : `non-Error ${String(error)}`;
  }
}

/** Runs the checks with `options` added to every `Scatterlab.create` (the README's one-liners). */
export async function runChecks(options = {}) {
  const result = { errors: [], backends: {}, nan: {}, crossOrigin: null };
  try {
    for (const device of ["cpu", "gpu"]) {
      const lab = await Scatterlab.create({ device, ...options });
      result.backends[device] = lab.backend;
      const r = await lab.reflectivity(8047.8, q, stack);
      result[device] = { device: r.device, R_s: Array.from(r.R_s), R_p: Array.from(r.R_p) };
      result.nan[device] = await rejection(lab.reflectivity(8047.8, q, { ...stack, thickness: [0, NaN, 35, 0] }));
      lab.dispose();
    }
    const xo = new URLSearchParams(location.search).get("xo");
    if (xo !== null) {
      const refused = await rejection(Scatterlab.create({ device: "cpu", ...options, workerUrl: xo }));
      const lab = await Scatterlab.create({ device: "cpu", ...options, workerUrl: xo, crossOriginWorker: "blob" });
      const r = await lab.reflectivity(8047.8, q.subarray(0, 3), stack);
      lab.dispose();
      result.crossOrigin = { refused, blob: Array.from(r.R_s) };
    }
  } catch (error) {
    result.errors.push(error instanceof Error ? `${error.message}\n${error.stack}` : String(error));
  }
  document.getElementById("out").textContent = JSON.stringify(result).slice(0, 2000);
  window.__consumerResult = result;
}
