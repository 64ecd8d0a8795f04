"""Lazy freeing: FLUSHALL/FLUSHDB ASYNC, UNLINK and the lazyfree-lazy-*
directives compared with redis-server (replies, CONFIG GET/SET, the INFO
counters, RENAME onto a big filter under lazyfree-lazy-server-del); then,
in cuckood, what a user relies on: writes, reads and SAVE right after
FLUSHALL ASYNC (nothing old comes back, nothing new is lost, also after
kill -9 while freeing), memory given back, big filters freed off the loop
by UNLINK, DEL, FLUSHALL and expiry under the directives, maxmemory
counting what waits to be freed (DEBUG LAZYFREE-HOLD), the arrays a
resize leaves freed by the thread, and the thread's LATENCY events."""

import pytest

from support.diff import only_cuckood, pair_fixture
from support.proc import daemons, wait_until
from support.resp import RawConn

pytestmark = only_cuckood

pair = pair_fixture("module")

LAZY = ("lazyfree-lazy-eviction", "lazyfree-lazy-expire",
        "lazyfree-lazy-server-del", "lazyfree-lazy-user-del",
        "lazyfree-lazy-user-flush")


def test_config_get_set(pair):
    for name in LAZY:
        pair.same("CONFIG", "GET", name, exact=True)
        pair.same("CONFIG", "SET", name, "yes", exact=True)
        pair.same("CONFIG", "GET", name, exact=True)
        pair.same("CONFIG", "SET", name, "perhaps")
        pair.same("CONFIG", "SET", name, "no", exact=True)
    ours, theirs = pair.both("CONFIG", "GET", "lazyfree-*")
    as_dict = (lambda r: dict(zip(r[0::2], r[1::2])))
    assert as_dict(ours) == as_dict(theirs)


def test_flush_and_unlink_replies(pair):
    pair.same("FLUSHALL")
    for i in range(20):
        pair.same("CF.ADD", "k%d" % i, "x")
    pair.same("UNLINK", "k0", "k1", "nope")
    pair.same("UNLINK")
    pair.same("EXISTS", "k0", "k2")
    pair.same("FLUSHDB", "ASYNC", protos=(2,))
    pair.same("DBSIZE")
    pair.same("CF.ADD", "k1", "x")
    pair.same("FLUSHALL", "ASYNC", protos=(2,))
    pair.same("FLUSHALL", "SYNC")
    pair.same("FLUSHALL", "BOGUS")
    pair.same("FLUSHDB", "ASYNC", "SYNC")
    pair.same("DBSIZE")


def counters(c):
    info = c.info("memory")  # both there in Redis 7.0
    return (int(info["lazyfree_pending_objects"]),
            int(info["lazyfreed_objects"]))


def test_info_counters(pair):
    """FLUSHALL ASYNC counts every key freed in lazyfreed_objects, once
    freed; a small UNLINK is freed at once on both and not counted."""
    pair.same("FLUSHALL")
    pair.same("CONFIG", "RESETSTAT")
    for i in range(100):
        pair.same("CF.ADD", "k%d" % i, "x", protos=(2,))
    pair.same("UNLINK", "k0", protos=(2,))
    pair.same("FLUSHALL", "ASYNC", protos=(2,))
    ours, theirs = pair.conns()
    for c in (ours, theirs):
        wait_until(lambda: counters(c) == (0, 99), timeout=20,
                   what="the flushed keys to be freed")
    pair.same("CONFIG", "RESETSTAT")
    assert counters(ours) == counters(theirs) == (0, 0)


@pytest.fixture
def workdir():
    with daemons("cuckood-lazyfree-") as make:
        yield make


N = 30000


def fill(c, prefix, n=N, item="old"):
    c.many(("CF.RESERVE", "%s%d" % (prefix, i), 8, "EXPANSION", 0)
           for i in range(n))
    c.many(("CF.ADD", "%s%d" % (prefix, i), item) for i in range(0, n, 10))


def used(c):
    return int(c.info("memory")["used_memory"])


