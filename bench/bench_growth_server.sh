#!/usr/bin/env bash
# bench_growth_server.sh - filters that grow, through the server's commands:
#  1. The growth table: CF.RESERVE g 1000 (defaults, then EXPANSION 2),
#     N distinct CF.ADD (x0, x1, ...), then CF.DEL of every second item
#     (x0, x2, ...). Columns: sub-filters (CF.INFO Number of filters), adds
#     refused, false-positive rate on N absent items (CF.MEXISTS y0, y1,
#     ...), after the deletes the items never deleted that answer 0 (false
#     negatives) and the deletes of present items that answered 0, bytes per
#     item (CF.INFO Size / items added), and the adds' rate with the
#     server's CPU per add. Rows for cuckood and, when RB_SO names a built
#     redisbloom.so, for RedisBloom in Debian's redis-server: the
#     comparison. The delete columns need every add accepted ("-" if not).
#  2. PING round trips (one at a time, each timed) while redis-benchmark
#     -P 32 -c 50 sends CF.ADD of random items to a filter reserved at 1000
#     with EXPANSION 2 that grows through PING_N adds (target p99.9 < 1 ms),
#     beside the same load on a filter reserved for PING_N from the start;
#     alternated, RUNS rounds, medians.
#  3. BIG=1: CF.RESERVE k 100000 [BIG_ARGS], then BIG_N distinct items in
#     pipelined CF.INSERT batches of 1,000 (bench_client): adds refused,
#     bytes per item (CF.INFO Size and MEMORY USAGE), false-positive rate on
#     1M absent items, wall time and server CPU time.
# Targets (for a filter grown 1000x): no add refused, no false negative,
# no delete of a present item answering 0, FPR <= 0.25%, <= 24 (BIG: 20)
# bits per item; PING p99.9 < 1 ms. The load average is printed with each
# figure.
#
# Environment: N=1000000, PING_N=5000000, RUNS=3, BIG=0, BIG_N=100000000,
# BIG_ARGS="" (e.g. "EXPANSION 2"), PARTS="table ping" (the parts run
# besides BIG's; PARTS= BIG=1 runs the 100M part alone), RB_SO
# (redisbloom.so; unset: no RedisBloom rows), BUILD_DIR=build.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

N=${N:-1000000}
PING_N=${PING_N:-5000000}
RUNS=${RUNS:-3}
BIG=${BIG:-0}
BIG_N=${BIG_N:-100000000}
BIG_ARGS=${BIG_ARGS:-}
PARTS=${PARTS-table ping}
BUILD=${BUILD_DIR:-build}
CUCKOOD=$BUILD/server/cuckood
CLIENT=$BUILD/bench/bench_client
[[ -x $CUCKOOD && -x $CLIENT ]] || BUILD_DIR=$BUILD bash scripts/build.sh
for t in redis-server redis-cli redis-benchmark bc; do
    command -v "$t" >/dev/null ||
        { echo "bench_growth_server: needs $t" >&2; exit 1; }
done
if [[ -n ${RB_SO:-} && ! -f $RB_SO ]]; then
    echo "bench_growth_server: RB_SO=$RB_SO is not a file" >&2
    exit 1
fi

targets=()
target() { # target WHAT VALUE OP LIMIT
    local ok=MISSED
    if (($(echo "$2 $3 $4" | bc -l))); then ok=met; fi
    targets+=("target $1 $2 $3 $4 $ok")
    echo "target $1 $2 $3 $4 $ok"
}
load() { cut -d' ' -f1-3 /proc/loadavg; }

# start NAME KIND: cuckood or RedisBloom in redis-server, in $tmp/NAME;
# sets port_NAME and pid_NAME.
start() {
    local name=$1 kind=$2 port
    port=$(free_port)
    mkdir -p "$tmp/$name"
    if [[ $kind == cuckood ]]; then
        "$CUCKOOD" --port "$port" --bind 127.0.0.1 --save "" \
            --dir "$tmp/$name" >"$tmp/$name/log" 2>&1 &
    else
        redis-server --port "$port" --bind 127.0.0.1 --save "" \
            --appendonly no --dir "$tmp/$name" \
            --loadmodule "$(realpath "$RB_SO")" >"$tmp/$name/log" 2>&1 &
    fi
    pids+=("$!")
    printf -v "port_$name" %s "$port"
    printf -v "pid_$name" %s "$!"
    wait_ping "$port"
}

