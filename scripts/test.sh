#!/usr/bin/env bash
# The one test command: sets the machine up (idempotent), then runs every stage.
# Stages and timings are described in TESTING.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
# One build per run: incremental caches would only cost disk (~10 GiB across the test binaries).
export CARGO_INCREMENTAL=0
df -h "$HOME" | sed 's/^/disk: /'

passed=0
failed=0
failed_names=()
stage() {
  local name=$1; shift
  echo; echo "=== stage: $name"
  local t0=$SECONDS
  if "$@"; then
    passed=$((passed + 1)); echo "=== stage $name: ok ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1)); failed_names+=("$name"); echo "=== stage $name: FAILED ($((SECONDS - t0)) s)"
  fi
}

# lint: rustfmt --check (rustfmt.toml), see scripts/lint.sh.
[ -f scripts/lint.sh ] && stage lint bash scripts/lint.sh
# a, b, d: native unit/integration tests, WGSL kernels on lavapipe vs their CPU twins, naga
# validation of every shader, egui_kittest UI tests.
stage native cargo test --workspace --all-targets --no-fail-fast
# every cargo-fuzz target for a few seconds on its committed seeds (dev builds, no sanitizer).
[ -f scripts/fuzz-smoke.sh ] && stage fuzz bash scripts/fuzz-smoke.sh
# g: the Python extension (crates/py) built into setup.sh's venv, pytest on a two-process Dask cluster.
[ -f scripts/test-python.sh ] && stage python bash scripts/test-python.sh
# c: wasm-bindgen-test in headless Chromium with WebGPU (SwiftShader).
[ -f scripts/test-browser.sh ] && stage browser bash scripts/test-browser.sh
# f: web build + sources.json must match the committed file.
[ -f scripts/build-web.sh ] && stage web-build-and-sources bash scripts/build-web.sh --check-sources
# the packed npm tarball in a tiny app per bundler (Vite build + dev, webpack, esbuild esm/iife, Rollup, Parcel), headless Chromium.
[ -f scripts/test-consumers.sh ] && stage consumers bash scripts/test-consumers.sh
# e: index.html served on 127.0.0.1 in headless Chromium, WebGPU backend, no console errors.
[ -f scripts/test-e2e.sh ] && stage e2e bash scripts/test-e2e.sh

echo
if [ "$failed" -gt 0 ]; then echo "failed stages: ${failed_names[*]}"; fi
echo "stages: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