def test_flushall_async_then_writes_reads_save(workdir):
    s = workdir().start()
    c = RawConn(s.port)
    empty = used(c)
    fill(c, "k")
    full = used(c)
    # one write: the flush and what follows it go in the same read
    replies = c.pipeline([("FLUSHALL", "ASYNC"), ("DBSIZE",),
                          ("CF.EXISTS", "k10", "old"),
                          ("CF.RESERVE", "k10", 8, "EXPANSION", 0),
                          ("CF.ADD", "k10", "new"), ("INFO", "memory")])
    assert replies[:5] == ["OK", 0, 0, "OK", 1]
    # while freeing, used_memory still counts what is not yet freed
    mem = dict(ln.split(":", 1) for ln in replies[5].decode().split("\r\n")
               if ":" in ln)
    pending = int(mem["lazyfree_pending_objects"])
    assert int(mem["used_memory"]) >= \
        empty + (full - empty) * pending * 9 // (N * 10)
    fill(c, "n", 1000, item="new")
    assert c.call("SAVE") == "OK"
    wait_until(lambda: counters(c)[0] == 0, timeout=30,
               what="the old filters to be freed")
    assert counters(c)[1] == N
    # the memory comes back: what is left is the new keys'
    assert used(c) < empty + (full - empty) // 20
    c.close()
    s.kill()
    s.start()
    c = RawConn(s.port)
    assert c.call("DBSIZE") == 1001
    assert c.call("CF.EXISTS", "k10", "new") == 1
    assert c.call("CF.EXISTS", "k10", "old") == 0
    assert c.call("EXISTS", "k20") == 0
    assert c.call("CF.EXISTS", "n990", "new") == 1


def test_kill9_while_freeing(workdir):
    s = workdir("--appendonly", "yes", "--appendfsync", "always").start()
    c = RawConn(s.port)
    fill(c, "k", 60000)
    replies = c.pipeline([("FLUSHALL", "ASYNC")] +
                         [("CF.ADD", "new%d" % i, "x") for i in range(100)] +
                         [("INFO", "memory")])
    assert replies[0] == "OK" and replies[1:101] == [1] * 100
    s.kill()  # SIGKILL, most likely with filters still being freed
    s.start()
    c = RawConn(s.port)
    assert c.call("DBSIZE") == 100
    assert c.call("EXISTS", "k0", "k59999") == 0
    assert c.call("CF.EXISTS", "new99", "x") == 1


def big(c, key):
    assert c.call("CF.RESERVE", key, 1000000, "EXPANSION", 0) == "OK"


def freed(c, n):
    wait_until(lambda: counters(c) == (0, n), timeout=20,
               what="%d filters freed off the loop" % n)


def test_big_filters_freed_off_the_loop(workdir):
    s = workdir().start()
    c = RawConn(s.port)
    empty = used(c)
    big(c, "a")
    assert c.call("UNLINK", "a") == 1
    freed(c, 1)
    big(c, "b")
    assert c.call("DEL", "b") == 1  # lazyfree-lazy-user-del no
    assert counters(c) == (0, 1)
    assert c.call("CONFIG", "SET", "lazyfree-lazy-user-del", "yes") == "OK"
    big(c, "b")
    assert c.call("DEL", "b") == 1
    freed(c, 2)
    assert c.call("CONFIG", "SET", "lazyfree-lazy-user-flush", "yes") == "OK"
    big(c, "c")
    big(c, "d")
    assert c.call("FLUSHALL") == "OK"
    freed(c, 4)
    assert c.call("FLUSHDB", "SYNC") == "OK"
    assert counters(c) == (0, 4)
    assert c.call("CONFIG", "SET", "lazyfree-lazy-expire", "yes") == "OK"
    big(c, "e")
    big(c, "f")
    assert c.call("PEXPIRE", "e", 1) == 1
    assert c.call("PEXPIRE", "f", -1) == 1  # a time past deletes at once
    freed(c, 6)
    assert c.call("DBSIZE") == 0
    assert c.call("CONFIG", "SET", "lazyfree-lazy-server-del", "yes") == "OK"
    big(c, "g")
    big(c, "h")
    assert c.call("COPY", "g", "h", "REPLACE") == 1
    freed(c, 7)
    assert c.call("FLUSHALL", "SYNC") == "OK"
    assert counters(c) == (0, 7) and used(c) == empty


def test_rename_onto_a_big_filter(pair):
    """RENAME onto an existing key deletes that key as the server's own
    deletion, as Redis's does: under lazyfree-lazy-server-del yes a big
    filter it replaces is freed by the thread (lazyfreed_objects counts
    it), under no at once; the replies and counters are the same on
    both."""
    pair.same("FLUSHALL")
    pair.same("CONFIG", "RESETSTAT")
    ours, theirs = pair.conns()
    for lazy, counted in (("no", 0), ("yes", 1)):
        pair.same("CONFIG", "SET", "lazyfree-lazy-server-del", lazy)
        # 10M items: past the module's threshold of lazy freeing too
        for key in ("a", "b"):
            pair.same("CF.RESERVE", key, 10000000, "EXPANSION", 0,
                      protos=(2,))
        pair.same("CF.ADD", "a", "from-a", protos=(2,))
        pair.same("CF.ADD", "b", "from-b", protos=(2,))
        pair.same("RENAME", "a", "b", protos=(2,))
        pair.same("EXISTS", "a", "b")
        pair.same("CF.EXISTS", "b", "from-a")
        pair.same("CF.EXISTS", "b", "from-b")
        for c in (ours, theirs):
            wait_until(lambda: counters(c) == (0, counted), timeout=20,
                       what="the replaced filter to be freed")
        pair.same("DEL", "b", protos=(2,))  # lazyfree-lazy-user-del no
    pair.same("CONFIG", "SET", "lazyfree-lazy-server-del", "no")
    for c in (ours, theirs):
        assert counters(c) == (0, 1)
        c.close()


