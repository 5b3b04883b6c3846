# Sourced by every script: one persistent target dir outside the repository (a fresh clone
# rebuilds in seconds), lavapipe for native wgpu, and quiet defaults for headless runs.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/scatterlab/target}"
export WGPU_BACKEND="${WGPU_BACKEND:-vulkan}"
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-/tmp/scatterlab-xdg-$(id -u)}"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# wasm only (native builds keep their cache): remap the cargo home and target dir so the wasm bytes
# (hashed in sources.json) do not depend on where they live, and enable wasm SIMD (every current
# browser has it), which the vectorised CPU paths use.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo --remap-path-prefix=$CARGO_TARGET_DIR=/target -C target-feature=+simd128"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
# Keep the cache bounded: wipe it when it grows past 40 GiB (a day of parallel development reaches ~20),
# but never while a cargo process runs (a wipe under a running build or test breaks it).
if [ -d "$CARGO_TARGET_DIR" ] && [ "$(du -s "$CARGO_TARGET_DIR" 2>/dev/null | cut -f1)" -gt 40000000 ]; then
  if pgrep -x cargo >/dev/null 2>&1; then
    echo "target cache over 40 GiB, but cargo is running: not wiped now" >&2
  else
    echo "target cache over 40 GiB: cargo clean"; rm -rf "$CARGO_TARGET_DIR"
  fi
fi
