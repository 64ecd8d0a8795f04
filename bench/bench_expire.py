#!/usr/bin/env python3
"""Key timeouts: what a timeout costs a small key, and a mass expiry that
nobody reads.

    python3 bench/bench_expire.py [--bin build/server/cuckood] [--keys N]

Memory: --keys filters `tenant:N` of capacity 100 with one item each
(CF.RESERVE + CF.ADD, as bench_small.py's small workload), used_memory and
RSS growth per key against the empty server; then every key gets a
timeout an hour away (PEXPIREAT) and the growth per key is measured again;
and a fresh server gets the keys with their timeouts as they are made.
RSS is read once the daemon has been quiet long enough to give free pages
back (1.5 s), each time.
Targets: <= 250 B per key without timeouts, <= 16 B more with them.

Mass expiry: the same keys (fresh server) all get one deadline
(PEXPIREAT, a few seconds ahead). From the deadline on, a second client
sends PING after PING, timing each round trip, and polls DBSIZE (which
does not look at timeouts) every 50 ms, until it reaches 0: nothing reads
the keys, so active expiry alone reclaims them. Targets: all gone within
10 s, PING p99 under 2 ms meanwhile.
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the support package
from support.proc import Daemon  # noqa: E402


def start(binary):
    s = Daemon("--save", "", binary=binary, start_timeout=600).start()
    return s, s.raw(nodelay=True)


def used(c):
    return int(c.info("memory")["used_memory"])


def rss(s):
    with open("/proc/%d/status" % s.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def fill(c, n, at_ms=None):
    """The keys; each given the time at_ms as it is made when given."""
    extra = () if at_ms is None else (("PEXPIREAT", at_ms),)
    c.many(x for i in range(n) for x in (
        ("CF.RESERVE", "tenant:%d" % i, 100),
        ("CF.ADD", "tenant:%d" % i, "item:%d" % i)) + tuple(
            (cmd, "tenant:%d" % i, a) for cmd, a in extra))


def set_deadline(c, n, at_ms):
    c.many(("PEXPIREAT", "tenant:%d" % i, at_ms) for i in range(n))


def settled_rss(s):
    """RSS once the daemon has given back free pages: it purges the heap
    after a second without changes (server/heap.c)."""
    time.sleep(1.5)
    return rss(s)


def an_hour_away():
    return int(time.time() * 1000) + 3600 * 1000


def growth(binary, n, steps):
    """(used_memory, RSS) after each step of a fresh server, step(c)
    running in turn, first () at the start."""
    s, c = start(binary)
    try:
        out = [(used(c), settled_rss(s))]
        for step in steps:
            step(c)
            out.append((used(c), settled_rss(s)))
        assert c.call("DBSIZE") == n
        return out
    finally:
        s.stop()
        s.cleanup()


def memory(binary, n):
    """Per key: without timeouts, what giving every key one adds, and what
    keys made with one cost more than keys made without."""
    (u0, r0), (u1, r1), (u2, r2) = growth(binary, n, (
        lambda c: fill(c, n),
        lambda c: set_deadline(c, n, an_hour_away())))
    (u3, r3), (u4, r4) = growth(binary, n, (
        lambda c: fill(c, n, an_hour_away()),))
    return ((u1 - u0) / n, (r1 - r0) / n, (u2 - u1) / n, (r2 - r1) / n,
            (u4 - u3) / n - (u1 - u0) / n, (r4 - r3) / n - (r1 - r0) / n)


def mass_expiry(binary, n):
    s, c = start(binary)
    try:
        fill(c, n)
        t0 = time.time()
        # an hour away to time the setting, then the deadline for real
        set_deadline(c, n, an_hour_away())
        setting = time.time() - t0
        deadline = int(time.time() * 1000) + int(setting * 1000) + 3000
        set_deadline(c, n, deadline)
        assert time.time() * 1000 < deadline, "setting took too long"
        assert c.call("DBSIZE") == n
        p = s.raw(nodelay=True)
        while time.time() * 1000 < deadline:
            time.sleep(0.001)
        start_t = time.monotonic()
        lat, last_poll, gone = [], 0.0, None
        while True:
            now = time.monotonic()
            if now - last_poll >= 0.05:
                last_poll = now
                if p.call("DBSIZE") == 0:
                    gone = now - start_t
                    break
                if now - start_t > 60:
                    break
            t = time.perf_counter()
            p.call("PING")
            lat.append(time.perf_counter() - t)
        lat.sort()
        info = c.info("stats")
        return {
            "gone_s": gone,
            "pings": len(lat),
            "p50_us": lat[len(lat) // 2] * 1e6,
            "p99_us": lat[int(len(lat) * 0.99)] * 1e6,
            "max_us": lat[-1] * 1e6,
            "expired_keys": int(info["expired_keys"]),
            "cap_reached": int(info["expired_time_cap_reached_count"]),
        }
    finally:
        s.stop()
        s.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "server",
                                                  "cuckood"))
    ap.add_argument("--keys", type=int, default=1000000)
    a = ap.parse_args()
    with open("/proc/loadavg") as f:
        print("load average at start: %s" % " ".join(f.read().split()[:3]))
    uk, rk, ue, re_, uc, rc = memory(a.bin, a.keys)
    print("memory, %d keys of capacity 100:" % a.keys)
    print("  without timeouts: used_memory %.1f B/key, RSS %.1f B/key "
          "(target <= 250: %s)" % (uk, rk, "met" if max(uk, rk) <= 250
                                   else "MISSED"))
    print("  keys made with a timeout, against keys made without: "
          "used_memory +%.1f B/key, RSS +%.1f B/key (target <= 16: %s)" % (
              uc, rc, "met" if max(uc, rc) <= 16 else "MISSED"))
    print("  a timeout given to every existing key: used_memory +%.1f B/key,"
          " RSS +%.1f B/key (each filter moves once)" % (ue, re_))
    r = mass_expiry(a.bin, a.keys)
    print("mass expiry of %d keys, nobody reading:" % a.keys)
    print("  all gone after %s s (target <= 10: %s); expired_keys %d, "
          "time cap reached %d times" % (
              "%.2f" % r["gone_s"] if r["gone_s"] is not None else "never",
              "met" if r["gone_s"] is not None and r["gone_s"] <= 10
              else "MISSED", r["expired_keys"], r["cap_reached"]))
    print("  PING meanwhile: %d round trips, p50 %.0f us, p99 %.0f us, "
          "max %.0f us (target p99 < 2 ms: %s)" % (
              r["pings"], r["p50_us"], r["p99_us"], r["max_us"],
              "met" if r["p99_us"] < 2000 else "MISSED"))
    with open("/proc/loadavg") as f:
        print("load average at end: %s" % " ".join(f.read().split()[:3]))


if __name__ == "__main__":
    main()
