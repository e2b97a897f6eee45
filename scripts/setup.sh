#!/usr/bin/env bash
# Installs what building, serving and testing Memograph needs, skipping whatever is already present:
# the wasm32 target, trunk 0.21.14, wasm-bindgen-cli at the version Cargo.lock pins, npm's binaryen and
# playwright-core (package.json), and Debian's chromium + chromium-driver. With --tests also what only
# the tests need: the i686 target and gcc-multilib (32-bit native tests), a nightly toolchain and
# cargo-fuzz (the fuzz targets' smoke run).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"

if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
  say "adding the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi

TRUNK_VERSION=0.21.14
if ! trunk --version 2>/dev/null | grep -q "$TRUNK_VERSION"; then
  say "installing trunk $TRUNK_VERSION (about 10 minutes on 2 cores)"
  cargo install --locked trunk --version "$TRUNK_VERSION"
fi

# wasm-bindgen-cli must equal the wasm-bindgen in Cargo.lock (pinned with = in Cargo.toml).
WBG_VERSION=$(awk '/^name = "wasm-bindgen"$/{getline; gsub(/version = |"/,""); print; exit}' Cargo.lock)
if ! wasm-bindgen --version 2>/dev/null | grep -q "$WBG_VERSION"; then
  say "installing wasm-bindgen-cli $WBG_VERSION"
  # Without --locked: its own lock file pins crates that no longer build on this toolchain.
  cargo install wasm-bindgen-cli --version "$WBG_VERSION"
fi

if [ ! -x node_modules/.bin/wasm-opt ] || [ ! -d node_modules/playwright-core ]; then
  say "installing npm tools (binaryen 132, playwright-core)"
  npm install --no-audit --no-fund
fi

if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
  say "installing chromium and chromium-driver"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
fi

if [ "${1:-}" = "--tests" ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  if ! rustup target list --installed 2>/dev/null | grep -qx i686-unknown-linux-gnu; then
    say "adding the i686-unknown-linux-gnu target (32-bit native tests catch wasm32-only overflows)"
    rustup target add i686-unknown-linux-gnu
  fi
  if [ ! -e /usr/lib/gcc/x86_64-linux-gnu/12/32/libgcc.a ] && ! dpkg -s gcc-multilib >/dev/null 2>&1; then
    say "installing gcc-multilib"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq gcc-multilib >/dev/null
  fi
  if ! rustup toolchain list | grep -q '^nightly'; then
    say "installing a nightly toolchain (for cargo-fuzz)"
    rustup toolchain install nightly --profile minimal
  fi
  if ! cargo fuzz --version >/dev/null 2>&1; then
    say "installing cargo-fuzz"
    cargo install cargo-fuzz
  fi
fi

say "tools ready: $(trunk --version), $(wasm-bindgen --version), $(wasm-opt --version | head -1)"
