#!/usr/bin/env bash
# bench_keys.sh - looking keys up in a large keyspace: CF.EXISTS over
# random keys of KEYS small filters (capacity 100) on cuckood, against
# SISMEMBER over random keys of KEYS one-member sets on Debian's
# redis-server, in the same run. What it measures is the key table and the
# first touch of a key's memory (the filter's own lookup is bench_cf's):
# requests per second (redis-benchmark, 50 clients, -P 32 and -P 1) and the
# server's CPU time per request (from /proc), RUNS rounds alternating the
# two servers, median reported.
#
# Environment: KEYS=1000000, RUNS=3, N32=2000000, N1=200000,
# BUILD_DIR=build.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

KEYS=${KEYS:-1000000}
RUNS=${RUNS:-3}
N32=${N32:-2000000}
N1=${N1:-200000}
CUCKOOD=${BUILD_DIR:-build}/server/cuckood
[[ -x $CUCKOOD ]] || bash scripts/build.sh
command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null ||
    { echo "bench_keys: needs redis-server and redis-benchmark" >&2; exit 1; }

# Keys as redis-benchmark's __rand_int__ writes them: 12 digits.
python3 - "$KEYS" "$tmp" <<'EOF'
import sys
n, d = int(sys.argv[1]), sys.argv[2]
with open(d + "/cf.resp", "wb") as a, open(d + "/set.resp", "wb") as b:
    for i in range(n):
        k = b"k:%012d" % i
        a.write(b"*3\r\n$10\r\nCF.RESERVE\r\n$%d\r\n%s\r\n$3\r\n100\r\n"
                % (len(k), k))
        a.write(b"*3\r\n$6\r\nCF.ADD\r\n$%d\r\n%s\r\n$1\r\nx\r\n" % (len(k), k))
        b.write(b"*3\r\n$4\r\nSADD\r\n$%d\r\n%s\r\n$1\r\nx\r\n" % (len(k), k))
EOF

CP=$(free_port)
RP=$(free_port)
mkdir -p "$tmp/c" "$tmp/r"
"$CUCKOOD" --port "$CP" --bind 127.0.0.1 --save "" --dir "$tmp/c" \
    >"$tmp/c/log" 2>&1 &
cpid=$!
pids+=("$cpid")
redis-server --port "$RP" --bind 127.0.0.1 --save "" --appendonly no \
    --dir "$tmp/r" >"$tmp/r/log" 2>&1 &
rpid=$!
pids+=("$rpid")
wait_ping "$CP"
wait_ping "$RP"
redis-cli -p "$CP" --pipe <"$tmp/cf.resp" >/dev/null
redis-cli -p "$RP" --pipe <"$tmp/set.resp" >/dev/null
echo "keys: cuckood $(redis-cli -p "$CP" dbsize), redis $(redis-cli -p "$RP" dbsize)"
echo "load average: $(cat /proc/loadavg)"

run() { bench_run "$1" "$2" "$3" "$4" "$KEYS" "${@:5}"; }

for p in 32 1; do
    n=$([[ $p == 1 ]] && echo "$N1" || echo "$N32")
    : >"$tmp/c.$p"
    : >"$tmp/r.$p"
    for _ in $(seq "$RUNS"); do
        run "$CP" "$cpid" "$p" "$n" CF.EXISTS k:__rand_int__ x >>"$tmp/c.$p"
        run "$RP" "$rpid" "$p" "$n" SISMEMBER k:__rand_int__ x >>"$tmp/r.$p"
    done
    crps=$(cut -d' ' -f1 "$tmp/c.$p" | median)
    rrps=$(cut -d' ' -f1 "$tmp/r.$p" | median)
    ccpu=$(cut -d' ' -f2 "$tmp/c.$p" | median)
    rcpu=$(cut -d' ' -f2 "$tmp/r.$p" | median)
    printf -- '-P %-2s  CF.EXISTS %10.0f/s %6.3f us CPU   SISMEMBER %10.0f/s %6.3f us CPU   rate ratio %.2fx  CPU ratio %.2fx\n' \
        "$p" "$crps" "$ccpu" "$rrps" "$rcpu" \
        "$(echo "$crps / $rrps" | bc -l)" "$(echo "$ccpu / $rcpu" | bc -l)"
done
echo "load average: $(cat /proc/loadavg)"
