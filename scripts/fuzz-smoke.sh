#!/usr/bin/env bash
# CI smoke of every cargo-fuzz target: builds the three fuzz projects (nightly, debug assertions)
# and runs each target for at most FUZZ_SECS (default 20) seconds on its committed seed corpus,
# new inputs going to a scratch folder. A crash, abort, leak of the RSS limit or timeout fails
# the script and names the target and the saved input. Campaign numbers: TESTING.md § Fuzzing.
#
#   scripts/fuzz-smoke.sh                 # every target
#   scripts/fuzz-smoke.sh cif links       # some targets
#   FUZZ_SECS=5 scripts/fuzz-smoke.sh
#
# Sanitizers: the HDF5 project (filters with `unsafe` wide copies and SIMD) under ASan, the
# others without (safe Rust; libFuzzer still catches panics, OOM and timeouts) — the campaign's
# settings. Each project keeps its own target dir (CARGO_TARGET_DIR is unset for them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
secs=${FUZZ_SECS:-20}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fuzz-smoke.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# project dir | cargo-fuzz flags | seed root | targets
projects=(
  "crates/hdf5/fuzz|-a|crates/hdf5/fuzz/seeds|bslz4 h5lz4 lz4_block open_tree links raw_walk"
  "fuzz|-a -s none|fuzz/seeds|cif cif_pets experiment_yaml bloch_cases refl_model refl_fit_task refl_cases orso columns acquisition"
  "fuzz/app|-a -s none|fuzz/app/seeds|script"
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
  (cd "$dir" && env -u CARGO_TARGET_DIR cargo +nightly fuzz build --fuzz-dir "$root/$dir" $flags) || { failed+=("build:$dir"); continue; }
  echo "=== fuzz build $dir: $((SECONDS - t0)) s"
  for t in "${run[@]}"; do
    bin=$(ls -d "$root/$dir"/target/*/release/"$t" | head -n 1)
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
