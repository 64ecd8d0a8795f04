#!/usr/bin/env bash
# bench_server.sh - cuckood against Debian's redis-server, side by side.
#
# Starts cuckood and redis-server on free ports, runs redis-benchmark
# (50 clients, -P 1 and -P 32) for PING on both, CF.ADD / CF.EXISTS on
# cuckood and SISMEMBER on redis-server, each RUNS times (median taken),
# then the bulk commands (CF.MEXISTS and CF.INSERT ... ITEMS with BULK
# items per command at -P BULK_P: server CPU per item against the core's
# batched cost per item, bench/bench_bulk, measured between them), then
# bytes per item and the false-positive rate of a filter reserved for 10M
# items with the default settings. Each figure that has a target gets a
# line "target <what> <value> <op> <limit> met|MISSED", repeated together
# at the end.
#
# Environment:
#   RUNS=3          runs per measurement (the median is reported)
#   N1=200000       requests per run at -P 1
#   N32=2000000     requests per run at -P 32 (CF.ADD uses N32_ADD)
#   N32_ADD=1300000 requests per CF.ADD run at -P 32
#   CLIENTS=50      redis-benchmark connections
#   FILL=5000000    items in the `bench` filter before CF.EXISTS
#   SET=1000000     members in the redis set before SISMEMBER
#   BIG=10000000    items for the bytes-per-item / false-positive part
#   PROBES=1000000  never-inserted items queried for the FP rate
#   PERF=dir        if set, `perf record -e cpu-clock -g` cuckood during
#                   the CF.EXISTS runs, into dir/perf-P1.data, perf-P32.data
#   SKIP_BIG=1      skip the 10M part
#   SKIP_SINGLE=1   skip the PING / CF.ADD / CF.EXISTS / SISMEMBER part
#   SKIP_BULK=1     skip the bulk part (CF.MEXISTS, CF.INSERT)
#   BULK=100        items per CF.MEXISTS / CF.INSERT command (bulk part)
#   BULK_P=16       pipeline depth of the bulk part
#   NB_EXISTS=100000 CF.MEXISTS commands per run (bulk part)
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
N1=${N1:-200000}
N32=${N32:-2000000}
N32_ADD=${N32_ADD:-1300000}
CLIENTS=${CLIENTS:-50}
FILL=${FILL:-5000000}
SET=${SET:-1000000}
BIG=${BIG:-10000000}
PROBES=${PROBES:-1000000}
PERF=${PERF:-}
SKIP_BIG=${SKIP_BIG:-}
SKIP_SINGLE=${SKIP_SINGLE:-}
SKIP_BULK=${SKIP_BULK:-}
BULK=${BULK:-100}
BULK_P=${BULK_P:-16}
NB_EXISTS=${NB_EXISTS:-100000}
BUILD=${BUILD_DIR:-build}
CUCKOOD=$BUILD/server/cuckood
CLIENT=$BUILD/bench/bench_client
BULKREF=$BUILD/bench/bench_bulk

for tool in redis-server redis-benchmark redis-cli; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
if [[ ! -x $CUCKOOD || ! -x $CLIENT || ! -x $BULKREF ]]; then
    bash scripts/build.sh
fi

. bench/lib.sh  # free_port, wait_ping, $tmp, $pids

CP=$(free_port)
RP=$(free_port)
while [[ $RP == "$CP" ]]; do RP=$(free_port); done

"$CUCKOOD" --port "$CP" --save "" --dir "$tmp" >"$tmp/cuckood.log" 2>&1 &
cpid=$!
pids+=("$cpid")
redis-server --port "$RP" --save "" --appendonly no --dir "$tmp" \
    >"$tmp/redis.log" 2>&1 &
rpid=$!
pids+=("$rpid")

wait_ping "$CP"
wait_ping "$RP"

ccli() { redis-cli -p "$CP" "$@"; }
rcli() { redis-cli -p "$RP" "$@"; }

