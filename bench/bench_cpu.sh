#!/usr/bin/env bash
# bench_cpu.sh - server CPU per request, every server side by side, in one
# run: cuckood, redis-server's PING, the module (cuckoo.so) in
# redis-server, and RedisBloom in redis-server when RB_SO names its .so.
#
# redis-benchmark (-c CLIENTS, -r 100000000) runs PING, CF.EXISTS, CF.ADD,
# CF.MEXISTS and CF.INSERT ... ITEMS (both with BULK items per command) at
# -P 1 and -P 32. Server CPU is the sum of the first field of
# /proc/PID/task/*/schedstat (nanoseconds on the CPU, every thread) read
# before and after each run, divided by the requests (or, for the bulk
# commands, by the items). Each figure is the best (lowest) of RUNS runs;
# the servers' runs of one command follow each other, so a change of load
# touches them alike. The load average is printed with every run.
#
# CF.EXISTS and CF.MEXISTS query a filter `bench` reserved for SIZE items
# and filled with SIZE items by CF.INSERT batches (bench_client), of the
# form __rand_int__ takes; CF.ADD and CF.INSERT go into a filter made afresh
# before every run, reserved for SIZE items (or twice the run's items when
# that is more).
#
# Environment:
#   RUNS=3          runs of each figure (the best is kept)
#   N1=200000       requests per run at -P 1 (PING, CF.EXISTS, CF.ADD)
#   N32=2000000     requests per run at -P 32
#   NB1=5000        bulk commands per run at -P 1 (CF.MEXISTS, CF.INSERT)
#   NB32=50000      bulk commands per run at -P 32
#   BULK=100        items per bulk command
#   CLIENTS=50      redis-benchmark connections
#   SIZE=10000000   items in the queried filter
#   PIPES="1 32"    pipeline depths
#   COMMANDS="PING EXISTS ADD MEXISTS INSERT"  the commands measured
#   BUILD_DIR=build the build holding server/cuckood and module/cuckoo.so
#   CUCKOOD=path    the daemon (default $BUILD_DIR/server/cuckood)
#   CUCKOOD_B=path  a second daemon build measured beside the first (A/B)
#   MODULE=path     the module (default $BUILD_DIR/module/cuckoo.so)
#   RB_SO=path      RedisBloom's redisbloom.so; unset: no RedisBloom rows
#   SKIP_MODULE=1   no module rows
#   PERF=dir        `perf record -g` cuckood during the first -P 32 run of
#                   PING and of CF.EXISTS, into dir/perf-<command>.data
# Quick run: SIZE=1000000 N1=50000 N32=500000 NB1=1000 NB32=10000 RUNS=2
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
N1=${N1:-200000}
N32=${N32:-2000000}
NB1=${NB1:-5000}
NB32=${NB32:-50000}
BULK=${BULK:-100}
CLIENTS=${CLIENTS:-50}
SIZE=${SIZE:-10000000}
PIPES=${PIPES:-"1 32"}
COMMANDS=${COMMANDS:-"PING EXISTS ADD MEXISTS INSERT"}
BUILD=${BUILD_DIR:-build}
CUCKOOD=${CUCKOOD:-$BUILD/server/cuckood}
CUCKOOD_B=${CUCKOOD_B:-}
MODULE=${MODULE:-$PWD/$BUILD/module/cuckoo.so}
RB_SO=${RB_SO:-}
SKIP_MODULE=${SKIP_MODULE:-}
PERF=${PERF:-}
CLIENT=$BUILD/bench/bench_client

for tool in redis-server redis-benchmark redis-cli; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
if [[ ! -x $CUCKOOD || ! -x $CLIENT || ( -z $SKIP_MODULE && ! -f $MODULE ) ]]
then
    BUILD_DIR=$BUILD bash scripts/build.sh
fi

. bench/lib.sh  # free_port, wait_ping, $tmp, $pids

# The servers: a short name each, its port and pid.
declare -A PORT PID LABEL
SERVERS=()
ports_taken=" "
new_port() {
    local p
    p=$(free_port)
    while [[ $ports_taken == *" $p "* ]]; do p=$(free_port); done
    ports_taken+="$p "
    echo "$p"
}
# start NAME LABEL COMMAND...: the server listens on $port (set here).
start() {
    local name=$1 label=$2 port
    shift 2
    port=$(new_port)
    mkdir -p "$tmp/$name"
    "$@" --port "$port" --bind 127.0.0.1 --dir "$tmp/$name" --save "" \
        >"$tmp/$name/log" 2>&1 &
    pids+=($!)
    PID[$name]=$!
    PORT[$name]=$port
    LABEL[$name]=$label
    SERVERS+=("$name")
    wait_ping "$port"
}

