#!/usr/bin/env python3
"""cuckood-load against redis-cli --pipe, in one run: N ids from a file
into a new filter, each on a fresh cuckood.

    python3 bench/bench_load.py [--bin build/server/cuckood]
        [--load build/tools/cuckood-load] [--n 10000000] [--batch 1000]
        [--runs 3] [--dir DIR]

The ids are `user:<n>` one a line. The loader reads the file itself
(`cuckood-load --reserve N --batch B KEY FILE`); redis-cli --pipe is the
reference: it is fed the same items already built into CF.INSERT commands
of B items (RESP, made before the clock starts), so it does no parsing
and no checking, only writing and counting replies. Both go into a new
filter reserved for N (CAPACITY N on the first CF.INSERT).

Figures per run: items/s of each (wall time of the client process), the
ratio loader / redis-cli, the server's CPU per item (utime+stime from
/proc/PID/stat around the load), and the loader's peak RSS (its VmHWM, read while it runs).
The median of --runs runs is reported. Targets: >= 2M items/s, >= 0.8x
redis-cli --pipe, loader RSS <= 50 MB.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the support package
from support.proc import Daemon  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def cpu(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def write_ids(path, n):
    with open(path, "wb") as f:
        step = 100000
        for s in range(0, n, step):
            f.write(b"".join(b"user:%d\n" % i
                             for i in range(s, min(n, s + step))))


def write_pipe(path, n, batch, key):
    """CF.INSERT KEY CAPACITY n ITEMS ... in RESP, batch items each."""
    k = key.encode()
    head = b"$9\r\nCF.INSERT\r\n$%d\r\n%s\r\n$8\r\nCAPACITY\r\n$%d\r\n%d" \
           b"\r\n$5\r\nITEMS\r\n" % (len(k), k, len(str(n)), n)
    with open(path, "wb") as f:
        for s in range(0, n, batch):
            m = min(n, s + batch) - s
            items = [b"user:%d" % i for i in range(s, s + m)]
            f.write(b"*%d\r\n" % (5 + m) + head + b"".join(
                b"$%d\r\n%s\r\n" % (len(x), x) for x in items))


def hwm(pid):
    """VmHWM of a running process, in KB (0 once it has exited)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def timed(argv, stdin=None):
    """(wall seconds, peak RSS in KB, exit status, stderr). The peak is
    the process's own VmHWM, read every 10 ms while it runs: ru_maxrss
    would count the Python process it was forked from."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=stdin, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE)
    peak = 0
    while True:
        peak = max(peak, hwm(p.pid))
        pid, status = os.waitpid(p.pid, os.WNOHANG)
        if pid:
            break
        time.sleep(0.01)
    wall = time.monotonic() - t0
    err = p.stderr.read()
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, peak, p.returncode, err


def one(args, kind, ids, pipe):
    d = Daemon(binary=args.bin, dir=tempfile.mkdtemp(dir=args.dir)).start()
    try:
        c0 = cpu(d.pid)
        if kind == "loader":
            wall, rss, rc, err = timed([args.load, "-p", str(d.port),
                                        "--reserve", str(args.n),
                                        "--batch", str(args.batch), "--quiet",
                                        "guard", ids])
        else:
            with open(pipe, "rb") as f:
                wall, rss, rc, err = timed(["redis-cli", "-p", str(d.port),
                                            "--pipe"], stdin=f)
        c1 = cpu(d.pid)
        assert rc == 0, err
        info = d.client().execute_command("CF.INFO", "guard")
        got = dict(zip(info[::2], info[1::2]))[b"Number of items inserted"]
        assert got == args.n, (kind, got)
        return args.n / wall, (c1 - c0) / args.n * 1e9, rss
    finally:
        d.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "server",
                                                  "cuckood"))
    ap.add_argument("--load", default=os.path.join(ROOT, "build", "tools",
                                                   "cuckood-load"))
    ap.add_argument("--n", type=int, default=10000000)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(dir=args.dir)
    ids, pipe = os.path.join(tmp, "ids.txt"), os.path.join(tmp, "ids.resp")
    write_ids(ids, args.n)
    write_pipe(pipe, args.n, args.batch, "guard")
    print("n=%d batch=%d runs=%d load average %s" % (
        args.n, args.batch, args.runs,
        " ".join(open("/proc/loadavg").read().split()[:3])))
    res = {"loader": [], "pipe": []}
    for r in range(args.runs):
        for kind in ("loader", "pipe"):  # alternately, each run
            rate, ns, rss = one(args, kind, ids, pipe)
            res[kind].append((rate, ns, rss))
            print("run %d %-6s %9.0f items/s  server %5.0f ns/item  "
                  "client peak RSS %6.1f MB" % (r + 1, kind, rate, ns,
                                                rss / 1024))
    ratios = [a[0] / b[0] for a, b in zip(res["loader"], res["pipe"])]
    med = {k: [statistics.median(x[i] for x in v) for i in range(3)]
           for k, v in res.items()}
    print("median: cuckood-load %.0f items/s (server %.0f ns/item, RSS "
          "%.1f MB); redis-cli --pipe %.0f items/s (server %.0f ns/item)"
          % (med["loader"][0], med["loader"][1], med["loader"][2] / 1024,
             med["pipe"][0], med["pipe"][1]))
    ratio = statistics.median(ratios)
    print("ratio cuckood-load / redis-cli --pipe: %.2fx (runs %s)" % (
        ratio, " ".join("%.2f" % x for x in ratios)))
    rss_mb = max(x[2] for x in res["loader"]) / 1024
    for what, ok, text in [
            ("rate", med["loader"][0] >= 2e6,
             "%.2fM items/s >= 2M" % (med["loader"][0] / 1e6)),
            ("ratio", ratio >= 0.8, "%.2fx >= 0.8x" % ratio),
            ("rss", rss_mb <= 50, "%.1f MB <= 50 MB" % rss_mb)]:
        print("target loader %s %s %s" % (what, text,
                                          "met" if ok else "MISSED"))
    for f in (ids, pipe):
        os.unlink(f)
    os.rmdir(tmp)


if __name__ == "__main__":
    main()
