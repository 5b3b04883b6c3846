#!/usr/bin/env bash
# CI smoke of every cargo-fuzz target (the `fuzz` stage of scripts/test.sh): builds the three fuzz
# projects (nightly, dev profile: debug assertions on, no optimisation — a cold build is a few
# minutes, not the half hour of the campaign's release builds) and runs each target for FUZZ_SECS
# (default 10, at most 20) seconds on its committed seed corpus, new inputs going to a scratch
# folder. A crash, abort, RSS-limit leak or timeout fails the script and names the target and the
# saved input (kept under target/fuzz-smoke-artifacts/).
#
#   scripts/fuzz-smoke.sh                 # every target
#   scripts/fuzz-smoke.sh cif links       # some targets
#   FUZZ_SECS=5 scripts/fuzz-smoke.sh
#
# No sanitizer here (`-s none`), so the three projects share one target dir (FUZZ_TARGET_DIR,
# default beside the workspace's cache) and build the common dependencies once. The campaign
# (TESTING.md § Fuzz campaign) runs release builds, the HDF5 project under ASan.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${FUZZ_SECS:-10}
[ "$secs" -le 20 ] || { echo "FUZZ_SECS=$secs: the smoke runs each target at most 20 s (the campaign is TESTING.md § Fuzz campaign)"; exit 2; }
export CARGO_TARGET_DIR="${FUZZ_TARGET_DIR:-$HOME/.cache/scatterlab/fuzz-target}"
export CARGO_INCREMENTAL=0
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-smoke.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# project dir | cargo-fuzz flags | seed root | targets
projects=(
  "crates/hdf5/fuzz|--dev -s none|crates/hdf5/fuzz/seeds|bslz4 h5lz4 lz4_block open_tree links raw_walk"
  "fuzz|--dev -s none|fuzz/seeds|cif cif_pets experiment_yaml bloch_cases refl_model refl_fit_task refl_cases orso columns acquisition"
  "fuzz/app|--dev -s none|fuzz/app/seeds|script"
)

wanted=" $* "
failed=()
t_all=$SECONDS
for p in "${projects[@]}"; do
  IFS='|' read -r dir flags seeds targets <<<"$p"
  run=()
  for t in $targets; do
    if [ $# -eq 0 ] || [[ $wanted == *" $t "* ]]; then run+=("$t"); fi
  done
  [ ${#run[@]} -eq 0 ] && continue
  t0=$SECONDS
  # shellcheck disable=SC2086
  (cd "$dir" && cargo +nightly fuzz build --fuzz-dir "$root/$dir" $flags) || { failed+=("build:$dir"); continue; }
  echo "=== fuzz build $dir: $((SECONDS - t0)) s"
  for t in "${run[@]}"; do
    bin="$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/debug/$t"
    mkdir -p "$scratch/$t/corpus" "$scratch/$t/artifacts"
    t1=$SECONDS
    if "$bin" "$scratch/$t/corpus" "$root/$seeds/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$scratch/$t/artifacts/" -print_final_stats=1 >"$scratch/$t/log" 2>&1; then
      echo "=== fuzz $t: ok ($((SECONDS - t1)) s, $(grep -o 'stat::number_of_executed_units: *[0-9]*' "$scratch/$t/log" | grep -o '[0-9]*$') runs)"
    else
      tail -n 40 "$scratch/$t/log"
      mkdir -p "$root/target/fuzz-smoke-artifacts/$t"
      cp "$scratch/$t/artifacts/"* "$root/target/fuzz-smoke-artifacts/$t/" 2>/dev/null || true
      echo "=== fuzz $t: FAILED (input kept in target/fuzz-smoke-artifacts/$t/)"
      failed+=("$t")
    fi
  done
done
echo "=== fuzz smoke: $((SECONDS - t_all)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz smoke FAILED: ${failed[*]}"
  exit 1
fi
