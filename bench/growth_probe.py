"""What bench_growth_server.sh asks of a server through Python (the test
support package's RESP client):

  growth_probe.py odd PORT KEY N
      CF.MEXISTS of the odd items x1, x3, ... below N (the ones the script
      did not delete), in batches of 1,000; prints how many answer 0 (false
      negatives).
  growth_probe.py ping PORT STOPFILE
      PING after PING, one at a time, until STOPFILE exists, timing each
      round trip; prints "pings p50 p99 p99.9 max" in microseconds.
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests"))
from support.resp import RawConn  # noqa: E402


def odd(port, key, n):
    items = [b"x%d" % i for i in range(1, int(n), 2)]
    zeros = 0
    with RawConn(int(port), timeout=120) as c:
        for i in range(0, len(items), 1000):
            rep = c.call("CF.MEXISTS", key, *items[i:i + 1000])
            zeros += sum(1 for x in rep if x != 1)
    print(zeros)


def pct(xs, q):
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def ping(port, stopfile):
    lat = []
    with RawConn(int(port), timeout=60, nodelay=True) as c:
        while not os.path.exists(stopfile):
            t0 = time.perf_counter_ns()
            if c.command("PING") != "PONG":
                sys.exit("PING: no PONG")
            lat.append((time.perf_counter_ns() - t0) / 1000.0)
    lat.sort()
    if not lat:
        sys.exit("no PING answered")
    print("%d %.0f %.0f %.0f %.0f" % (len(lat), pct(lat, 0.5),
                                      pct(lat, 0.99), pct(lat, 0.999),
                                      lat[-1]))


if __name__ == "__main__":
    {"odd": odd, "ping": ping}[sys.argv[1]](*sys.argv[2:])
