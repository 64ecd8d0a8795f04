#!/usr/bin/env bash
# bench_uring.sh - the -P 1 experiment: would batching the socket I/O of
# many clients in one loop iteration (io_uring) cut the server's CPU per
# request? Runs, alternately and ROUNDS times over:
#
#   cuckood        the daemon (libuv: epoll, one read and one write per
#                  ready client), PING and CF.EXISTS
#   redis          Debian's redis-server, PING
#   proto-epoll    uring_proto in epoll mode (same loop as the daemon's,
#                  with a trivial parser), PING
#   proto-uring    uring_proto with io_uring: multishot recv, every reply
#                  of an iteration sent by one io_uring_enter, PING
#   proto-uringB   the same, each wait asking for BATCH_NR completions or
#                  BATCH_US microseconds: more requests per wakeup, at the
#                  price of latency (a lone client waits BATCH_US a reply)
#
# at -P 1 and -P 32 with 50 clients, and prints for each run requests/s,
# ns of server CPU per request (utime+stime from /proc/PID/stat around the
# run), voluntary context switches per request (how often the loop
# slept: a wakeup each) and the load average. At the end, the best of the
# rounds per row and the ratios the landing rule needs: proto-uring
# against proto-epoll at -P 1 (target <= 0.70) and at -P 32 (<= 1.00).
#
# Knobs: ROUNDS (3), N1 (200000 requests at -P 1), N32 (2000000 at -P 32),
# BATCH_NR (16), BATCH_US (1000), ONLY_P1 (set: skip -P 32),
# CUCKOOD (build/server/cuckood), PROTO (build/bench/uring_proto).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
N1=${N1:-200000}
N32=${N32:-2000000}
BATCH_NR=${BATCH_NR:-16}
BATCH_US=${BATCH_US:-1000}
CUCKOOD=${CUCKOOD:-build/server/cuckood}
PROTO=${PROTO:-build/bench/uring_proto}
if [[ ! -x $CUCKOOD || ! -x $PROTO ]]; then
    bash scripts/build.sh
fi
if [[ ! -x $PROTO ]]; then
    echo "no $PROTO: it needs liburing (Debian's liburing-dev)" >&2
    exit 1
fi

. bench/lib.sh  # free_port, wait_ping, cpu_ticks, $tmp, $pids

declare -A port pid
p=$(free_port); port[cuckood]=$p
"$CUCKOOD" --port "$p" --save "" --dir "$tmp" >"$tmp/cuckood.log" 2>&1 &
pid[cuckood]=$!; pids+=("$!")
p=$(free_port); port[redis]=$p
redis-server --port "$p" --save "" --appendonly no --dir "$tmp" \
    >"$tmp/redis.log" 2>&1 &
pid[redis]=$!; pids+=("$!")
for m in epoll uring uringB; do
    p=$(free_port); port[proto-$m]=$p
    case $m in
    uringB) "$PROTO" "$p" uring "$BATCH_NR" "$BATCH_US" 2>"$tmp/$m.log" & ;;
    *) "$PROTO" "$p" "$m" 2>"$tmp/$m.log" & ;;
    esac
    pid[proto-$m]=$!; pids+=("$!")
done
for s in cuckood redis proto-epoll proto-uring proto-uringB; do
    wait_ping "${port[$s]}"
done
redis-cli -p "${port[cuckood]}" CF.RESERVE f 1000000 >/dev/null
redis-benchmark -p "${port[cuckood]}" -n 100000 -r 1000000 -P 32 -q \
    CF.ADD f __rand_int__ >/dev/null 2>&1

vcsw() { awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$1/status"; }
tck=$(getconf CLK_TCK)
# one NAME P N COMMAND...: a run; prints and records a line
one() {
    local name=$1 p=$2 n=$3
    shift 3
    local s=${name%%:*}
    local c0 c1 v0 v1 rps load
    c0=$(cpu_ticks "${pid[$s]}")
    v0=$(vcsw "${pid[$s]}")
    rps=$(redis-benchmark -p "${port[$s]}" -r 1000000 -n "$n" -P "$p" -c 50 \
        -q "$@" 2>/dev/null | tr '\r' '\n' |
        grep -o '[0-9.]* requests per second' | tail -1 | cut -d' ' -f1)
    c1=$(cpu_ticks "${pid[$s]}")
    v1=$(vcsw "${pid[$s]}")
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    local ns sw
    ns=$(awk -v a="$c0" -v b="$c1" -v t="$tck" -v n="$n" \
        'BEGIN {printf "%.0f", (b - a) * 1e9 / t / n}')
    sw=$(awk -v a="$v0" -v b="$v1" -v n="$n" \
        'BEGIN {printf "%.3f", (b - a) / n}')
    printf '%-22s -P %-2s %9s req/s %6s ns CPU/req %6s wakeups/req load %s\n' \
        "$name" "$p" "$rps" "$ns" "$sw" "$load"
    echo "$name $p $ns" >>"$tmp/all"
}

pipelines="1 32"
[[ -n ${ONLY_P1:-} ]] && pipelines=1
for r in $(seq "$ROUNDS"); do
    echo "-- round $r"
    for p in $pipelines; do
        n=$N1
        [[ $p == 32 ]] && n=$N32
        one cuckood:PING "$p" "$n" PING
        one proto-epoll:PING "$p" "$n" PING
        one proto-uring:PING "$p" "$n" PING
        one redis:PING "$p" "$n" PING
        one proto-uringB:PING "$p" "$n" PING
        one cuckood:CF.EXISTS "$p" "$n" CF.EXISTS f __rand_int__
    done
done

echo "-- best of $ROUNDS (ns of server CPU per request)"
best() { awk -v k="$1" -v p="$2" '$1 == k && $2 == p {
    if (b == "" || $3 < b) b = $3 } END {print b}' "$tmp/all"; }
for p in $pipelines; do
    for k in cuckood:PING cuckood:CF.EXISTS redis:PING proto-epoll:PING \
        proto-uring:PING proto-uringB:PING; do
        printf '%-22s -P %-2s %6s\n' "$k" "$p" "$(best "$k" "$p")"
    done
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
r1=$(ratio "$(best proto-uring:PING 1)" "$(best proto-epoll:PING 1)")
rb=$(ratio "$(best proto-uringB:PING 1)" "$(best proto-epoll:PING 1)")
rc=$(ratio "$(best proto-uring:PING 1)" "$(best cuckood:PING 1)")
verdict() { awk -v x="$1" -v l="$2" 'BEGIN {print (x <= l) ? "met" : "MISSED"}'; }
echo "target uring/epoll CPU per request -P 1 $r1 <= 0.70 $(verdict "$r1" 0.70)"
echo "info   uringB/epoll CPU per request -P 1 $rb (latency traded)"
echo "info   proto-uring/cuckood CPU per request -P 1 $rc"
if [[ -z ${ONLY_P1:-} ]]; then
    r32=$(ratio "$(best proto-uring:PING 32)" "$(best proto-epoll:PING 32)")
    echo "target uring/epoll CPU per request -P 32 $r32 <= 1.00" \
        "$(verdict "$r32" 1.00)"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
for m in epoll uring uringB; do
    kill -INT "${pid[proto-$m]}"
    wait "${pid[proto-$m]}" 2>/dev/null || true
    cat "$tmp/$m.log"
done