# field PORT KEY NAME: one CF.INFO field
field() {
    redis-cli -p "$1" CF.INFO "$2" | awk -v n="$3" 'p {print; exit} $0 == n {p = 1}'
}
# kv TEXT NAME: NAME=value out of bench_client's line
kv() { tr ' ' '\n' <<<"$1" | awk -F= -v n="$2" '$1 == n {print $2}'; }

# row LABEL NAME RESERVE-ARGS...: one row of the growth table
row() {
    local label=$1 name=$2 port pid key=g c0 c1 out added refused secs
    shift 2
    port=port_$name port=${!port}
    pid=pid_$name pid=${!pid}
    redis-cli -p "$port" DEL "$key" >/dev/null
    redis-cli -p "$port" CF.RESERVE "$key" 1000 "$@" >/dev/null
    c0=$(cpu_ticks "$pid")
    out=$("$CLIENT" -p "$port" -n "$N" -b 1 -w 256 -f 'x%d' CF.ADD "$key" \
        2>/dev/null)
    c1=$(cpu_ticks "$pid")
    added=$(kv "$out" int_sum)
    refused=$((N - added))
    local rate cpu filters size fp fpr bpi fn="-" del0="-"
    rate=$(kv "$out" items_per_sec)
    cpu=$(echo "($c1 - $c0) * 1000000 / $(getconf CLK_TCK) / $N" | bc -l)
    filters=$(field "$port" "$key" "Number of filters")
    size=$(field "$port" "$key" "Size")
    out=$("$CLIENT" -p "$port" -n "$N" -b 1000 -w 16 -f 'y%d' \
        CF.MEXISTS "$key" 2>/dev/null)
    fp=$(kv "$out" ones)
    fpr=$(echo "100 * $fp / $N" | bc -l)
    bpi=$(echo "$size / $added" | bc -l)
    if ((refused == 0)); then
        out=$("$CLIENT" -p "$port" -n $((N / 2)) -b 1 -w 256 -m 2 -f 'x%d' \
            CF.DEL "$key" 2>/dev/null)
        del0=$((N / 2 - $(kv "$out" int_sum)))
        fn=$(python3 bench/growth_probe.py odd "$port" "$key" "$N")
    fi
    printf "| %-26s | %3s | %9s | %6.2f%% | %5s | %5s | %5.2f | %8.0f | %5.2f | %s |\n" \
        "$label" "$filters" "$refused" "$fpr" "$fn" "$del0" "$bpi" \
        "${rate%.*}" "$cpu" "$(load)"
    redis-cli -p "$port" DEL "$key" >/dev/null
    row_refused=$refused row_fn=$fn row_del0=$del0 row_fpr=$fpr
    row_bits=$(echo "8 * $bpi" | bc -l)
}

row_targets() { # row_targets LABEL (after row)
    target "$1-adds-refused" "$row_refused" "==" 0
    [[ $row_fn == - ]] || target "$1-false-negatives" "$row_fn" "==" 0
    [[ $row_del0 == - ]] ||
        target "$1-deletes-of-present-answering-0" "$row_del0" "==" 0
    target "$1-fpr-%" "$(printf %.3f "$row_fpr")" "<=" 0.25
    target "$1-bits-per-item" "$(printf %.2f "$row_bits")" "<=" 24
}

echo "bench_growth_server: $(git rev-parse --short HEAD 2>/dev/null || echo '?')," \
    "N=$N PING_N=$PING_N RUNS=$RUNS BIG=$BIG; load average: $(load)"

# ---- 1. the growth table --------------------------------------------------
start cd cuckood
if [[ " $PARTS " == *" table "* ]]; then
    [[ -z ${RB_SO:-} ]] || start rb redisbloom
    echo
    echo "CF.RESERVE g 1000, $N distinct CF.ADD, CF.DEL of every second item"
    echo "| server, reserve | sub-filters | adds refused | FPR on $N absent | false negatives after deleting half | deletes of present items answering 0 | B/item | adds/s | server CPU us/add | load |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    row "cuckood, defaults" cd
    row_targets cuckood-defaults
    row "cuckood, EXPANSION 2" cd EXPANSION 2
    row_targets cuckood-expansion-2
    if [[ -n ${RB_SO:-} ]]; then
        row "RedisBloom, defaults" rb
        row "RedisBloom, EXPANSION 2" rb EXPANSION 2
    fi
