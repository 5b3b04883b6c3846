#!/usr/bin/env bash
# The lint stage: the house rules held by tools (CONTRIBUTING.md § Held by tools).
#   rustfmt       the tree is formatted under rustfmt.toml
#   clippy        [workspace.lints] (missing docs, SAFETY comments, no unwrap/expect/panic outside
#                 tests, ...) and clippy's defaults, as errors, natively (every target) and for
#                 wasm32 (the web crate with its browser tests, and the app, each with its own
#                 features, as build-web.sh builds them)
#   rustdoc       `cargo doc --no-deps` with warnings as errors (broken intra-doc links), doc tests
#   cargo-deny    licenses, bans and sources (advisories need the network database: not here)
#   tsc           the end-to-end scripts (tests/e2e/*.mjs, JSDoc-typed) under `tsc --strict`
#                 (tests/e2e/tsconfig.json; no build needed; web/src is checked by build-web.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
step() { echo "lint: $1 ($(( SECONDS - t )) s)"; t=$SECONDS; }
t=$SECONDS
cargo fmt --all -- --check
step "rustfmt"
if [ ! -x node_modules/.bin/tsc ] || [ ! -d node_modules/@types/node ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "lint: npm ci"
  npm ci --no-audit --no-fund --silent
fi
node_modules/.bin/tsc -p tests/e2e/tsconfig.json
step "tsc --strict (e2e scripts)"
cargo clippy -q --workspace --all-targets -- -D warnings
step "clippy (native, all targets)"
# The web crate's browser tests (tests/browser*.rs, wasm32 only) are linted here: natively they are
# compiled out.
cargo clippy -q --target wasm32-unknown-unknown --lib --tests -p scatterlab-web -- -D warnings
cargo clippy -q --target wasm32-unknown-unknown --lib -p scatterlab-app -- -D warnings
step "clippy (wasm32: web with its browser tests, app)"
RUSTDOCFLAGS="-D warnings" cargo doc -q --workspace --no-deps
cargo test -q --workspace --doc
step "rustdoc and doc tests"
deny="$HOME/.cache/scatterlab/tools-venv/bin/cargo-deny"
[ -x "$deny" ] || { echo "lint: cargo-deny missing at $deny; run scripts/setup.sh" >&2; exit 1; }
"$deny" --log-level error check licenses bans sources
step "cargo-deny (licenses, bans, sources)"
