"""Differential tests of key timeouts: EXPIRE, PEXPIRE, EXPIREAT and
PEXPIREAT with NX, XX, GT and LT, TTL, PTTL, EXPIRETIME, PEXPIRETIME and
PERSIST, their errors, and what a timeout means for the other commands. The
same commands go to cuckood and to redis-server with the module, replies
compared in RESP2 and RESP3. Where time passes between the two sides,
remaining times are compared with a tolerance; absolute times set by
EXPIREAT or PEXPIREAT are compared exactly."""

import itertools
import time

import pytest

from support.diff import only_cuckood, pair_fixture
from support.proc import wait_until

pytestmark = only_cuckood

BIG = 9223372036854775807  # LLONG_MAX
SMALL = -9223372036854775808  # LLONG_MIN


pair = pair_fixture()


def same_in(pair, proto):
    """pair.same in one protocol: a command that changes something runs
    once, so that its reply is the one that changed it."""
    return lambda *cmd, **kw: pair.same(*cmd, protos=(proto,), **kw)


def fresh(same, key="k", ttl_ms=None):
    """A filter under key on both sides, with a timeout of ttl_ms when
    given; same is pair.same or same_in()'s."""
    same("DEL", key)
    same("CF.ADD", key, "x")
    if ttl_ms is not None:
        same("PEXPIRE", key, ttl_ms)


def close_ttls(pair, key, proto=2):
    """TTL and PTTL on both sides agree within what the time between the
    two calls explains."""
    ours, theirs = pair.both("PTTL", key, proto=proto)
    assert (ours < 0) == (theirs < 0), (ours, theirs)
    if ours < 0:
        assert ours == theirs
    else:
        assert abs(ours - theirs) <= 200, (ours, theirs)
    ours, theirs = pair.both("TTL", key, proto=proto)
    assert abs(ours - theirs) <= 1, (ours, theirs)
    return ours


def now_s():
    return int(time.time())


def commands():
    """(command, a small time, a larger time) for each of the four: the
    absolute ones get times well in the future."""
    t = now_s()
    return [("EXPIRE", 100, 200), ("PEXPIRE", 100000, 200000),
            ("EXPIREAT", t + 100, t + 200),
            ("PEXPIREAT", (t + 100) * 1000, (t + 200) * 1000)]


@pytest.mark.parametrize("proto", [2, 3])
def test_missing_key_and_no_timeout(pair, proto):
    S = same_in(pair, proto)
    S("FLUSHALL")
    for cmd in ("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"):
        assert S(cmd, "nope") == (0 if cmd == "PERSIST" else -2)
    for cmd, lo, hi in commands():
        for opts in ((), ("NX",), ("XX",), ("GT",), ("LT",)):
            assert S(cmd, "nope", lo, *opts) == 0
    fresh(S)
    for cmd in ("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME"):
        assert S(cmd, "k") == -1
    assert S("PERSIST", "k") == 0
    S("EXISTS", "nope")


@pytest.mark.parametrize("proto", [2, 3])
def test_option_rules(pair, proto):
    """Every option against a key without a timeout, with a smaller and
    with a larger one: the reply (0 or 1) and the time after it."""
    S = same_in(pair, proto)
    for cmd, lo, hi in commands():
        for opts in ((), ("NX",), ("XX",), ("GT",), ("LT",), ("XX", "GT"),
                     ("XX", "LT"), ("gt", "xx"), ("lt",), ("nx",),
                     ("XX", "XX"), ("GT", "GT")):
            cases = [(None, lo), (None, hi), (lo, hi), (hi, lo)]
            if cmd.endswith("AT"):
                # the same relative time twice depends on the clock
                cases.append((lo, lo))
            for start, when in cases:
                fresh(S)
                if start is not None:
                    S(cmd, "k", start)
                r = S(cmd, "k", when, *opts)
                assert r in (0, 1)
                close_ttls(pair, "k", proto)
                if cmd.endswith("AT"):
                    S("EXPIRETIME", "k")
                    S("PEXPIRETIME", "k")
                else:
                    # A relative time set a moment apart on the two sides
                    # may straddle a second.
                    ours, theirs = pair.both("EXPIRETIME", "k", proto=proto)
                    assert (ours < 0) == (theirs < 0), (ours, theirs)
                    assert abs(ours - theirs) <= 1, (ours, theirs)


