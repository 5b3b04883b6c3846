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
# Keep the caches bounded (CI runs on a machine whose disk other jobs share: a run once died of
# "No space left on device" with 49 GiB of caches here). Never while a cargo process runs (a wipe
# under a running build or test breaks it).
#  - each target dir (this one, the fuzz smoke's) is wiped when it grows past its cap;
#  - when the disk has under 15 GiB free, the incremental caches (rebuilt on the next build, a
#    few seconds per crate) go first, then the fuzz target dir, then this one.
scatterlab_fuzz_target="${FUZZ_TARGET_DIR:-$HOME/.cache/scatterlab/fuzz-target}"
scatterlab_free_kib() { df -Pk "$HOME" 2>/dev/null | awk 'NR == 2 { print $4 }'; }
scatterlab_wipe() { echo "scatterlab cache: $1: removing $2" >&2; rm -rf "$2"; }
if ! pgrep -x cargo >/dev/null 2>&1; then
  for cap in "$CARGO_TARGET_DIR:40000000" "$scatterlab_fuzz_target:8000000"; do
    dir=${cap%:*}
    if [ -d "$dir" ] && [ "$(du -s "$dir" 2>/dev/null | cut -f1)" -gt "${cap##*:}" ]; then
      scatterlab_wipe "over $((${cap##*:} / 1000000)) GiB" "$dir"
    fi
  done
  if [ "$(scatterlab_free_kib)" -lt 15000000 ]; then
    for dir in "$CARGO_TARGET_DIR"/debug/incremental "$CARGO_TARGET_DIR"/*/*/incremental \
      "$scatterlab_fuzz_target"/*/*/incremental "$scatterlab_fuzz_target" "$CARGO_TARGET_DIR"; do
      [ -d "$dir" ] || continue
      [ "$(scatterlab_free_kib)" -lt 15000000 ] || break
      scatterlab_wipe "under 15 GiB free on disk" "$dir"
    done
  fi
else
  echo "cargo is running: target caches not checked for size or free disk" >&2
fi
