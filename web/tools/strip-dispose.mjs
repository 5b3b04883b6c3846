#!/usr/bin/env node
// Drops wasm-bindgen's `[Symbol.dispose](): void;` members from a declaration file: consumers whose
// tsconfig has `lib` ES2022 (no esnext.disposable) fail on them with TS2550, and a global shim for
// `SymbolConstructor.dispose` would clash with the real one under ESNext (two `unique symbol`s).
// The method still exists at run time; `free()` is the typed way to release a handle.
//   node web/tools/strip-dispose.mjs dist/pkg/scatterlab_web.d.ts
import { readFileSync, writeFileSync } from "node:fs";

const path = process.argv[2];
if (!path) {
  console.error("strip-dispose: usage: strip-dispose.mjs <file.d.ts>");
  process.exit(2);
}
const text = readFileSync(path, "utf8");
const lines = text.split("\n");
const kept = lines.filter((line) => line.trim() !== "[Symbol.dispose](): void;");
const dropped = lines.length - kept.length;
const left = kept.filter((line) => line.includes("Symbol.dispose"));
if (left.length > 0) {
  console.error(`strip-dispose: ${path} uses Symbol.dispose in a form this script does not know:\n  ${left.join("\n  ")}`);
  process.exit(1);
}
writeFileSync(path, kept.join("\n"));
console.log(`strip-dispose: ${path}: ${dropped} [Symbol.dispose] member(s) dropped`);
