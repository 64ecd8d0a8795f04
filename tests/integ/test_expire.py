"""Key timeouts in cuckood itself: active expiry of keys nobody reads, the
lazy check of each command family, exact memory accounting, timeouts
through SAVE, kill -9 and restart, and the counters (INFO, dirty)."""

import os
import time

import pytest

from support.proc import (Daemon, shared_dir, use_redis_server, wait_expired,
                          wait_until)

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's own accounting and files")


@pytest.fixture
def server():
    s = Daemon("--save", "").start()
    yield s
    s.cleanup()


def info(c, section):
    return c.info(section)


def fill(c, prefix, n, pexpire=None, batch=5000):
    """n small filters prefix0..; with a timeout of pexpire ms when
    given."""
    for lo in range(0, n, batch):
        p = c.pipeline(transaction=False)
        for i in range(lo, min(n, lo + batch)):
            p.execute_command("CF.RESERVE", "%s%d" % (prefix, i), 8)
            if pexpire is not None:
                p.execute_command("PEXPIRE", "%s%d" % (prefix, i), pexpire)
        assert all(r in (b"OK", 1, True) for r in p.execute())


def test_active_expiry_of_keys_nobody_reads(server):
    """100k keys with a timeout and 1k without: the cron alone reclaims
    the 100k (DBSIZE does not look at timeouts), INFO counts them, and
    the memory comes back to the byte."""
    c = server.client()
    start = int(info(c, "memory")["used_memory"])
    fill(c, "keep", 1000)
    with_plain = int(info(c, "memory")["used_memory"])
    fill(c, "tmp", 100000)

    def set_all(at_ms):
        for lo in range(0, 100000, 5000):
            p = c.pipeline(transaction=False)
            for i in range(lo, lo + 5000):
                p.pexpireat("tmp%d" % i, at_ms)
            assert all(p.execute())

    # one deadline for all, far enough that setting it takes less (timed
    # first with a time an hour away: sanitizer builds are slow)
    t0 = time.monotonic()
    set_all(int(time.time() * 1000) + 3600 * 1000)
    setting_ms = int((time.monotonic() - t0) * 1000)
    deadline = int(time.time() * 1000) + 3 * setting_ms + 1000
    set_all(deadline)
    ks = info(c, "keyspace")["db0"]
    assert int(time.time() * 1000) < deadline
    assert ks["keys"] == 101000 and ks["expires"] == 100000
    assert c.dbsize() == 101000
    wait_expired(c.execute_command, "tmp0", timeout=60)
    t0 = time.monotonic()
    wait_until(lambda: c.dbsize() == 1000, timeout=30,
               what="active expiry to reclaim 100k keys")
    took = time.monotonic() - t0
    assert took < 10, took
    st = info(c, "stats")
    assert st["expired_keys"] == 100000
    assert 0 <= float(st["expired_stale_perc"]) <= 100
    assert info(c, "keyspace")["db0"]["expires"] == 0
    for i in range(0, 1000, 97):
        assert c.exists("keep%d" % i) == 1
    c.execute_command("FLUSHALL")
    # the bucket array shrinks as keys go: compare with no keys at all
    assert int(info(c, "memory")["used_memory"]) == start
    assert with_plain > start


def test_expiry_spreads_over_databases(server):
    c = server.client()
    for db in (0, 3, 15):
        cdb = server.client(db=db)
        fill(cdb, "k", 2000, pexpire=100)
    wait_until(lambda: all(server.client(db=d).dbsize() == 0
                           for d in (0, 3, 15)), timeout=30,
               what="every database to be reclaimed")
    assert info(c, "stats")["expired_keys"] == 6000


