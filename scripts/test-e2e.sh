#!/usr/bin/env bash
# End-to-end stage: builds dist/ (without touching sources.json), then in headless Chromium
# (WebGPU on SwiftShader, fresh profile, served on 127.0.0.1 at a free port):
#   tests/e2e/app.mjs      index.html: the egui app ready, WebGPU backend, no console errors, non-blank screenshot, dev_small via open_files,
#                          each reference detector's displayed LUT digest (h5py reference), dev_medium's heap bound
#   tests/e2e/native_app.mjs  the desktop app under Xvfb (Vulkan on lavapipe): dev_small, the same detector digests;
#                          the Bloch workspace (Si-200kV-00 vs I_ref, a 2-iteration quartz refinement, screenshots)
#   tests/e2e/package.mjs  the npm package (wrapper + worker + wasm) on CPU and GPU, errors as Errors
#   tests/e2e/viewer.mjs   the package's viewer in a host page (web/examples/viewer.html, mountViewer): dev_small via
#                          openFiles, file-opened / file-loaded / detector-changed (command and drag) / error events
#   tests/e2e/fit.mjs      fitting in the package's worker: progress, seeded result, cancel, resume, polish
#   tests/e2e/app_fit.mjs  the app's Fit tab through its widgets: file dialog, fit in the worker, downloads, cancel, MCMC
#   tests/e2e/h5.mjs       HDF5 / 4D-STEM Files in the package's worker: stemInfo, tree, frames, stream sums, cancel, missing file, ssb
#   tests/e2e/bloch.mjs    Bloch-wave simulation and refinement in the package's worker: shapes, progress, cancel, named errors,
#                          reference.json cases on CPU and WebGPU, a 100-tilt ~300-beam rocking sweep without main-thread long tasks
#   tests/e2e/app_bloch.mjs  the app's Bloch workspace: Si-200kV-00 on the Worker's CPU and WebGPU vs I_ref, a 100-tilt
#                          ~300-beam sweep with no main-thread task over 50 ms, cancel, a 2-iteration refinement in the Worker
# Screenshots land in tests/e2e/out/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
bash scripts/build-web.sh --no-sources
# The desktop app for native_app.mjs: the native stage's `cargo test --workspace --all-targets`
# builds it (for the app's integration tests); the same command with --no-run is then a no-op,
# where `cargo build -p scatterlab-app` would resolve other features and rebuild wgpu and more.
cargo test -q --workspace --all-targets --no-run
passed=0
failed=0
for test in tests/e2e/app.mjs tests/e2e/native_app.mjs tests/e2e/package.mjs tests/e2e/viewer.mjs tests/e2e/fit.mjs tests/e2e/app_fit.mjs tests/e2e/h5.mjs tests/e2e/bloch.mjs tests/e2e/app_bloch.mjs; do
  t0=$SECONDS
  if node "$test"; then
    passed=$((passed + 1)); echo "test-e2e: $test ok ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1)); echo "test-e2e: $test FAILED ($((SECONDS - t0)) s)"
  fi
done
echo "e2e: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
