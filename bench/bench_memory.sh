#!/usr/bin/env bash
# bench_memory.sh - does memory go back? Filters created and deleted in rounds (churn) on cuckood
# as built (glibc, tuned: server/heap.h), on cuckood built with jemalloc
# (build-jemalloc, -DCUCKOOD_ALLOCATOR=jemalloc) and on Debian's
# redis-server, then parent + child memory during a BGSAVE of about 1 GB
# under writes. One run; every figure is printed with its target.
#
#   bash bench/bench_memory.sh [bench_memory.py options, e.g. --skip-bgsave]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
[[ -x $BUILD/server/cuckood ]] || bash scripts/build.sh
BUILD_DIR=build-jemalloc bash scripts/build.sh -DCUCKOOD_ALLOCATOR=jemalloc \
    -DCUCKOOD_TESTS=OFF -DCUCKOOD_BENCH=OFF >/dev/null
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)," \
     "kernel $(uname -r), THP $(cat /sys/kernel/mm/transparent_hugepage/enabled)"
/usr/bin/python3 bench/bench_memory.py --bin "$BUILD/server/cuckood" \
    --also jemalloc=build-jemalloc/server/cuckood "$@"
