#!/usr/bin/env bash
# The main job: build the web app and serve it on 127.0.0.1 (prints the URL).
#   scripts/run.sh            web app on http://127.0.0.1:8080/  (PORT=... to change)
#   scripts/run.sh --native   the native desktop window instead
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/env.sh
if [ "${1:-}" = "--native" ]; then
  if [ ! -x "$CARGO_TARGET_DIR/release/scatterlab-app" ]; then
    echo "scatterlab: first native run: compiling a release build of the desktop app (several minutes; later runs start at once)"
  fi
  exec cargo run --release -p scatterlab-app --bin scatterlab-app
fi
bash scripts/build-web.sh
port=${PORT:-8080}
echo "scatterlab: serving on http://127.0.0.1:$port/"
exec node web/tools/serve.mjs "$port"
