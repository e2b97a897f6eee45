#!/usr/bin/env bash
# Serves the web app on http://127.0.0.1:8080 (installs what is missing first).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
export PATH="$HOME/.cargo/bin:$PWD/node_modules/.bin:$PATH"
exec trunk serve --release --offline "$@"
