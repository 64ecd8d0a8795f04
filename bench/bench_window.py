#!/usr/bin/env python3
"""bench_window.py - filters with a window (CF.RESERVE ... WINDOW), on one
cuckood, four parts:

  dedup     a stream of events: --per-window distinct ids per window, each
            seen 1-3 times (the repeats within one slice of the first),
            for --windows windows of simulated time (the adds dated with
            AT, the clock moved with the hidden cf-window-clock-offset, so
            nothing sleeps). At the end of every window after the first:
            CF.INFO Size in bits per live item (Live items) and per id
            seen in the last window, false positives on --probe ids never
            seen, false negatives on a sample of ids seen within the
            window, and ids still present past the window and its slack.
  cpu       server CPU per CF.EXISTS and per CF.ADD at -P 32 (utime+stime
            of /proc/PID/stat around each round, rounds alternating)
            on the window filter against a fixed filter without a window
            (EXPANSION 0, the same 12-bit fingerprints and capacity).
  rotation  the workaround: one plain filter per slice (9: the window and
            the slice being filled), an add to the newest, a question
            asked of all; memory and server CPU per question beside the
            window filter's.
  latency   PING round trips (p50, p99, p99.9) while the cron forgets
            --forget items (the clock moved past their window), against
            the same with no window filter to sweep.

    python3 bench/bench_window.py [--bin build/server/cuckood]
        [--per-window 1000000] [--windows 10] [--rounds 6]
        [--parts dedup,cpu,rotation,latency]

Targets (printed as "target ... met|MISSED"): dedup <= 16 bits per live
item, false positives <= 0.2%, 0 false negatives; CPU per CF.EXISTS and
per CF.ADD <= 1.1x the filter without a window; PING p99.9 while
forgetting <= 2 ms more than without.
"""

import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from support.proc import free_port  # noqa: E402

WINDOW = 600000  # ms, simulated: ten minutes
SLICE = WINDOW // 8
STEPS = 64  # per window: a slice is 8 steps
T0 = 1800000000000  # the simulated start, unix ms


