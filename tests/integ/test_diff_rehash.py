"""The keyspace's incremental resizes: DEBUG (refused by default, HTSTATS,
its errors) and the two directives compared with redis-server; SCAN
across resizes on both sides; and, in cuckood, a resize held half done
(activerehashing off, DEBUG DICT-RESIZING 0) under SCAN, RANDOMKEY,
active expiry, a snapshot and an AOF rewrite, then finished by the cron
alone."""

import pytest

from support.diff import DiffPair, only_cuckood
from support.proc import daemons, wait_until
from support.resp import RawConn

pytestmark = only_cuckood

@pytest.fixture(scope="module")
def pair():
    """Both servers with their defaults (the test support turns DEBUG on
    for redis-server: turned off again here)."""
    p = DiffPair(theirs_args=("--enable-debug-command", "no"))
    yield p
    p.close()


@pytest.fixture(scope="module")
def dbg():
    """Both servers with DEBUG allowed."""
    p = DiffPair("--enable-debug-command", "yes",
                 theirs_args=("--enable-debug-command", "yes"))
    yield p
    p.close()


def _s(v):
    return v.decode() if isinstance(v, bytes) else v


def test_debug_refused_by_default(pair):
    pair.same("DEBUG", "HTSTATS", "0", exact=True)
    pair.same("DEBUG", exact=True)  # arity first
    pair.same("CONFIG", "GET", "enable-debug-command", exact=True)
    pair.same("CONFIG", "GET", "activerehashing", exact=True)
    # enable-debug-command is set at start-up only, as in Redis
    pair.same("CONFIG", "SET", "enable-debug-command", "yes")


def test_activerehashing_set(pair):
    pair.same("CONFIG", "SET", "activerehashing", "no", exact=True)
    pair.same("CONFIG", "GET", "activerehashing", exact=True)
    pair.same("CONFIG", "SET", "activerehashing", "maybe")
    pair.same("CONFIG", "SET", "activerehashing", "yes", exact=True)


def test_debug_errors(dbg):
    for cmd in (("DEBUG", "HTSTATS", "99"), ("DEBUG", "HTSTATS", "-1"),
                ("DEBUG", "HTSTATS", "x"), ("DEBUG", "HTSTATS"),
                ("DEBUG", "NOSUCH"), ("DEBUG", "HTSTATS", "0", "a", "b")):
        dbg.same(*cmd, exact=True)


def test_htstats_shape(dbg):
    dbg.same("FLUSHALL")
    ours, theirs = dbg.both("DEBUG", "HTSTATS", "0")
    # an empty database: the same first lines (the timeouts are no table
    # of their own here, so the rest differs)
    assert _s(ours).splitlines()[:3] == _s(theirs).splitlines()[:3] == [
        "[Dictionary HT]", "Hash table 0 stats (main hash table):",
        "No stats available for empty dictionaries"]
    for i in range(3):
        dbg.same("CF.ADD", "k%d" % i, "x")
    for reply in dbg.both("DEBUG", "HTSTATS", "0", proto=3):
        text = _s(reply)
        assert "number of elements: 3" in text or \
            "rehashing target" in text, text


def scan_all(c, count, between):
    """A whole SCAN with COUNT count, calling between() after each call:
    the keys reported."""
    seen, cursor = set(), b"0"
    while True:
        cursor, keys = c.command("SCAN", cursor, "COUNT", count)
        seen.update(keys)
        between()
        if cursor in (b"0", 0, "0"):
            return seen


def test_scan_across_resizes(dbg):
    """Keys present for a whole SCAN are reported while the table grows
    (keys added between calls) and shrinks (keys deleted): on both sides,
    in both protocols."""
    for proto in (2, 3):
        dbg.same("FLUSHALL")
        ours, theirs = dbg.conns(proto)
        for c in (ours, theirs):
            c.many(("CF.RESERVE", "base:%d" % i, 8, "EXPANSION", 0)
                   for i in range(300))
            c.many(("CF.RESERVE", "tmp:%d" % i, 8, "EXPANSION", 0)
                   for i in range(2000))
        base = {b"base:%d" % i for i in range(300)}
        for c in (ours, theirs):
            new = []

            def grow():  # the table doubles several times over the scan
                first = len(new)
                if first >= 6000:
                    return
                new.extend("new:%d" % i for i in range(first, first + 60))
                c.many(("CF.RESERVE", k, 8, "EXPANSION", 0)
                       for k in new[first:])

            assert base <= scan_all(c, 5, grow)
            doomed = new + ["tmp:%d" % i for i in range(2000)]

            def shrink():  # and shrinks back, past where it started
                c.many(("DEL", doomed.pop()) for _ in range(min(
                    len(doomed), 150)))

            assert base <= scan_all(c, 5, shrink)
            c.close()


