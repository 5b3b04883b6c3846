#!/usr/bin/env bash
# The Python extension (crates/py): builds it into setup.sh's venv with `maturin develop` (the dev
# profile, dependencies optimised, as `cargo test`), makes sure the CLI exists (the tests compare
# with `scatterlab stem reduce` and `scatterlab refl fit`), and runs pytest crates/py/tests
# (4D-STEM reductions, reflectivity fits with scipy/emcee, sharded Bloch loss and gradient).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
venv="${SCATTERLAB_PY_VENV:-$HOME/.cache/scatterlab/py-venv}"
export VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH"
# The native stage (`cargo test --workspace`) builds the CLI; build it here only when missing
# (`cargo build -p` alone unifies features differently and would rebuild wgpu & co.).
[ -x "$CARGO_TARGET_DIR/debug/scatterlab" ] || cargo build -q -p scatterlab-cli
log=$(mktemp)
if ! (cd crates/py && maturin develop --locked -q) >"$log" 2>&1; then
  cat "$log"; rm -f "$log"; exit 1
fi
rm -f "$log"
python -m pytest -q -p no:cacheprovider crates/py/tests "$@"