start cd "cuckood" "$CUCKOOD"
[[ -n $CUCKOOD_B ]] && start cdb "cuckood B" "$CUCKOOD_B"
start rs "redis-server" redis-server --appendonly no
[[ -z $SKIP_MODULE ]] &&
    start md "module" redis-server --appendonly no --loadmodule "$MODULE"
[[ -n $RB_SO ]] &&
    start rb "RedisBloom" redis-server --appendonly no --loadmodule "$RB_SO"

# The servers that answer the CF commands.
CF_SERVERS=()
for s in "${SERVERS[@]}"; do [[ $s != rs ]] && CF_SERVERS+=("$s"); done

cli() { local s=$1; shift; redis-cli -p "${PORT[$s]}" "$@"; }

echo "== machine"
echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "cpu:     $(nproc) x $(awk -F': ' '/model name/ { print $2; exit }' \
    /proc/cpuinfo)"
echo "kernel:  $(uname -r); transparent huge pages:" \
    "$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo -)"
echo "redis:   $(redis-server --version | awk '{ print $3 }')"
echo "cuckood: $("$CUCKOOD" --version 2>&1 | head -1)" \
    "$(git rev-parse --short HEAD 2>/dev/null || true)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, at start)"
echo "RUNS=$RUNS N1=$N1 N32=$N32 NB1=$NB1 NB32=$NB32 BULK=$BULK" \
    "CLIENTS=$CLIENTS SIZE=$SIZE; best of $RUNS"
echo

echo "== filling bench with $SIZE items (CF.INSERT, 1000 per command)"
for s in "${CF_SERVERS[@]}"; do
    cli "$s" CF.RESERVE bench "$SIZE" >/dev/null
    printf '%-12s ' "${LABEL[$s]}"
    "$CLIENT" -p "${PORT[$s]}" -n "$SIZE" -b 1000 -m 7919 \
        CF.INSERT bench NOCREATE ITEMS
    # A wrong answer would be counted as a request all the same.
    [[ $(cli "$s" CF.EXISTS bench 000000000000) == 1 ]] || {
        echo "${LABEL[$s]}: CF.EXISTS of an inserted item is not 1" >&2
        exit 1
    }
done
echo

cpu_ns() {
    cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { print s }'
}
load1() { cut -d' ' -f1 /proc/loadavg; }

declare -A BEST
# run SERVER P COMMAND N PER: one measured run of N requests, each counting
# PER units (1, or BULK items); keeps the best ns of CPU per unit.
run() {
    local s=$1 p=$2 c=$3 n=$4 per=$5 t0 t1 ns rps perf_pid=
    shift 5
    if [[ $c == ADD || $c == INSERT ]]; then
        local cap=$SIZE
        (( n * per * 2 > cap )) && cap=$((n * per * 2))
        cli "$s" DEL fresh >/dev/null
        cli "$s" CF.RESERVE fresh "$cap" >/dev/null
    fi
    if [[ -n $PERF && $s == cd && $p == 32 && $r == 1 ]] &&
        [[ $c == PING || $c == EXISTS ]]; then
        mkdir -p "$PERF"
        perf record -g -p "${PID[$s]}" -o "$PERF/perf-$c.data" \
            >"$tmp/perf-$c.log" 2>&1 &
        perf_pid=$!
        sleep 0.5
    fi
    t0=$(cpu_ns "${PID[$s]}")
    rps=$(redis-benchmark -p "${PORT[$s]}" -c "$CLIENTS" -P "$p" -n "$n" \
        -r 100000000 --csv "$@" 2>/dev/null |
        awk -F'","' 'NR == 2 { printf "%.0f\n", $2 }')
    t1=$(cpu_ns "${PID[$s]}")
    if [[ -n $perf_pid ]]; then
        kill -INT "$perf_pid"
        wait "$perf_pid" || true
    fi
    ns=$(awk -v a="$t0" -v b="$t1" -v n="$n" -v k="$per" \
        'BEGIN { printf "%.1f", (b - a) / n / k }')
    printf 'run %d  -P %-2s  %-12s %-10s %9s ns/%s  %9s req/s  load %s\n' \
        "$r" "$p" "${LABEL[$s]}" "$c" "$ns" \
        "$([[ $per == 1 ]] && echo req || echo item)" "${rps:-?}" "$(load1)"
    local key=$s,$c,$p
    if [[ -z ${BEST[$key]:-} ]] ||
        awk -v a="$ns" -v b="${BEST[$key]}" 'BEGIN { exit !(a < b) }'; then
        BEST[$key]=$ns
    fi
}

items=()
for _ in $(seq "$BULK"); do items+=(__rand_int__); done