def enc(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class Conn:
    """A pipelining RESP2 client that parses what it needs."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def _more(self):
        chunk = self.s.recv(1 << 20)
        if not chunk:
            raise ConnectionError("server closed")
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._more()

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b"-"):
            if t == b"-":
                raise RuntimeError(rest.decode())
            return rest
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._more()
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if t == b"*":
            return [self.reply() for _ in range(int(rest))]
        if t == b",":
            return float(rest)
        raise RuntimeError("unexpected reply %r" % line)

    def cmd(self, *args):
        self.s.sendall(enc(*args))
        return self.reply()

    def pipeline(self, payload, n):
        self.s.sendall(payload)
        return [self.reply() for _ in range(n)]

    def drain(self, payload, nbytes):
        """Sends payload, reads nbytes of replies without parsing."""
        self.s.sendall(payload)
        got = len(self.buf)
        self.buf = b""
        while got < nbytes:
            chunk = self.s.recv(min(1 << 20, nbytes - got))
            if not chunk:
                raise ConnectionError("server closed")
            got += len(chunk)


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def info(c, key):
    rep = c.cmd("CF.INFO", key)
    return {rep[i].decode(): rep[i + 1] for i in range(0, len(rep), 2)}


def set_clock(c, sim_ms):
    """Moves the server's window clock to sim_ms (real time + offset)."""
    c.cmd("CONFIG", "SET", "cf-window-clock-offset",
          str(sim_ms - int(time.time() * 1000)))


def mexists(c, key, items, batch=1000):
    out = []
    for i in range(0, len(items), batch):
        out += c.cmd("CF.MEXISTS", key, *items[i:i + batch])
    return out


def dedup(c, args, targets):
    n = args.per_window
    # capacity: the distinct ids alive in one window, the repeats of the
    # ids first seen just before it included (about 1.07 n)
    c.cmd("CF.RESERVE", "events", int(n * args.cap_factor), "WINDOW",
          WINDOW)
    rnd = random.Random(36)
    per_step = n // STEPS
    last = {}  # id -> its last time, for the checks
    pending = {}  # step -> [(id, time)] repeats to come
    nid = 0
    total_adds = 0
    rows = []
    t_start = time.monotonic()
    for w in range(args.windows):
        for k in range(STEPS):
            step = w * STEPS + k
            t = T0 + step * (WINDOW // STEPS)
            set_clock(c, t + 1000)
            ids = []
            for _ in range(per_step):
                ids.append(nid)
                for _ in range(rnd.randrange(3)):  # 0-2 repeats
                    pending.setdefault(step + 1 + rnd.randrange(8),
                                       []).append(nid)
                nid += 1
            ids += pending.pop(step, [])
            for i in ids:
                last[i] = t
            total_adds += len(ids)
            payload = []
            for i in range(0, len(ids), 1000):
                payload.append(enc("CF.INSERT", "events", "AT", t, "ITEMS",
                                   *[b"e%d" % x for x in ids[i:i + 1000]]))
            rep = c.pipeline(b"".join(payload), len(payload))
            refused = sum(v == -1 for r in rep for v in r)
            if refused:
                print("window %d step %d: %d adds refused" % (w, k, refused))
        if w == 0:
            continue
        # the end of window w: t_end is the last step's time
        t_end = T0 + (w * STEPS + STEPS - 1) * (WINDOW // STEPS)
        set_clock(c, t_end + 1000)
        inf = info(c, "events")
        bits = inf["Size"] * 8
        live = inf["Live items"]
        in_window = [i for i, lt in last.items() if t_end - lt <= WINDOW]
        gone = [i for i, lt in last.items()
                if t_end + 1000 - lt >= WINDOW + SLICE + 1000]
        sample = rnd.sample(in_window, min(args.sample, len(in_window)))
        fn = mexists(c, "events", [b"e%d" % i for i in sample]).count(0)
        old = rnd.sample(gone, min(args.sample, len(gone)))
        kept = mexists(c, "events", [b"e%d" % i for i in old]).count(1)
        probe = [b"never%d:%d" % (w, i) for i in range(args.probe)]
        fp = mexists(c, "events", probe).count(1)
        rows.append((w, bits / live, bits / len(in_window), fp / len(probe),
                     fn, len(sample), kept, len(old), live, len(in_window),
                     inf["Stale items"]))
        print("window %2d: %.2f bits per live item (%d live, %d stale), "
              "%.2f per id seen in the window (%d); FPR %.4f%%; false "
              "negatives %d of %d; past window+slack and present %d of %d"
              % (w, bits / live, live, inf["Stale items"],
                 bits / len(in_window), len(in_window),
                 100.0 * fp / len(probe), fn, len(sample), kept, len(old)))
        # forget what the model no longer needs
        for i in old:
            last.pop(i, None)
        for i in [i for i, lt in last.items()
                  if t_end - lt > WINDOW + 2 * SLICE]:
            del last[i]
    took = time.monotonic() - t_start
    worst_bits = max(r[1] for r in rows)
    worst_fp = max(r[3] for r in rows)
    fns = sum(r[4] for r in rows)
    print("dedup: %d adds (%d distinct ids) over %d windows in %.0f s"
          % (total_adds, nid, args.windows, took))
    targets.append(("dedup bits per live item (worst window)",
                    worst_bits, "<=", 16.0))
    targets.append(("dedup false positives % (worst window)",
                    100 * worst_fp, "<=", 0.2))
    targets.append(("dedup false negatives in the window", fns, "<=", 0))
    c.cmd("DEL", "events")


def rounds_cpu(c, pid, sides, rounds):
    """sides: name -> (payload, reply bytes, commands); alternating
    rounds; server CPU ns per command per side (total over rounds)."""
    hz = os.sysconf("SC_CLK_TCK")
    tot = {name: [0, 0] for name in sides}
    names = list(sides)
    for r in range(rounds):
        order = names if r % 2 == 0 else names[::-1]
        for name in order:
            payload, nbytes, ncmd = sides[name](r)
            before = cpu_ticks(pid)
            c.drain(payload, nbytes)
            tot[name][0] += cpu_ticks(pid) - before
            tot[name][1] += ncmd
    return {name: t * 1e9 / hz / n for name, (t, n) in tot.items()}


def cpu(c, pid, args, targets):
    # room for the fill and every round's adds, on both sides
    cap = int(1.2 * (args.per_window + args.rounds * args.ops))
    set_clock(c, T0 + 100 * WINDOW)  # later than anything before
    c.cmd("CF.RESERVE", "win", cap, "WINDOW", WINDOW)
    c.cmd("CF.RESERVE", "plain", cap, "EXPANSION", 0)
    fill = args.per_window
    for key in ("win", "plain"):
        for i in range(0, fill, 1000):
            c.cmd("CF.INSERT", key, "ITEMS",
                  *[b"f%d" % j for j in range(i, min(fill, i + 1000))])
    n = args.ops
    rnd = random.Random(7)
    probe = [b"f%d" % rnd.randrange(fill) if j % 2 else b"m%d" % j
             for j in range(n)]
    sides = {}
    for key in ("win", "plain"):
        pay = b"".join(enc("CF.EXISTS", key, it) for it in probe)
        sides["EXISTS " + key] = (lambda r, p=pay: (p, 4 * n, n))
    res = rounds_cpu(c, pid, sides, args.rounds)
    # adds: new distinct items each round, the same on both sides
    def adds(key):
        def make(r):
            start = fill + r * n
            pay = b"".join(enc("CF.ADD", key, b"a%d" % j)
                           for j in range(start, start + n))
            return pay, 4 * n, n
        return make
    res.update(rounds_cpu(c, pid, {"ADD win": adds("win"),
                                   "ADD plain": adds("plain")},
                          args.rounds))
    for op in ("EXISTS", "ADD"):
        w, p = res[op + " win"], res[op + " plain"]
        print("CF.%s: %.0f ns server CPU per command with a window, %.0f "
              "without (%.2fx)" % (op, w, p, w / p))
        targets.append(("server CPU per CF.%s, window / plain" % op, w / p,
                        "<=", 1.1))
    for key in ("win", "plain"):
        inf = info(c, key)
        print("%s: %d items held, %.2f bits each"
              % (key, inf["Number of items inserted"],
                 inf["Size"] * 8 / max(1, inf["Number of items inserted"])))
    c.cmd("DEL", "win", "plain")


def rotation(c, pid, args, targets):
    """Memory and CPU per question: 9 plain filters (one per slice) asked
    one by one, against the window filter's one CF.EXISTS, holding the same
    stream of one window and a slice."""
    n = args.per_window
    per_slice = n // 8
    set_clock(c, T0 + 200 * WINDOW)
    c.cmd("CF.RESERVE", "win", n, "WINDOW", WINDOW)
    for s in range(9):
        key = "rot%d" % s
        c.cmd("CF.RESERVE", key, int(per_slice * 1.05), "EXPANSION", 0)
        t = T0 + 200 * WINDOW - 9 * SLICE + s * SLICE + SLICE // 2
        for i in range(0, per_slice, 1000):
            items = [b"r%d" % (s * per_slice + j)
                     for j in range(i, min(per_slice, i + 1000))]
            c.cmd("CF.INSERT", key, "ITEMS", *items)
            c.cmd("CF.INSERT", "win", "AT", t, "ITEMS", *items)
    rot_bytes = sum(info(c, "rot%d" % s)["Size"] for s in range(9))
    win_bytes = info(c, "win")["Size"]
    held = 9 * per_slice
    # the same number of commands on both sides: q questions of the
    # rotation's 9 lookups, 9 q questions of the window filter's one
    q = args.ops // 9
    rnd = random.Random(3)
    items = [b"r%d" % rnd.randrange(held) if j % 2 else b"x%d" % j
             for j in range(9 * q)]
    rot = b"".join(enc("CF.EXISTS", "rot%d" % s, it)
                   for it in items[:q] for s in range(9))
    one = b"".join(enc("CF.EXISTS", "win", it) for it in items)
    res = rounds_cpu(c, pid, {"rotation": lambda r: (rot, 4 * 9 * q, q),
                              "window": lambda r: (one, 4 * 9 * q, 9 * q)},
                     args.rounds)
    print("rotation (9 plain filters, one per slice): %.2f bits per item, "
          "%.0f ns server CPU per question (9 CF.EXISTS)"
          % (rot_bytes * 8 / held, res["rotation"]))
    print("window filter:                             %.2f bits per item, "
          "%.0f ns server CPU per question (1 CF.EXISTS); %.2fx the CPU, "
          "%.2fx the memory of the rotation"
          % (win_bytes * 8 / held, res["window"],
             res["window"] / res["rotation"], win_bytes / rot_bytes))
    c.cmd("DEL", "win", *["rot%d" % s for s in range(9)])


def pings(port, seconds):
    c = Conn(port)
    lat = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        c.cmd("PING")
        lat.append(time.perf_counter() - t0)
    lat.sort()
    return [lat[int(len(lat) * q)] * 1e3 for q in (0.5, 0.99, 0.999)]


def latency(c, port, args, targets):
    n = args.forget
    res = {}
    for k, name in enumerate(("none", "forget")):
        key = "lat-" + name
        t = T0 + (300 + 10 * k) * WINDOW
        set_clock(c, t)
        if name == "forget":
            c.cmd("CF.RESERVE", key, n, "WINDOW", WINDOW)
        else:
            c.cmd("CF.RESERVE", key, n, "EXPANSION", 0)
        for i in range(0, n, 1000):
            c.cmd("CF.INSERT", key, "ITEMS",
                  *[b"l%d" % j for j in range(i, min(n, i + 1000))])
        # past the window: the cron starts taking the slots back
        set_clock(c, t + WINDOW + 2 * SLICE)
        res[name] = pings(port, args.ping_seconds)
        if name == "forget":
            inf = info(c, key)
            print("after %.0f s: %d stale entries left of %d"
                  % (args.ping_seconds, inf["Stale items"], n))
        c.cmd("DEL", key)
    for name, (p50, p99, p999) in res.items():
        print("PING while %-6s: p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms"
              % (name, p50, p99, p999))
    targets.append(("PING p99.9 while forgetting, ms more than without",
                    res["forget"][2] - res["none"][2], "<=", 2.0))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("BUILD_DIR", "build"), "server", "cuckood"))
    ap.add_argument("--per-window", type=int, default=1000000)
    ap.add_argument("--windows", type=int, default=10)
    ap.add_argument("--cap-factor", type=float, default=1.1,
                    help="dedup: CF.RESERVE capacity / --per-window")
    ap.add_argument("--sample", type=int, default=100000)
    ap.add_argument("--probe", type=int, default=1000000)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--ops", type=int, default=300000)
    ap.add_argument("--forget", type=int, default=1000000)
    ap.add_argument("--ping-seconds", type=float, default=3.0)
    ap.add_argument("--parts", default="dedup,cpu,rotation,latency")
    args = ap.parse_args()
    parts = args.parts.split(",")

    port = free_port()
    tmp = tempfile.mkdtemp()
    proc = subprocess.Popen([args.bin, "--port", str(port), "--save", "",
                             "--dir", tmp], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    targets = []
    try:
        for _ in range(100):
            try:
                c = Conn(port)
                break
            except OSError:
                time.sleep(0.1)
        print("load average %s" % open("/proc/loadavg").read().split()[0])
        if "dedup" in parts:
            dedup(c, args, targets)
        if "cpu" in parts:
            cpu(c, proc.pid, args, targets)
        if "rotation" in parts:
            rotation(c, proc.pid, args, targets)
        if "latency" in parts:
            latency(c, port, args, targets)
        print("load average %s" % open("/proc/loadavg").read().split()[0])
        print("targets:")
        for what, v, op, lim in targets:
            ok = v <= lim
            print("target %s %.4g %s %g %s" % (what, v, op, lim,
                                               "met" if ok else "MISSED"))
    finally:
        proc.terminate()
        proc.wait()
        subprocess.run(["rm", "-rf", tmp])


if __name__ == "__main__":
    main()
