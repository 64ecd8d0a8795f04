#!/usr/bin/env bash
# bench_tls.sh - TLS against plain text, cuckood beside Debian's redis-server,
# in one run with the same certificates.
#
# Makes a CA, a server and a client certificate with openssl, starts cuckood
# and redis-server each with a plain port and a TLS port (client
# certificates required on both), and runs redis-benchmark (50 clients,
# -P 1 and -P 32) for:
#   cuckood      PING, CF.EXISTS (filter of FILL items)   plain and --tls
#   redis-server PING                                      plain and --tls
# RUNS rounds, each measuring every case once (interleaved, so a busy
# moment of the machine hits all cases alike); the median and the range of
# the rounds are printed for requests/s and for the server's CPU per request
# (utime+stime of /proc/PID/stat around the run, in ns), then the ratios the
# targets are about:
#   CF.EXISTS over TLS / redis-server PING over TLS, requests/s
#                                                      (target >= 1.0)
#   the same in server CPU per request                 (target <= 1.0)
#   TLS/plain of cuckood against TLS/plain of redis-server (target >= 1.0,
#   i.e. TLS costs cuckood no more than it costs redis-server)
#   what TLS adds per request (CPU of tls - CPU of plain), each server
# The load average is printed with every round: CPU per request is the
# figure to trust on a busy machine, requests/s much less.
#
# Environment: RUNS=5, N1=100000, N32=1000000, CLIENTS=50, FILL=1000000,
# DEPTHS="1 32", BUILD_DIR=build.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-5}
N1=${N1:-100000}
N32=${N32:-1000000}
CLIENTS=${CLIENTS:-50}
FILL=${FILL:-1000000}
DEPTHS=${DEPTHS:-1 32}
TCK=$(getconf CLK_TCK)
BUILD=${BUILD_DIR:-build}
CUCKOOD=$BUILD/server/cuckood

for tool in redis-server redis-benchmark redis-cli openssl python3; do
    command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 1; }
done
[[ -x $CUCKOOD ]] || bash scripts/build.sh

. bench/lib.sh  # free_port, $tmp, $pids

python3 tests/support/tls_certs.py "$tmp/certs"
c=$tmp/certs
tls_srv=(--tls-cert-file "$c/server.crt" --tls-key-file "$c/server.key"
         --tls-ca-cert-file "$c/ca.crt" --tls-auth-clients yes)
tls_cli=(--tls --cacert "$c/ca.crt" --cert "$c/client.crt"
         --key "$c/client.key")

cp=$(free_port); ct=$(free_port); rp=$(free_port); rt=$(free_port)
mkdir -p "$tmp/c" "$tmp/r"
"$CUCKOOD" --port "$cp" --tls-port "$ct" --bind 127.0.0.1 --dir "$tmp/c" \
    --save "" "${tls_srv[@]}" >"$tmp/c/log" 2>&1 &
cpid=$!
pids+=($cpid)
redis-server --port "$rp" --tls-port "$rt" --bind 127.0.0.1 --dir "$tmp/r" \
    --save "" --appendonly no "${tls_srv[@]}" >"$tmp/r/log" 2>&1 &
rpid=$!
pids+=($rpid)
for p in "$cp" "$rp"; do
    for _ in $(seq 100); do
        redis-cli -p "$p" PING 2>/dev/null | grep -q PONG && break
        sleep 0.1
    done
done
redis-cli -p "$rt" "${tls_cli[@]}" PING | grep -q PONG ||
    { echo "redis-server does not answer over TLS" >&2; cat "$tmp/r/log"; exit 1; }
redis-cli -p "$ct" "${tls_cli[@]}" PING | grep -q PONG ||
    { echo "cuckood does not answer over TLS" >&2; cat "$tmp/c/log"; exit 1; }

redis-cli -p "$cp" CF.RESERVE bench "$FILL" >/dev/null
redis-benchmark -p "$cp" -c "$CLIENTS" -P 64 -n "$FILL" -r "$FILL" -q \
    CF.ADD bench __rand_int__ >/dev/null

# rps PID PORT TLS(0/1) DEPTH N command...: "requests/s ns-of-CPU/request"
# of the server PID
rps() {
    local pid=$1 port=$2 tls=$3 depth=$4 n=$5
    shift 5
    local extra=() c0 c1 r
    [[ $tls == 1 ]] && extra=("${tls_cli[@]}")
    c0=$(cpu_ticks "$pid")
    r=$(redis-benchmark -p "$port" "${extra[@]}" -c "$CLIENTS" -P "$depth" \
        -n "$n" -r "$FILL" -q "$@" 2>/dev/null |
        tr '\r' '\n' | awk '/requests per second/ {
            for (i = 1; i <= NF; i++)
                if ($(i+1) == "requests") { print $i; exit } }')
    c1=$(cpu_ticks "$pid")
    echo "$r $(( (c1 - c0) * 1000000000 / TCK / n ))"
}

cases=(cuckood-PING-plain cuckood-PING-tls cuckood-EXISTS-plain
       cuckood-EXISTS-tls redis-PING-plain redis-PING-tls)
