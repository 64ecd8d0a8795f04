"""Differential tests of filters with a window: the same sequences to
cuckood and to redis-server with the module, replies compared in RESP2
and RESP3. Both sides answer for their own wall clock; the adds dated
with AT put items on both sides of a window's end without sleeping."""

import time

from support.diff import only_cuckood, pair_fixture

pytestmark = only_cuckood

pair = pair_fixture("module")

WINDOW = 600000  # ms: slices and slack of 75000


def test_reserve_add_exists_info(pair):
    pair.same("FLUSHALL")
    pair.same("CF.RESERVE", "w", 1000, "WINDOW", WINDOW)
    pair.same("CF.RESERVE", "w", 1000, "WINDOW", WINDOW)  # item exists
    for cmd in (("CF.ADD", "w", "a"), ("CF.ADDNX", "w", "a"),
                ("CF.ADDNX", "w", "b"), ("CF.INSERT", "w", "ITEMS", "c", "d"),
                ("CF.INSERTNX", "w", "ITEMS", "c", "e"),
                ("CF.EXISTS", "w", "a"), ("CF.EXISTS", "w", "z"),
                ("CF.MEXISTS", "w", "a", "b", "c", "d", "e", "z"),
                ("CF.COUNT", "w", "a"), ("CF.DEL", "w", "e"),
                ("CF.DEL", "w", "e"), ("CF.COUNT", "w", "e")):
        pair.script([cmd])
    # CF.INFO whole: the same core on both sides (sizes, counts, window)
    pair.same("CF.INFO", "w", exact=True)
    pair.same("CF.INSERT", "v", "CAPACITY", 100, "WINDOW", 5000, "ITEMS",
              "x")
    pair.same("CF.INFO", "v", exact=True)


def test_dated_adds(pair):
    now = int(time.time() * 1000)
    pair.same("FLUSHALL")
    pair.same("CF.RESERVE", "w", 1000, "WINDOW", WINDOW)
    # long before the window: stored nowhere; well inside it: present
    pair.same("CF.INSERT", "w", "AT", now - 3 * WINDOW, "ITEMS", "old")
    pair.same("CF.INSERTNX", "w", "AT", now - WINDOW // 2, "ITEMS", "mid",
              "mid")
    pair.same("CF.MEXISTS", "w", "old", "mid")
    # a time in the future is now
    pair.same("CF.INSERT", "w", "AT", now + 10 * WINDOW, "ITEMS", "f")
    pair.same("CF.EXISTS", "w", "f")
    pair.same("CF.INFO", "w", exact=True)


def test_refusals(pair):
    pair.same("FLUSHALL")
    for args in (("WINDOW", 0), ("WINDOW", "x"), ("WINDOW", -1),
                 ("WINDOW", 1 << 43), ("WINDOW", 100, "BUCKETSIZE", 2),
                 ("WINDOW", 100, "ERROR", "0.0001"), ("WINDOW",),
                 ("WINDOW", 100, "EXPANSION")):
        pair.same("CF.RESERVE", "w", 1000, *args, exact=True)
    for args in (("AT", "x"), ("AT", -1), ("WINDOW", 0), ("AT",)):
        pair.same("CF.INSERT", "w", *args, "ITEMS", "a", exact=True)
    pair.same("EXISTS", "w")
    pair.same("CF.RESERVE", "f", 8, "WINDOW", WINDOW)
    # which items fit depends on each side's random seed; both refuse
    # some, and a full add answers the same error
    ours, theirs = pair.both("CF.INSERT", "f", "ITEMS",
                             *["i%d" % i for i in range(40)])
    assert -1 in ours and -1 in theirs
    errs = []
    for i in range(20):
        errs.append(pair.both("CF.ADD", "f", "more%d" % i))
    full = [(a, b) for a, b in errs
            if not isinstance(a, int) and not isinstance(b, int)]
    assert full and all(a.text == b.text == "ERR Filter is full"
                        for a, b in full)


def test_key_commands(pair):
    pair.same("FLUSHALL")
    pair.same("CF.RESERVE", "w", 100, "WINDOW", WINDOW)
    pair.same("CF.ADD", "w", "a")
    pair.same("COPY", "w", "c")
    pair.same("RENAME", "c", "d")
    pair.same("MOVE", "d", 1)
    pair.same("EXPIRE", "w", 1000)
    pair.same("TTL", "w")
    pair.script([("MULTI",), ("CF.ADD", "w", "b"), ("CF.EXISTS", "w", "a"),
                 ("CF.INFO", "w"), ("EXEC",)])
    pair.same("SELECT", 1)
    pair.same("CF.MEXISTS", "d", "a", "b")
    pair.same("CF.INFO", "d", exact=True)
    pair.same("SELECT", 0)
    pair.same("PERSIST", "w")
    # the header: the same iterator and length (the seeds differ)
    ours, theirs = pair.both("CF.SCANDUMP", "w", 0)
    assert (ours[0], len(ours[1]), ours[1][:8]) == (
        theirs[0], len(theirs[1]), theirs[1][:8]) == (1, 96, b"CKW1\2\0\140\0")
