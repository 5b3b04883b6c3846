#!/usr/bin/env bash
# Consumer tests of the npm package (TESTING.md, stage "consumers"): the packed tarball
# dist/scatterlab-<version>.tgz in a tiny app per bundler — Vite (build and dev server), webpack 5,
# esbuild (esm and iife), Rollup, Parcel — each built as the package README says and opened in headless
# Chromium: CPU and GPU reflectivity equal the CLI's numbers, a NaN input rejects naming it; the
# viewer (scatterlab/viewer) built by webpack, Vite and esbuild starts, reports its events and runs
# a Bloch simulation in the engines' worker it located.
# Bundler versions are pinned by tests/consumers/package-lock.json.
#   scripts/test-consumers.sh [app…]    (apps: see tests/consumers/run.mjs)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! ls dist/scatterlab-*.tgz >/dev/null 2>&1; then
  echo "test-consumers: no dist/scatterlab-*.tgz; building the package (scripts/build-web.sh --pkg-only --no-sources)"
  bash scripts/build-web.sh --pkg-only --no-sources
fi
if [ ! -x node_modules/.bin/tsc ] || [ ! -d node_modules/playwright-core ]; then
  npm ci --no-audit --no-fund --silent
fi
consumers=tests/consumers
if [ ! -f $consumers/node_modules/.package-lock.json ] || [ $consumers/package-lock.json -nt $consumers/node_modules/.package-lock.json ]; then
  echo "test-consumers: npm ci in $consumers"
  (cd $consumers && npm ci --no-audit --no-fund --silent)
fi
node $consumers/run.mjs "$@"