declare -A res cpu
loads=""
for depth in $DEPTHS; do
    n=$N1; [[ $depth == 32 ]] && n=$N32
    for run in $(seq "$RUNS"); do
        for cs in "${cases[@]}"; do
            case $cs in
            cuckood-PING-plain) v=$(rps "$cpid" "$cp" 0 "$depth" "$n" PING) ;;
            cuckood-PING-tls) v=$(rps "$cpid" "$ct" 1 "$depth" "$n" PING) ;;
            cuckood-EXISTS-plain)
                v=$(rps "$cpid" "$cp" 0 "$depth" "$n" \
                    CF.EXISTS bench __rand_int__) ;;
            cuckood-EXISTS-tls)
                v=$(rps "$cpid" "$ct" 1 "$depth" "$n" \
                    CF.EXISTS bench __rand_int__) ;;
            redis-PING-plain) v=$(rps "$rpid" "$rp" 0 "$depth" "$n" PING) ;;
            redis-PING-tls) v=$(rps "$rpid" "$rt" 1 "$depth" "$n" PING) ;;
            esac
            read -r r ns <<<"$v"
            res[$depth,$cs]+="$r "
            cpu[$depth,$cs]+="$ns "
        done
        la=$(cut -d' ' -f1 /proc/loadavg)
        loads+="$la "
        echo "-P $depth round $run done, load average $la" >&2
    done
done

# median / min / max of a list of numbers
stats() { tr ' ' '\n' | grep . | sort -g | awk '{ a[NR] = $1 }
    END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
          printf "%.0f %.0f %.0f", m, a[1], a[NR] }'; }
# per-round ratio a/b: median, min, max
ratio() { paste <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) |
    awk '{ print $1 / $2 }' | sort -g | awk '{ a[NR] = $1 }
    END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
          printf "%.2f (%.2f-%.2f)", m, a[1], a[NR] }'; }

# per-round difference a-b: median, min, max
delta() { paste <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) |
    awk '{ print $1 - $2 }' | sort -g | awk '{ a[NR] = $1 }
    END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2;
          printf "%.0f (%.0f-%.0f)", m, a[1], a[NR] }'; }

echo "redis-benchmark -c $CLIENTS, $RUNS rounds, load average per round: $loads"
for what in res cpu; do
    if [[ $what == res ]]; then
        echo "requests/s: median (min-max)"
    else
        echo "server CPU per request, ns: median (min-max)"
    fi
    printf "%-22s" case
    for depth in $DEPTHS; do printf " %-28s" "-P $depth"; done
    echo
    for cs in "${cases[@]}"; do
        printf "%-22s" "$cs"
        for depth in $DEPTHS; do
            if [[ $what == res ]]; then v=${res[$depth,$cs]}; else v=${cpu[$depth,$cs]}; fi
            read -r m lo hi <<<"$(stats <<<"$v")"
            printf " %-28s" "$m ($lo-$hi)"
        done
        echo
    done
    echo
done
echo "ratios per round: median (min-max)"
for depth in $DEPTHS; do
    echo "-P $depth:"
    echo "  cuckood CF.EXISTS tls / redis PING tls:      $(ratio "${res[$depth,cuckood-EXISTS-tls]}" "${res[$depth,redis-PING-tls]}")"
    echo "  the same in CPU per request (target <= 1):   $(ratio "${cpu[$depth,cuckood-EXISTS-tls]}" "${cpu[$depth,redis-PING-tls]}")"
    echo "  cuckood PING tls / redis PING tls, CPU:      $(ratio "${cpu[$depth,cuckood-PING-tls]}" "${cpu[$depth,redis-PING-tls]}")"
    echo "  CPU ns TLS adds: cuckood CF.EXISTS          $(delta "${cpu[$depth,cuckood-EXISTS-tls]}" "${cpu[$depth,cuckood-EXISTS-plain]}")"
    echo "                   cuckood PING               $(delta "${cpu[$depth,cuckood-PING-tls]}" "${cpu[$depth,cuckood-PING-plain]}")"
    echo "                   redis PING                 $(delta "${cpu[$depth,redis-PING-tls]}" "${cpu[$depth,redis-PING-plain]}")"
    echo "  cuckood CF.EXISTS tls/plain:                 $(ratio "${res[$depth,cuckood-EXISTS-tls]}" "${res[$depth,cuckood-EXISTS-plain]}")"
    echo "  cuckood PING tls/plain:                      $(ratio "${res[$depth,cuckood-PING-tls]}" "${res[$depth,cuckood-PING-plain]}")"
    echo "  redis PING tls/plain:                        $(ratio "${res[$depth,redis-PING-tls]}" "${res[$depth,redis-PING-plain]}")"
done

# The TLS layer alone, in one process (no sockets, no scheduler): the
# figure to compare two builds by on a busy machine.
if [[ -x $BUILD/bench/bench_tls_path ]]; then
    echo
    "$BUILD/bench/bench_tls_path" "$c"
fi
