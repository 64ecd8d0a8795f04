#!/usr/bin/env python3
"""The cache guard, end to end, in one command: a temporary PostgreSQL
with a table of users, cuckood beside it, the guard loaded from the table
with cuckood-load, then lookups with and without the guard.

    python3 examples/cache-guard/demo.py [--users 1000000]
        [--requests 20000] [--absent 0.9] [--cuckood build/server/cuckood]
        [--load build/tools/cuckood-load]

Run from the repository after `bash scripts/build.sh`; as root it runs
PostgreSQL as `nobody`. It prints what it does, then per mode the
requests, the database queries made and avoided, and p50/p99 latency.
bench/bench_guard.py runs the same and checks the targets.
"""

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import guard  # noqa: E402
from pgtemp import TempPostgres  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    """utime+stime of a process, in seconds (/proc/PID/stat)."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cuckood:
    """cuckood on a free port, in a temporary directory."""

    def __init__(self, binary):
        import redis
        self.dir = tempfile.mkdtemp(prefix="cache-guard-cuckood-")
        self.port = free_port()
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", self.dir, "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 20
        while True:
            try:
                self.client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError("cuckood did not start")
                time.sleep(0.05)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)


def workload(n_users, requests, absent, seed=1):
    """The ids to look up: absent of them odd (no such user), the rest a
    random existing user (even ids 2..2n)."""
    rng = random.Random(seed)
    out = []
    for _ in range(requests):
        if rng.random() < absent:
            out.append(2 * rng.randrange(0, n_users + 1) + 1)
        else:
            out.append(2 * rng.randrange(1, n_users + 1))
    return out


def measure(db, cf, ids, cuckood_pid, block=1000):
    """Both modes over the same ids, alternating blocks of `block`
    requests so that both see the same machine. Per mode: latencies (ns),
    requests, database queries, the database backend's and cuckood's CPU
    seconds."""
    with db.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        backend = cur.fetchone()[0]
    db.commit()
    modes = {True: guard.Guarded(db, cf), False: guard.Guarded(db, cf,
                                                               use_guard=False)}
    lat = {True: [], False: []}
    cpu_db = {True: 0.0, False: 0.0}
    cpu_cf = {True: 0.0, False: 0.0}
    for start in range(0, len(ids), block):
        for use in (True, False):
            g = modes[use]
            d0, c0 = cpu(backend), cpu(cuckood_pid)
            for uid in ids[start:start + block]:
                t0 = time.perf_counter_ns()
                g.get_user(uid)
                lat[use].append(time.perf_counter_ns() - t0)
            cpu_db[use] += cpu(backend) - d0
            cpu_cf[use] += cpu(cuckood_pid) - c0
    return {use: dict(lat=lat[use], requests=modes[use].requests,
                      queries=modes[use].db_queries, cpu_db=cpu_db[use],
                      cpu_cf=cpu_cf[use]) for use in (True, False)}


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def report(res):
    for use in (True, False):
        r = res[use]
        print("%-13s %6d requests, %6d database queries (%.1f%% avoided), "
              "p50 %6.1f us, p99 %6.1f us, database CPU %.1f us/request, "
              "cuckood CPU %.1f us/request" % (
                  "with guard" if use else "without guard", r["requests"],
                  r["queries"], 100.0 * (1 - r["queries"] / r["requests"]),
                  pct(r["lat"], 0.5) / 1e3, pct(r["lat"], 0.99) / 1e3,
                  r["cpu_db"] / r["requests"] * 1e6,
                  r["cpu_cf"] / r["requests"] * 1e6))


def setup(args):
    print("starting PostgreSQL (a temporary cluster) and cuckood")
    pg = TempPostgres().start()
    cf = Cuckood(args.cuckood)
    db = pg.connect()
    t0 = time.monotonic()
    guard.create_table(db, args.users)
    print("created users with %d rows in %.1f s" % (
        args.users, time.monotonic() - t0))
    t0 = time.monotonic()
    rc, err, _ = guard.rebuild(db, cf.client, args.load, cf.port)
    if rc != 0:
        raise RuntimeError(err)
    print("loaded the guard with cuckood-load --swap from COPY in %.1f s: "
          "%s" % (time.monotonic() - t0, err.strip()))
    return pg, cf, db


def parser():
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=1000000)
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--absent", type=float, default=0.9)
    ap.add_argument("--cuckood", default=os.environ.get("CUCKOOD_BIN") or
                    os.path.join(ROOT, "build", "server", "cuckood"))
    ap.add_argument("--load", default=guard.loader_path(ROOT))
    return ap


def main():
    args = parser().parse_args()
    pg, cf, db = setup(args)
    try:
        g = guard.Guarded(db, cf.client)
        print("get_user(42) = %r, get_user(43) = %r" % (
            g.get_user(42), g.get_user(43)))
        g.add_user(43, "new user")
        print("after add_user(43): get_user(43) = %r" % g.get_user(43))
        g.delete_user(43)
        print("after delete_user(43): get_user(43) = %r" % g.get_user(43))
        ids = workload(args.users, args.requests, args.absent)
        print("%d lookups, %.0f%% of them absent ids:" % (
            len(ids), 100 * args.absent))
        report(measure(db, cf.client, ids, cf.proc.pid))
    finally:
        db.close()
        cf.stop()
        pg.stop()


if __name__ == "__main__":
    main()
