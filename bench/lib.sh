# lib.sh - what the shell benchmarks share, sourced from the repository's
# root: free_port, wait_ping, a scratch directory $tmp, and $pids, the
# servers a script starts; on exit they are stopped and $tmp is removed.

# The test support package's free_port (tests/support/proc.py).
free_port() {
    PYTHONPATH=tests python3 -c \
        'from support.proc import free_port; print(free_port())'
}

# Waits up to 10 s for the server on port $1 to answer PING; exits the
# script when it does not.
wait_ping() {
    local i
    for i in $(seq 100); do
        redis-cli -p "$1" PING >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "server on port $1 did not start" >&2
    exit 1
}

tmp=$(mktemp -d)
pids=()
bench_cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap bench_cleanup EXIT
