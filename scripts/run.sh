#!/usr/bin/env bash
# One command to set up and run the server on its embedded defaults
# (127.0.0.1:6379, snapshots in the working directory):
#   bash scripts/run.sh [--directive value ...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/deps.sh"
CUCKOOD_TESTS=OFF bash "$root/scripts/build.sh" -DCUCKOOD_TESTS=OFF -DCUCKOOD_BENCH=OFF
exec "$root/build/server/cuckood" "$@"