# cf_info_field KEY FIELD: one CF.INFO value by name.
cf_info_field() {
    ccli CF.INFO "$1" | awk -v f="$2" 'prev == f { print; exit } { prev = $0 }'
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

echo "== machine"
echo "date:   $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "cpu:    $(nproc) x $(awk -F': ' '/model name/ { print $2; exit }' \
    /proc/cpuinfo)"
echo "kernel: $(uname -r)"
echo "load:   $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15 min, at start)"
echo "redis:  $(redis-server --version | awk '{ print $3 }')," \
    "$(redis-benchmark --version)"
echo "cuckood: $("$CUCKOOD" --version 2>&1 | head -1)"
echo "ports:  cuckood $CP, redis-server $RP; $CLIENTS clients," \
    "$RUNS runs each, median reported"
echo

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
TCK=$(getconf CLK_TCK)

# bench PID PORT PIPELINE N CMD...: one redis-benchmark run against the
# server PID listening on PORT; prints "ops/s server-CPU-us-per-request".
bench() {
    local pid=$1 port=$2 pipe=$3 n=$4 t0 t1 rps
    shift 4
    t0=$(cpu_ticks "$pid")
    rps=$(redis-benchmark -p "$port" -c "$CLIENTS" -P "$pipe" -n "$n" \
        -r 100000000 --csv "$@" 2>/dev/null |
        awk -F'","' 'NR == 2 { printf "%.0f\n", $2 }')
    t1=$(cpu_ticks "$pid")
    awk -v r="$rps" -v a="$t0" -v b="$t1" -v t="$TCK" -v n="$n" \
        'BEGIN { printf "%s %.2f\n", r, (b - a) / t * 1e6 / n }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A RES
# record NAME VALUE: keep a run's result for the median.
record() { RES[$1]="${RES[$1]:-} $2"; }
med() { tr ' ' '\n' <<<"${RES[$1]}" | grep . | median; }
# range NAME: "min-max" of a figure's runs.
range() {
    tr ' ' '\n' <<<"${RES[$1]}" | grep . | sort -g |
        awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo "-" hi }'
}

ccli CF.RESERVE bench "$FILL" >/dev/null
[[ -z $SKIP_SINGLE ]] &&
    echo "== CF.ADD bench __rand_int__ (filter reserved for $FILL, empty at start)"
for r in $( [[ -n $SKIP_SINGLE ]] || seq "$RUNS"); do
    for p in 1 32; do
        if [[ $p == 1 ]]; then n=$N1; else n=$N32_ADD; fi
        read -r v u < <(bench "$cpid" "$CP" "$p" "$n" \
            CF.ADD bench __rand_int__)
        record "add_$p" "$v"
        record "uadd_$p" "$u"
        printf 'run %d  -P %-2s  CF.ADD   %10s ops/s  %6s us/req' \
            "$r" "$p" "$v" "$u"
        printf '  (items now %s)\n' \
            "$(cf_info_field bench 'Number of items inserted')"
    done
done

inserted=$(cf_info_field bench 'Number of items inserted')
if (( inserted < FILL )); then
    echo "topping up bench to $FILL items with distinct items"
    # Items (i * 7919) mod 10^8 as 12 digits, the form __rand_int__ takes.
    "$CLIENT" -p "$CP" -n $((FILL - inserted)) -b 1000 -m 7919 \
        CF.INSERT bench NOCREATE ITEMS
fi
echo "bench: $(cf_info_field bench 'Number of items inserted') items," \
    "$(cf_info_field bench 'Number of filters') filter(s)," \
    "$(cf_info_field bench Size) bytes"

echo "filling the redis set benchset with $SET members"
"$CLIENT" -p "$RP" -n "$SET" -b 1000 -m 7919 SADD benchset
echo "benchset: $(rcli SCARD benchset) members"
echo

ratio() {
    awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'
}
last() { tr ' ' '\n' <<<"${RES[$1]}" | grep . | tail -1; }

# one RUN PIPE N NAME PID PORT LABEL CMD...: a measured run, recorded.
one() {
    local r=$1 p=$2 n=$3 name=$4 pid=$5 port=$6 label=$7 v u
    shift 7
    read -r v u < <(bench "$pid" "$port" "$p" "$n" "$@")
    record "${name}_$p" "$v"
    record "u${name}_$p" "$u"
    printf 'run %d  %s  %10s ops/s  %6s us/req of server CPU\n' \
        "$r" "$label" "$v" "$u"
}

perf_start() {
    [[ -n $PERF ]] || return 0
    mkdir -p "$PERF"
    perf record -e cpu-clock -g -p "$cpid" -o "$PERF/perf-P$1.data" \
        >"$tmp/perf-P$1.log" 2>&1 &
    perfpid=$!
    sleep 0.5
}
perf_stop() {
    [[ -n $PERF ]] || return 0
    kill -INT "$perfpid"
    wait "$perfpid" || true
}

# target LABEL VALUE OP LIMIT: one line per figure against its target,
# kept for the summary at the end.
TARGETS=()
target() {
    local ok
    ok=$(awk -v v="$2" -v l="$4" -v op="$3" \
        'BEGIN { print ((op == ">=" ? v >= l : v <= l) ? "met" : "MISSED") }')
    TARGETS+=("$(printf 'target %-44s %8s  %s %-5s %s' "$1" "$2" "$3" "$4" \
        "$ok")")
    echo "${TARGETS[-1]}"
}

for p in $( [[ -n $SKIP_SINGLE ]] || echo 1 32); do
    if [[ $p == 1 ]]; then n=$N1; else n=$N32; fi
    echo "== -P $p, $n requests per run"
    for r in $(seq "$RUNS"); do
        one "$r" "$p" "$n" rping "$rpid" "$RP" "redis-server PING     " PING
        one "$r" "$p" "$n" cping "$cpid" "$CP" "cuckood      PING     " PING
        [[ $r == 1 ]] && perf_start "$p"
        one "$r" "$p" "$n" exists "$cpid" "$CP" "cuckood      CF.EXISTS" \
            CF.EXISTS bench __rand_int__
        [[ $r == 1 ]] && perf_stop
        one "$r" "$p" "$n" sism "$rpid" "$RP" "redis-server SISMEMBER" \
            SISMEMBER benchset __rand_int__
        # The two servers' runs next to each other in time, as a ratio.
        record "rr_$p" "$(ratio "$(last "exists_$p")" "$(last "rping_$p")")"
    done
    echo
done
if [[ -z $SKIP_SINGLE ]]; then
echo "load:   $(cut -d' ' -f1-3 /proc/loadavg) (after the throughput runs)"
echo


echo "== medians: ops/s, and server CPU microseconds per request"
printf '%-30s %10s %8s %10s %8s\n' "" "-P 1" "us/req" "-P 32" "us/req"
row() {
    printf '%-30s %10s %8s %10s %8s\n' "$1" "$(med "${2}_1")" \
        "$(med "u${2}_1")" "$(med "${2}_32")" "$(med "u${2}_32")"
}
row "redis-server PING" rping
row "redis-server SISMEMBER ($SET)" sism
row "cuckood PING" cping
row "cuckood CF.ADD" add
row "cuckood CF.EXISTS ($FILL)" exists
echo
echo "== ratios (of the medians)"
printf '%-34s %12s %12s\n' "" "-P 1" "-P 32"
for row in "CF.EXISTS / redis PING:exists:rping" \
           "CF.ADD / redis PING:add:rping" \
           "CF.EXISTS / SISMEMBER:exists:sism" \
           "cuckood PING / redis PING:cping:rping"; do
    IFS=: read -r label a b <<<"$row"
    printf '%-34s %12s %12s\n' "$label" \
        "$(ratio "$(med "${a}_1")" "$(med "${b}_1")")" \
        "$(ratio "$(med "${a}_32")" "$(med "${b}_32")")"
done
printf '%-34s %12s %12s\n' "CF.EXISTS / redis PING, per run" \
    "$(med rr_1)" "$(med rr_32)"
echo "  (median of the ratios of runs done back to back: less exposed to"
echo "   load that changes between runs)"
echo "  (range of the per-run ratios: -P 1 $(range rr_1), -P 32 $(range rr_32))"
target "CF.EXISTS / redis PING, -P 1 (medians)" \
    "$(ratio "$(med exists_1)" "$(med rping_1)")" ">=" 1.0
target "CF.EXISTS / redis PING, -P 32 (medians)" \
    "$(ratio "$(med exists_32)" "$(med rping_32)")" ">=" 1.2
echo
fi

if [[ -z $SKIP_BULK ]]; then
# The bulk commands: server CPU per item against the core's batched cost
# per item (bench_bulk: cf_exists_many / cf_add_many in calls of BULK items
# on a filter of the same size, same item form), measured in the same run,
# alternating with the server's runs. Server CPU is the sum of the
# process's threads' run time in /proc/PID/task/*/schedstat (ns, where
# /proc/PID/stat counts in 10 ms ticks); items are counted by the server
# (INFO commandstats calls, CF.INFO items), not assumed.
items=$(printf '__rand_int__ %.0s' $(seq "$BULK"))
nb_insert=$((FILL / BULK))
cpu_ns() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { print s }'; }
calls_of() {
    ccli INFO commandstats | tr -d '\r' |
        awk -F'[:=,]' -v c="cmdstat_$1" '$1 == c { print $3 }'
}
per_item() {
    awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.1f", (b - a) / n }'
}
echo "== bulk: $BULK items per command, -P $BULK_P, $CLIENTS clients;" \
    "CF.MEXISTS bench ($FILL items) x $NB_EXISTS, CF.INSERT into a fresh" \
    "filter reserved for $FILL x $nb_insert"
for r in $(seq "$RUNS"); do
    ref=$("$BULKREF" "$FILL" "$BULK")
    ref_e=$(awk '$1 == "exists" { print $2 }' <<<"$ref")
    ref_i=$(awk '$1 == "insert" { print $2 }' <<<"$ref")
    c0=$(calls_of cf.mexists)
    t0=$(cpu_ns "$cpid")
    [[ $r == 1 ]] && perf_start mexists
    # shellcheck disable=SC2086
    redis-benchmark -p "$CP" -c "$CLIENTS" -P "$BULK_P" -n "$NB_EXISTS" \
        -r 100000000 -q CF.MEXISTS bench $items >/dev/null 2>&1
    [[ $r == 1 ]] && perf_stop
    t1=$(cpu_ns "$cpid")
    c1=$(calls_of cf.mexists)
    srv_e=$(per_item "$t0" "$t1" $(((${c1:-0} - ${c0:-0}) * BULK)))

    ccli DEL ins >/dev/null
    ccli CF.RESERVE ins "$FILL" >/dev/null
    t0=$(cpu_ns "$cpid")
    [[ $r == 1 ]] && perf_start insert
    # shellcheck disable=SC2086
    redis-benchmark -p "$CP" -c "$CLIENTS" -P "$BULK_P" -n "$nb_insert" \
        -r 100000000 -q CF.INSERT ins ITEMS $items >/dev/null 2>&1
    [[ $r == 1 ]] && perf_stop
    t1=$(cpu_ns "$cpid")
    ins=$(cf_info_field ins 'Number of items inserted')
    srv_i=$(per_item "$t0" "$t1" "$ins")
    record bref_e "$ref_e"
    record bref_i "$ref_i"
    record bsrv_e "$srv_e"
    record bsrv_i "$srv_i"
    record bx_e "$(ratio "$srv_e" "$ref_e")"
    record bx_i "$(ratio "$srv_i" "$ref_i")"
    printf 'run %d  CF.MEXISTS  server %6s ns/item  core %5s ns/item  %5sx\n' \
        "$r" "$srv_e" "$ref_e" "$(last bx_e)"
    printf 'run %d  CF.INSERT   server %6s ns/item  core %5s ns/item  %5sx' \
        "$r" "$srv_i" "$ref_i" "$(last bx_i)"
    printf '  (%s items, %s filter(s))\n' "$ins" \
        "$(cf_info_field ins 'Number of filters')"
done
ccli DEL ins >/dev/null
echo "medians (range): server CPU ns per item / core batched ns per item"
printf '  CF.MEXISTS %s (%s) / %s (%s) = %sx (%s)\n' \
    "$(med bsrv_e)" "$(range bsrv_e)" "$(med bref_e)" "$(range bref_e)" \
    "$(med bx_e)" "$(range bx_e)"
printf '  CF.INSERT  %s (%s) / %s (%s) = %sx (%s)\n' \
    "$(med bsrv_i)" "$(range bsrv_i)" "$(med bref_i)" "$(range bref_i)" \
    "$(med bx_i)" "$(range bx_i)"
target "CF.MEXISTS x$BULK server/core per item (median)" "$(med bx_e)" "<=" 2.5
target "CF.INSERT x$BULK server/core per item (median)" "$(med bx_i)" "<=" 2.5
echo "load:   $(cut -d' ' -f1-3 /proc/loadavg) (after the bulk runs)"
echo
fi

if [[ -z $SKIP_BIG ]]; then

echo "== $BIG items, CF.RESERVE k $BIG with the default settings"
rss0=$(rss_kb "$cpid")
ccli CF.RESERVE k "$BIG" >/dev/null
printf 'insert: '
"$CLIENT" -p "$CP" -n "$BIG" -b 1000 -f 'item:%lu' CF.INSERT k NOCREATE ITEMS |
    tee "$tmp/insert.out"
rss1=$(rss_kb "$cpid")
printf 'probe:  '
"$CLIENT" -p "$CP" -n "$PROBES" -b 1000 -f 'miss:%lu' CF.MEXISTS k |
    tee "$tmp/probe.out"
size=$(cf_info_field k Size)
items=$(cf_info_field k 'Number of items inserted')
filters=$(cf_info_field k 'Number of filters')
bits=$(cf_info_field k 'Fingerprint bits')
bsize=$(cf_info_field k 'Bucket size')
fails=$(sed -n 's/.* others=\([0-9]*\).*/\1/p' "$tmp/insert.out")
fp=$(sed -n 's/.* ones=\([0-9]*\).*/\1/p' "$tmp/probe.out")
echo "CF.INFO: Size $size, items $items, filters $filters," \
    "bucket size $bsize, fingerprint bits $bits; failed inserts $fails"
awk -v s="$size" -v n="$BIG" -v r0="$rss0" -v r1="$rss1" \
    -v fp="$fp" -v q="$PROBES" -v b="$bsize" -v f="$bits" 'BEGIN {
    printf "bytes per item (CF.INFO Size / items): %.3f  (target <= 1.7)\n",
        s / n
    printf "bytes per item (process RSS growth):   %.3f\n",
        (r1 - r0) * 1024 / n
    printf "false positives: %d of %d never-inserted items = %.4f%%" \
        "  (bound 2b/(2^f-1) = %.4f%%)\n", fp, q, 100 * fp / q,
        100 * 2 * b / (2 ^ f - 1)
}'
echo "number of filters: $filters (must stay 1)"
target "bytes per item, $BIG items (CF.INFO Size)" \
    "$(awk -v s="$size" -v n="$BIG" 'BEGIN { printf "%.3f", s / n }')" "<=" 1.7
fi

echo
echo "== targets (ratios within this run; load at the end:" \
    "$(cut -d' ' -f1-3 /proc/loadavg))"
printf '%s\n' "${TARGETS[@]}"
