#!/usr/bin/env bash
# bench_aof.sh - what the append-only file costs, in one run:
#  1. CF.ADD on one large filter, 50 clients, -P 32: cuckood with
#     appendfsync everysec against the same cuckood without AOF (target
#     >= 0.8x) and against Debian's redis-server SADD with everysec
#     (>= 1.0x);
#  2. appendfsync always, 50 clients, -P 1: cuckood CF.ADD against
#     redis-server SADD with always (>= 1.0x; group commit);
#  3. PING latency (p50/p99, redis-benchmark --csv) while BGREWRITEAOF
#     rewrites a dataset of SIZE_MB megabytes (target p99 < 2 ms);
#  4. replay at start-up of REPLAY logged CF.ADDs (target >= 1M/s).
# Requests per second (median of RUNS) and the server's CPU time per
# request from /proc/PID/stat (user + system, around each run) beside it.
#
# Environment: RUNS=3, N32=2000000, N1=100000, SIZE_MB=1024,
# REPLAY=1000000, BUILD_DIR=build; ONLY_EVERYSEC=1 stops after part 1.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

RUNS=${RUNS:-3}
N32=${N32:-2000000}
N1=${N1:-100000}
SIZE_MB=${SIZE_MB:-1024}
CUCKOOD=${BUILD_DIR:-build}/server/cuckood
[[ -x $CUCKOOD ]] || bash scripts/build.sh
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
    { echo "bench_aof: needs redis-server and redis-benchmark" >&2; exit 1; }

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# start NAME KIND ARGS...: a server in $tmp/NAME; sets port_NAME, pid_NAME
start() {
    local name=$1 kind=$2 port
    shift 2
    port=$(free_port)
    mkdir -p "$tmp/$name"
    if [[ $kind == cuckood ]]; then
        "$CUCKOOD" --port "$port" --bind 127.0.0.1 --save "" \
            --dir "$tmp/$name" "$@" >"$tmp/$name/log" 2>&1 &
    else
        redis-server --port "$port" --bind 127.0.0.1 --save "" \
            --dir "$tmp/$name" "$@" >"$tmp/$name/log" 2>&1 &
    fi
    pids+=("$!")
    printf -v "port_$name" %s "$port"
    printf -v "pid_$name" %s "$!"
    wait_ping "$port"
}

# run NAME P N CMD...: prints "requests/s microseconds-of-CPU-per-request"
run() {
    local name=$1 p=$2 n=$3 port pid c0 c1 rps
    shift 3
    port=port_$name
    pid=pid_$name
    c0=$(cpu_ticks "${!pid}")
    rps=$(redis-benchmark -p "${!port}" -r 100000000 -n "$n" -P "$p" -c 50 \
        -q "$@" 2>&1 | tr '\r' '\n' | grep -o '[0-9.]* requests per second' |
        tail -1 | cut -d' ' -f1)
    c1=$(cpu_ticks "${!pid}")
    echo "$rps $(echo "($c1 - $c0) * 1000000 / $(getconf CLK_TCK) / $n" | bc -l)"
}

# series NAME P N CMD...: RUNS runs into $tmp/NAME.P
series() {
    local name=$1 p=$2
    : >"$tmp/$name.$p"
    for _ in $(seq "$RUNS"); do run "$@" >>"$tmp/$name.$p"; done
}

report() { # report LABEL FILE
    printf "%-34s %10.0f req/s  %6.2f us CPU/req  (runs: %s)\n" "$1" \
        "$(cut -d' ' -f1 "$2" | median)" "$(cut -d' ' -f2 "$2" | median)" \
        "$(cut -d' ' -f1 "$2" | tr '\n' ' ')"
}
ratio() { echo "scale=2; $(cut -d' ' -f1 "$1" | median) / $(cut -d' ' -f1 "$2" | median)" | bc -l; }

echo "load average: $(cat /proc/loadavg)"
start cnone cuckood --appendonly no
start cevery cuckood --appendonly yes --appendfsync everysec
start revery redis --appendonly yes --appendfsync everysec
# a filter sized for the run (a larger one measures first-touch page
# faults of its table, not the AOF)
for s in cnone cevery; do
    p=port_$s
    redis-cli -p "${!p}" CF.RESERVE f $((2 * RUNS * N32)) >/dev/null
done
# 1. pipelined, everysec; the three servers in turn in each round, so a
# change of the machine's load between rounds touches all of them
: >"$tmp/cnone.32"
: >"$tmp/cevery.32"
: >"$tmp/revery.32"
for _ in $(seq "$RUNS"); do
    run cnone 32 "$N32" CF.ADD f __rand_int__ >>"$tmp/cnone.32"
    run cevery 32 "$N32" CF.ADD f __rand_int__ >>"$tmp/cevery.32"
    run revery 32 "$N32" SADD s __rand_int__ >>"$tmp/revery.32"