def test_maxmemory_counts_what_waits_to_be_freed(workdir):
    """used_memory, and so the maxmemory check, counts the filters handed
    to the thread until it has freed them: with the thread held, an UNLINK
    gives nothing back and a write past the limit is refused; once the
    thread has freed them the same write is taken."""
    s = workdir("--enable-debug-command", "yes").start()
    c = RawConn(s.port)
    big(c, "a")
    full = used(c)
    assert c.call("CONFIG", "SET", "maxmemory", full + 4096) == "OK"
    assert c.call("DEBUG", "LAZYFREE-HOLD", "1") == "OK"
    assert c.call("UNLINK", "a") == 1
    assert c.call("DBSIZE") == 0
    assert counters(c)[0] == 1
    assert used(c) >= full  # still counted
    reply = c.command("CF.RESERVE", "b", 1000000, "EXPANSION", 0)
    assert str(reply).startswith("OOM command not allowed"), reply
    assert c.call("DEBUG", "LAZYFREE-HOLD", "0") == "OK"
    freed(c, 1)
    assert used(c) < full
    big(c, "b")
    c.close()


def test_debug_lazyfree_hold_refusals(workdir):
    s = workdir("--enable-debug-command", "yes").start()
    c = RawConn(s.port)
    assert "not an integer" in str(c.command("DEBUG", "LAZYFREE-HOLD", "x"))
    assert "wrong number of arguments" in str(
        c.command("DEBUG", "LAZYFREE-HOLD"))
    # held while the server stops: everything is freed on the way out
    assert c.call("DEBUG", "LAZYFREE-HOLD", "1") == "OK"
    big(c, "a")
    assert c.call("UNLINK", "a") == 1
    assert counters(c)[0] == 1
    c.close()
    assert s.stop() == 0  # exits, not killed after a timeout


def test_latency_events_of_the_thread(workdir):
    """The thread's work shows in LATENCY (threshold 1 ms): lazyfree-job
    for freeing a flushed database of 200,000 filters (400,000 blocks);
    at a threshold above it, nothing. (lazyfree-purge, the pages given
    back after it, takes 1-3 ms for these: too near the threshold to
    assert, and nothing under the sanitizers' allocator.)"""
    s = workdir("--latency-monitor-threshold", 1).start()
    c = RawConn(s.port)
    fill(c, "k", 200000)
    assert c.call("FLUSHALL", "ASYNC") == "OK"
    freed(c, 200000)

    def events():
        return {e[0].decode() if isinstance(e[0], bytes) else e[0]
                for e in c.command("LATENCY", "LATEST")}

    wait_until(lambda: "lazyfree-job" in events(), timeout=30,
               what="the event recorded by the cron")
    # (the arrays the fill's resizes left are jobs too, and may show)
    hist = c.command("LATENCY", "HISTORY", "lazyfree-job")
    assert len(hist) >= 1 and all(ms >= 1 for _, ms in hist)
    doctor = c.command("LATENCY", "DOCTOR")
    assert b"lazy free thread" in doctor, doctor
    assert c.call("LATENCY", "RESET") >= 1
    assert c.call("CONFIG", "SET", "latency-monitor-threshold",
                  100000) == "OK"
    fill(c, "k", 20000)
    assert c.call("FLUSHALL", "ASYNC") == "OK"
    freed(c, 220000)
    assert c.call("DBSIZE") == 0
    assert c.command("LATENCY", "LATEST") == []
    c.close()


def test_resized_tables_freed_off_the_loop(workdir):
    """The bucket array a finished resize leaves (here 16K buckets, 128
    KiB, and smaller ones) goes to the thread: with the thread held it
    stays counted in used_memory, and comes off once the thread frees it;
    it is no object, so the counters do not move."""
    s = workdir("--enable-debug-command", "yes").start()
    c = RawConn(s.port)
    assert c.call("DEBUG", "LAZYFREE-HOLD", "1") == "OK"
    fill(c, "k", 20000)

    def resizing():
        return b"rehashing target" in c.command("DEBUG", "HTSTATS", "0")

    wait_until(lambda: not resizing(), timeout=30,
               what="the resize to end (the cron moves it on)")
    held = used(c)
    assert counters(c) == (0, 0)
    assert c.call("DEBUG", "LAZYFREE-HOLD", "0") == "OK"
    wait_until(lambda: used(c) <= held - 128 * 1024, timeout=20,
               what="the old arrays freed and uncounted")
    assert counters(c) == (0, 0)
    assert c.call("DBSIZE") == 20000
    c.close()