@pytest.mark.parametrize("proto", [2, 3])
def test_option_rules_expected(pair, proto):
    """The rules themselves, so that a shared mistake cannot hide."""
    S = same_in(pair, proto)
    fresh(S)
    assert S("EXPIRE", "k", 100, "GT") == 0  # none is infinite
    assert S("EXPIRE", "k", 100, "XX") == 0
    assert S("EXPIRE", "k", 100, "LT") == 1
    assert S("EXPIRE", "k", 200, "NX") == 0
    assert S("EXPIRE", "k", 200, "LT") == 0
    assert S("EXPIRE", "k", 200, "GT") == 1
    t = now_s() + 1000
    assert S("EXPIREAT", "k", t, "GT") == 1
    assert S("EXPIREAT", "k", t, "GT") == 0  # equal is not greater
    assert S("EXPIREAT", "k", t, "LT") == 0  # nor less
    assert S("EXPIREAT", "k", t - 1, "LT") == 1
    assert S("EXPIRE", "k", 50, "XX", "LT") == 1
    assert 49 <= close_ttls(pair, "k", proto) <= 50


@pytest.mark.parametrize("proto", [2, 3])
def test_errors(pair, proto):
    S = same_in(pair, proto)
    fresh(S)
    for cmd in ("EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"):
        S(cmd, "k", exact=True)
        S(cmd, exact=True)
        for key in ("k", "nope"):
            S(cmd, key, "abc", exact=True)
            S(cmd, key, "1.5", exact=True)
            S(cmd, key, " 1", exact=True)
            S(cmd, key, 10, "foo", exact=True)
            S(cmd, key, 10, "NX", "foo", exact=True)
            S(cmd, key, "abc", "foo", exact=True)  # options first
            S(cmd, key, "abc", "NX", "XX", exact=True)
            for a, b in itertools.permutations(("NX", "XX", "GT", "LT"), 2):
                S(cmd, key, 10, a, b, exact=True)
            S(cmd, key, 10, "GT", "LT", "NX", exact=True)
    for cmd in ("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"):
        S(cmd, exact=True)
        S(cmd, "k", "extra", exact=True)
    assert S("EXISTS", "k") == 1