def test_lazy_expiry_each_family(server):
    """Each command right after the key's time: with only the cron (every
    100 ms) most of these would still see the key."""
    c = server.client()
    families = [
        lambda k: c.exists(k) == 0,
        lambda k: c.type(k) == b"none",
        lambda k: c.execute_command("CF.EXISTS", k, "x") == 0,
        lambda k: c.execute_command("CF.COUNT", k, "x") == 0,
        lambda k: c.delete(k) == 0,
        lambda k: c.ttl(k) == -2,
        lambda k: c.execute_command("MEMORY", "USAGE", k) is None,
        lambda k: k.encode() not in c.keys("*"),
        lambda k: k.encode() not in c.scan(0, count=1000)[1],
        lambda k: c.persist(k) == 0,
        lambda k: c.expire(k, 100) == 0,
    ]
    expired_before = info(c, "stats")["expired_keys"]
    for round_ in range(3):
        for i, check in enumerate(families):
            k = "lazy%d-%d" % (round_, i)
            c.execute_command("CF.ADD", k, "x")
            # far enough ahead that the command surely arrives before it
            # (a time already past would delete the key, not expire it)
            deadline = int(time.time() * 1000) + 150
            assert c.pexpireat(k, deadline) == 1
            assert c.exists(k) == 1
            wait_expired(c.execute_command, k)
            assert check(k), (i, k)
    # RENAME of an expired source, and CF.ADD making the key anew
    c.execute_command("CF.ADD", "src", "x")
    c.pexpire("src", 10)
    wait_expired(c.execute_command, "src")
    with pytest.raises(Exception, match="no such key"):
        c.rename("src", "dst")
    c.execute_command("CF.ADD", "again", "x")
    c.pexpire("again", 10)
    wait_expired(c.execute_command, "again")
    assert c.execute_command("CF.ADD", "again", "y") == 1
    assert c.execute_command("CF.EXISTS", "again", "x") == 0
    assert c.ttl("again") == -1
    # the keys KEYS, SCAN and the keys of the first families expired
    # lazily or by the cron: every one counted once
    wait_until(lambda: c.dbsize() == 1, timeout=10)
    assert info(c, "stats")["expired_keys"] - expired_before == \
        3 * len(families) + 2


def test_memory_usage_and_accounting(server):
    """A timeout costs its key at most 16 bytes (here exactly 8), says
    MEMORY USAGE, and PERSIST or the expiry gives them back."""
    c = server.client()
    start = int(info(c, "memory")["used_memory"])
    c.execute_command("CF.RESERVE", "k", 100)
    c.execute_command("CF.ADD", "k", "x")
    plain = c.execute_command("MEMORY", "USAGE", "k")
    used = int(info(c, "memory")["used_memory"])
    assert c.expire("k", 100)
    timed = c.execute_command("MEMORY", "USAGE", "k")
    assert 0 < timed - plain <= 16
    assert int(info(c, "memory")["used_memory"]) - used == timed - plain
    assert c.expire("k", 200)  # a new time costs nothing more
    assert c.execute_command("MEMORY", "USAGE", "k") == timed
    assert c.persist("k")
    assert c.execute_command("MEMORY", "USAGE", "k") == plain
    assert int(info(c, "memory")["used_memory"]) == used
    # the CF data survived every move of the key
    assert c.execute_command("CF.EXISTS", "k", "x") == 1
    assert c.pexpire("k", 20)
    wait_expired(c.execute_command, "k")
    assert c.execute_command("MEMORY", "USAGE", "k") is None
    assert int(info(c, "memory")["used_memory"]) == start


def test_dirty_counts(server):
    """As Redis: each timeout change is one change for the save points,
    a refused one none, and an expiry none."""
    c = server.client()

    def dirty():
        return info(c, "persistence")["rdb_changes_since_last_save"]

    c.execute_command("CF.ADD", "k", "x")
    d = dirty()
    assert c.expire("k", 100) and dirty() == d + 1
    assert not c.expire("k", 100, nx=True) and dirty() == d + 1
    assert c.persist("k") and dirty() == d + 2
    assert not c.persist("k") and dirty() == d + 2
    assert c.pexpire("k", 10) and dirty() == d + 3
    wait_expired(c.execute_command, "k")
    assert c.exists("k") == 0
    assert dirty() == d + 3
    c.execute_command("CF.ADD", "k", "x")
    d = dirty()
    assert c.expire("k", -1) and dirty() == d + 1  # deleted: one change
    assert c.exists("k") == 0


# ---------------------------------------------------------------------------
# Through the snapshot.

