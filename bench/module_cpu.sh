# module_cpu.sh - sourced by bench_module.sh when CPU=1: the server CPU
# per request of redis-server running the module, beside the same
# redis-server running a second build of the module (A/B) and RedisBloom.
#
# Each server is its own redis-server (the modules register the same
# command names). CF.EXISTS and CF.MEXISTS query a filter `bench` reserved
# for SIZE items and filled with SIZE items by CF.INSERT (1000 per
# command, bench_client), of the form redis-benchmark's __rand_int__ takes;
# CF.ADD and CF.INSERT go into a filter `fresh` reserved afresh before each
# run. redis-benchmark -c CLIENTS -r 100000000 drives each run; the CPU is
# utime + stime of the server's /proc/PID/stat read around the run, divided
# by the requests (bulk commands: by the items). Runs alternate between the
# servers command by command (A, B, RedisBloom, A, B, ...), so a change of
# load touches them alike; each figure is the best of RUNS, and each run's
# line carries the load average.
#
# Environment (besides bench_module.sh's BUILD_DIR, CLIENTS and MODULE):
#   MODULE_B=path   a second build of cuckoo.so, measured beside MODULE
#   RB_SO=path      RedisBloom's redisbloom.so; unset: no RedisBloom rows
#   RUNS=3 SIZE=10000000 N32=2000000 N1=200000 NB32=50000 NB1=5000 BULK=100
#   PIPES=32        pipeline depths ("1 32" for both)
#   CMDS="EXISTS MEXISTS INSERT ADD"
#   PERF=dir        perf record -g each server's first run of each command
#                   at the deepest pipeline into dir/<server>-<command>.data

RUNS=${RUNS:-3}
SIZE=${SIZE:-10000000}
N32=${N32:-2000000}
N1=${N1:-200000}
NB32=${NB32:-50000}
NB1=${NB1:-5000}
BULK=${BULK:-100}
PIPES=${PIPES:-32}
CMDS=${CMDS:-"EXISTS MEXISTS INSERT ADD"}
MODULE_B=${MODULE_B:-}
RB_SO=${RB_SO:-}
PERF=${PERF:-}
CLIENT=$BUILD/bench/bench_client
TCK=$(getconf CLK_TCK)
[ -x "$CLIENT" ] || { echo "missing $CLIENT" >&2; exit 1; }

declare -A PORT PID LABEL
SERVERS=()
# serve NAME LABEL MODULE.so
serve() {
    local port
    port=$(free_port)
    for s in "${SERVERS[@]}"; do
        [ "${PORT[$s]}" = "$port" ] && port=$(free_port)
    done
    mkdir -p "$work/$1"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$work/$1" --save "" \
        --appendonly no --loadmodule "$3" >"$work/$1/log" 2>&1 &
    pids+=($!)
    PID[$1]=$! PORT[$1]=$port LABEL[$1]=$2
    SERVERS+=("$1")
    wait_ping "$port"
}
serve a "module" "$MODULE"
[ -n "$MODULE_B" ] && serve b "module B" "$MODULE_B"
[ -n "$RB_SO" ] && serve rb "RedisBloom" "$RB_SO"

