#!/usr/bin/env bash
# Runs the client integration suites against one cuckood binary:
#   redis-py (Debian's python3-redis), redis-cli, node-redis and ioredis.
# Usage: run_client_tests.sh [path/to/cuckood]   (or env CUCKOOD_BIN)
# CUCKOOD_TEST_REDIS_SERVER=1 runs the non-CF parts against redis-server.
# Exits non-zero when any suite fails.
set -u

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

bin="${1:-${CUCKOOD_BIN:-$root/build/server/cuckood}}"
if [ -z "${CUCKOOD_TEST_REDIS_SERVER:-}" ] ||
   [ "${CUCKOOD_TEST_REDIS_SERVER}" = 0 ]; then
    if [ ! -x "$bin" ]; then
        echo "run_client_tests: no executable daemon at '$bin'" >&2
        exit 2
    fi
    bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
fi
export CUCKOOD_BIN="$bin"
# The suites import the support package from tests/.
export PYTHONPATH="$root/tests${PYTHONPATH:+:$PYTHONPATH}"

python="${PYTHON:-/usr/bin/python3}"
[ -x "$python" ] || python=python3

passed=0
failed=0
failed_names=()

run_suite() {
    local name="$1"; shift
    echo "=== $name"
    if "$@"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failed_names+=("$name")
    fi
}

run_suite "redis-py and redis-cli (pytest)" \
    "$python" -m pytest -q -p no:cacheprovider \
    "$here/test_redis_py.py" "$here/test_cli.py" "$here/test_tls.py"

node_suite() {
    if ! command -v node >/dev/null 2>&1; then
        echo "node is not installed" >&2
        return 1
    fi
    cd "$here/node" || return 1
    if [ ! -d node_modules/redis ] || [ ! -d node_modules/ioredis ]; then
        npm ci --no-audit --no-fund || return 1
    fi
    local log
    log="$(mktemp)"
    node --test test_node_redis.mjs test_ioredis.mjs test_tls.mjs > "$log" 2>&1
    local rc=$?
    # Failures in full, then the runner's summary lines.
    if [ $rc -ne 0 ]; then
        grep -n -B2 -A25 '^ *not ok' "$log" | head -400
    fi
    grep -E '^# (tests|suites|pass|fail|cancelled|skipped|todo)' "$log"
    rm -f "$log"
    return $rc
}

run_suite "node-redis and ioredis (node --test)" node_suite

echo "client suites: $passed passed, $failed failed"
if [ $failed -ne 0 ]; then
    printf 'failed suite: %s\n' "${failed_names[@]}"
    exit 1
fi
exit 0
