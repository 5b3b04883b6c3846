#!/usr/bin/env bash
# The lint stage: the house rules held by tools. Today: the tree is rustfmt-clean (rustfmt.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
cargo fmt --all -- --check