@pytest.fixture
def workdir():
    with shared_dir("cuckood-expire-") as (d, servers):
        def make():
            s = Daemon("--save", "", dir=d)
            servers.append(s)
            return s

        yield d, make


def test_ttl_survives_save_kill9_restart(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    for k in ("long", "short", "plain"):
        c.execute_command("CF.ADD", k, "item-" + k)
    at = int(time.time() * 1000) + 3600 * 1000 + 123
    assert c.pexpireat("long", at)
    assert c.pexpire("short", 1500)
    c2 = s.client(db=5)
    c2.execute_command("CF.ADD", "db5", "x")
    assert c2.expire("db5", 1000)
    assert c.execute_command("SAVE") in (b"OK", True)
    assert os.path.exists(os.path.join(d, "dump.cuckoo"))
    s.kill()
    time.sleep(1.6)  # "short" expires while the server is down
    s.start()
    c = s.client()
    assert c.execute_command("PEXPIRETIME", "long") == at
    assert c.execute_command("CF.EXISTS", "long", "item-long") == 1
    assert c.ttl("plain") == -1
    assert c.execute_command("CF.EXISTS", "plain", "item-plain") == 1
    # not loaded at all: DBSIZE, which does not check times, agrees
    assert c.dbsize() == 2
    assert c.exists("short") == 0
    assert 990 <= s.client(db=5).ttl("db5") <= 1000
    ks = info(c, "keyspace")
    assert ks["db0"]["expires"] == 1 and ks["db5"]["expires"] == 1
    assert "expired keys skipped" in s.log_text()
    # and a second round trip keeps the same absolute time
    assert c.execute_command("SAVE") in (b"OK", True)
    s.kill()
    s.start()
    assert s.client().execute_command("PEXPIRETIME", "long") == at


def test_randomkey_during_pause_with_only_expired_keys(server):
    """During CLIENT PAUSE expired keys stay stored: RANDOMKEY must still
    answer (the last key drawn after 100 misses, as Redis 7.2), not loop
    over keys it may not delete."""
    c = server.client()
    fill(c, "gone", 50, pexpire=20)
    assert c.execute_command("CLIENT", "PAUSE", 5000, "WRITE") in (b"OK",
                                                                    True)
    wait_expired(c.execute_command, "gone49")  # the last one set
    key = c.execute_command("RANDOMKEY")
    assert key is not None and key.startswith(b"gone")
    assert c.execute_command("EXISTS", key) == 0  # past its time
    assert c.execute_command("DBSIZE") == 50      # but still stored
    c.execute_command("CLIENT", "UNPAUSE")
    assert c.execute_command("RANDOMKEY") is None  # reclaimed when drawn


def test_pause_stops_active_expiry_already_running(server):
    """A CLIENT PAUSE that begins while active expiry is working through
    many keys stops it: nothing more is reclaimed until the pause ends."""
    c = server.client()
    fill(c, "m", 200000)
    # Relative timeouts: on a slow machine an absolute time could pass
    # before the last ones are set, and a time already past deletes the key
    # at once instead of leaving it to active expiry.
    p = c.pipeline(transaction=False)
    for i in range(200000):
        p.execute_command("PEXPIRE", "m%d" % i, 3000)
    assert all(r in (1, True) for r in p.execute())
    wait_until(lambda: int(info(c, "stats")["expired_keys"]) > 0, 20,
               step=0.01, what="active expiry to start")
    c.execute_command("CLIENT", "PAUSE", 5000, "WRITE")
    left = c.execute_command("DBSIZE")
    expired = info(c, "stats")["expired_keys"]
    # The wait is what is tested: nothing at all happens for 0.3 s of
    # pause (three cron ticks, many expiry slices), so there is no state to
    # poll for. A longer wait makes the test stronger, not more reliable.
    time.sleep(0.3)
    assert c.execute_command("DBSIZE") == left
    assert info(c, "stats")["expired_keys"] == expired
    c.execute_command("CLIENT", "UNPAUSE")
    wait_until(lambda: c.execute_command("DBSIZE") == 0, 30,
               what="expiry to resume after the pause")
    assert left > 0, "expiry ended before the pause: nothing was tested"
