#!/usr/bin/env bash
# bench_instr.sh - user-space instructions per request of the daemon (and
# of redis-server's PING beside it) at -P 32, counted by valgrind's
# callgrind: a figure that does not move with the machine's load, for
# where hardware counters (perf stat -e instructions) are not available.
# Kernel instructions are not counted; the system calls per request are
# the same for both servers (one read and one write per pipeline of
# PIPE commands, strace -c).
#
# Each server runs under callgrind with instrumentation off; after a warm
# run, instrumentation is switched on for one redis-benchmark run of N
# requests (CLIENTS connections, -P PIPE) and the counts are dumped. The
# filter queried holds SIZE items (instructions per lookup do not depend
# on the size; cache misses, which this does not see, do).
#
# Environment:
#   N=320000        requests per counted run
#   CLIENTS=50      redis-benchmark connections
#   PIPE=32         pipeline depth
#   SIZE=200000     items in the queried filter
#   BUILD_DIR=build the build holding server/cuckood and bench/bench_client
#   CUCKOOD=path    the daemon (default $BUILD_DIR/server/cuckood)
#   CUCKOOD_B=path  a second daemon build counted after the first (A/B)
#   SKIP_REDIS=1    no redis-server row
#   SKIP_CUCKOOD=1  no daemon rows
#   MODULE=path     also redis-server with this build of cuckoo.so loaded
#                   (PING and CF.EXISTS)
#   RB_SO=path      also redis-server with RedisBloom's redisbloom.so
#   TOP=12          functions listed per run (0: none)
#   INCL=fn         also print fn's inclusive instructions per request
#                   (e.g. RedisModuleCommandDispatcher: a module's whole
#                   command below redis-server's dispatch)
#   BULK_CMDS="MEXISTS INSERT"  also these bulk commands, BULK=100 items
#                   each (CF.MEXISTS of the queried filter, CF.INSERT into
#                   one reserved for SIZE); N / BULK of them are counted and
#                   the figure is per item
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-320000}
CLIENTS=${CLIENTS:-50}
PIPE=${PIPE:-32}
SIZE=${SIZE:-200000}
BUILD=${BUILD_DIR:-build}
CUCKOOD=${CUCKOOD:-$BUILD/server/cuckood}
CUCKOOD_B=${CUCKOOD_B:-}
SKIP_REDIS=${SKIP_REDIS:-}
SKIP_CUCKOOD=${SKIP_CUCKOOD:-}
MODULE=${MODULE:-}
RB_SO=${RB_SO:-}
TOP=${TOP:-12}
INCL=${INCL:-}
BULK_CMDS=${BULK_CMDS:-}
BULK=${BULK:-100}
CLIENT=$BUILD/bench/bench_client

for tool in valgrind callgrind_control callgrind_annotate redis-benchmark \
    redis-cli; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
[[ -x $CUCKOOD && -x $CLIENT ]] || BUILD_DIR=$BUILD bash scripts/build.sh

. bench/lib.sh # free_port, $tmp, $pids

echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); load" \
    "$(cut -d' ' -f1-3 /proc/loadavg); N=$N CLIENTS=$CLIENTS -P $PIPE" \
    "SIZE=$SIZE; cuckood $(git rev-parse --short HEAD 2>/dev/null || true)"

