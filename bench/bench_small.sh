#!/usr/bin/env bash
# Many small filters against redis-server's sets, one run, side by side:
# memory and snapshot bytes per key, SAVE, start-up load, SCAN and DEL.
# Builds cuckood if needed; arguments go to bench_small.py (--small N,
# --big N, --big-cap N, --redis-big N, --bin PATH, --dir DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -x ${BUILD_DIR:-build}/server/cuckood ]]; then
    bash scripts/build.sh
fi
exec /usr/bin/python3 bench/bench_small.py \
    --bin "$PWD/${BUILD_DIR:-build}/server/cuckood" "$@"
