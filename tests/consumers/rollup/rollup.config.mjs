// Rollup has no built-in handling of `new URL("./file", import.meta.url)`: the README's one line
// for Rollup is the import-meta-assets plugin, which emits the worker and the wasm.
import { nodeResolve } from "@rollup/plugin-node-resolve";
import { importMetaAssets } from "@web/rollup-plugin-import-meta-assets";

export default {
  input: "./rollup/main.js",
  output: { dir: "out/rollup", format: "es" },
  plugins: [nodeResolve({ browser: true }), importMetaAssets()],
};
