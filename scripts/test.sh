#!/usr/bin/env bash
# One command to set up, build and pass every test:
#   bash scripts/test.sh
# Installs missing Debian packages, the Node test clients (npm), builds with
# warnings as errors, and runs ctest (unit tests and integration tests that
# start the real daemon).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/deps.sh test
if [ -f tests/integ/node/package.json ] && [ ! -d tests/integ/node/node_modules ]; then
    (cd tests/integ/node && npm ci --no-audit --no-fund --loglevel=error)
fi
bash scripts/build.sh -DCUCKOOD_WERROR=ON -DCUCKOOD_TESTS=ON
ctest --test-dir build --output-on-failure -j2
