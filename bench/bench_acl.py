#!/usr/bin/env python3
"""bench_acl.py - what ACL users cost, measured in one run:

1. Server CPU per CF.EXISTS, pipelined 32 deep, as a user with
   `~seen:* +@read` (one key pattern) and as one with 16 key patterns (the
   matching one last), against the same commands as `default` (nopass, all
   keys) on the same cuckood; rounds alternate between the three clients.
   Targets: <= 1.02x and <= 1.05x.
2. AUTH of --auths connections in a row (connect, AUTH user pass, close),
   against cuckood and against redis-server: wall time and server CPU.
   Target: no slower than redis-server.

Server CPU is utime+stime of the server process (/proc/PID/stat) around
each round.

    python3 bench/bench_acl.py [--bin build/server/cuckood] [--rounds 10]
        [--per-round 200000] [--auths 10000]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_multi import cpu_ticks, enc  # noqa: E402

DEPTH = 32
PER_WRITE = 8


def recv_exact(sock, n):
    got = bytearray()
    while len(got) < n:
        chunk = sock.recv(min(1 << 20, n - len(got)))
        if not chunk:
            raise ConnectionError("server closed")
        got += chunk
    return bytes(got)


def command(sock, *args):
    sock.sendall(enc(*args))
    data = sock.recv(65536)
    if data.startswith(b"-"):
        raise RuntimeError(data.decode().strip())
    return data


def connect(port, user=None, password=None):
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if user is not None:
        assert command(s, "AUTH", user, password) == b"+OK\r\n"
    return s


def start(argv, port):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            with socket.create_connection(("127.0.0.1", port), 0.2) as s:
                s.sendall(enc("PING"))
                if s.recv(64) == b"+PONG\r\n":
                    return proc
        except OSError:
            pass
        time.sleep(0.05)
    proc.kill()
    raise SystemExit("server did not start: %r" % argv)


def setup_users(sock):
    command(sock, "ACL", "SETUSER", "one", "on", ">pw", "~seen:*", "+@read")
    pats = ["~p%d:*" % i for i in range(15)] + ["~seen:*"]
    command(sock, "ACL", "SETUSER", "sixteen", "on", ">pw", *pats, "+@read")


def exists_round(sock, n, batch):
    """n CF.EXISTS, DEPTH per group, PER_WRITE groups per write."""
    per_write = DEPTH * PER_WRITE
    for _ in range(n // per_write):
        sock.sendall(batch)
        recv_exact(sock, 4 * per_write)  # ":0\r\n" or ":1\r\n"


def bench_exists(args):
    port = free_port()
    d = tempfile.mkdtemp(prefix="bench-acl-")
    proc = start([args.bin, "--port", str(port), "--save", "", "--dir", d],
                 port)
    try:
        admin = connect(port)
        command(admin, "CF.RESERVE", "seen:k", 1000000)
        for i in range(0, 100000, 1000):
            admin.sendall(b"".join(enc("CF.ADD", "seen:k", "i%d" % j)
                                   for j in range(i, i + 1000)))
            recv_exact(admin, 4 * 1000)
        setup_users(admin)
        clients = {"default": connect(port),
                   "one pattern": connect(port, "one", "pw"),
                   "16 patterns": connect(port, "sixteen", "pw")}
        batch = b"".join(enc("CF.EXISTS", "seen:k", "i%d" % (j * 37))
                         for j in range(DEPTH * PER_WRITE))
        ticks = {k: 0 for k in clients}
        cmds = {k: 0 for k in clients}
        for _ in range(args.rounds):
            for name, sock in clients.items():
                before = cpu_ticks(proc.pid)
                exists_round(sock, args.per_round, batch)
                ticks[name] += cpu_ticks(proc.pid) - before
                cmds[name] += args.per_round
        hz = os.sysconf("SC_CLK_TCK")
        base = ticks["default"] / cmds["default"]
        print("CF.EXISTS -P %d, %d rounds x %d commands per client" %
              (DEPTH, args.rounds, args.per_round))
        for name in clients:
            per = ticks[name] / cmds[name]
            print("  %-12s %7.3f us CPU/command  %.3fx default" %
                  (name, per / hz * 1e6, per / base if base else 0))
    finally:
        proc.kill()
        proc.wait()


def auth_chunk(port, n):
    msg = enc("AUTH", "one", "pw")
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(msg)
        if s.recv(64) != b"+OK\r\n":
            raise RuntimeError("AUTH failed")
        s.close()


def bench_auth(args):
    """Both servers run at once; chunks of connections alternate between
    them, so that the machine's load falls on both alike."""
    hz = os.sysconf("SC_CLK_TCK")
    d = tempfile.mkdtemp(prefix="bench-acl-")
    p1, p2 = free_port(), free_port()
    servers = {
        "cuckood": (start([args.bin, "--port", str(p1), "--save", "",
                           "--dir", d], p1), p1),
        "redis-server": (start(["redis-server", "--port", str(p2), "--save",
                                "", "--dir", d, "--appendonly", "no"], p2),
                         p2),
    }
    try:
        wall = {k: 0.0 for k in servers}
        ticks = {k: 0 for k in servers}
        for proc, port in servers.values():
            setup_users(connect(port))
        chunk = 500
        for _ in range(max(1, args.auths // chunk)):
            for name, (proc, port) in servers.items():
                before = cpu_ticks(proc.pid)
                t0 = time.perf_counter()
                auth_chunk(port, chunk)
                wall[name] += time.perf_counter() - t0
                ticks[name] += cpu_ticks(proc.pid) - before
        n = max(1, args.auths // chunk) * chunk
        print("AUTH of %d connections in a row (chunks of %d alternating)" %
              (n, chunk))
        for name in servers:
            print("  %-12s %6.2f s wall  %6.2f s server CPU  %5.1f us "
                  "CPU/auth" % (name, wall[name], ticks[name] / hz,
                                ticks[name] / hz / n * 1e6))
        print("  cuckood/redis-server: wall %.2fx, server CPU %.2fx" %
              (wall["cuckood"] / wall["redis-server"],
               ticks["cuckood"] / ticks["redis-server"]
               if ticks["redis-server"] else 0))
    finally:
        for proc, _ in servers.values():
            proc.kill()
            proc.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/server/cuckood")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--per-round", type=int, default=200000)
    ap.add_argument("--auths", type=int, default=10000)
    args = ap.parse_args()
    args.per_round -= args.per_round % (DEPTH * PER_WRITE)
    bench_exists(args)
    bench_auth(args)


if __name__ == "__main__":
    main()
