// The 4D-STEM display checks shared by the browser (app.mjs) and desktop (native_app.mjs) flows:
// the fixture's reference detector geometry for dev_small, the commands that set each detector
// and a linear gray display between the image's min and max (percentiles 0 and 100), and the
// expected sums and LUT digests from tests/e2e/reference_display.py (h5py on the reference file).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./harness.mjs";

export const fixtures = process.env.SCATTERLAB_FIXTURES ?? join(repoRoot, "..", "shared", "fixtures");

/** `<prefix>_params.json` references.virtual_detectors as app commands, one list per detector. */
export function detectorCommands(prefix) {
  const params = JSON.parse(readFileSync(join(fixtures, "stem", `${prefix}_params.json`), "utf8"));
  const display = { do: "stemDisplay", target: "image", colormap: "gray", transform: "linear", percentiles: [0, 100] };
  return Object.entries(params.references.virtual_detectors).map(([name, d]) => {
    const outer = d.outer_px === "inf" ? null : d.outer_px;
    const shape = d.inner_px === 0 && outer !== null
      ? { kind: "disc", center: d.center_row_col, radius: outer }
      : { kind: "annulus", center: d.center_row_col, inner: d.inner_px, outer };
    return { name, commands: [{ do: "stemDetector", index: 0, name: name.toUpperCase(), shape }, display] };
  });
}

/** Sums, limits and LUT digests of `<prefix>_reference.h5`'s virtual images (h5py, Debian's python3). */
export function referenceDisplay(prefix) {
  const script = join(repoRoot, "tests", "e2e", "reference_display.py");
  const out = execFileSync("/usr/bin/python3", [script, join(fixtures, "stem", `${prefix}_reference.h5`)], { encoding: "utf8" });
  const reference = JSON.parse(out);
  if (!reference.adfDefinitionAgrees) throw new Error("display_adf_lut_index disagrees with the README's definition");
  return reference;
}

/** Problems with the displayed image `image` (status.stem.image) against `want`. */
export function compareImage(label, image, want) {
  const problems = [];
  if (image?.sum !== want.sum) problems.push(`${label}: sum ${image?.sum}, expected ${want.sum}`);
  if (JSON.stringify(image?.limits) !== JSON.stringify(want.limits)) problems.push(`${label}: limits ${JSON.stringify(image?.limits)}, expected ${JSON.stringify(want.limits)}`);
  if (image?.lutFnv1a64 !== want.lutFnv1a64) problems.push(`${label}: LUT digest ${image?.lutFnv1a64}, expected ${want.lutFnv1a64}`);
  return problems;
}
