# lib.sh - what the shell benchmarks share, sourced from the repository's
# root: free_port, a scratch directory $tmp, and $pids, the servers a
# script starts; on exit they are stopped and $tmp is removed.

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0));
print(s.getsockname()[1])'
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