# count LABEL TAG COMMAND...: starts COMMAND under callgrind, prints the
# user instructions per request of PING (and CF.EXISTS and BULK_CMDS, per
# item, unless TAG is rs).
count() {
    local label=$1 tag=$2 port vp i f total
    shift 2
    port=$(free_port)
    valgrind --tool=callgrind --instr-atstart=no \
        --callgrind-out-file="$tmp/cg-$tag.out" "$@" --port "$port" \
        --bind 127.0.0.1 --dir "$tmp" --save "" >"$tmp/cg-$tag.log" 2>&1 &
    vp=$!
    pids+=("$vp")
    for i in $(seq 300); do
        [[ $(redis-cli -p "$port" PING 2>/dev/null) == PONG ]] && break
        sleep 0.2
    done
    local cmds=("PING")
    if [[ $tag != rs ]]; then
        redis-cli -p "$port" CF.RESERVE bench "$SIZE" >/dev/null
        "$CLIENT" -p "$port" -n "$SIZE" -b 1000 -m 7919 \
            CF.INSERT bench NOCREATE ITEMS >/dev/null
        cmds+=("CF.EXISTS bench __rand_int__")
        local items=() b
        for _ in $(seq "$BULK"); do items+=(__rand_int__); done
        for b in $BULK_CMDS; do
            case $b in
            MEXISTS) cmds+=("CF.MEXISTS bench ${items[*]}") ;;
            INSERT)
                redis-cli -p "$port" CF.RESERVE fresh "$SIZE" >/dev/null
                cmds+=("CF.INSERT fresh NOCREATE ITEMS ${items[*]}") ;;
            *) echo "unknown bulk command $b" >&2; exit 1 ;;
            esac
        done
    fi
    for c in "${cmds[@]}"; do
        local n=$N per=1
        if [[ $c == *__rand_int__\ __rand_int__* ]]; then
            n=$((N / BULK)) per=$BULK
        fi
        # shellcheck disable=SC2086 # the command's words
        redis-benchmark -p "$port" -c "$CLIENTS" -P "$PIPE" \
            -n $((32000 / per)) -r 100000000 -q $c >/dev/null 2>&1
        callgrind_control -z "$vp" >/dev/null 2>&1
        callgrind_control -i on "$vp" >/dev/null 2>&1
        # shellcheck disable=SC2086
        redis-benchmark -p "$port" -c "$CLIENTS" -P "$PIPE" -n "$n" \
            -r 100000000 -q $c >/dev/null 2>&1
        callgrind_control -i off "$vp" >/dev/null 2>&1
        callgrind_control -d "${c%% *}" "$vp" >/dev/null 2>&1
        f=$(ls -t "$tmp/cg-$tag.out".* | head -1)
        total=$(callgrind_annotate "$f" 2>/dev/null |
            awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
        printf '%-12s %-10s %8.1f user instructions/%s  (load %s)\n' \
            "$label" "${c%% *}" "$(awk -v t="$total" -v n="$N" \
            'BEGIN { print t / n }')" \
            "$([[ $per == 1 ]] && echo request || echo item)" \
            "$(cut -d' ' -f1 /proc/loadavg)"
        if [[ -n $INCL ]]; then
            callgrind_annotate --inclusive=yes "$f" 2>/dev/null |
                awk -v n="$N" -v fn="$INCL" '
                    $0 ~ (":" fn "( |$)") {
                        v = $1; gsub(",", "", v)
                        printf "    %8.1f  %s, inclusive\n", v / n, fn
                        exit
                    }' || true
        fi
        if ((TOP > 0)); then
            callgrind_annotate "$f" 2>/dev/null |
                awk -v n="$N" -v top="$TOP" '
                    /file:function/ { on = 1; next }
                    on && /^ *[0-9,]+ / {
                        v = $1; gsub(",", "", v); fn = $0
                        sub(/^ *[0-9,]+ +\([ 0-9.%]+\) +/, "", fn)
                        sub(/ \[.*/, "", fn); sub(/.*\//, "", fn)
                        printf "    %8.1f  %s\n", v / n, fn
                        if (++k == top) exit
                    }' || true # the early exit closes the pipe
        fi
    done
    kill "$vp" 2>/dev/null || true
    wait "$vp" 2>/dev/null || true
}

[[ -z $SKIP_CUCKOOD ]] && count "cuckood" cd "$CUCKOOD"
[[ -z $SKIP_CUCKOOD && -n $CUCKOOD_B ]] && count "cuckood B" cdb "$CUCKOOD_B"
[[ -z $SKIP_REDIS ]] && count "redis" rs redis-server --appendonly no
[[ -n $MODULE ]] && count "module" md redis-server --appendonly no \
    --loadmodule "$(realpath "$MODULE")"
[[ -n $RB_SO ]] && count "redisbloom" rb redis-server --appendonly no \
    --loadmodule "$(realpath "$RB_SO")"
true
