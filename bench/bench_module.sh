#!/usr/bin/env bash
# bench_module.sh - redis-server with cuckoo.so against the same server's
# PING and against the cuckood daemon, in one run; then how long MIGRATE
# takes to move one big filter between two such servers.
#
# redis-benchmark (-c 50) runs PING, CF.EXISTS, CF.ADD and CF.MEXISTS with
# 100 items, at -P 1 and -P 32, RUNS times each (median), against both
# servers, on a filter holding FILL items. Ratios are what to compare:
# figures taken while the machine does other work are noisy, ratios within
# one run much less so.
#
# Environment: RUNS=3 N1=100000 N32=1000000 NMEX=20000 CLIENTS=50
#   FILL=1000000 MIGRATE_ITEMS="10000000 100000000" (skip with SKIP_MIGRATE=1)
#
# CPU=1 measures instead the server CPU per request of the module beside
# RedisBloom's (bench/module_cpu.sh says how and what it takes).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
N1=${N1:-100000}
N32=${N32:-1000000}
NMEX=${NMEX:-20000}
CLIENTS=${CLIENTS:-50}
FILL=${FILL:-1000000}
MIGRATE_ITEMS=${MIGRATE_ITEMS:-"10000000 100000000"}
BUILD=${BUILD_DIR:-build}
PY=${PYTHON:-/usr/bin/python3}
CUCKOOD=$BUILD/server/cuckood
MODULE=${MODULE:-$PWD/$BUILD/module/cuckoo.so}
[ -x "$CUCKOOD" ] && [ -f "$MODULE" ] || BUILD_DIR=$BUILD bash scripts/build.sh

. bench/lib.sh  # free_port, wait_ping, $tmp, $pids
work=$tmp
[ -n "${CPU:-}" ] && { . bench/module_cpu.sh; exit 0; }
start_module() { # port dir
    mkdir -p "$2"
    redis-server --port "$1" --bind 127.0.0.1 --dir "$2" --save "" \
        --appendonly no --loadmodule "$MODULE" >"$2/log" 2>&1 &
    pids+=($!)
    wait_ping "$1"
}

PM=$(free_port); start_module "$PM" "$work/m"
PD=$(free_port)
mkdir -p "$work/d"
"$CUCKOOD" --port "$PD" --bind 127.0.0.1 --dir "$work/d" --save "" \
    >"$work/d/log" 2>&1 &
pids+=($!)
wait_ping "$PD"

fill() { # port
    "$PY" - "$1" "$FILL" <<'EOF'
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
n = int(sys.argv[2])
r.execute_command("CF.RESERVE", "bench", n)
r.execute_command("CF.RESERVE", "bench2", 8000000, "EXPANSION", 2)
p = r.pipeline(transaction=False)
for i in range(0, n, 1000):
    p.execute_command("CF.INSERT", "bench", "ITEMS",
                      *range(i, min(i + 1000, n)))
    if i % 100000 == 0:
        p.execute()
p.execute()
EOF
}
fill "$PM"
fill "$PD"

mex_args=()
for _ in $(seq 100); do mex_args+=(__rand_int__); done

# rps port P n command...: the median requests/s of RUNS runs
rps() {
    local port=$1 P=$2 n=$3
    shift 3
    for _ in $(seq "$RUNS"); do
        redis-benchmark -p "$port" -c "$CLIENTS" -n "$n" -P "$P" \
            -r 100000000 --csv "$@" | tail -1 | cut -d, -f2 | tr -d '"'
    done | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

declare -A R
for P in 1 32; do
    n=$N1; [ "$P" = 32 ] && n=$N32
    for t in module:$PM daemon:$PD; do
        name=${t%%:*} port=${t##*:}
        R[$name,PING,$P]=$(rps "$port" "$P" "$n" PING)
        R[$name,EXISTS,$P]=$(rps "$port" "$P" "$n" CF.EXISTS bench __rand_int__)
        R[$name,ADD,$P]=$(rps "$port" "$P" "$n" CF.ADD bench2 __rand_int__)
        R[$name,MEXISTS,$P]=$(rps "$port" "$P" "$NMEX" CF.MEXISTS bench "${mex_args[@]}")
    done
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
echo "FILL=$FILL RUNS=$RUNS N1=$N1 N32=$N32 NMEX=$NMEX clients=$CLIENTS"
printf "%-22s %14s %14s %10s %12s\n" command module daemon mod/daemon mod/modPING
for P in 1 32; do
    for c in PING EXISTS ADD MEXISTS; do
        m=${R[module,$c,$P]} d=${R[daemon,$c,$P]}
        printf "%-22s %14s %14s %10s %12s\n" "$c -P $P" "$m" "$d" \
            "$(ratio "$m" "$d")" "$(ratio "$m" "${R[module,PING,$P]}")"
    done
done

[ -n "${SKIP_MIGRATE:-}" ] && exit 0
# MIGRATE of one filter: both servers block while the value is serialised,
# sent and loaded.
PT=$(free_port); start_module "$PT" "$work/t"
for items in $MIGRATE_ITEMS; do
    bytes=$("$PY" - "$PM" "$items" <<'EOF'
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
n = int(sys.argv[2])
r.delete("big")
r.execute_command("CF.RESERVE", "big", n)
info = r.execute_command("CF.INFO", "big")
print(dict(zip(info[0::2], info[1::2]))[b"Size"])
EOF
)
    t0=$(date +%s.%N)
    redis-cli -p "$PM" MIGRATE 127.0.0.1 "$PT" big 0 600000 >/dev/null
    t1=$(date +%s.%N)
    redis-cli -p "$PT" EXISTS big | grep -q 1
    redis-cli -p "$PT" DEL big >/dev/null
    awk -v n="$items" -v b="$bytes" -v s="$t0" -v e="$t1" \
        'BEGIN {printf "MIGRATE of a %d-item filter (%.1f MB): %.3f s\n",
                n, b / 1e6, e - s}'
done
