#!/usr/bin/env bash
# Runs every test: formatting and lints, the native workspace tests, the same on a 32-bit target, the
# fuzz targets for a few seconds each, the wasm tests in headless Chromium, and the end-to-end tests of
# the built page in headless Chromium. Installs what is missing first.
#
# Tests come in two tiers: the first needs nothing beside the repository; the second reads the real
# snapshots in ../shared (or MEMOGRAPH_FIXTURES). When they are there, they are required: a second-tier
# test can then not skip itself silently.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --tests
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

FIXTURES="${MEMOGRAPH_FIXTURES:-$PWD/../shared/fixtures}"
if [ -d "$FIXTURES/reference" ]; then
  export MEMOGRAPH_REQUIRE_FIXTURES=1
  echo "tier 2: the real fixtures in $FIXTURES are required"
else
  echo "tier 2 skipped: no fixtures in $FIXTURES (first tier only)"
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (native and wasm32)"
cargo clippy --workspace --all-targets -- -D warnings
cargo clippy -p memograph-web --target wasm32-unknown-unknown --all-targets -- -D warnings

step "cargo doc (no broken links, private items too)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --document-private-items
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p memograph-web --target wasm32-unknown-unknown \
  --document-private-items

step "native tests"
cargo test --workspace
if [ -n "${MEMOGRAPH_REQUIRE_FIXTURES:-}" ]; then
  # The reference script that new fixtures get their figures from agrees with the fixtures' own.
  python3 scripts/reference_figures.py --check "$FIXTURES"
fi

step "32-bit native tests (the engine and the page's view models on i686: wasm32's usize)"
cargo test --target i686-unknown-linux-gnu -p memograph-snapshot -p memograph-web

step "fuzz targets, a few seconds each on the corpus in the repo (with overflow checks)"
for target in pull push open steps charts; do
  corpus=$(mktemp -d)
  seeds=fuzz/corpus/seeds
  [ "$target" = steps ] && seeds=fuzz/corpus/steps
  # The charts are drawn from snapshots and from step records.
  [ "$target" = charts ] && seeds="fuzz/corpus/seeds fuzz/corpus/steps"
  (cd crates/snapshot && cargo +nightly fuzz run -a "$target" "$corpus" $seeds -- \
    -max_total_time=8 -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 2>&1 | tail -4)
  rm -rf "$corpus"
done

step "wasm tests in headless Chromium"
export CHROMEDRIVER=/usr/bin/chromedriver
export WASM_BINDGEN_TEST_TIMEOUT=120
cargo test -p memograph-web --target wasm32-unknown-unknown

step "build the page (trunk build --release)"
trunk build --release --offline
ls -l dist/*.wasm | awk '{printf "wasm size: %.1f KiB\n", $5/1024}'

step "end-to-end tests in headless Chromium"
node --test tests/e2e/
