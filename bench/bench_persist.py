#!/usr/bin/env python3
"""Persistence benchmark: save and load throughput of a keyspace of about
1 GB of filters against plain file I/O of the same size in the same
directory and run, and PING latency while a BGSAVE of it runs.

    python3 bench/bench_persist.py [--bin build/server/cuckood]
                                   [--dir DIR] [--mb 1024]

Figures:
  save   SAVE of the keyspace (the server's own timing: write, fsync,
         rename, directory fsync) vs dd if=/dev/zero bs=1M conv=fsync
  load   start-up load (the "DB loaded from disk" log line: map, checksum,
         rebuild every filter) vs `cat file > /dev/null` and vs reading the
         file into a fresh buffer of its size; the file is warm in the page
         cache for all three
  ping   p50/p99/max round trip of PING, one connection, back to back, while
         idle and while a BGSAVE runs (fork + the child writing the file)

Targets: save and load >= 70% of the plain rate; p99 PING under BGSAVE < 2 ms.
Needs only python3; the filters are filled with CF.INSERT to a few per cent
of their capacity, which touches every page of their tables.
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
from support.proc import Daemon  # noqa: E402
from support.resp import encode_command  # noqa: E402


def start(binary, d):
    """cuckood on a free port with its files in d, and a connection."""
    srv = Daemon("--save", "", binary=binary, dir=d, start_timeout=120)
    return srv.start(), srv.raw(nodelay=True)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def ping_loop(c, until):
    """PING round trips in microseconds until until() is true."""
    lat = []
    msg = encode_command("PING")
    s = c.sock
    while not until(len(lat)):
        t0 = time.perf_counter_ns()
        s.sendall(msg)
        got = b""
        while not got.endswith(b"\r\n"):
            got += s.recv(64)
        lat.append((time.perf_counter_ns() - t0) / 1000)
    return lat


def timed(argv, **kw):
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, **kw)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "server",
                                                  "cuckood"))
    ap.add_argument("--dir", default=None,
                    help="where files are written (default: a new temporary "
                         "directory)")
    ap.add_argument("--mb", type=int, default=1024,
                    help="approximate keyspace size in MB")
    ap.add_argument("--fill", type=float, default=0.005,
                    help="fraction of each filter's capacity inserted")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="cuckood-bench-", dir=a.dir)
    srv, c = start(a.bin, d)
    try:
        run(a, d, srv, c)
    finally:
        srv.cleanup()
        shutil.rmtree(d, ignore_errors=True)


def run(a, d, srv, c):
    print("cuckood persistence benchmark, files in %s" % d)
    # Default filters (bucket 4, 12-bit fingerprints) take ~1.5-1.6 bytes
    # per unit of capacity; 8 filters make up the keyspace.
    nf = 8
    cap = int(a.mb * 1e6 / 1.5 / nf)
    t0 = time.perf_counter()
    for i in range(nf):
        c.call("CF.RESERVE", "bench:%d" % i, cap)
    per = int(cap * a.fill)
    batch, depth = 1000, 20
    n = 0
    for i in range(nf):
        key = b"bench:%d" % i
        for start_ in range(0, per, batch * depth):
            cmds = []
            for j in range(start_, min(per, start_ + batch * depth), batch):
                items = [b"%d:%d" % (i, x)
                         for x in range(j, min(per, j + batch))]
                cmds.append((b"CF.INSERT", key, b"NOCREATE", b"ITEMS", *items))
            for r in c.pipeline(cmds):
                n += len(r)
    used = int(c.info("memory")["used_memory"])
    print("keyspace: %d filters, %d items, %.0f MB used_memory "
          "(built in %.1f s)" % (nf, n, used / 1e6, time.perf_counter() - t0))

    # ---- save ----------------------------------------------------------
    t0 = time.perf_counter()
    c.call("SAVE")
    save_wall = time.perf_counter() - t0
    path = os.path.join(d, "dump.cuckoo")
    size = os.path.getsize(path)
    log = srv.log_text()
    save_srv = float(re.findall(r"DB saved on disk \(([\d.]+) seconds\)",
                                log)[-1])
    mb = size / 1e6
    ddfile = os.path.join(d, "dd.out")
    count = (size + (1 << 20) - 1) >> 20
    dd_t = timed(["dd", "if=/dev/zero", "of=" + ddfile, "bs=1M",
                  "count=%d" % count, "conv=fsync"],
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    dd_mb = count * (1 << 20) / 1e6
    os.unlink(ddfile)
    save_rate, dd_rate = mb / save_srv, dd_mb / dd_t
    print("save: %.0f MB in %.3f s = %.0f MB/s (client-side %.3f s); "
          "dd conv=fsync %.0f MB/s; ratio %.2f"
          % (mb, save_srv, save_rate, save_wall, dd_rate,
             save_rate / dd_rate))

    # ---- BGSAVE: PING latency --------------------------------------------
    idle = ping_loop(c, lambda k: k >= 20000)
    ctl = srv.raw()
    fork_t0 = time.perf_counter()
    assert ctl.call("BGSAVE") == "Background saving started"
    state = {"next": 0.0, "done": False}

    def saving_done(k):
        now = time.perf_counter()
        if now >= state["next"]:
            state["next"] = now + 0.05
            state["done"] = ctl.info("persistence")[
                "rdb_bgsave_in_progress"] == "0"
        return state["done"]

    busy = ping_loop(c, saving_done)
    bg_t = time.perf_counter() - fork_t0
    log = srv.log_text()
    ok = "Background saving terminated with success" in log
    for name, lat in (("idle", idle), ("during BGSAVE", busy)):
        print("ping %-13s n=%6d p50=%7.1f us p99=%7.1f us max=%8.1f us"
              % (name, len(lat), pct(lat, 0.5), pct(lat, 0.99), max(lat)))
    print("bgsave: %.2f s wall, %s" % (bg_t, "ok" if ok else "FAILED"))

    # ---- load ----------------------------------------------------------
    srv.shutdown(timeout=60)
    srv2, c2 = start(a.bin, d)
    try:
        load_t = float(re.findall(r"DB loaded from disk: ([\d.]+) seconds",
                                  srv2.log_text())[-1])
        keys = int(c2.call("DBSIZE"))
        srv2.shutdown(timeout=60)
    finally:
        srv2.cleanup()
    cat_t = timed(["sh", "-c", 'cat "$0" > /dev/null', path])
    t0 = time.perf_counter()
    buf = bytearray(size)
    with open(path, "rb", buffering=0) as f:
        f.readinto(buf)
    read_t = time.perf_counter() - t0
    del buf
    load_rate = mb / load_t
    print("load: %.0f MB, %d keys in %.3f s = %.0f MB/s; cat %.0f MB/s "
          "(ratio %.2f); read into a fresh buffer %.0f MB/s (ratio %.2f)"
          % (mb, keys, load_t, load_rate, mb / cat_t,
             load_rate / (mb / cat_t), mb / read_t,
             load_rate / (mb / read_t)))
    p99 = pct(busy, 0.99)
    print("targets: save >= 70%% of dd: %s; load >= 70%% of cat: %s; "
          "p99 PING during BGSAVE < 2 ms: %s"
          % ("met" if save_rate >= 0.7 * dd_rate else "MISSED",
             "met" if load_rate >= 0.7 * mb / cat_t else "MISSED",
             "met" if p99 < 2000 else "MISSED"))


if __name__ == "__main__":
    main()
