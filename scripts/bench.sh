#!/usr/bin/env bash
# Benchmarks against the peers, side by side in one run (shared/BENCHMARKS.md shapes).
# Then the wasm build in headless Chromium, with the wasm/native ratio (goal ≤ 2×), and fitting the fixture task vs refnx.
# The peers' venvs are made on first use by scripts/peer-venv.sh; a missing one is reported loudly
# (and again at the end) and its columns are "-".
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
source scripts/peer-venv.sh
# The reflectivity and decode peers share one Python >= 3.12 venv: refloxide, refnx (its compiled
# Abeles kernel; periodictable, which its SLD helpers import at fit time), pandas and polars
# (refloxide's refnx integration, used by python/refnx_fit.py), h5py + hdf5plugin (+ bitshuffle
# for the per-chunk row) for python/h5py_decode.py.
venv="$HOME/.cache/scatterlab/bench-venv"
peer_venv "$venv" 3.12 "refloxide numpy refnx periodictable pandas polars h5py hdf5plugin" refloxide numpy refnx periodictable pandas polars h5py hdf5plugin || true
"$venv/bin/python" -c "import bitshuffle" 2>/dev/null || "$venv/bin/pip" install -q --only-binary=:all: bitshuffle 2>/dev/null \
  || peer_missing bitshuffle "not installable as a wheel; the h5py read_direct_chunk row is skipped"
# stem_reduce_bench's py4DSTEM peer: py4DSTEM 0.14 needs numpy < 2, so its own Python 3.11 venv.
p4venv="$HOME/.cache/scatterlab/py4dstem-venv"
peer_venv "$p4venv" =3.11 "py4DSTEM hdf5plugin" "numpy<2" py4dstem hdf5plugin || true
log=$(mktemp); trap 'rm -f "$log"; peer_summary' EXIT
cargo run --release -q -p scatterlab-benches --bin refl_bench | tee "$log"
# The general 4×4 method on a tilted biaxial 100-layer stack vs refloxide general_reflectivity.
cargo run --release -q -p scatterlab-benches --bin refl_general_bench | tee -a "$log" || echo "bench: 4×4 benchmark failed"
# The same CPU engines (recursion and 4×4) as wasm in headless Chromium; refl_bench's and
# refl_general_bench's last JSON lines give the wasm/native ratios, printed per run.
if [ -f dist/pkg/scatterlab_web.js ]; then
  node benches/web/refl_wasm.mjs "$(grep '^{"native_cpu"' "$log" | tail -1)" "$(grep '^{"native_general"' "$log" | tail -1)" || echo "bench: wasm benchmark failed"
else
  echo "bench: no dist/pkg; run scripts/build-web.sh, then scripts/bench.sh again for wasm vs native"
fi
# The same fit in the browser: the npm package's Web Worker in headless Chromium (goal <= 5 s).
if [ -f dist/worker.js ]; then
  node benches/web/fit_wasm.mjs || echo "bench: browser fit benchmark failed"
fi
# 4D-STEM chunk decoding (dev_medium, bitshuffle+LZ4) vs h5py + hdf5plugin (goal >= 1 GB/s per core).
cargo run --release -q -p scatterlab-benches --bin stem_decode_bench | tee -a "$log" || echo "bench: STEM decode benchmark failed"
# The same decoder as wasm in headless Chromium (goal >= 0.5 GB/s); stem_decode_bench's last JSON line gives the ratios.
if [ -f dist/pkg/scatterlab_web.js ]; then
  node benches/web/stem_wasm.mjs "$(grep '^{"stem_decode_gbs"' "$log" | tail -1)" || echo "bench: STEM wasm benchmark failed"
fi
# The 4D-STEM fused pass (dev_medium in memory) vs the plain-sum bandwidth, the GPU twin, numpy and py4DSTEM (goal >= 70 %).
cargo run --release -q -p scatterlab-benches --bin stem_reduce_bench || echo "bench: STEM reduce benchmark failed"
# 4D-STEM on Dask.distributed (issue 23): dev_medium ×16 on LocalCluster with 1 and 2 worker processes vs the
# release CLI 16× (frames/s, GB/s, task CPU / CLI CPU, goal ≤ 1.15). setup.sh's venv runs it with a release
# wheel of crates/py unpacked into a temporary folder (its `maturin develop` build is the dev profile). ~2 min.
pyvenv="${SCATTERLAB_PY_VENV:-$HOME/.cache/scatterlab/py-venv}"
if [ -x "$pyvenv/bin/maturin" ] && "$pyvenv/bin/python" -c "import numpy, distributed, psutil" 2>/dev/null; then
  whl=$(mktemp -d)
  if cargo build --release -q -p scatterlab-cli && (cd crates/py && "$pyvenv/bin/maturin" build --release --locked -q -o "$whl") >/dev/null 2>&1 \
    && "$pyvenv/bin/python" -m zipfile -e "$whl"/scatterlab-*.whl "$whl/site"; then
    PYTHONPATH="$whl/site" "$pyvenv/bin/python" benches/python/dask_stem.py "$CARGO_TARGET_DIR/release/scatterlab" || echo "bench: Dask 4D-STEM benchmark failed"
  else
    echo "bench: CLI or release wheel build failed; Dask 4D-STEM benchmark skipped"
  fi
  rm -rf "$whl"
