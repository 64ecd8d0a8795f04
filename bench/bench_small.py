#!/usr/bin/env python3
"""Many small filters: what a key costs in memory and on disk, and how long
saving, loading, scanning and deleting a keyspace of them takes, cuckood
beside redis-server holding a plain Redis set per key (the user's
alternative), in one run.

    python3 bench/bench_small.py [--bin build/server/cuckood]
        [--small 1000000] [--big 100000] [--big-cap 10000]
        [--redis-big 2000] [--dir DIR]

Workloads (each on a fresh server):
  small  --small keys `tenant:N` of capacity 100 with one item each
         (CF.RESERVE + CF.ADD; redis: SADD of the same item)
  big    --big keys of capacity --big-cap, full: one filter is filled with
         --big-cap items, dumped with CF.SCANDUMP and loaded into every key
         with CF.LOADCHUNK (redis: one set of the same items, DUMP, RESTORE
         into --redis-big keys; a set of 10,000 members takes ~0.7 MB, so
         100,000 of them would not fit this machine: per-key figures)

Figures per workload and server: used_memory and RSS growth per key, SAVE
time (the client's wall time of SAVE) and snapshot bytes per key, SCAN over
all keys (COUNT 1000), DEL of every key (pipelined DELs of 1000 keys) and
used_memory / RSS after it against the start, then the start-up load time
of the saved file (the server's "DB loaded from disk" log line).
Targets (what a key of a many-tenant keyspace may cost): small keys <= 250 B
each of used_memory and of RSS, start-up load of the small keyspace < 2 s,
memory back within 5% of the start after the DEL. No RedisBloom module is installed here, so there is
no RedisBloom column.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the support package
from support.proc import Daemon, RedisServer  # noqa: E402

BATCH = 10000  # commands per pipelined write (RawConn.many's default)


class Server:
    def __init__(self, kind, binary, d):
        self.kind, self.binary, self.d = kind, binary, d
        self.dump = os.path.join(
            d, "dump.cuckoo" if kind == "cuckood" else "dump.rdb")
        self.srv = None

    def start(self):
        """Starts it on a free port, loading what d holds."""
        if self.kind == "redis":
            self.srv = RedisServer("--protected-mode", "no",
                                   binary=self.binary, dir=self.d,
                                   start_timeout=600)
        else:
            self.srv = Daemon("--save", "", binary=self.binary, dir=self.d,
                              start_timeout=600)
        self.c = self.srv.start().raw(nodelay=True)
        return self

    def stop(self):
        self.srv.shutdown(timeout=120)
        self.srv.cleanup()

    def used(self):
        return int(self.c.info("memory")["used_memory"])

    def rss(self):
        with open("/proc/%d/status" % self.srv.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def load_seconds(self):
        found = re.findall(r"DB loaded from disk: ([\d.]+) seconds",
                           self.srv.log_text())
        return float(found[-1]) if found else float("nan")


def fill_small(s, n):
    if s.kind == "cuckood":
        s.c.many(c for i in range(n) for c in (
            ("CF.RESERVE", "tenant:%d" % i, 100),
            ("CF.ADD", "tenant:%d" % i, "item:%d" % i)))
    else:
        s.c.many(("SADD", "tenant:%d" % i, "item:%d" % i) for i in range(n))


def fill_big(s, n, cap):
    items = ["item:%d" % i for i in range(cap)]
    if s.kind == "cuckood":
        s.c.call("CF.RESERVE", "tpl", cap)
        for i in range(0, cap, 1000):
            s.c.call("CF.INSERT", "tpl", "NOCREATE", "ITEMS", *items[i:i + 1000])
        st = s.c.call("CF.INFO", "tpl")
        st = dict(zip(st[0::2], st[1::2]))
        assert st[b"Number of filters"] == 1, st
        chunks, it = [], 0
        while True:
            it, data = s.c.call("CF.SCANDUMP", "tpl", it)
            if it == 0:
                break
            chunks.append((it, data))
        s.c.call("DEL", "tpl")
        s.c.many(("CF.LOADCHUNK", "big:%d" % i, it, data)
                 for i in range(n) for it, data in chunks)
    else:
        for i in range(0, cap, 1000):
            s.c.call("SADD", "tpl", *items[i:i + 1000])
        payload = s.c.call("DUMP", "tpl")
        s.c.call("DEL", "tpl")
        s.c.many(("RESTORE", "big:%d" % i, 0, payload) for i in range(n))


def scan_all(s):
    seen, cursor = 0, b"0"
    while True:
        cursor, keys = s.c.call("SCAN", cursor, "COUNT", 1000)
        seen += len(keys)
        if cursor in (b"0", "0"):
            return seen


def delete_all(s, prefix, n):
    s.c.many(("DEL", *["%s%d" % (prefix, k)
                       for k in range(i, min(n, i + 1000))])
             for i in range(0, n, 1000))


def measure(kind, binary, workload, n, cap, top):
    d = tempfile.mkdtemp(prefix="bench-small-%s-" % kind, dir=top)
    s = Server(kind, binary, d).start()
    r = {"keys": n}
    # Warm-up: every command the run uses, in batches as large as the run's,
    # so that the code and connection buffers they fault in are in the
    # start figures, not counted as memory kept after the DEL.
    if workload == "small":
        fill_small(s, 2 * BATCH)
        delete_all(s, "tenant:", 2 * BATCH)
    else:
        fill_big(s, 10, cap)
        delete_all(s, "big:", 10)
    s.c.call("SAVE")
    scan_all(s)
    time.sleep(0.2)
    m0, r0 = s.used(), s.rss()
    t0 = time.perf_counter()
    if workload == "small":
        fill_small(s, n)
        prefix = "tenant:"
    else:
        fill_big(s, n, cap)
        prefix = "big:"
    r["fill_s"] = time.perf_counter() - t0
    assert int(s.c.call("DBSIZE")) == n
    m1, r1 = s.used(), s.rss()
    r["used_key"] = (m1 - m0) / n
    r["rss_key"] = (r1 - r0) / n
    t0 = time.perf_counter()
    s.c.call("SAVE")
    r["save_s"] = time.perf_counter() - t0
    r["file_key"] = os.path.getsize(s.dump) / n
    t0 = time.perf_counter()
    seen = scan_all(s)
    r["scan_s"] = time.perf_counter() - t0
    assert seen >= n, (seen, n)
    t0 = time.perf_counter()
    delete_all(s, prefix, n)
    r["del_s"] = time.perf_counter() - t0
    assert int(s.c.call("DBSIZE")) == 0
    time.sleep(0.5)
    m2, r2 = s.used(), s.rss()
    r["used_start"], r["used_after"] = m0, m2
    r["rss_start"], r["rss_after"] = r0, r2
    s.stop()
    s.start()
    r["load_s"] = s.load_seconds()
    assert int(s.c.call("DBSIZE")) == n
    s.stop()
    shutil.rmtree(d, ignore_errors=True)
    return r


def verdict(ok):
    return "met" if ok else "MISSED"


def report(workload, cf, rd, cap):
    print("\n== %s: cuckood %d keys, redis %d keys (capacity %d)"
          % (workload, cf["keys"], rd["keys"], cap))
    small = workload == "small"
    rows = [
        ("used_memory growth per key (B)", "used_key", "%.1f",
         (250, "<=") if small else None),
        ("RSS growth per key (B)", "rss_key", "%.1f",
         (250, "<=") if small else None),
        ("snapshot bytes per key", "file_key", "%.1f", None),
        ("fill time (s)", "fill_s", "%.2f", None),
        ("SAVE time (s)", "save_s", "%.2f", None),
        ("start-up load time (s)", "load_s", "%.3f",
         (2.0, "<") if small else None),
        ("SCAN over all keys (s)", "scan_s", "%.2f", None),
        ("DEL of all keys (s)", "del_s", "%.2f", None),
    ]
    missed = []
    print("  %-34s %14s %14s   %s" % ("figure", "cuckood", "redis set",
                                      "target (cuckood)"))
    for name, key, fmt, target in rows:
        a, b = fmt % cf[key], fmt % rd[key]
        if target is None:
            t = "reported"
        else:
            lim, op = target
            ok = cf[key] <= lim if op == "<=" else cf[key] < lim
            t = "%s %s: %s" % (op, lim, verdict(ok))
            if not ok:
                missed.append(name)
        print("  %-34s %14s %14s   %s" % (name, a, b, t))
    for what in ("used", "rss"):
        s0, s1 = cf[what + "_start"], cf[what + "_after"]
        rs0, rs1 = rd[what + "_start"], rd[what + "_after"]
        # Back to the start or below it (the start holds memory of the
        # warm-up that a trim may return too): not above it by 5%.
        ok = s1 <= 1.05 * s0
        if not ok:
            missed.append(what + " after DEL")
        print("  %-34s %14s %14s   <= start + 5%%: %s"
              % ("%s start -> after DEL (B)" % what,
                 "%d->%d" % (s0, s1), "%d->%d" % (rs0, rs1), verdict(ok)))
    return missed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "server",
                                                  "cuckood"))
    ap.add_argument("--redis", default=shutil.which("redis-server"))
    ap.add_argument("--small", type=int, default=1000000)
    ap.add_argument("--big", type=int, default=100000)
    ap.add_argument("--big-cap", type=int, default=10000)
    ap.add_argument("--redis-big", type=int, default=2000)
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    if not a.redis:
        sys.exit("redis-server not found (Debian: apt-get install redis-server)")
    ver = subprocess.run([a.redis, "--version"], capture_output=True,
                         text=True).stdout.strip()
    print("cuckood: %s (glibc malloc)" % a.bin)
    print("redis:   %s" % ver)
    print("RedisBloom: no module installed on this machine, not measured")
    print("load average: %s" % open("/proc/loadavg").read().strip())
    missed = []
    cf = measure("cuckood", a.bin, "small", a.small, 100, a.dir)
    rd = measure("redis", a.redis, "small", a.small, 100, a.dir)
    missed += report("small", cf, rd, 100)
    if a.big > 0:
        cf = measure("cuckood", a.bin, "big", a.big, a.big_cap, a.dir)
        rd = measure("redis", a.redis, "big", a.redis_big, a.big_cap, a.dir)
        missed += ["big " + m for m in report("big", cf, rd, a.big_cap)]
    print("\nload average: %s" % open("/proc/loadavg").read().strip())
    print("missed: " + ", ".join(missed) if missed else "all targets met")


if __name__ == "__main__":
    main()
