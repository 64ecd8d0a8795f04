"""Filters with a window (CF.RESERVE ... WINDOW ms) against the real
cuckood: items present for their window after their last add and gone
after the slack, time moved by the hidden cf-window-clock-offset instead
of sleeping; the options' refusals; a full filter; CF.INFO's fields; the
key commands (COPY, RENAME, MOVE, DUMP/RESTORE, EXPIRE, MULTI/EXEC,
SCANDUMP/LOADCHUNK); and restarts from a snapshot and from the AOF with
the clock moved between, which must forget exactly what the wall clock
says.

Run: pytest-3 tests/integ/test_window.py  (CUCKOOD_BIN names the binary).
"""

import os

import pytest
import redis

from support.proc import Daemon, use_module, use_redis_server, wait_until
from support.resp import RawConn

pytestmark = pytest.mark.skipif(use_redis_server() or use_module(),
                                reason="cuckood's hidden clock offset")

WINDOW = 80000  # ms; its slice and slack are 10000
SLICE = WINDOW // 8
OFFSET = "cf-window-clock-offset"


def move_clock(r, ms):
    """Moves the filters' clock to ms past the real one."""
    r.execute_command("CONFIG", "SET", OFFSET, str(ms))


def info(r, key):
    rep = r.execute_command("CF.INFO", key)
    return {rep[i].decode() if isinstance(rep[i], bytes) else rep[i]:
            rep[i + 1] for i in range(0, len(rep), 2)}


@pytest.fixture(scope="module")
def server():
    d = Daemon("--save", "").start()
    yield d
    d.stop()
    d.cleanup()


@pytest.fixture
def r(server):
    c = server.client()
    c.execute_command("FLUSHALL")
    move_clock(c, 0)
    yield c
    move_clock(c, 0)


