// The viewer as a web developer embeds it, with nothing but `import { mountViewer } from
// "scatterlab/viewer"`: the bundler must emit the app's wasm, the engines' worker and their wasm.
// Records in `window.__viewerResult` (tests/consumers/run.mjs judges it): the ready event, the
// 4D-STEM workspace's built-in example opening with its default detectors, a detector set by a
// command coming back as a detector-changed event, and a Bloch simulation that the app runs in the
// engines' worker (so the worker and its wasm were found where the viewer looked).
import { mountViewer } from "scatterlab/viewer";

const result = { errors: [], events: [], ready: null, commanded: null, bloch: null };
const until = (test, what, ms = 60_000) => new Promise((resolve, reject) => {
  const t0 = performance.now();
  const poll = () => {
    const found = test();
    if (found) resolve(found);
    else if (performance.now() - t0 > ms) reject(new Error(`no ${what} within ${ms / 1000} s`));
    else setTimeout(poll, 50);
  };
  poll();
});
const CIF = "data_si\n_cell_length_a 5.431\n_cell_length_b 5.431\n_cell_length_c 5.431\n_cell_angle_alpha 90\n_cell_angle_beta 90\n_cell_angle_gamma 90\n" +
  "_symmetry_space_group_name_H-M 'P 1'\nloop_\n_atom_site_label\n_atom_site_type_symbol\n_atom_site_fract_x\n_atom_site_fract_y\n_atom_site_fract_z\n_atom_site_U_iso_or_equiv\nSi1 Si 0 0 0 0.005\n";
try {
  const viewer = await mountViewer(document.getElementById("viewer"), { onEvent: (e) => result.events.push(e) });
  result.ready = await viewer.ready;
  viewer.command({ do: "workspace", name: "Stem" });
  await until(() => result.events.some((e) => e.type === "detector-changed"), "default detectors");
  const shape = { kind: "annulus", center: [20, 21], inner: 3, outer: null };
  viewer.command({ do: "stemDetector", index: 1, name: "ring", shape });
  result.commanded = await until(() => result.events.find((e) => e.type === "detector-changed" && e.source === "command"), "detector-changed from the command");
  viewer.command({ do: "blochOpenCif", name: "si.cif", text: CIF });
  viewer.command({ do: "blochSimulate", kv: 200, zone: [0, 0, 1], thicknesses: [100], solver: "eigen", device: "cpu" });
  const sim = await until(() => { const s = viewer.status().bloch?.simulate; return s?.error || s?.result ? s : null; }, "Bloch result from the engines' worker", 90_000);
  result.bloch = { error: sim.error, beams: sim.result?.I?.[0]?.length ?? null, sum: sim.result?.I?.[0]?.reduce((a, b) => a + b, 0) ?? null };
  viewer.destroy();
} catch (error) {
  result.errors.push(error instanceof Error ? `${error.message}\n${error.stack}` : String(error));
}
window.__viewerResult = result;
