"""An ERROR rate kept through growth: for each rate, a filter reserved for
--reserve items takes --growth times that many, then answers --probes
absent items. Prints, per rate and shape, the false-positive rate measured,
the bits per item (CF.INFO Size), the encoding, and the server's CPU per
added item and per looked-up item (utime+stime of /proc/PID/stat around
the adds and around the lookups), each as a ratio to the default filter's
(no ERROR) in the same run.

Shapes: the default (`CF.RESERVE k R`), `ERROR rate` (a growable table
from 0.005, a growable pair under it), and `ERROR rate BUCKETSIZE 2
EXPANSION 2` (a chain of fixed tables at RedisBloom's bucket size: what
such a rate gets without the growable shapes).

  python3 bench/bench_rates.py [--bin build/server/cuckood]
      [--reserve 1000] [--growth 1000] [--probes 1000000]
      [--rates 0.005,0.001,1e-4]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests"))
from support.proc import free_port  # noqa: E402
from support.resp import RawConn  # noqa: E402

BATCH = 1000


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def info(c, key):
    rep = c.call("CF.INFO", key)
    dec = [x.decode() if isinstance(x, bytes) else x for x in rep]
    return {dec[i]: dec[i + 1] for i in range(0, len(dec), 2)}


def run_one(c, pid, key, opts, n, probes):
    c.call("CF.RESERVE", key, *opts)
    t0 = cpu_ticks(pid)
    for i in range(0, n, BATCH):
        rep = c.call("CF.INSERT", key, "ITEMS",
                     *[b"%s:i%d" % (key.encode(), j)
                       for j in range(i, min(n, i + BATCH))])
        if any(v != 1 for v in rep):
            raise RuntimeError("%s: an add refused" % key)
    t1 = cpu_ticks(pid)
    fn = 0
    for i in range(0, n, 7 * BATCH):
        items = [b"%s:i%d" % (key.encode(), j)
                 for j in range(i, min(n, i + 7 * BATCH), 7)]
        fn += sum(1 for v in c.call("CF.MEXISTS", key, *items) if v != 1)
    t2 = cpu_ticks(pid)
    fp = 0
    for i in range(0, probes, BATCH):
        fp += sum(c.call("CF.MEXISTS", key,
                         *[b"absent%d" % j for j in range(i, i + BATCH)]))
    t3 = cpu_ticks(pid)
    inf = info(c, key)
    tick = 1.0 / os.sysconf("SC_CLK_TCK")
    c.call("DEL", key)
    return {
        "fpr": fp / probes, "fn": fn,
        "bits": inf["Size"] * 8.0 / n,
        "enc": inf["Encoding"],
        "filters": inf["Number of filters"],
        "add_us": (t1 - t0) * tick * 1e6 / n,
        "look_us": (t3 - t2) * tick * 1e6 / probes,
    }


def main():
    ap = argparse.ArgumentParser()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    ap.add_argument("--bin", default=os.path.join(root, "build", "server",
                                                  "cuckood"))
    ap.add_argument("--reserve", type=int, default=1000)
    ap.add_argument("--growth", type=int, default=1000)
    ap.add_argument("--probes", type=int, default=1000000)
    ap.add_argument("--rates", default="0.005,0.001,1e-4")
    args = ap.parse_args()
    n = args.reserve * args.growth
    port = free_port()
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.Popen([args.bin, "--port", str(port), "--save", "",
                              "--dir", d, "--appendonly", "no"],
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    c = RawConn(port, timeout=600)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            with c:
                base = run_one(c, p.pid, "default", [args.reserve], n,
                               args.probes)
                rows = [("default", base)]
                for rate in args.rates.split(","):
                    rows.append(("ERROR %s" % rate, run_one(
                        c, p.pid, "r", [args.reserve, "ERROR", rate], n,
                        args.probes)))
                    rows.append(("ERROR %s chain (b 2, x2)" % rate, run_one(
                        c, p.pid, "b", [args.reserve, "ERROR", rate,
                                        "BUCKETSIZE", 2, "EXPANSION", 2], n,
                        args.probes)))
        finally:
            p.terminate()
            p.wait()
    print("reserve %d, %d items (%dx), %d absent probes" %
          (args.reserve, n, args.growth, args.probes))
    print("%-26s %-14s %7s %11s %9s %5s %9s %9s" %
          ("filter", "encoding", "tables", "FPR", "bits/item", "FN",
           "add/dflt", "look/dflt"))
    for name, r in rows:
        print("%-26s %-14s %7d %10.5f%% %9.2f %5d %8.2fx %8.2fx" %
              (name, r["enc"], r["filters"], 100 * r["fpr"], r["bits"],
               r["fn"], r["add_us"] / base["add_us"],
               r["look_us"] / base["look_us"]))
    print("default: %.3f us of server CPU per added item, %.3f per lookup" %
          (base["add_us"], base["look_us"]))


if __name__ == "__main__":
    main()