cli() { local s=$1; shift; redis-cli -p "${PORT[$s]}" "$@"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "date $(date -u '+%Y-%m-%d %H:%M:%S UTC')," \
    "commit $(git rev-parse --short HEAD 2>/dev/null || echo -)," \
    "$(redis-server --version | awk '{print $1, $2, $3}')"
echo "load $(load) at start; RUNS=$RUNS SIZE=$SIZE N32=$N32 N1=$N1" \
    "NB32=$NB32 NB1=$NB1 BULK=$BULK CLIENTS=$CLIENTS"
for s in "${SERVERS[@]}"; do
    cli "$s" CF.RESERVE bench "$SIZE" >/dev/null
    printf 'fill %-10s ' "${LABEL[$s]}"
    "$CLIENT" -p "${PORT[$s]}" -n "$SIZE" -b 1000 -m 7919 \
        CF.INSERT bench NOCREATE ITEMS
    [ "$(cli "$s" CF.EXISTS bench 000000000000)" = 1 ] || {
        echo "${LABEL[$s]}: an inserted item is not found" >&2
        exit 1
    }
done

items=()
for _ in $(seq "$BULK"); do items+=(__rand_int__); done

declare -A BEST
# measure SERVER P NAME N PER COMMAND...: one run of N requests counting
# PER units each; keeps the best ns of CPU per unit.
measure() {
    local s=$1 p=$2 c=$3 n=$4 per=$5 t0 t1 ns perf_pid=
    shift 5
    if [ "$c" = ADD ] || [ "$c" = INSERT ]; then
        local cap=$SIZE
        [ $((n * per * 2)) -gt "$cap" ] && cap=$((n * per * 2))
        cli "$s" DEL fresh >/dev/null
        cli "$s" CF.RESERVE fresh "$cap" >/dev/null
    fi
    if [ -n "$PERF" ] && [ "$r" = 1 ] && [ "$p" = "$PMAX" ]; then
        mkdir -p "$PERF"
        perf record -g -p "${PID[$s]}" -o "$PERF/$s-$c.data" \
            >"$work/perf.log" 2>&1 &
        perf_pid=$!
        sleep 0.5
    fi
    t0=$(cpu_ticks "${PID[$s]}")
    redis-benchmark -p "${PORT[$s]}" -c "$CLIENTS" -P "$p" -n "$n" \
        -r 100000000 -q "$@" >/dev/null 2>&1
    t1=$(cpu_ticks "${PID[$s]}")
    if [ -n "$perf_pid" ]; then
        kill -INT "$perf_pid"
        wait "$perf_pid" || true
    fi
    ns=$(awk -v a="$t0" -v b="$t1" -v n="$n" -v k="$per" -v t="$TCK" \
        'BEGIN { printf "%.1f", (b - a) * 1e9 / t / n / k }')
    printf 'run %d -P %-2s %-10s %-8s %8s ns/%s  load %s\n' "$r" "$p" \
        "${LABEL[$s]}" "$c" "$ns" "$([ "$per" = 1 ] && echo req || echo item)" \
        "$(load)"
    local key=$s,$c,$p
    if [ -z "${BEST[$key]:-}" ] ||
        awk -v a="$ns" -v b="${BEST[$key]}" 'BEGIN { exit !(a < b) }'; then
        BEST[$key]=$ns
    fi
}

PMAX=$(echo "$PIPES" | tr ' ' '\n' | sort -n | tail -1)
for r in $(seq "$RUNS"); do
    for p in $PIPES; do
        n=$N32 nb=$NB32
        [ "$p" = 1 ] && n=$N1 nb=$NB1
        for c in $CMDS; do
            for s in "${SERVERS[@]}"; do
                case $c in
                EXISTS) measure "$s" "$p" "$c" "$n" 1 CF.EXISTS bench \
                    __rand_int__ ;;
                ADD) measure "$s" "$p" "$c" "$n" 1 CF.ADD fresh \
                    __rand_int__ ;;
                MEXISTS) measure "$s" "$p" "$c" "$nb" "$BULK" CF.MEXISTS \
                    bench "${items[@]}" ;;
                INSERT) measure "$s" "$p" "$c" "$nb" "$BULK" CF.INSERT \
                    fresh NOCREATE ITEMS "${items[@]}" ;;
                esac
            done
        done
    done
done

ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b <= 0)
        print "-"; else printf "%.2f", a / b }'
}
echo
echo "ns of server CPU per request (MEXISTS, INSERT: per item), best of" \
    "$RUNS; load $(load) at the end"
printf '%-14s' ""
for s in "${SERVERS[@]}"; do printf ' %10s' "${LABEL[$s]}"; done
[ -n "$MODULE_B" ] && printf ' %8s' "B/A"
if [ -n "$RB_SO" ]; then
    printf ' %8s' "A/RB"
    [ -n "$MODULE_B" ] && printf ' %8s' "B/RB"
fi
echo
for p in $PIPES; do
    for c in $CMDS; do
        printf '%-14s' "$c -P $p"
        for s in "${SERVERS[@]}"; do printf ' %10s' "${BEST[$s,$c,$p]}"; done
        [ -n "$MODULE_B" ] &&
            printf ' %8s' "$(ratio "${BEST[b,$c,$p]}" "${BEST[a,$c,$p]}")"
        if [ -n "$RB_SO" ]; then
            printf ' %8s' "$(ratio "${BEST[a,$c,$p]}" "${BEST[rb,$c,$p]}")"
            [ -n "$MODULE_B" ] &&
                printf ' %8s' "$(ratio "${BEST[b,$c,$p]}" "${BEST[rb,$c,$p]}")"
        fi
        echo
    done
done
