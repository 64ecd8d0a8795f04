#!/usr/bin/env bash
# bench_import.sh - CF.EXISTS on a filter imported from RedisBloom: cuckood
# serving it (RedisBloom's own form, loaded with scripts/migrate) against
# RedisBloom itself in Debian's redis-server, in the same run. A filter of
# ITEMS items is made in RedisBloom (CF.RESERVE ITEMS, then CF.INSERT), and
# copied into cuckood; then redis-benchmark (50 clients, -P 32 and -P 1)
# asks CF.EXISTS of random items of both, RUNS rounds alternating the two
# servers, median reported: requests per second and the server's CPU time
# per request (utime + stime from /proc around each run).
#
# Needs RedisBloom built as a module: REDISBLOOM=/path/to/redisbloom.so
# (RedisBloom 2.6; its build needs the network, so no test depends on it).
# Environment: ITEMS=100000 RUNS=3 N32=2000000 N1=200000 BUILD_DIR=build.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

ITEMS=${ITEMS:-100000}
RUNS=${RUNS:-3}
N32=${N32:-2000000}
N1=${N1:-200000}
PY=${PYTHON:-/usr/bin/python3}
CUCKOOD=${BUILD_DIR:-build}/server/cuckood
[[ -x $CUCKOOD ]] || bash scripts/build.sh
[[ -n ${REDISBLOOM:-} && -f $REDISBLOOM ]] ||
    { echo "bench_import: set REDISBLOOM to a built redisbloom.so" >&2; exit 1; }
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
    { echo "bench_import: needs redis-server and redis-benchmark" >&2; exit 1; }

CP=$(free_port)
RP=$(free_port)
mkdir -p "$tmp/c" "$tmp/r"
"$CUCKOOD" --port "$CP" --bind 127.0.0.1 --save "" --dir "$tmp/c" \
    >"$tmp/c/log" 2>&1 &
cpid=$!
pids+=("$cpid")
redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$tmp/r" --loadmodule "$REDISBLOOM" >"$tmp/r/log" 2>&1 &
rpid=$!
pids+=("$rpid")
wait_ping "$CP"
wait_ping "$RP"

# Items as redis-benchmark's __rand_int__ writes them (12 digits); the
# probes draw from 2 * ITEMS, so about half of them are present.
"$PY" - "$RP" "$ITEMS" <<'EOF2'
import sys, redis
r = redis.Redis(port=int(sys.argv[1]))
n = int(sys.argv[2])
r.execute_command("CF.RESERVE", "bench", n)
p = r.pipeline(transaction=False)
for i in range(0, n, 1000):
    p.execute_command("CF.INSERT", "bench", "ITEMS",
                      *[b"%012d" % j for j in range(i, min(i + 1000, n))])
p.execute()
EOF2
"$PY" scripts/migrate --from "127.0.0.1:$RP" --to "127.0.0.1:$CP" |
    tail -1
echo "RedisBloom: $(redis-cli -p "$RP" CF.INFO bench | paste -sd' ')"
echo "cuckood:    $(redis-cli -p "$CP" CF.INFO bench | paste -sd' ')"
echo "load average: $(cat /proc/loadavg)"

run() { bench_run "$1" "$2" "$3" "$4" "$((ITEMS * 2))" "${@:5}"; }

for p in 32 1; do
    n=$([[ $p == 1 ]] && echo "$N1" || echo "$N32")
    : >"$tmp/c.$p"
    : >"$tmp/r.$p"
    for _ in $(seq "$RUNS"); do
        run "$CP" "$cpid" "$p" "$n" CF.EXISTS bench __rand_int__ >>"$tmp/c.$p"
        run "$RP" "$rpid" "$p" "$n" CF.EXISTS bench __rand_int__ >>"$tmp/r.$p"
    done
    crps=$(cut -d' ' -f1 "$tmp/c.$p" | median)
    rrps=$(cut -d' ' -f1 "$tmp/r.$p" | median)
    ccpu=$(cut -d' ' -f2 "$tmp/c.$p" | median)
    rcpu=$(cut -d' ' -f2 "$tmp/r.$p" | median)
    printf -- '-P %-2s  cuckood %10.0f/s %6.3f us CPU   RedisBloom %10.0f/s %6.3f us CPU   rate ratio %.2fx  CPU ratio %.2fx\n' \
        "$p" "$crps" "$ccpu" "$rrps" "$rcpu" \
        "$(echo "$crps / $rrps" | bc -l)" "$(echo "$ccpu / $rcpu" | bc -l)"
done
echo "load average: $(cat /proc/loadavg)"
