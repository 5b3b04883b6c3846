/**
 * Where the worker script and the wasm are, under every bundler: the literal
 * `new URL("./…", import.meta.url)` patterns that webpack 5, Vite, Parcel and Rollup's
 * import-meta-assets plugin emit, the loading script's URL in an iife bundle, and explicit URLs;
 * readable errors for a cross-origin worker and for files a bundler did not emit.
 * @module
 */

/**
 * The URL of the classic script that is running this module, captured while it runs: in an iife
 * bundle (esbuild's default format) `import.meta.url` is empty, and the worker and the wasm are
 * then looked up beside that script instead.
 */
export const scriptUrl: string | undefined = typeof document !== "undefined" && document.currentScript instanceof HTMLScriptElement ? document.currentScript.src : undefined;

/**
 * The default location of the worker or the wasm. The two `new URL("./…", import.meta.url)`
 * expressions stay literal so that webpack 5, Vite, Parcel and Rollup's import-meta-assets plugin
 * recognise them and emit the files.
 */
export function defaultUrl(file: "worker" | "wasm"): URL {
  try {
    return file === "worker" ? new URL("./worker.js", import.meta.url) : new URL("./pkg/scatterlab_web_bg.wasm", import.meta.url);
  } catch {
    const relative = file === "worker" ? "./worker.js" : "./pkg/scatterlab_web_bg.wasm";
    if (scriptUrl) return new URL(relative, scriptUrl);
    const option = file === "worker" ? "workerUrl" : "wasmUrl";
    throw new Error(`scatterlab: cannot locate ${relative}: this bundle has no import.meta.url and no script URL; pass \`${option}\` to Scatterlab.create (see the package README, "Bundlers")`);
  }
}

/** Why a worker did not start, found out after its `error` event (which carries no reason). */
export async function diagnoseWorker(url: URL): Promise<string> {
  // Vite 5–7's dev server pre-bundles the package into node_modules/.vite/deps, away from its files.
  const hint = url.pathname.includes("/.vite/deps/")
    ? 'Vite\'s dev server moved the package: add `optimizeDeps: { exclude: ["scatterlab"] }` to vite.config (see the package README, "Bundlers")'
    : 'pass `workerUrl` to Scatterlab.create, or see the package README ("Bundlers")';
  try {
    const response = await fetch(url, { cache: "no-store" });
    const type = response.headers.get("content-type") ?? "";
    if (!response.ok) return `scatterlab worker failed: cannot load ${url.href} (HTTP ${response.status}): the bundler did not emit scatterlab's worker.js there; ${hint}`;
    if (!/javascript|ecmascript/.test(type)) return `scatterlab worker failed: ${url.href} is served as ${type || "no type"}, not JavaScript: the bundler did not emit scatterlab's worker.js there; ${hint}`;
  } catch (error) {
    return `scatterlab worker failed: cannot load ${url.href} (${error instanceof Error ? error.message : String(error)}); ${hint}`;
  }
  return `scatterlab worker failed: ${url.href} did not start (a script error or a Content-Security-Policy without worker-src for it)`;
}

/**
 * The worker's script URL as given or by default; another origin than the page's is refused by the
 * browser, so it is either refused here with a readable message or fetched into a `blob:` URL.
 */
export async function workerScriptUrl(given: string | URL | undefined, crossOrigin: "reject" | "blob" | undefined): Promise<{ url: URL; revoke: boolean }> {
  const url = given !== undefined ? new URL(given, location.href) : defaultUrl("worker");
  if (url.protocol === "blob:" || url.protocol === "data:" || url.origin === location.origin) return { url, revoke: false };
  if (crossOrigin !== "blob") {
    throw new Error(
      `scatterlab: the worker script ${url.href} is on another origin than this page (${location.origin}); browsers start module workers only from the page's origin. ` +
        'Serve scatterlab/worker.js (and the wasm) from this origin and pass `workerUrl`, or pass `crossOriginWorker: "blob"` to fetch it (CORS) and start it from a blob: URL',
    );
  }
  let text: string;
  try {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    text = await response.text();
  } catch (error) {
    throw new Error(`scatterlab: cannot fetch the cross-origin worker script ${url.href} (${error instanceof Error ? error.message : String(error)}; it must be served with CORS)`);
  }
  return { url: new URL(URL.createObjectURL(new Blob([text], { type: "text/javascript" }))), revoke: true };
}
