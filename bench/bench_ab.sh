#!/usr/bin/env bash
# bench_ab.sh - two cuckood binaries, A and B, on pipelined CF.ADD: server
# CPU per command (utime+stime of /proc/PID/stat around the run) and
# requests/s, runs alternating A, B, A, B ... so that both see the same
# machine load. For a change that must cost nothing measurable (the AOF
# feed while the AOF is off): A = a build of the base, B = the change.
#
#   bash bench/bench_ab.sh BIN_A BIN_B
#
# Environment: RUNS=4 pairs, N=1300000 requests per run, P=32 pipeline,
# CLIENTS=50, and ARGS, extra arguments for both servers.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
trap bench_cleanup EXIT

A=$1
B=$2
RUNS=${RUNS:-4}
N=${N:-1300000}
P=${P:-32}
CLIENTS=${CLIENTS:-50}
ARGS=${ARGS:-}
TCK=$(getconf CLK_TCK)

# One run of binary $1: prints "ns_per_cmd requests_per_s".
one() {
    local port pid t0 t1 rps
    port=$(free_port)
    # shellcheck disable=SC2086
    "$1" --port "$port" --save "" --dir "$tmp" $ARGS >/dev/null 2>&1 &
    pid=$!
    pids+=("$pid")
    wait_ping "$port"
    redis-cli -p "$port" CF.RESERVE bench 4000000 >/dev/null
    t0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    rps=$(redis-benchmark -p "$port" -c "$CLIENTS" -n "$N" -P "$P" -r 100000000 \
        -q CF.ADD bench __rand_int__ | tr '\r' '\n' |
        awk '/requests per second/ {v = $(NF - 5)} END {print v}')
    t1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    echo "$(( (t1 - t0) * 1000000000 / TCK / N )) $rps"
}

echo "A=$A"
echo "B=$B"
echo "CF.ADD -P $P, $CLIENTS clients, $N requests per run, load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$RUNS"); do
    read -r a ra < <(one "$A")
    read -r b rb < <(one "$B")
    echo "pair $i: A $a ns/cmd ($ra req/s)  B $b ns/cmd ($rb req/s)"
done
