#!/usr/bin/env bash
# Web build: release wasm of the egui app (scatterlab-app) and of the npm surface (scatterlab-web),
# wasm-bindgen --target web into dist/app and dist/pkg, the TypeScript wrapper and worker
# type-checked and bundled into dist/, the package packed into dist/scatterlab-<version>.tgz
# (web/tools/pack.mjs: web/README.md as its README, gzip sizes printed and held to a budget), then
# sources.json (every file of the npm package with its role, size and sha256) regenerated at the
# repository root.
#   scripts/build-web.sh                   build, write sources.json
#   scripts/build-web.sh --check-sources   build, fail with a diff if sources.json differs from the committed one
#   scripts/build-web.sh --no-sources      build only, leave sources.json alone (the e2e stage)
#   scripts/build-web.sh --pkg-only        the npm package only: dist/app (the page's copy of the app) is
#                                          skipped; the app's wasm is still built for the package's viewer
# The wasm is built with path remapping so that its bytes do not depend on where the clone or the
# cargo home lives; no wasm-opt (Debian's breaks modules, see shared/TOOLCHAIN.md).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
check=0
build_app=1
sources=1
for arg in "$@"; do
  case "$arg" in
    --check-sources) check=1 ;;
    --pkg-only) build_app=0 ;;
    --no-sources) sources=0 ;;
    *) echo "build-web: unknown argument $arg (expected --check-sources, --no-sources or --pkg-only)" >&2; exit 2 ;;
  esac
done
source scripts/env.sh

target=wasm32-unknown-unknown
release_dir="$CARGO_TARGET_DIR/$target/release"
t_all=$SECONDS
step() { echo "build-web: $1 ($(( SECONDS - t_step )) s)"; t_step=$SECONDS; }
t_step=$SECONDS

# --- tools ------------------------------------------------------------------------------------
wb_lock=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
wb_have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$wb_have" != "$wb_lock" ]; then
  echo "build-web: wasm-bindgen CLI is '${wb_have:-missing}' but Cargo.lock has wasm-bindgen $wb_lock; run scripts/setup.sh" >&2
  exit 1