def test_present_for_the_window_gone_after_the_slack(r):
    assert r.execute_command("CF.RESERVE", "w", 1000, "WINDOW",
                             WINDOW) == b"OK"
    assert r.execute_command("CF.ADD", "w", "a") == 1
    assert r.execute_command("CF.ADDNX", "w", "b") == 1
    assert r.execute_command("CF.ADDNX", "w", "b") == 0
    assert r.execute_command("CF.INSERT", "w", "ITEMS", "c", "d") == [1, 1]
    # half a slice short of a window later: all there (the real clock
    # moves on too, by far less than that)
    move_clock(r, WINDOW - SLICE // 2)
    assert r.execute_command("CF.MEXISTS", "w", "a", "b", "c", "d",
                             "e") == [1, 1, 1, 1, 0]
    assert r.execute_command("CF.COUNT", "w", "a") == 1
    # re-added now: a window from now
    assert r.execute_command("CF.ADD", "w", "a") == 1
    assert r.execute_command("CF.INSERTNX", "w", "ITEMS", "b") == [0]
    # past the first adds' window and slack: c and d gone, a and b kept
    move_clock(r, WINDOW + SLICE + 1000)
    assert r.execute_command("CF.MEXISTS", "w", "a", "b", "c",
                             "d") == [1, 1, 0, 0]
    i = info(r, "w")
    assert (i["Live items"], i["Stale items"]) == (2, 2)
    assert i["Number of items inserted"] == 2
    # CF.DEL removes at once
    assert r.execute_command("CF.DEL", "w", "a") == 1
    assert r.execute_command("CF.EXISTS", "w", "a") == 0
    assert r.execute_command("CF.DEL", "w", "c") == 0
    # the second adds' window and slack past: nothing left
    move_clock(r, 2 * WINDOW + 2 * SLICE + 1000)
    assert r.execute_command("CF.MEXISTS", "w", "a", "b") == [0, 0]
    assert info(r, "w")["Live items"] == 0
    # and it fills again
    assert r.execute_command("CF.ADD", "w", "c") == 1
    assert r.execute_command("CF.EXISTS", "w", "c") == 1


def test_info_fields(r):
    r.execute_command("CF.RESERVE", "w", 1000, "WINDOW", 10001)
    i = info(r, "w")
    names = list(i)
    assert names[:8] == ["Size", "Number of buckets", "Number of filters",
                         "Number of items inserted",
                         "Number of items deleted", "Bucket size",
                         "Expansion rate", "Max iterations"]
    assert names[8:] == ["Fingerprint bits", "Capacity", "Error rate",
                         "Encoding", "Window", "Slack", "Live items",
                         "Stale items"]
    assert i["Encoding"] == b"window"
    assert i["Window"] == 10001
    # slices of ceil(10001 / 8) = 1251 ms: gone at most 9 * 1251 - 10001
    assert i["Slack"] == 9 * 1251 - 10001
    assert (i["Bucket size"], i["Fingerprint bits"], i["Expansion rate"],
            i["Capacity"]) == (4, 12, 0, 1000)


@pytest.mark.parametrize("args,err", [
    (("WINDOW", "0"), "WINDOW: value must be an integer between 1 and"),
    (("WINDOW", "x"), "Couldn't parse WINDOW"),
    (("WINDOW", "-5"), "WINDOW: value must be an integer between 1 and"),
    (("WINDOW", str(1 << 42 + 1)), "WINDOW: value must be"),
    (("WINDOW", "1000", "BUCKETSIZE", "2"), "has BUCKETSIZE 4"),
    (("WINDOW", "1000", "ERROR", "0.0001"), "12-bit fingerprints"),
    (("WINDOW",), "wrong number of arguments"),
])
def test_reserve_refusals(r, args, err):
    with pytest.raises(redis.ResponseError, match=err):
        r.execute_command("CF.RESERVE", "w", 1000, *args)
    assert r.execute_command("EXISTS", "w") == 0


def test_insert_options(r):
    # a filter CF.INSERT creates may have a window
    assert r.execute_command("CF.INSERT", "w", "CAPACITY", 100, "WINDOW",
                             WINDOW, "ITEMS", "a") == [1]
    assert info(r, "w")["Window"] == WINDOW
    # AT: the time of the adds; an add dated before the window and slack
    # stores nothing
    now = int(r.execute_command("TIME")[0]) * 1000
    assert r.execute_command("CF.INSERT", "w", "AT", now - 2 * WINDOW,
                             "ITEMS", "old") == [1]
    assert r.execute_command("CF.EXISTS", "w", "old") == 0
    assert r.execute_command("CF.INSERT", "w", "AT", now - WINDOW + 5 * SLICE,
                             "ITEMS", "mid") == [1]
    move_clock(r, 4 * SLICE)
    assert r.execute_command("CF.EXISTS", "w", "mid") == 1
    move_clock(r, 7 * SLICE)
    assert r.execute_command("CF.EXISTS", "w", "mid") == 0
    assert r.execute_command("CF.EXISTS", "w", "a") == 1
    for bad, err in ((("AT", "x"), "Couldn't parse AT"),
                     (("AT", "-1"), "AT: value must be an integer between 0"),
                     (("WINDOW", "0"), "WINDOW: value must be")):
        with pytest.raises(redis.ResponseError, match=err):
            r.execute_command("CF.INSERT", "w2", *bad, "ITEMS", "a")
    assert r.execute_command("EXISTS", "w2") == 0
    # NOCREATE with WINDOW on a missing key: not found
    with pytest.raises(redis.ResponseError, match="not found"):
        r.execute_command("CF.INSERTNX", "w2", "WINDOW", 100, "NOCREATE",
                          "ITEMS", "a")


def test_full_filter_refuses_and_forgets(r):
    r.execute_command("CF.RESERVE", "w", 20, "WINDOW", WINDOW)
    rep = r.execute_command("CF.INSERT", "w", "ITEMS",
                            *["i%d" % i for i in range(200)])
    stored = [i for i, v in enumerate(rep) if v == 1]
    assert len(stored) >= 20 and -1 in rep
    with pytest.raises(redis.ResponseError, match="Filter is full"):
        for i in range(200, 400):
            r.execute_command("CF.ADD", "w", "j%d" % i)
    # nothing that was stored is lost
    assert all(v == 1 for v in r.execute_command(
        "CF.MEXISTS", "w", *["i%d" % i for i in stored]))
    # once the window and slack are past, the slots come back
    move_clock(r, WINDOW + SLICE + 1000)
    assert r.execute_command("CF.INSERT", "w", "ITEMS",
                             *["n%d" % i for i in range(20)]) == [1] * 20


def test_key_commands(r):
    r.execute_command("CF.RESERVE", "w", 100, "WINDOW", WINDOW)
    r.execute_command("CF.ADD", "w", "a")
    assert r.execute_command("TYPE", "w") == b"MBbloomCF"
    assert r.execute_command("COPY", "w", "c") == 1
    assert r.execute_command("RENAME", "c", "d")
    assert r.execute_command("MOVE", "d", 1) == 1
    payload = r.execute_command("DUMP", "w")
    assert r.execute_command("RESTORE", "e", 0, payload)
    assert r.execute_command("EXPIRE", "e", 1000) == 1
    p = r.pipeline(transaction=True)
    p.execute_command("CF.ADD", "w", "b")
    p.execute_command("CF.EXISTS", "e", "a")
    assert p.execute() == [1, 1]
    r1 = redis.Redis(port=r.connection_pool.connection_kwargs["port"], db=1)
    # the copies keep the window: they forget with the original
    assert info(r1, "d")["Window"] == WINDOW
    move_clock(r, WINDOW + SLICE + 1000)
    assert r1.execute_command("CF.EXISTS", "d", "a") == 0
    assert r.execute_command("CF.EXISTS", "e", "a") == 0
    assert r.execute_command("CF.EXISTS", "w", "a") == 0
    # SCANDUMP / LOADCHUNK carry the window and the stamps
    move_clock(r, 0)
    r.execute_command("DEL", "w")
    r.execute_command("CF.RESERVE", "w", 100, "WINDOW", WINDOW)
    r.execute_command("CF.ADD", "w", "x")
    it = 0
    while True:
        it, chunk = r.execute_command("CF.SCANDUMP", "w", it)
        if it == 0:
            break
        assert r.execute_command("CF.LOADCHUNK", "l", it, chunk) == b"OK"
    assert r.execute_command("CF.EXISTS", "l", "x") == 1
    assert info(r, "l")["Window"] == WINDOW
    move_clock(r, WINDOW + SLICE + 1000)
    assert r.execute_command("CF.EXISTS", "l", "x") == 0
    # a damaged window header is refused
    hdr = r.execute_command("CF.SCANDUMP", "l", 0)[1]
    bad = hdr[:20] + bytes([hdr[20] ^ 1]) + hdr[21:]
    with pytest.raises(redis.ResponseError, match="Couldn't create filter"):
        r.execute_command("CF.LOADCHUNK", "m", 1, bad)


def test_command_docs_name_the_options(r, server):
    raw = RawConn(server.port)
    for cmd, tokens in (("cf.reserve", {b"WINDOW"}),
                        ("cf.insert", {b"WINDOW", b"AT"}),
                        ("cf.insertnx", {b"WINDOW", b"AT"})):
        words = set(_flat(raw.command("COMMAND", "DOCS", cmd)))
        assert tokens <= words, cmd


def _flat(x):
    if isinstance(x, (list, tuple)):
        for y in x:
            yield from _flat(y)
    elif isinstance(x, dict):
        for k, v in x.items():
            yield k
            yield from _flat(v)
    else:
        yield x


def _restart_case(tmp_path, extra, persist):
    """Items added at three times (by the offset), the server restarted
    with the clock moved on: each answers what the wall clock says."""
    d = Daemon(*extra, dir=str(tmp_path)).start()
    r = d.client()
    r.execute_command("CF.RESERVE", "w", 1000, "WINDOW", WINDOW)
    move_clock(r, 0)
    r.execute_command("CF.ADD", "w", "t0")
    move_clock(r, 3 * SLICE)
    r.execute_command("CF.INSERT", "w", "ITEMS", "t3", "t3b")
    move_clock(r, 6 * SLICE)
    r.execute_command("CF.ADDNX", "w", "t6")
    r.execute_command("CF.ADDNX", "w", "t0")  # a refresh, logged too
    persist(r)
    d.kill()
    # restarted a window and four slices on: t0 was refreshed at 6
    # slices and t6 added then, so both stay; t3's window and slack are
    # past
    d2 = Daemon(*extra, "--" + OFFSET, str(WINDOW + 4 * SLICE + 1000),
                dir=str(tmp_path)).start()
    try:
        r2 = d2.client()
        assert r2.execute_command("CF.MEXISTS", "w", "t0", "t3", "t3b",
                                  "t6") == [1, 0, 0, 1]
        move_clock(r2, 2 * WINDOW)
        assert r2.execute_command("CF.MEXISTS", "w", "t0", "t6") == [0, 0]
    finally:
        d2.stop()
        d2.cleanup()
        d.cleanup()


def test_restart_from_snapshot_with_the_clock_moved(tmp_path):
    _restart_case(tmp_path, ("--save", ""),
                  lambda r: r.execute_command("SAVE"))


def test_restart_from_aof_with_the_clock_moved(tmp_path):
    aof = ("--appendonly", "yes", "--appendfsync", "always", "--save", "")
    _restart_case(tmp_path, aof, lambda r: None)
    # what was logged: every add with its absolute time
    incr = [f for f in os.listdir(tmp_path / "appendonlydir")
            if f.endswith(".incr.aof")]
    text = b"".join((tmp_path / "appendonlydir" / f).read_bytes()
                    for f in incr)
    assert text.count(b"\r\nAT\r\n") >= 4
    assert b"CF.ADD\r\n" not in text and b"CF.ADDNX\r\n" not in text


def test_cron_reclaims_forgotten_slots(r):
    """No write touches the filter: the cron's sweep alone gives the
    forgotten entries' slots back."""
    r.execute_command("CF.RESERVE", "w", 5000, "WINDOW", WINDOW)
    r.execute_command("CF.INSERT", "w", "ITEMS",
                      *["i%d" % i for i in range(3000)])
    # items whose fingerprint and buckets coincide share one entry
    assert 2990 <= info(r, "w")["Live items"] <= 3000
    move_clock(r, WINDOW + SLICE + 1000)
    wait_until(lambda: info(r, "w")["Stale items"] == 0,
               what="the cron to sweep the forgotten entries")
    i = info(r, "w")
    assert (i["Live items"], i["Number of items inserted"]) == (0, 0)


def test_acl_cuckoo_category(r, server):
    """The window options are the CF commands' own: @cuckoo grants them,
    its removal refuses them."""
    r.execute_command("ACL", "SETUSER", "win", "on", ">pw", "~*", "+@cuckoo")
    r.execute_command("ACL", "SETUSER", "nowin", "on", ">pw", "~*", "+@all",
                      "-@cuckoo")
    try:
        u = redis.Redis(port=server.port, username="win", password="pw")
        assert u.execute_command("CF.RESERVE", "w", 100, "WINDOW",
                                 WINDOW) == b"OK"
        assert u.execute_command("CF.INSERT", "w", "AT", 1, "ITEMS",
                                 "a") == [1]
        n = redis.Redis(port=server.port, username="nowin", password="pw")
        with pytest.raises(redis.exceptions.NoPermissionError):
            n.execute_command("CF.INSERT", "w", "WINDOW", WINDOW, "ITEMS", "b")
    finally:
        r.execute_command("ACL", "DELUSER", "win", "nowin")
