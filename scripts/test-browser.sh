#!/usr/bin/env bash
# Browser stage: the
# wasm-bindgen-test suite of scatterlab-web in headless Chromium with WebGPU (SwiftShader):
# the WGSL reflectivity kernel against the f64 CPU twin and the fixture, bad inputs rejected;
# the 4D-STEM fused pass and display kernels against their CPU twins (browser_stem.rs).
#   scripts/test-browser.sh                 the browser tests
#   scripts/test-browser.sh --check-only    only the wasm32 compile check
# Chromium flags: crates/web/webdriver.json (see shared/TOOLCHAIN.md).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

wasm_target=wasm32-unknown-unknown
# Everything the browser runs: library crates, the npm surface and the egui app.
wasm_packages=(-p scatterlab-core -p scatterlab-gpu -p scatterlab-refl -p scatterlab-hdf5 -p scatterlab-stem
  -p scatterlab-bloch -p scatterlab-web -p scatterlab-app)

# The wasm32 compile check of every web crate is opt-in: the test build below compiles the web
# crate and its dependencies, and build-web.sh compiles the app, so by default it would only add
# minutes to a cold CI run.
if [ "${1:-}" = "--check-only" ]; then
  t0=$SECONDS
  echo "test-browser: cargo check --target $wasm_target ${wasm_packages[*]}"
  cargo check --target "$wasm_target" "${wasm_packages[@]}"
  echo "test-browser: wasm32 check ok ($((SECONDS - t0)) s)"
  exit 0
fi

for tool in wasm-bindgen-test-runner /usr/bin/chromedriver /usr/bin/chromium; do
  command -v "$tool" >/dev/null || { echo "test-browser: $tool missing (run scripts/setup.sh)" >&2; exit 1; }
done
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export CHROMEDRIVER=/usr/bin/chromedriver
# The runner may sit on a busy machine for a while before Chromium answers.
export WASM_BINDGEN_TEST_TIMEOUT="${WASM_BINDGEN_TEST_TIMEOUT:-300}"
t1=$SECONDS
# --nocapture: show the adapter and the deviations the tests print.
cargo test --target "$wasm_target" -p scatterlab-web -- --nocapture
echo "test-browser: browser tests ok ($((SECONDS - t1)) s)"
