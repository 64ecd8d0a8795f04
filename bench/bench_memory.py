#!/usr/bin/env python3
"""Memory benchmark: does the process give memory back? cuckood beside
Debian's redis-server (jemalloc), one run, same client, same sequence.

    python3 bench/bench_memory.py [--bin build/server/cuckood]
                                  [--also NAME=PATH ...]
                                  [--rounds 30] [--per-round 2000]
                                  [--bgsave-mb 1024] [--skip-redis]
                                  [--skip-bgsave]

Parts:
  churn   ROUNDS rounds: PER_ROUND filters of capacities 100..100,000
          (log-uniform, fixed seed), 50 items each (CF.RESERVE + CF.INSERT),
          then 90% of the round's keys deleted; after the last round, 2 s
          of rest, then FLUSHALL and 10 s of RSS samples (every 0.1 s).
          redis-server has no RedisBloom here: each filter is a plain
          string (SET) of the size RedisBloom 2.6 gives a filter of that
          capacity (next power of two buckets of 2 one-byte slots), one
          allocation per key, as a filter's table is.
          Figures: settled (RSS - start) / used_memory 2 s after the churn
          (target <= 1.15), lowest RSS within 10 s of FLUSHALL (target:
          within 20 MB of the RSS at start), and the churn's duration.
  bgsave  cuckood only: a dataset of about BGSAVE_MB MB (tables touched on
          every page), one client writing (pipelined CF.INSERT) without
          pause, BGSAVE; the parent's and the child's memory sampled every
          20 ms while the child lives. The pod is charged for the pages the
          two processes hold between them: the sum of their PSS
          (/proc/PID/smaps_rollup; a page shared by both counts once); the
          sum of their RSS counts shared pages twice and is shown beside it.
          Target: peak PSS(parent) + PSS(child) <= 1.5x the dataset.

--also runs the churn on another cuckood binary too (e.g. a build with
-DCUCKOOD_ALLOCATOR=jemalloc). RSS is VmRSS of /proc/PID/status for every
server, read by this script; CPU time is the server's (all its threads)
during the churn, from /proc/PID/stat: a steadier figure than the wall
time on a shared machine.
Needs only python3 (and redis-server for the reference).
"""

import argparse
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the support package
from support.proc import Daemon, RedisServer  # noqa: E402
MB = 1 << 20


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            if ln.startswith(field + ":"):
                return int(ln.split()[1]) * 1024
    return 0