else
  echo "bench: no venv with maturin and distributed at $pyvenv (scripts/setup.sh); Dask 4D-STEM benchmark skipped"
fi
# SSB ptychography (issue 19) on dev_medium: reconstruction with known aberrations (CPU one thread, GPU), the
# full aberration fit (CPU all cores, GPU losses), py4DSTEM's SSB (the py4DSTEM venv above) on the same frames;
# goals ≤ 0.2 s / ≤ 30 s, ratios to py4DSTEM and to quantem's recorded CUDA fit. ~5 min on 2 cores with
# lavapipe (py4DSTEM ~2 min, the GPU fit ~2.5 min; SCATTERLAB_SSB_BENCH_GPU_FIT=0 skips the GPU fit).
SCATTERLAB_PY4DSTEM_PYTHON="$p4venv/bin/python" cargo run --release -q -p scatterlab-benches --bin ssb_bench || echo "bench: SSB benchmark failed"
# Bloch waves vs diffBloch (quartz rotation, borane-sized frame; one thread; goal >= 5x): diffBloch in its own Python >= 3.12 venv.
dbvenv="$HOME/.cache/scatterlab/diffbloch-venv"
peer_venv "$dbvenv" 3.12 "diffbloch" diffbloch || true
SCATTERLAB_DIFFBLOCH_PYTHON="$dbvenv/bin/python" cargo run --release -q -p scatterlab-benches --bin bloch_bench || echo "bench: Bloch benchmark failed"
# Bloch refinement (issue 18) on synthetic_quartz: `scatterlab bloch refine` (lm; adam with the YAML's 40
# epochs) beside `diffbloch refine` (adam, 40 epochs, as configured). diffBloch's run takes ~23 min on
# 2 cores, so it runs only with BENCH_DIFFBLOCH_REFINE=1; otherwise its figure from truth.json is printed,
# marked "recorded". Each run works on its own copy (diffBloch writes locks and outputs into the folder).
quartz="${SCATTERLAB_FIXTURES:-$PWD/../shared/fixtures}/bloch/synthetic_quartz"
if [ -d "$quartz" ] && cargo build --release -q -p scatterlab-cli; then
  work=$(mktemp -d)
  echo "Bloch refinement, synthetic_quartz (41 frames, 503 reflections; true model wR2 0.01535)"
  printf '%-34s %10s %10s %8s\n' "run" "wall s" "wR2" "iters"
  for opt in lm adam; do
    t0=$EPOCHREALTIME
    if "$CARGO_TARGET_DIR/release/scatterlab" bloch refine "$quartz" --optimizer "$opt" --quiet --out "$work/$opt"; then
      python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%-34s %10.2f %10.5f %8d" % (sys.argv[2], float(sys.argv[4]) - float(sys.argv[3]), r["wR2"], r["iterations"]))' \
        "$work/$opt/result.json" "scatterlab $opt (measured)" "$t0" "$EPOCHREALTIME"
    else
      echo "bench: scatterlab bloch refine --optimizer $opt failed"
    fi
  done
  if [ "${BENCH_DIFFBLOCH_REFINE:-0}" = 1 ] && [ -x "$dbvenv/bin/diffbloch" ]; then
    cp -r "$quartz" "$work/diffbloch" && chmod -R u+w "$work/diffbloch"
    t0=$EPOCHREALTIME
    if "$dbvenv/bin/diffbloch" refine "$work/diffbloch" --device cpu > "$work/diffbloch.log" 2>&1; then
      wr2=$(sed -n 's/^│ wR2  *\([0-9.eE+-]*\).*/\1/p' "$work/diffbloch.log" | tail -1)
      python3 -c 'import sys; print("%-34s %10.2f %10s %8d" % ("diffbloch refine (measured)", float(sys.argv[2]) - float(sys.argv[1]), sys.argv[3], 40))' "$t0" "$EPOCHREALTIME" "${wr2:--}"
    else
      echo "bench: diffbloch refine failed (log: $work/diffbloch.log)"
    fi
  else
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["diffbloch_0.2.0rc1_reference_run"]; print("%-34s %10.0f %10.5f %8d" % ("diffbloch refine (recorded)", r["wall_time_s_2cores_shared"], r["metrics_mean_over_41_rotations"]["refined_best_epoch_37_of_40"]["wR2"], 40))' "$quartz/truth.json"
    echo "  (diffBloch not run; BENCH_DIFFBLOCH_REFINE=1 measures it, ~23 min)"
  fi
  rm -rf "$work"
else
  echo "bench: no synthetic_quartz fixture or CLI build; Bloch refinement benchmark skipped"
fi
# Fitting the fixture task: our DE + LM (CPU, GPU) vs refnx's DE with refloxide's model (about a minute).
cargo run --release -q -p scatterlab-benches --bin refl_fit_bench || echo "bench: fit benchmark failed"