@pytest.mark.parametrize("proto", [2, 3])
def test_overflow(pair, proto):
    """A time that overflows in the unit conversion or in the addition of
    now is refused, naming the command; one that does not is kept."""
    S = same_in(pair, proto)
    for key in ("k", "nope"):
        fresh(S)
        for cmd, t in (("EXPIRE", BIG), ("EXPIRE", BIG // 1000 + 1),
                       ("EXPIRE", SMALL), ("EXPIRE", -(BIG // 1000) - 1),
                       ("EXPIREAT", BIG // 1000 + 1), ("EXPIREAT", SMALL),
                       ("PEXPIRE", BIG), ("PEXPIRE", BIG - 1000)):
            S(cmd, key, t, exact=True)
        S("EXISTS", "k")
    fresh(S)
    assert S("PEXPIREAT", "k", BIG) == 1
    assert S("PEXPIRETIME", "k") == BIG
    S("EXPIRETIME", "k")
    close_ttls(pair, "k", proto)
    assert S("EXPIREAT", "k", BIG // 1000) == 1
    assert S("EXPIRETIME", "k") == BIG // 1000
    S("PEXPIRETIME", "k")
    # the largest relative time that fits
    fresh(S)
    assert S("EXPIRE", "k", 10 ** 12) == 1
    close_ttls(pair, "k", proto)


@pytest.mark.parametrize("proto", [2, 3])
def test_time_in_the_past_deletes(pair, proto):
    S = same_in(pair, proto)
    for cmd, t in (("EXPIRE", -1), ("EXPIRE", 0), ("PEXPIRE", 0),
                   ("PEXPIRE", -5000), ("EXPIREAT", 1), ("EXPIREAT", 0),
                   ("EXPIREAT", -100), ("PEXPIREAT", 1),
                   ("PEXPIREAT", now_s() * 1000 - 10), ("EXPIRE", -(BIG // 1000)),
                   ("PEXPIRE", SMALL)):
        fresh(S)
        assert S(cmd, "k", t) == 1
        assert S("EXISTS", "k") == 0
        assert S("TTL", "k") == -2
    # the options still apply first
    fresh(S, ttl_ms=100000)
    assert S("EXPIRE", "k", -1, "NX") == 0
    assert S("EXPIRE", "k", -1, "GT") == 0
    assert S("EXPIRE", "k", -1, "LT") == 1
    assert S("EXISTS", "k") == 0
    S("DBSIZE")


@pytest.mark.parametrize("proto", [2, 3])
def test_absolute_times_exact(pair, proto):
    S = same_in(pair, proto)
    t = now_s() + 1000
    fresh(S)
    assert S("EXPIREAT", "k", t) == 1
    assert S("EXPIRETIME", "k") == t
    assert S("PEXPIRETIME", "k") == t * 1000
    for ms in (t * 1000 + 499, t * 1000 + 500, t * 1000 + 1):
        assert S("PEXPIREAT", "k", ms) == 1
        assert S("PEXPIRETIME", "k") == ms
        S("EXPIRETIME", "k")  # rounded as Redis rounds
    close_ttls(pair, "k", proto)


@pytest.mark.parametrize("proto", [2, 3])
def test_persist(pair, proto):
    S = same_in(pair, proto)
    fresh(S, ttl_ms=100000)
    assert S("PERSIST", "k") == 1
    assert S("TTL", "k") == -1
    assert S("PERSIST", "k") == 0
    assert S("EXISTS", "k") == 1
    assert S("EXPIRE", "k", 100, "XX") == 0


@pytest.mark.parametrize("proto", [2, 3])
def test_writes_keep_timeout(pair, proto):
    """CF writes keep a key's timeout; RENAME carries it; DEL and FLUSHALL
    clear it with the key."""
    S = same_in(pair, proto)
    fresh(S, ttl_ms=100000)
    for cmd in (("CF.ADD", "k", "y"), ("CF.ADDNX", "k", "z"),
                ("CF.INSERT", "k", "ITEMS", "a", "b"), ("CF.DEL", "k", "a"),
                ("CF.INSERTNX", "k", "ITEMS", "c")):
        S(*cmd)
        assert close_ttls(pair, "k", proto) > 0
    S("CF.RESERVE", "k", 100)  # refused: the key exists
    assert close_ttls(pair, "k", proto) > 0
    # RENAME carries the timeout, also onto a key without one ...
    fresh(S, "dst")
    assert S("RENAME", "k", "dst") == "OK"
    assert S("TTL", "k") == -2
    assert close_ttls(pair, "dst", proto) > 0
    # ... and a source without one leaves the destination without one
    fresh(S, "plain")
    assert S("RENAME", "plain", "dst") == "OK"
    assert S("TTL", "dst") == -1
    # a rename onto itself keeps it
    S("PEXPIRE", "dst", 50000)
    assert S("RENAME", "dst", "dst") == "OK"
    assert close_ttls(pair, "dst", proto) > 0
    assert S("DEL", "dst") == 1
    assert S("CF.ADD", "dst", "x") == 1
    assert S("TTL", "dst") == -1
    S("PEXPIRE", "dst", 50000)
    S("FLUSHALL")
    S("CF.ADD", "dst", "x")
    assert S("TTL", "dst") == -1


@pytest.mark.parametrize("proto", [2, 3])
def test_expired_key_gone_for_every_family(pair, proto):
    """A key past its time is absent for every command, whether or not
    active expiry has come by."""
    S = same_in(pair, proto)
    checks = [
        (("EXISTS", "{k}"), 0),
        (("TYPE", "{k}"), "none"),
        (("CF.EXISTS", "{k}", "x"), 0),
        (("CF.MEXISTS", "{k}", "x", "y"), [0, 0]),
        (("CF.COUNT", "{k}", "x"), 0),
        (("DEL", "{k}"), 0),
        (("UNLINK", "{k}"), 0),
        (("TTL", "{k}"), -2),
        (("PTTL", "{k}"), -2),
        (("EXPIRETIME", "{k}"), -2),
        (("PERSIST", "{k}"), 0),
        (("EXPIRE", "{k}", 100), 0),
        (("KEYS", "{k}"), []),
        (("KEYS", "*"), []),
        (("CF.DEL", "{k}", "x"), None),
        (("CF.INFO", "{k}"), None),
        (("RENAME", "{k}", "other"), None),
        (("SCAN", 0, "COUNT", 1000), None),
    ]
    S("FLUSHALL")
    for i, (cmd, expect) in enumerate(checks):
        key = "key%d" % i
        cmd = tuple(a.replace("{k}", key) if isinstance(a, str) else a
                    for a in cmd)
        fresh(S, key)
        S("CF.ADD", key, "y")
        S("PEXPIRE", key, 30)
        pair.wait_expired(key, proto)
        ours = S(*cmd)
        if expect is not None:
            assert ours == expect, (cmd, ours)
    # CF.ADD on an expired key makes a new key, without a timeout
    fresh(S, "again")
    S("PEXPIRE", "again", 30)
    pair.wait_expired("again", proto)
    assert S("CF.ADD", "again", "z") == 1
    assert S("CF.EXISTS", "again", "x") == 0
    assert S("TTL", "again") == -1
    # and RENAME onto an expired destination simply replaces it
    fresh(S, "src")
    fresh(S, "old", ttl_ms=30)
    pair.wait_expired("old", proto)
    assert S("RENAME", "src", "old") == "OK"
    assert S("TTL", "old") == -1
    wait_until(lambda: pair.both("DBSIZE") == (2, 2), timeout=10,
               what="both sides to reclaim the keys")


def test_info_keyspace_expires(pair):
    pair.same("FLUSHALL")
    for k in ("a", "b", "c"):
        pair.same("CF.ADD", k, "x")
    pair.same("EXPIRE", "a", 100)
    pair.same("EXPIRE", "b", 100)
    a, b = pair.both("INFO", "keyspace")

    def line(text):
        text = text.decode() if isinstance(text, bytes) else text
        return [ln for ln in text.splitlines() if ln.startswith("db0:")][0]

    assert line(a).split(",")[:2] == line(b).split(",")[:2] == [
        "db0:keys=3", "expires=2"]
    pair.same("PERSIST", "a")
    a, b = pair.both("INFO", "keyspace")
    assert line(a).split(",")[1] == line(b).split(",")[1] == "expires=1"


def latest_events(c):
    """LATENCY LATEST's event names."""
    return {e[0] if isinstance(e[0], str) else e[0].decode()
            for e in c.command("LATENCY", "LATEST")}


def test_latency_expire_cycle_event(pair):
    """100,000 keys that expire at one moment keep an active expiry cycle
    busy past its time budget (1 ms here, 25 ms in Redis's slow cycle), so
    at a threshold of 1 ms both servers record an expire-cycle event,
    under Redis's name, and answer LATENCY LATEST and HISTORY alike."""
    ours, theirs = pair.conns()
    for c in (ours, theirs):
        assert c.call("FLUSHALL") == "OK"
        assert c.call("CONFIG", "SET", "latency-monitor-threshold",
                      1) == "OK"
        assert c.call("LATENCY", "RESET") >= 0
        n = 100000
        c.many(("CF.RESERVE", "k%d" % i, 8, "EXPANSION", 0)
               for i in range(n))
        # a time ahead, so that none is deleted by PEXPIREAT itself
        sec, usec = c.call("TIME")
        at = int(sec) * 1000 + int(usec) // 1000 + 3000
        c.many(("PEXPIREAT", "k%d" % i, at) for i in range(n))
        assert c.call("DBSIZE") == n
    for c, name in ((ours, "cuckood"), (theirs, "redis-server")):
        wait_until(lambda: c.call("DBSIZE") == 0, timeout=60,
                   what="active expiry to take every key")
        assert "expire-cycle" in latest_events(c), name
        hist = c.command("LATENCY", "HISTORY", "expire-cycle")
        assert len(hist) >= 1 and all(ms >= 1 for _, ms in hist)
        assert c.call("CONFIG", "SET", "latency-monitor-threshold",
                      0) == "OK"
