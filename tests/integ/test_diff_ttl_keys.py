"""Differential tests of timeouts across the key commands: COPY, MOVE,
RENAMENX and RESTORE carry or set a key's absolute expiry time, and a key
past its time is absent for each of them, on cuckood as on redis-server
with the module; RESP2 and RESP3."""

import time

import pytest

from support.diff import only_cuckood, pair_fixture

pytestmark = only_cuckood

AT = 4102444800  # 2100-01-01, an absolute time both sides store exactly


pair = pair_fixture("module")


@pytest.mark.parametrize("proto", (2, 3))
def test_copy_move_renamenx_carry_the_time(pair, proto):
    pair.script([("FLUSHALL",), ("CF.ADD", "t", "a"),
                 ("EXPIREAT", "t", AT)], proto=proto)
    out = pair.script([
        ("COPY", "t", "c"), ("EXPIRETIME", "c"),
        ("COPY", "t", "d", "DB", "1"), ("SELECT", "1"), ("EXPIRETIME", "d"),
        ("SELECT", "0"),
        ("RENAMENX", "c", "r"), ("EXPIRETIME", "r"),
        ("MOVE", "r", "2"), ("SELECT", "2"), ("EXPIRETIME", "r"),
        ("SELECT", "0"),
        ("CF.ADD", "plain", "x"), ("COPY", "plain", "t", "REPLACE"),
        ("EXPIRETIME", "t"),
    ], exact=True, proto=proto)
    assert out[1] == AT and out[4] == AT and out[7] == AT and out[10] == AT
    assert out[14] == -1  # REPLACE takes the source's (no) timeout


@pytest.mark.parametrize("proto", (2, 3))
def test_restore_sets_the_time(pair, proto):
    pair.script([("FLUSHALL",), ("CF.ADD", "s", "a")], proto=proto)
    ours, theirs = pair.both("DUMP", "s", proto=proto)
    for side, payload in ((0, ours), (1, theirs)):
        conn = pair._conn(proto)[side]
        assert conn.command("RESTORE", "abs", AT * 1000, payload,
                            "ABSTTL") == "OK"
        assert conn.command("EXPIRETIME", "abs") == AT
        assert conn.command("RESTORE", "rel", 100000, payload) == "OK"
        assert 0 < conn.command("PTTL", "rel") <= 100000
        past = (int(time.time()) - 10) * 1000
        assert conn.command("RESTORE", "gone", past, payload,
                            "ABSTTL") == "OK"
        assert conn.command("EXISTS", "gone") == 0
        assert conn.command("RESTORE", "none", 0, payload) == "OK"
        assert conn.command("TTL", "none") == -1
        # A relative ttl that passes INT64_MAX from now: Redis's sum wraps
        # into the past, so it answers OK and makes nothing.
        assert conn.command("RESTORE", "huge", 2**63 - 1, payload) == "OK"
        assert conn.command("EXISTS", "huge") == 0


@pytest.mark.parametrize("proto", (2, 3))
def test_expired_keys_are_absent_for_the_key_commands(pair, proto):
    pair.script([("FLUSHALL",)], proto=proto)
    for k in ("e1", "e2", "e3", "e4", "e5"):
        pair.script([("CF.ADD", k, "a"), ("PEXPIRE", k, 30)], proto=proto)
    pair.wait_expired("e5", proto)  # the last one's time is the latest
    pair.script([
        ("COPY", "e1", "x"), ("MOVE", "e2", "1"), ("RENAMENX", "e3", "y"),
        ("DUMP", "e4"), ("OBJECT", "ENCODING", "e5"), ("TOUCH", "e1", "e5"),
        ("RANDOMKEY",), ("EXISTS", "x", "y"),
    ], proto=proto)


@pytest.mark.parametrize("proto", (2, 3))
def test_watched_key_expiring_dooms_exec(pair, proto):
    """A watched key that passes its time before EXEC aborts it, whether or
    not anyone touched the key; one already expired when watched does
    not."""
    pair.script([("FLUSHALL",), ("CF.ADD", "w", "a"), ("PEXPIRE", "w", 80),
                 ("WATCH", "w")], proto=proto)
    pair.wait_expired("w", proto)
    out = pair.script([("MULTI",), ("PING",), ("EXEC",)], proto=proto)
    assert out[2] is None
    pair.script([("CF.ADD", "v", "a"), ("PEXPIRE", "v", 20)], proto=proto)
    pair.wait_expired("v", proto)
    out = pair.script([("WATCH", "v"), ("MULTI",), ("PING",), ("EXEC",)],
                      proto=proto)
    assert out[3] == ["PONG"]


def test_no_expiry_during_client_pause(pair):
    """As Redis 7: during CLIENT PAUSE a key past its time is absent to
    readers but stays stored (DBSIZE counts it) until the pause ends."""
    pair.script([("FLUSHALL",), ("CF.ADD", "p", "a"), ("PEXPIRE", "p", 30),
                 ("CLIENT", "PAUSE", 2000, "WRITE")])
    pair.wait_expired("p")
    # Then several expiry cycles: what is tested is that they reclaim
    # nothing, so there is no state to wait for.
    time.sleep(0.3)
    out = pair.script([("EXISTS", "p"), ("DBSIZE",), ("CLIENT", "UNPAUSE"),
                       ("EXISTS", "p"), ("DBSIZE",)])
    assert out[:2] == [0, 1] and out[3:] == [0, 0]
