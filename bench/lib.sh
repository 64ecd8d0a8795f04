# lib.sh - what the shell benchmarks share, sourced from the repository's
# root: free_port, wait_ping, cpu_ticks, median, bench_run, a scratch
# directory $tmp, and $pids, the servers a script starts; on exit they are
# stopped and $tmp is removed.

# The test support package's free_port (tests/support/proc.py).
free_port() {
    PYTHONPATH=tests python3 -c \
        'from support.proc import free_port; print(free_port())'
}

# Waits up to 10 s for the server on port $1 to answer PING with PONG;
# exits the script when it does not.
wait_ping() {
    local i
    for i in $(seq 100); do
        # -LOADING while the server loads its files: not up yet
        [[ $(redis-cli -p "$1" PING 2>/dev/null) == PONG ]] && return 0
        sleep 0.1
    done
    echo "server on port $1 did not start" >&2
    exit 1
}

# Ticks of CPU (utime + stime) the process $1 has used.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# The median of the numbers on stdin, one a line.
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

# bench_run PORT PID PIPELINE N RANGE COMMAND...: one redis-benchmark run
# (50 clients, -r RANGE) against the server PID on PORT; prints
# "requests/s microseconds-of-server-CPU-per-request".
bench_run() {
    local port=$1 pid=$2 p=$3 n=$4 range=$5
    shift 5
    local c0 c1 rps
    c0=$(cpu_ticks "$pid")
    rps=$(redis-benchmark -p "$port" -r "$range" -n "$n" -P "$p" -c 50 -q \
        "$@" 2>&1 | tr '\r' '\n' | grep -o '[0-9.]* requests per second' |
        tail -1 | cut -d' ' -f1)
    c1=$(cpu_ticks "$pid")
    echo "$rps $(echo "($c1 - $c0) * 1000000 / $(getconf CLK_TCK) / $n" | bc -l)"
}

tmp=$(mktemp -d)
pids=()
bench_cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap bench_cleanup EXIT
