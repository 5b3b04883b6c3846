#!/usr/bin/env node
// Writes sources.json at the repository root: every file the npm package `scatterlab` ships
// (package.json "files"), each with its role, size and sha256, sorted by path.
//   node web/tools/sources.mjs           regenerate sources.json
//   node web/tools/sources.mjs --check   exit 1, with a diff, if sources.json is not what the build made
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const check = process.argv.includes("--check");
const out = join(root, "sources.json");

/** What each shipped file is, by its path. */
function roleOf(path) {
  if (path.startsWith("dist/viewer-app/") && path.endsWith(".wasm")) return "viewer-wasm";
  if (path.endsWith(".wasm")) return "wasm";
  if (path.endsWith(".d.ts")) return "types";
  if (path.startsWith("dist/pkg/") && path.endsWith(".js")) return "glue";
  if (path.startsWith("dist/viewer-app/") && path.endsWith(".js")) return "viewer-glue";
  if (path === "dist/viewer.js") return "viewer";
  if (path === "dist/worker.js") return "worker";
  if (path === "dist/index.js") return "wrapper";
  if (path.startsWith("LICENSE")) return "license";
  return "asset";
}

const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
const missing = [];
const files = [...pkg.files].sort().map((path) => {
  const abs = join(root, path);
  if (!existsSync(abs)) {
    missing.push(path);
    return null;
  }
  const bytes = readFileSync(abs);
  return { path, role: roleOf(path), bytes: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
});
if (missing.length > 0) {
  console.error(`sources.json: package.json lists files the build did not make: ${missing.join(", ")} (run scripts/build-web.sh)`);
  process.exit(1);
}

const manifest = { package: pkg.name, version: pkg.version, files };
const text = JSON.stringify(manifest, null, 2) + "\n";

if (!check) {
  writeFileSync(out, text);
  console.log(`sources.json: ${files.length} files written`);
  process.exit(0);
}

const committed = existsSync(out) ? readFileSync(out, "utf8") : "";
if (committed === text) {
  console.log(`sources.json: matches the build (${files.length} files)`);
  process.exit(0);
}
// Show what changed: `diff -u committed fresh`.
const fresh = join(mkdtempSync(join(tmpdir(), "scatterlab-sources-")), "sources.json");
writeFileSync(fresh, text);
const shown = spawnSync("diff", ["-u", "--label", "sources.json (committed)", "--label", "sources.json (this build)", existsSync(out) ? out : "/dev/null", fresh], { encoding: "utf8" });
rmSync(dirname(fresh), { recursive: true, force: true });
console.error("sources.json differs from what this build produced:");
console.error(shown.stdout || shown.stderr || "(diff unavailable)");
console.error("If the change is intended, run scripts/build-web.sh and commit sources.json.");
process.exit(1);
