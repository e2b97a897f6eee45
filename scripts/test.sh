#!/usr/bin/env bash
# Runs every test: formatting and lints, the native workspace tests, the wasm tests in headless Chromium,
# and the end-to-end tests of the built page in headless Chromium. Installs what is missing first.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (native and wasm32)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p memograph-web --target wasm32-unknown-unknown --all-targets -- -D warnings

step "native tests"
cargo test --workspace

step "wasm tests in headless Chromium"
export CHROMEDRIVER=/usr/bin/chromedriver
export WASM_BINDGEN_TEST_TIMEOUT=120
cargo test -p memograph-web --target wasm32-unknown-unknown

step "build the page (trunk build --release)"
trunk build --release --offline
ls -l dist/*.wasm | awk '{printf "wasm size: %.1f KiB\n", $5/1024}'

step "end-to-end tests in headless Chromium"
node --test tests/e2e/