fi
if [ ! -x node_modules/.bin/esbuild ] || [ ! -x node_modules/.bin/tsc ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "build-web: npm ci"
  npm ci --no-audit --no-fund --silent
fi

# --- wasm -------------------------------------------------------------------------------------
# Only the wasm target gets these flags (native builds keep their cache). Workspace sources are
# passed to rustc as relative paths already; the cargo registry and the target dir are not.
# (CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS is set in scripts/env.sh, for every wasm build.)
# Each package on its own: building them together would unify features (the app's WebGL backend
# would end up in the npm package's wasm) and make each wasm depend on what it was built with.
cargo build --release --target "$target" --lib -p scatterlab-web
step "cargo build scatterlab-web"
# The app: index.html's page and the package's viewer (`scatterlab/viewer`) both run it.
if ! cargo build --release --target "$target" --lib -p scatterlab-app; then
  echo "build-web: FAILED: crates/app (scatterlab-app) does not compile for $target; the web app and the package's viewer cannot be built" >&2
  exit 1
fi
step "cargo build scatterlab-app"

# --- wasm-bindgen -----------------------------------------------------------------------------
bindgen() { # crate_file out_dir [wasm-bindgen flags]
  local tmp
  tmp=$(mktemp -d dist/.bindgen.XXXXXX) && chmod 755 "$tmp"
  wasm-bindgen --target web --out-dir "$tmp" "${@:3}" "$release_dir/$1.wasm"
  rm -rf "$2" && mv "$tmp" "$2"
}
mkdir -p dist
# The npm package's wasm without its name section (debug names of every function, ~2 MB of the
# wasm, ~0.25 MB gzipped); the app keeps its names for readable panics.
bindgen scatterlab_web dist/pkg --remove-name-section
# wasm-bindgen types the handles' `[Symbol.dispose]()`, which consumers with `lib` ES2022 (no
# esnext.disposable) cannot type-check (TS2550): dropped from the declarations; `free()` stays
# and the method itself still exists at run time.
node web/tools/strip-dispose.mjs dist/pkg/scatterlab_web.d.ts
if [ "$build_app" = 1 ]; then bindgen scatterlab_app dist/app; fi
# The package's copy of the app (the viewer), without its name section like the engines' wasm
# (~1.5 MB, 0.4 MB gzipped); the page's copy above keeps it.
bindgen scatterlab_app dist/viewer-app --remove-name-section
step "wasm-bindgen"

# --- TypeScript wrapper and worker ------------------------------------------------------------
node_modules/.bin/tsc -p web/tsconfig.json
types_tmp=$(mktemp -d dist/.types.XXXXXX)
node_modules/.bin/tsc -p web/tsconfig.json --noEmit false --declaration --emitDeclarationOnly --outDir "$types_tmp"
cp "$types_tmp/index.d.ts" "$types_tmp/fit.d.ts" "$types_tmp/h5.d.ts" "$types_tmp/bloch.d.ts" "$types_tmp/viewer.d.ts" "$types_tmp/viewer_types.d.ts" dist/
# The protocols' types, generated from crates/web/src/protocol/ (fit.d.ts, h5.d.ts, bloch.d.ts re-export them).
rm -rf dist/generated && mkdir -p dist/generated
cp "$types_tmp/generated/fit.d.ts" "$types_tmp/generated/h5.d.ts" "$types_tmp/generated/bloch.d.ts" dist/generated/
rm -rf "$types_tmp"
step "tsc (type-check, declarations)"
esbuild_common=(--bundle --format=esm --platform=browser --target=es2022 --charset=utf8 --log-level=warning)
node_modules/.bin/esbuild web/src/index.ts "${esbuild_common[@]}" --outfile=dist/index.js
# The worker always passes the wasm URL to the glue: its unused `new URL(…, import.meta.url)`
# default is defined away, so that a bundler that re-bundles worker.js (esbuild as an entry point,
# Parcel) neither looks for a wasm beside it nor warns about import.meta in an iife.
node_modules/.bin/esbuild web/src/worker.ts "${esbuild_common[@]}" --define:import.meta.url=undefined --outfile=dist/worker.js
# The viewer keeps the app's glue a module of its own (dist/viewer-app/scatterlab_app.js, imported
# from dist/viewer.js), so that the glue's `new URL("scatterlab_app_bg.wasm", import.meta.url)`
# stays beside the wasm for the bundlers that follow it; esbuild keeps an external path verbatim,
# so the source's path (web/src → dist/viewer-app) is rewritten to the shipped one.
node_modules/.bin/esbuild web/src/viewer.ts "${esbuild_common[@]}" --external:../../dist/viewer-app/scatterlab_app.js --outfile=dist/viewer.js
node -e '
const fs = require("fs");
const [from, to] = ["\"../../dist/viewer-app/scatterlab_app.js\"", "\"./viewer-app/scatterlab_app.js\""];
const text = fs.readFileSync("dist/viewer.js", "utf8");
if (text.split(from).length !== 2) { console.error(`build-web: dist/viewer.js should import ${from} once`); process.exit(1); }
fs.writeFileSync("dist/viewer.js", text.replace(from, to));'
step "esbuild (wrapper, worker, viewer)"
# The package as a consumer imports it ("scatterlab", "scatterlab/pkg" through package.json exports).
# Under the consumer tsconfigs people have: lib ES2022 (no Symbol.dispose) and ESNext.
node_modules/.bin/tsc -p web/check
node_modules/.bin/tsc -p web/check/tsconfig.es2022.json
node_modules/.bin/tsc -p web/check/tsconfig.esnext.json
step "tsc (consumer view of dist/: lib ES2022+DOM+disposable, ES2022+DOM, ESNext+DOM)"

# --- the npm tarball --------------------------------------------------------------------------
# dist/scatterlab-<version>.tgz, packed from a staging folder whose README is web/README.md; prints
# each file's gzip size and fails above the budget stated in web/tools/pack.mjs.
node web/tools/pack.mjs
step "npm pack (dist/scatterlab-*.tgz, gzip sizes)"

# --- sources.json -----------------------------------------------------------------------------
if [ "$check" = 1 ]; then
  node web/tools/sources.mjs --check
  step "sources.json check"
elif [ "$sources" = 1 ]; then
  node web/tools/sources.mjs
  step "sources.json"
fi
echo "build-web: ok ($(( SECONDS - t_all )) s total)"