def cpu_seconds(pid):
    """User + system CPU time of every thread of pid, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss(pid):
    return status_kb(pid, "VmRSS")


def rollup(pid, field):
    """A field of /proc/PID/smaps_rollup in bytes, or None once pid has
    gone."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for ln in f:
                if ln.startswith(field + ":"):
                    return int(ln.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def pss(pid):
    return rollup(pid, "Pss")


def start_server(kind, binary, tmp):
    """cuckood (or redis-server for kind "redis") on a free port, with
    .kind and .conn (a connection) set."""
    cls = RedisServer if kind == "redis" else Daemon
    srv = cls("--save", "", "--dbfilename", "dump.rdb", binary=binary,
              dir=tempfile.mkdtemp(dir=tmp,
                                   prefix=kind.replace(" ", "-") + "-"),
              start_timeout=20).start()
    srv.kind = kind
    srv.conn = srv.raw(nodelay=True)
    return srv


def redisbloom_bytes(cap):
    """Table bytes RedisBloom 2.6 allocates for a filter of capacity cap
    with its defaults (bucket size 2, 8-bit fingerprints, power-of-two
    bucket count)."""
    nb = max(1, math.ceil(cap / 2))
    return (1 << (nb - 1).bit_length()) * 2


def churn(srv, rounds, per_round, seed=1):
    """Runs the churn; returns the figures as a dict."""
    c = srv.conn
    rng = random.Random(seed)
    time.sleep(0.5)
    start_rss = rss(srv.pid)
    start_used = int(c.info()["used_memory"])
    items = [b"item-%d" % i for i in range(50)]
    batch = 100
    t0 = time.perf_counter()
    cpu0 = cpu_seconds(srv.pid)
    peak = 0
    for r in range(rounds):
        keys = [b"f:%d:%d" % (r, i) for i in range(per_round)]
        caps = [int(round(10 ** rng.uniform(2, 5))) for _ in keys]
        for i in range(0, per_round, batch):
            cmds = []
            for k, cap in zip(keys[i:i + batch], caps[i:i + batch]):
                if srv.kind != "redis":
                    cmds.append(("CF.RESERVE", k, cap))
                    cmds.append(("CF.INSERT", k, "ITEMS", *items))
                else:
                    cmds.append(("SET", k, b"\1" * redisbloom_bytes(cap)))
            c.many(cmds)
        peak = max(peak, rss(srv.pid))
        doomed = rng.sample(keys, per_round * 9 // 10)
        for i in range(0, len(doomed), 500):
            c.call("DEL", *doomed[i:i + 500])
    churn_s = time.perf_counter() - t0
    churn_cpu = cpu_seconds(srv.pid) - cpu0
    time.sleep(2)
    settled_rss = rss(srv.pid)
    used = int(c.info()["used_memory"]) - start_used
    keys_left = c.call("DBSIZE")
    c.call("FLUSHALL")
    t_flush = time.perf_counter()
    low = rss(srv.pid)
    while time.perf_counter() - t_flush < 10:
        low = min(low, rss(srv.pid))
        time.sleep(0.1)
    return {
        "start_rss": start_rss, "peak_rss": peak, "settled_rss": settled_rss,
        "used": used, "keys": keys_left, "churn_s": churn_s,
        "churn_cpu": churn_cpu,
        "ratio": (settled_rss - start_rss) / used if used > 0 else float("nan"),
        "low_after_flush": low, "over_start": low - start_rss,
    }


def bgsave(srv, mb, bench_writer=False):
    """A dataset of about mb MB, a writer without pause, BGSAVE; returns
    the peak figures while the child lived. With bench_writer the writes
    come from redis-benchmark (4 connections, CF.ADD of random items
    pipelined 16 deep) instead of this script's own connection."""
    c = srv.conn
    nfilt = 4
    # 12-bit fingerprints, 4 slots a bucket at 95% load: ~1.58 bytes a
    # slot; the exact size is read back from used_memory.
    cap = int(mb * MB / nfilt / 1.58)
    for i in range(nfilt):
        c.call("CF.RESERVE", "big:%d" % i, cap, "EXPANSION", 0)
    used = int(c.info()["used_memory"])
    # Every 4 KiB page touched: about 4 items per page, random keys.
    per_cmd = 1000
    n_items = used // 1024
    rng = random.Random(7)
    sent = 0
    while sent < n_items:
        cmds = []
        for j in range(64):
            f = "big:%d" % ((sent // per_cmd) % nfilt)
            its = [b"%x" % rng.getrandbits(60) for _ in range(per_cmd)]
            cmds.append(("CF.INSERT", f, "ITEMS", *its))
            sent += per_cmd
        c.many(cmds)
    time.sleep(1)
    used = int(c.info()["used_memory"])
    parent_before = rss(srv.pid)
    huge_before = rollup(srv.pid, "AnonHugePages") or 0
    w = srv.raw(nodelay=True)
    bench = None
    if bench_writer:
        bench = subprocess.Popen(
            ["redis-benchmark", "-p", str(srv.port), "-c", "4", "-P", "16",
             "-n", "2000000000", "-r", "1000000000", "CF.ADD", "big:0",
             "__rand_int__"], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        time.sleep(1)
    cmds0 = int(c.info("stats")["total_commands_processed"])
    c.call("BGSAVE")
    t0 = time.perf_counter()
    child = None
    deadline = time.time() + 5
    while child is None and time.time() < deadline:
        child = find_child(srv.pid)
    peak_pss = peak_rss = 0
    huge_low = huge_before
    writes = 0
    samples = 0
    last = 0.0
    while child is not None and pss(child) is not None:
        # One pipelined batch of writes, then a sample every 20 ms.
        if bench is None:
            cmds = [("CF.INSERT", "big:%d" % (writes // 100 % nfilt),
                     "ITEMS",
                        *[b"w%x" % rng.getrandbits(60) for _ in range(100)])
                    for _ in range(20)]
            w.many(cmds)
            writes += 2000
        else:
            time.sleep(0.02)
        now = time.perf_counter()
        if now - last >= 0.02:
            last = now
            cp, pp = pss(child), pss(srv.pid)
            if cp is None:
                break
            try:
                cr = rss(child)
            except (FileNotFoundError, ProcessLookupError):
                break
            samples += 1
            huge_low = min(huge_low, rollup(srv.pid, "AnonHugePages") or 0)
            peak_pss = max(peak_pss, pp + cp)
            peak_rss = max(peak_rss, rss(srv.pid) + cr)
    dur = time.perf_counter() - t0
    if bench is not None:
        bench.terminate()
        bench.wait()
        # Commands (CF.ADD, one item each) from the fork to the child's end,
        # counted by the server.
        writes = int(c.info("stats")["total_commands_processed"]) - cmds0
    ok = wait_save(c)
    return {"used": used, "parent_before": parent_before,
            "peak_pss": peak_pss, "peak_rss_sum": peak_rss,
            "huge_before": huge_before, "huge_low": huge_low,
            "writes": writes, "seconds": dur, "samples": samples,
            "saved": ok}


def find_child(ppid):
    try:
        with open("/proc/%d/task/%d/children" % (ppid, ppid)) as f:
            kids = f.read().split()
    except FileNotFoundError:
        return None
    return int(kids[0]) if kids else None


def wait_save(c):
    deadline = time.time() + 120
    while time.time() < deadline:
        info = c.info("persistence")
        if info.get("rdb_bgsave_in_progress") == "0":
            return info.get("rdb_last_bgsave_status") == "ok"
        time.sleep(0.1)
    return False


def mbs(n):
    return "%.1f MB" % (n / MB)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build/server/cuckood"))
    ap.add_argument("--also", action="append", default=[],
                    metavar="NAME=PATH")
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--per-round", type=int, default=2000)
    ap.add_argument("--bgsave-mb", type=int, default=1024)
    ap.add_argument("--skip-redis", action="store_true")
    ap.add_argument("--skip-bgsave", action="store_true")
    ap.add_argument("--bgsave-writer", choices=("client", "redis-benchmark"),
                    default="client")
    ap.add_argument("--dir", default=None)
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="bench-mem-", dir=a.dir)
    servers = [("cuckood", a.bin)]
    for spec in a.also:
        name, _, path = spec.partition("=")
        servers.append(("cuckood " + name, path))
    redis_bin = shutil.which("redis-server")
    if not a.skip_redis and redis_bin:
        servers.append(("redis", redis_bin))
    print("== churn: %d rounds of %d filters, capacities 100..100000, "
          "50 items each, 90%% of each round deleted, then FLUSHALL"
          % (a.rounds, a.per_round))
    try:
        for kind, binary in servers:
            srv = start_server(kind, binary, tmp)
            try:
                alloc = srv.conn.info("memory").get("mem_allocator", "?")
                r = churn(srv, a.rounds, a.per_round)
            finally:
                srv.cleanup()
            label = kind if kind != "redis" else \
                "redis-server (plain strings of RedisBloom's sizes)"
            print("-- %s, allocator %s" % (label, alloc))
            print("   churn time, server CPU time         %.1f s, %.1f s"
                  % (r["churn_s"], r["churn_cpu"]))
            print("   RSS at start / peak                 %s / %s"
                  % (mbs(r["start_rss"]), mbs(r["peak_rss"])))
            print("   keys left, used_memory after churn  %d, %s"
                  % (r["keys"], mbs(r["used"])))
            print("   settled (RSS - start) / used_memory %.3f   "
                  "(target <= 1.15: %s)" % (r["ratio"],
                                            "met" if r["ratio"] <= 1.15
                                            else "MISSED"))
            print("   lowest RSS within 10 s of FLUSHALL  %s, start + %s   "
                  "(target: start + 20 MB or less: %s)"
                  % (mbs(r["low_after_flush"]), mbs(r["over_start"]),
                     "met" if r["over_start"] <= 20 * MB else "MISSED"))
            sys.stdout.flush()
        if not a.skip_bgsave:
            print("== bgsave: about %d MB of filters, %s writing without "
                  "pause during BGSAVE" % (a.bgsave_mb,
                                           "this script's connection"
                                           if a.bgsave_writer == "client"
                                           else "redis-benchmark"))
            srv = start_server("cuckood", a.bin, tmp)
            try:
                r = bgsave(srv, a.bgsave_mb,
                           a.bgsave_writer == "redis-benchmark")
            finally:
                srv.cleanup()
            ratio = r["peak_pss"] / r["used"]
            print("   dataset (used_memory)               %s" % mbs(r["used"]))
            print("   parent RSS before BGSAVE            %s"
                  % mbs(r["parent_before"]))
            print("   parent on huge pages before/lowest  %s / %s"
                  % (mbs(r["huge_before"]), mbs(r["huge_low"])))
            print("   save: %.1f s, %d items written meanwhile (%d/s), "
                  "%d samples, saved ok: %s"
                  % (r["seconds"], r["writes"], r["writes"] / r["seconds"],
                     r["samples"], r["saved"]))
            print("   peak PSS parent + child             %s = %.2fx dataset "
                  "(target <= 1.5x: %s)"
                  % (mbs(r["peak_pss"]), ratio,
                     "met" if ratio <= 1.5 else "MISSED"))
            print("   peak RSS parent + child (shared     %s = %.2fx dataset"
                  % (mbs(r["peak_rss_sum"]), r["peak_rss_sum"] / r["used"]))
            print("     pages counted twice)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