fi

# ---- 2. PING while a filter grows -----------------------------------------
if [[ " $PARTS " == *" ping "* ]]; then
    echo
    echo "PING round trips (us) while redis-benchmark -P 32 -c 50 sends $PING_N CF.ADD"
    for r in $(seq "$RUNS"); do
        for mode in grow reserved; do
            key=p_$mode
            redis-cli -p "$port_cd" DEL "$key" >/dev/null
            if [[ $mode == grow ]]; then
                redis-cli -p "$port_cd" CF.RESERVE "$key" 1000 EXPANSION 2 >/dev/null
            else
                redis-cli -p "$port_cd" CF.RESERVE "$key" "$PING_N" >/dev/null
            fi
            rm -f "$tmp/stop"
            python3 bench/growth_probe.py ping "$port_cd" "$tmp/stop" \
                >"$tmp/ping.$mode.$r" &
            pinger=$!
            adds=$(bench_run "$port_cd" "$pid_cd" 32 "$PING_N" 100000000 \
                CF.ADD "$key" __rand_int__)
            touch "$tmp/stop"
            wait "$pinger"
            read -r n p50 p99 p999 max <"$tmp/ping.$mode.$r"
            echo "$p999" >>"$tmp/p999.$mode"
            printf "%-8s round %d: pings %7d  p50 %5d  p99 %6d  p99.9 %6d  max %7d  | CF.ADD %9.0f req/s  %5.2f us CPU/req  filters %s  size %s  | load %s\n" \
                "$mode" "$r" "$n" "$p50" "$p99" "$p999" "$max" \
                "${adds%% *}" "${adds##* }" \
                "$(field "$port_cd" "$key" "Number of filters")" \
                "$(field "$port_cd" "$key" "Size")" "$(load)"
            redis-cli -p "$port_cd" DEL "$key" >/dev/null
        done
    done
    g=$(median <"$tmp/p999.grow")
    f=$(median <"$tmp/p999.reserved")
    echo "PING p99.9 median: growing $g us, reserved at the final size $f us ($(echo "scale=2; $g / $f" | bc -l)x)"
    target ping-p99.9-growing-ms "$(echo "scale=3; $g / 1000" | bc -l)" "<" 1
fi

# ---- 3. 100M items --------------------------------------------------------
if [[ $BIG == 1 ]]; then
    echo
    start big cuckood
    # shellcheck disable=SC2086 # BIG_ARGS: words
    redis-cli -p "$port_big" CF.RESERVE k 100000 $BIG_ARGS >/dev/null
    c0=$(cpu_ticks "$pid_big")
    t0=$(date +%s.%N)
    out=$("$CLIENT" -p "$port_big" -n "$BIG_N" -b 1000 -w 16 -f 'x%d' \
        CF.INSERT k ITEMS 2>/dev/null)
    t1=$(date +%s.%N)
    c1=$(cpu_ticks "$pid_big")
    added=$(kv "$out" ones)
    refused=$((BIG_N - added))
    size=$(field "$port_big" k Size)
    mem=$(redis-cli -p "$port_big" MEMORY USAGE k)
    out=$("$CLIENT" -p "$port_big" -n 1000000 -b 1000 -w 16 -f 'y%d' \
        CF.MEXISTS k 2>/dev/null)
    fpr=$(echo "100 * $(kv "$out" ones) / 1000000" | bc -l)
    printf "CF.RESERVE k 100000%s, %d items by CF.INSERT: refused %d, filters %s, Size %s (%.2f bits/item), MEMORY USAGE %s (%.2f bits/item), FPR %.3f%%, %.1f s wall, %.1f s server CPU | load %s\n" \
        "${BIG_ARGS:+ $BIG_ARGS}" "$BIG_N" "$refused" \
        "$(field "$port_big" k "Number of filters")" "$size" \
        "$(echo "8 * $size / $added" | bc -l)" "$mem" \
        "$(echo "8 * $mem / $added" | bc -l)" "$fpr" \
        "$(echo "$t1 - $t0" | bc -l)" \
        "$(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l)" "$(load)"
    target big-adds-refused "$refused" "==" 0
    target big-fpr-% "$(printf %.3f "$fpr")" "<=" 0.25
    target big-bits-per-item "$(printf %.2f "$(echo "8 * $size / $added" | bc -l)")" "<=" 20
fi

echo
printf "%s\n" "${targets[@]}"
