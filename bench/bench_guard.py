#!/usr/bin/env python3
"""The cache guard in front of a real PostgreSQL (examples/cache-guard):
database queries avoided and request latency with and without the guard,
in one run.

    python3 bench/bench_guard.py [--users 1000000] [--requests 50000]
        [--absent 0.9]

A temporary PostgreSQL cluster (as `nobody` when run as root) with a
table of --users users, cuckood, the guard loaded from the table by
`cuckood-load --swap` from COPY; then --requests lookups by id, a share
--absent of them ids no user has, sent through the example's get_user()
with the guard and without it, alternating blocks of 1000 over the same
ids so that both modes meet the same machine. Figures per mode: queries
made and avoided, p50/p99 latency of one request (client wall time), the
database backend's and cuckood's CPU per request (utime+stime from
/proc/PID/stat around each block). The reference is the unguarded run:
latencies and database CPU are given as ratios against it. Target: at 90%
absent lookups, queries avoided >= 89% of all requests.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples", "cache-guard"))
import demo  # noqa: E402


def main():
    ap = demo.parser()
    ap.set_defaults(requests=50000)
    args = ap.parse_args()
    print("load average %s" % " ".join(open("/proc/loadavg").read()
                                        .split()[:3]))
    pg, cf, db = demo.setup(args)
    try:
        ids = demo.workload(args.users, args.requests, args.absent)
        res = demo.measure(db, cf.client, ids, cf.proc.pid)
    finally:
        db.close()
        cf.stop()
        pg.stop()
    demo.report(res)
    g, n = res[True], res[False]
    avoided = 1 - g["queries"] / g["requests"]
    for p in (0.5, 0.99):
        print("p%d with / without the guard: %.2fx" % (
            p * 100, demo.pct(g["lat"], p) / demo.pct(n["lat"], p)))
    print("database CPU per request with / without the guard: %.2fx" % (
        g["cpu_db"] / n["cpu_db"] if n["cpu_db"] else float("nan")))
    print("target guard avoided %.1f%% >= 89%% %s" % (
        avoided * 100, "met" if avoided >= 0.89 else "MISSED"))


if __name__ == "__main__":
    main()
