#!/usr/bin/env bash
# One command to set up, build and pass every test:
#   bash scripts/test.sh
# Installs missing Debian packages, a Node >= 20 if the system's is older
# (scripts/node.sh), the Node test clients (npm), builds with warnings as
# errors, and runs ctest (unit tests and integration tests that start the
# real daemon).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/deps.sh test
# The Node that runs the client tests, named to CMake so that ctest uses it
# whatever an earlier configure found; one installed by node.sh also goes
# first in PATH, for npm (whose script runs `node`).
node_bin=$(bash scripts/node.sh)
[ "$node_bin" = "$(command -v node || true)" ] ||
    export PATH="$(dirname "$node_bin"):$PATH"
# npm ci when the install is missing, half done (npm writes
# node_modules/.package-lock.json last) or older than the lock file.
mods=tests/integ/node/node_modules
if [ -f tests/integ/node/package.json ] &&
   { [ ! -f "$mods/.package-lock.json" ] ||
     [ tests/integ/node/package-lock.json -nt "$mods/.package-lock.json" ]; }
then
    (cd tests/integ/node && npm ci --no-audit --no-fund --loglevel=error)
fi
bash scripts/build.sh -DCUCKOOD_WERROR=ON -DCUCKOOD_TESTS=ON -DNODE="$node_bin"
ctest --test-dir build --output-on-failure -j2
