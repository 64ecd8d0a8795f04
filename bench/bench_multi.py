#!/usr/bin/env python3
"""bench_multi.py - the server CPU a transaction costs: EXEC of 32
CF.EXISTS (MULTI, 32 queued, EXEC) against the same 32 CF.EXISTS in a
plain pipeline, on one cuckood, in the same run, rounds alternating.

Server CPU is utime+stime of the cuckood process (/proc/PID/stat) around
each round; the figure is CPU per CF.EXISTS, and the line "target" compares
the transaction's to the pipeline's (<= 1.1x).

    python3 bench/bench_multi.py [--bin build/server/cuckood] [--rounds 10]
        [--batches 400] [--fill 500000]

Each round sends --batches groups of 32 commands (one group per write of
8 groups) and reads the replies back, whose sizes are known in advance.
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from support.proc import free_port  # noqa: E402

GROUP = 32
PER_WRITE = 8


def enc(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def recv_exact(sock, n):
    got = 0
    while got < n:
        chunk = sock.recv(min(1 << 20, n - got))
        if not chunk:
            raise ConnectionError("server closed")
        got += len(chunk)


def run(sock, pid, payload, reply_len, batches):
    writes = batches // PER_WRITE
    data = payload * PER_WRITE
    before = cpu_ticks(pid)
    t0 = time.monotonic()
    for _ in range(writes):
        sock.sendall(data)
        recv_exact(sock, reply_len * PER_WRITE)
    took = time.monotonic() - t0
    return cpu_ticks(pid) - before, took, writes * PER_WRITE * GROUP


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("BUILD_DIR", "build"), "server", "cuckood"))
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--batches", type=int, default=4000)
    ap.add_argument("--fill", type=int, default=500000)
    ap.add_argument("--redis", action="store_true",
                    help="measure redis-server with the module instead (the "
                         "same two sides, for reference)")
    ap.add_argument("--only", choices=("plain", "exec"), default=None,
                    help="run one side alone (for profiling)")
    ap.add_argument("--perf", default="",
                    help="perf record the server into this file")
    args = ap.parse_args()

    port = free_port()
    tmp = tempfile.mkdtemp()
    argv = [args.bin, "--port", str(port), "--save", "", "--dir", tmp]
    if args.redis:
        module = os.path.abspath(os.path.join(
            os.path.dirname(args.bin), "..", "module", "cuckoo.so"))
        argv = ["redis-server", "--port", str(port), "--save", "",
                "--appendonly", "no", "--dir", tmp, "--loadmodule", module]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                sock = socket.create_connection(("127.0.0.1", port))
                break
            except OSError:
                time.sleep(0.1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.sendall(enc("CF.RESERVE", "f", args.fill * 2))
        recv_exact(sock, 5)
        for i in range(0, args.fill, 10000):
            n = min(10000, args.fill - i)
            sock.sendall(b"".join(enc("CF.ADD", "f", "i%d" % j)
                                  for j in range(i, i + n)))
            recv_exact(sock, 4 * n)
        # Half the lookups hit, half miss; every reply is 4 bytes.
        items = ["i%d" % (j * 7919 % args.fill) if j % 2 else "m%d" % j
                 for j in range(GROUP)]
        cmds = b"".join(enc("CF.EXISTS", "f", it) for it in items)
        plain = cmds
        plain_len = 4 * GROUP
        txn = enc("MULTI") + cmds + enc("EXEC")
        txn_len = 5 + 9 * GROUP + len(b"*%d\r\n" % GROUP) + 4 * GROUP
        # Warm up both paths.
        run(sock, proc.pid, plain, plain_len, 200)
        run(sock, proc.pid, txn, txn_len, 200)
        perf = None
        if args.perf:
            perf = subprocess.Popen(["perf", "record", "-g", "-o", args.perf,
                                     "-p", str(proc.pid)],
                                    stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        tot = {"plain": [0, 0.0, 0], "exec": [0, 0.0, 0]}
        per_round = []
        for r in range(args.rounds):
            order = [("plain", plain, plain_len), ("exec", txn, txn_len)]
            if r % 2:
                order.reverse()
            if args.only:
                order = [o for o in order if o[0] == args.only]
            got = {}
            for name, payload, rlen in order:
                ticks, took, n = run(sock, proc.pid, payload, rlen,
                                     args.batches)
                t = tot[name]
                t[0] += ticks
                t[1] += took
                t[2] += n
                got[name] = ticks / n
            if not args.only and got["plain"] > 0:
                per_round.append(got["exec"] / got["plain"])
        if perf is not None:
            perf.send_signal(2)
            perf.wait()
        hz = os.sysconf("SC_CLK_TCK")
        ns = {}
        for name, (ticks, took, n) in tot.items():
            if n == 0:
                continue
            ns[name] = ticks * 1e9 / hz / n
            print("%-5s %d CF.EXISTS: server CPU %.2f s = %.1f ns each; "
                  "wall %.2f s" % (name, n, ticks / hz, ns[name], took))
        if args.only:
            return
        ratio = ns["exec"] / ns["plain"]
        per_round.sort()
        spread = ("%.2f-%.2f, median %.2f"
                  % (per_round[0], per_round[-1],
                     per_round[len(per_round) // 2]) if per_round else "n/a")
        print("target EXEC of %d CF.EXISTS / plain pipeline, server CPU per "
              "command %.2fx (per round %s) <= 1.1 %s"
              % (GROUP, ratio, spread, "met" if ratio <= 1.1 else "MISSED"))
    finally:
        proc.terminate()
        proc.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