done
report "cuckood CF.ADD -P 32, no AOF" "$tmp/cnone.32"
report "cuckood CF.ADD -P 32, everysec" "$tmp/cevery.32"
report "redis SADD -P 32, everysec" "$tmp/revery.32"
echo "everysec/no AOF: $(ratio "$tmp/cevery.32" "$tmp/cnone.32")x (target >= 0.8)"
echo "everysec/no AOF, server CPU per request: $(echo "scale=2; $(cut -d' ' -f2 "$tmp/cevery.32" | median) / $(cut -d' ' -f2 "$tmp/cnone.32" | median)" | bc -l)x"
echo "cuckood/redis everysec: $(ratio "$tmp/cevery.32" "$tmp/revery.32")x (target >= 1.0)"
for s in cnone cevery revery; do p=pid_$s; kill "${!p}"; done
[[ ${ONLY_EVERYSEC:-0} == 1 ]] && exit 0

# 2. always, -P 1
start calways cuckood --appendonly yes --appendfsync always
start ralways redis --appendonly yes --appendfsync always
redis-cli -p "$port_calways" CF.RESERVE f $((2 * RUNS * N1)) >/dev/null
series calways 1 "$N1" CF.ADD f __rand_int__
series ralways 1 "$N1" SADD s __rand_int__
report "cuckood CF.ADD -P 1, always" "$tmp/calways.1"
report "redis SADD -P 1, always" "$tmp/ralways.1"
echo "cuckood/redis always: $(ratio "$tmp/calways.1" "$tmp/ralways.1")x (target >= 1.0)"
kill "$pid_calways" "$pid_ralways"

# 3. PING during a rewrite of SIZE_MB: filters of 8-bit fingerprints
# reserved to that size and filled a little (their tables are written
# whole).
start crw cuckood --appendonly yes --appendfsync everysec \
    --cf-fingerprint-bits 8
n=$((SIZE_MB / 64))
for i in $(seq "$n"); do
    redis-cli -p "$port_crw" CF.RESERVE "big$i" 60000000 >/dev/null
    redis-cli -p "$port_crw" CF.ADD "big$i" x >/dev/null
done
echo "dataset: $(redis-cli -p "$port_crw" info memory | grep '^used_memory_human' | tr -d '\r')"
base=$(redis-benchmark -p "$port_crw" -n 200000 -c 50 -t ping_mbulk --csv 2>/dev/null |
    tail -1)
echo "PING without a rewrite (csv: rps,avg,min,p50,p95,p99,max ms): $base"
redis-cli -p "$port_crw" BGREWRITEAOF >/dev/null
lat=$(redis-benchmark -p "$port_crw" -n 200000 -c 50 -t ping_mbulk --csv 2>/dev/null |
    tail -1)
info=$(redis-cli -p "$port_crw" info persistence | tr -d '\r')
echo "PING during the rewrite (csv: rps,avg,min,p50,p95,p99,max ms): $lat"
echo "rewrite still running after the PINGs: $(echo "$info" | grep aof_rewrite_in_progress)"
while redis-cli -p "$port_crw" info persistence | grep -q 'aof_rewrite_in_progress:1'; do
    sleep 0.2
done
echo "rewrite: $(redis-cli -p "$port_crw" info persistence | grep -E 'aof_last_rewrite_time_sec|aof_last_bgrewrite_status' | tr -d '\r' | tr '\n' ' ')"

# 4. replay at start-up: REPLAY CF.ADDs logged (one filter), then a restart;
# the loader's own timing line gives the rate.
REPLAY=${REPLAY:-1000000}
kill "$pid_crw"
start crp cuckood --appendonly yes --appendfsync no
redis-cli -p "$port_crp" CF.RESERVE f $((2 * REPLAY)) >/dev/null
python3 - "$REPLAY" >"$tmp/adds.resp" <<'PY'
import sys
out = sys.stdout.buffer
for i in range(int(sys.argv[1])):
    it = b"item:%d" % i
    out.write(b"*3\r\n$6\r\nCF.ADD\r\n$1\r\nf\r\n$%d\r\n%s\r\n" % (len(it), it))
PY
redis-cli -p "$port_crp" --pipe <"$tmp/adds.resp" >/dev/null
redis-cli -p "$port_crp" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
while kill -0 "$pid_crp" 2>/dev/null; do sleep 0.1; done
"$CUCKOOD" --port "$port_crp" --bind 127.0.0.1 --save "" --dir "$tmp/crp" \
    --appendonly yes >>"$tmp/crp/log" 2>&1 &
pids+=("$!")
wait_ping "$port_crp"
secs=$(grep -o 'DB loaded from incr file [^:]*: [0-9.]* seconds' "$tmp/crp/log" |
    tail -1 | grep -o '[0-9.]* seconds' | cut -d' ' -f1)
echo "replay: $REPLAY CF.ADD in $secs s: $(echo "$REPLAY / $secs" | bc) per second (target >= 1000000)"