for r in $(seq "$RUNS"); do
    for p in $PIPES; do
        if [[ $p == 1 ]]; then n=$N1 nb=$NB1; else n=$N32 nb=$NB32; fi
        for c in $COMMANDS; do
            for s in "${SERVERS[@]}"; do
                [[ $s == rs && $c != PING ]] && continue
                [[ $s == rb && $c == PING ]] && continue
                case $c in
                PING) run "$s" "$p" PING "$n" 1 PING ;;
                EXISTS) run "$s" "$p" EXISTS "$n" 1 \
                    CF.EXISTS bench __rand_int__ ;;
                ADD) run "$s" "$p" ADD "$n" 1 CF.ADD fresh __rand_int__ ;;
                MEXISTS) run "$s" "$p" MEXISTS "$nb" "$BULK" \
                    CF.MEXISTS bench "${items[@]}" ;;
                INSERT) run "$s" "$p" INSERT "$nb" "$BULK" \
                    CF.INSERT fresh NOCREATE ITEMS "${items[@]}" ;;
                esac
            done
        done
    done
done
echo

best() { echo "${BEST[$1]:--}"; }
ratio() {
    awk -v a="$1" -v b="$2" \
        'BEGIN { if (a == "-" || b == "-" || b <= 0) print "-";
                 else printf "%.2f", a / b }'
}

echo "== ns of server CPU per request (bulk commands: per item), best of" \
    "$RUNS; /r PING: against redis-server's PING; load" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-36s' ""
for p in $PIPES; do printf ' %10s %8s' "-P $p" "/r PING"; done
echo
for s in "${SERVERS[@]}"; do
    for c in $COMMANDS; do
        [[ $s == rs && $c != PING ]] && continue
        [[ $s == rb && $c == PING ]] && continue
        label="$c"
        [[ $c == PING ]] || label="CF.$c"
        [[ $c == MEXISTS || $c == INSERT ]] && label+=" x$BULK, per item"
        printf '%-36s' "${LABEL[$s]} $label"
        for p in $PIPES; do
            x=$(ratio "$(best "$s,$c,$p")" "$(best "rs,PING,$p")")
            [[ $c == MEXISTS || $c == INSERT ]] && x=""
            printf ' %10s %8s' "$(best "$s,$c,$p")" "$x"
        done
        echo
    done
done
echo

echo "== ratios"
printf '%-44s' ""
for p in $PIPES; do printf ' %8s' "-P $p"; done
echo
ratio_row() { # label a-server,command b-server,command
    printf '%-44s' "$1"
    for p in $PIPES; do
        printf ' %8s' "$(ratio "$(best "$2,$p")" "$(best "$3,$p")")"
    done
    echo
}
ratio_row "cuckood CF.EXISTS / redis PING" cd,EXISTS rs,PING
ratio_row "cuckood PING / redis PING" cd,PING rs,PING
if [[ -n $CUCKOOD_B ]]; then
    for c in $COMMANDS; do
        ratio_row "cuckood B / cuckood, $c" "cdb,$c" "cd,$c"
    done
fi
if [[ -z $SKIP_MODULE ]]; then
    ratio_row "module CF.EXISTS / module PING" md,EXISTS md,PING
fi
if [[ -z $SKIP_MODULE && -n $RB_SO ]]; then
    ratio_row "module CF.EXISTS / RedisBloom CF.EXISTS" md,EXISTS rb,EXISTS
    ratio_row "module CF.MEXISTS / RedisBloom's, per item" md,MEXISTS rb,MEXISTS
    ratio_row "module CF.INSERT / RedisBloom's, per item" md,INSERT rb,INSERT
fi
echo

# target LABEL VALUE LIMIT: met when VALUE <= LIMIT.
target() {
    awk -v l="$1" -v v="$2" -v m="$3" 'BEGIN {
        printf "target %-50s %6s <= %-5s %s\n", l, v, m,
            (v != "-" && v <= m) ? "met" : "MISSED" }'
}
echo "== targets (load at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
if [[ " $PIPES " == *" 32 "* ]]; then
    target "cuckood CF.EXISTS / redis PING, -P 32" \
        "$(ratio "$(best cd,EXISTS,32)" "$(best rs,PING,32)")" 0.9
    target "cuckood PING / redis PING, -P 32" \
        "$(ratio "$(best cd,PING,32)" "$(best rs,PING,32)")" 0.7
    if [[ -z $SKIP_MODULE && -n $RB_SO ]]; then
        target "module CF.EXISTS / RedisBloom's, -P 32" \
            "$(ratio "$(best md,EXISTS,32)" "$(best rb,EXISTS,32)")" 0.8
        target "module CF.MEXISTS / RedisBloom's per item, -P 32" \
            "$(ratio "$(best md,MEXISTS,32)" "$(best rb,MEXISTS,32)")" 0.5
        target "module CF.INSERT / RedisBloom's per item, -P 32" \
            "$(ratio "$(best md,INSERT,32)" "$(best rb,INSERT,32)")" 0.5
    fi
fi