def htstats(c):
    return _s(c.call("DEBUG", "HTSTATS", "0"))


def half_resized(make):
    """A cuckood whose db 0 is part way through a resize, held there
    (activerehashing off, so that only writes move it on, then
    DICT-RESIZING 0): 1500 filters, some of them added while it is held,
    every third with a timeout an hour away. Returns (server, connection,
    keys, keys with a timeout)."""
    s = make("--enable-debug-command", "yes", "--activerehashing",
             "no").start()
    c = RawConn(s.port)
    keys = ["tenant:%d" % i for i in range(1500)]
    # the 1024th key starts the doubling; each write moves a bucket on
    c.many(("CF.RESERVE", k, 8, "EXPANSION", 0) for k in keys[:1100])
    assert c.call("DEBUG", "DICT-RESIZING", "0") == "OK"
    c.many(("CF.RESERVE", k, 8, "EXPANSION", 0) for k in keys[1100:])
    c.many(("CF.ADD", k, "item") for k in keys[::5])
    c.many(("PEXPIRE", k, 3600 * 1000) for k in keys[::3])
    text = htstats(c)
    assert "rehashing target" in text, text
    assert "buckets moved to table 1" in text, text
    return s, c, set(keys), set(keys[::3])


def same_keys(c, keys, ttl):
    got = {_s(k) for k in scan_all(c, 100, lambda: None)}
    assert got == keys
    assert {k for k in keys if c.call("PTTL", k) > 0} == ttl
    assert all(c.call("CF.EXISTS", k, "item") == 1 for k in
               sorted(keys)[::7] if int(k.split(":")[1]) % 5 == 0)


@pytest.fixture
def workdir():
    with daemons("cuckood-rehash-") as make:
        yield make


def test_reads_and_expiry_mid_resize(workdir):
    s, c, keys, ttl = half_resized(workdir)
    same_keys(c, keys, ttl)
    assert c.call("DBSIZE") == len(keys)
    rnd = {_s(c.call("RANDOMKEY")) for _ in range(300)}
    assert rnd <= keys and len(rnd) > 100
    # keys that expire are found by active expiry in both tables
    gone = sorted(keys - ttl)[:400]
    c.many(("PEXPIRE", k, 1) for k in gone)
    assert "rehashing target" in htstats(c)
    wait_until(lambda: c.call("DBSIZE") == len(keys) - len(gone),
               timeout=20, what="active expiry mid-resize")
    assert "rehashing target" in htstats(c)
    same_keys(c, keys - set(gone), ttl)


def test_snapshot_mid_resize_loads_same_keys(workdir):
    s, c, keys, ttl = half_resized(workdir)
    assert c.call("SAVE") == "OK"
    c.close()
    s.kill()
    s.start()
    same_keys(RawConn(s.port), keys, ttl)


def test_aof_rewrite_mid_resize_loads_same_keys(workdir):
    s, c, keys, ttl = half_resized(workdir)
    # switching the AOF on writes its base through a rewrite
    assert c.call("CONFIG", "SET", "appendonly", "yes") == "OK"
    def rewritten():
        info = _s(c.call("INFO", "persistence"))
        return "aof_rewrite_in_progress:0" in info and \
            "aof_rewrites:1" in info

    wait_until(rewritten, what="the rewrite")
    assert "rehashing target" in htstats(c)
    c.close()
    s.kill()
    s.args = list(s.args) + ["--appendonly", "yes"]
    s.start()
    same_keys(RawConn(s.port), keys, ttl)


def test_cron_finishes_resize_without_writes(workdir):
    s, c, keys, ttl = half_resized(workdir)
    assert c.call("CONFIG", "SET", "activerehashing", "yes") == "OK"
    assert c.call("DEBUG", "DICT-RESIZING", "1") == "OK"
    wait_until(lambda: "rehashing target" not in htstats(c), timeout=20,
               what="the cron to finish the resize")
    assert "table size: 2048" in htstats(c)
    same_keys(c, keys, ttl)
