"""Differential tests of COPY, RENAMENX, MOVE, SWAPDB, DUMP/RESTORE, TOUCH,
RANDOMKEY, OBJECT, EXISTS and WAIT on filter keys: the same sequence to
cuckood and to redis-server with the module, replies compared in RESP2 and
RESP3. DUMP payloads differ by design (each side's own encoding), so
round trips run on each side and the refusals of bad payloads are
compared."""

import pytest

from support.diff import DiffPair, only_cuckood
from support.resp import RespError, cf_info

pytestmark = only_cuckood

WRONG_PAYLOAD = "ERR DUMP payload version or checksum are wrong"


@pytest.fixture
def pair():
    p = DiffPair()
    p.same("FLUSHALL")
    yield p
    p.close()


def filters(pair, *keys):
    for k in keys:
        pair.same("CF.ADD", k, "x")


def test_copy(pair):
    filters(pair, "a", "b")
    pair.same("COPY", "a", "c")
    pair.same("CF.EXISTS", "c", "x")
    pair.same("COPY", "a", "b")              # exists: 0
    pair.same("COPY", "a", "b", "REPLACE")
    pair.same("COPY", "nope", "d")
    pair.same("COPY", "nope", "d", "REPLACE")
    pair.same("COPY", "a", "a", exact=True)
    pair.same("COPY", "a", "a", "DB", "0", exact=True)
    pair.same("COPY", "a", "a", "DB", "1")   # another database: fine
    pair.same("COPY", "a", "e", "DB", "99", exact=True)
    pair.same("COPY", "a", "e", "DB", "-1", exact=True)
    pair.same("COPY", "a", "e", "DB", "x", exact=True)
    pair.same("COPY", "a", "e", "DB", "99999999999", exact=True)
    pair.same("COPY", "a", "e", "DB", exact=True)
    pair.same("COPY", "a", "e", "BOGUS", exact=True)
    pair.same("COPY", "a", "e", "REPLACE", "REPLACE")
    pair.same("COPY", "a", exact=True)
    pair.same("DBSIZE")
    pair.same("SELECT", "1")
    pair.same("CF.EXISTS", "a", "x")
    pair.same("DBSIZE")
    pair.same("SELECT", "0")


def test_copy_is_independent(pair):
    """A copy shares nothing with its source: adding to one leaves the
    other as it was, both ways, and deleting one keeps the other."""
    filters(pair, "src")
    pair.same("COPY", "src", "dst")
    pair.same("CF.ADD", "dst", "only-dst")
    pair.same("CF.EXISTS", "src", "only-dst")
    pair.same("CF.EXISTS", "dst", "only-dst")
    pair.same("CF.ADD", "src", "only-src")
    pair.same("CF.EXISTS", "dst", "only-src")
    pair.same("CF.COUNT", "src", "x")
    pair.same("DEL", "src")
    pair.same("CF.EXISTS", "dst", "x")
    a = pair.ours.raw()
    # The copy's counters are its own: x and only-dst, each added once per
    # protocol.
    fields = cf_info(a.command("CF.INFO", "dst"))
    assert fields[b"Number of items inserted"] == 4


def test_copy_memory_back_to_start(pair):
    """used_memory (the keyspace's exact sum) goes up by a copy and back to
    the start after DEL of the copies, in this and another database."""
    a = pair.ours.raw()
    a.command("CF.RESERVE", "m", "10000")
    start = int(a.info("memory")["used_memory"])
    assert a.command("COPY", "m", "m2") == 1
    assert a.command("COPY", "m", "m3", "DB", "2") == 1
    assert a.command("COPY", "m", "m2", "REPLACE") == 1
    grown = int(a.info("memory")["used_memory"])
    assert grown > start + 2 * 10000  # two real tables, not shared ones
    assert a.command("DEL", "m2") == 1
    assert a.command("SELECT", "2") == "OK"
    assert a.command("DEL", "m3") == 1
    assert int(a.info("memory")["used_memory"]) == start


def test_renamenx(pair):
    filters(pair, "a", "b")
    pair.same("RENAMENX", "a", "b")
    pair.same("RENAMENX", "a", "a")
    pair.same("RENAMENX", "a", "c")
    pair.same("EXISTS", "a", "c")
    pair.same("RENAMENX", "nope", "d", exact=True)
    pair.same("RENAMENX", "nope", "nope", exact=True)
    pair.same("RENAMENX", "c", exact=True)
    pair.same("CF.EXISTS", "c", "x")


def test_move(pair):
    filters(pair, "a", "b")
    pair.same("MOVE", "a", "1")
    pair.same("EXISTS", "a")
    pair.same("MOVE", "a", "1")            # gone from here: 0
    pair.same("MOVE", "b", "0", exact=True)
    pair.same("MOVE", "b", "99", exact=True)
    pair.same("MOVE", "b", "-1", exact=True)
    pair.same("MOVE", "b", "x", exact=True)
    pair.same("MOVE", "nope", "1")
    pair.same("SELECT", "1")
    pair.same("CF.EXISTS", "a", "x")
    pair.same("CF.ADD", "b", "y")
    pair.same("MOVE", "b", "0")            # exists there: 0
    pair.same("EXISTS", "b")
    pair.same("SELECT", "0")
    pair.same("CF.EXISTS", "b", "y")
    pair.same("MOVE", "b", exact=True)


def test_move_seen_by_selected_clients(pair):
    ours2, theirs2 = pair.conns(3)
    for c in (ours2, theirs2):
        assert c.command("SELECT", "5") == "OK"
    filters(pair, "k")
    pair.same("MOVE", "k", "5")
    assert ours2.command("CF.EXISTS", "k", "x") is True
    assert theirs2.command("CF.EXISTS", "k", "x") is True
    # Memory follows the key: the same figure with it in database 5.
    a = pair.ours.raw()
    before = int(a.info("memory")["used_memory"])
    assert ours2.command("MOVE", "k", "0") == 1
    assert int(a.info("memory")["used_memory"]) == before
    assert a.command("DEL", "k") == 1


def test_swapdb(pair):
    filters(pair, "zero")
    pair.same("SELECT", "1")
    filters(pair, "one")
    pair.same("SELECT", "0")
    ours2, theirs2 = pair.conns(2)
    for c in (ours2, theirs2):
        assert c.command("SELECT", "1") == "OK"
    # One protocol: a second SWAPDB would swap back.
    pair.same("SWAPDB", "0", "1", protos=(2,))
    pair.same("EXISTS", "zero", "one")
    pair.same("CF.EXISTS", "one", "x")
    # The client that SELECTed 1 sees what was in 0.
    for c in (ours2, theirs2):
        assert c.command("EXISTS", "zero", "one") == 1
        assert c.command("CF.EXISTS", "zero", "x") == 1
        assert c.command("CF.ADD", "fromtwo", "x") == 1
    pair.same("SWAPDB", "0", "0")
    pair.same("SWAPDB", "1", "0", protos=(3,))
    pair.same("EXISTS", "zero", "one", "fromtwo")
    pair.same("SWAPDB", "0", "99", exact=True)
    pair.same("SWAPDB", "-1", "0", exact=True)
    pair.same("SWAPDB", "x", "0", exact=True)
    pair.same("SWAPDB", "0", "x", exact=True)
    pair.same("SWAPDB", "x", "y", exact=True)
    pair.same("SWAPDB", "0", exact=True)
    pair.same("DBSIZE")


def test_dump_restore_round_trip(pair):
    """Each side restores its own payload: the same filter under new keys,
    with REPLACE, ABSTTL, IDLETIME and FREQ."""
    pair.same("CF.RESERVE", "f", "1000")
    for i in range(50):
        pair.same("CF.ADD", "f", "item%d" % i)
    pair.same("DUMP", "nope")
    for side in (pair.ours.raw(), pair.theirs.raw()):
        payload = side.command("DUMP", "f")
        assert isinstance(payload, bytes) and len(payload) > 10
        assert side.command("RESTORE", "g", "0", payload) == "OK"
        assert side.command("RESTORE", "g", "0", payload) == RespError(
            "BUSYKEY Target key name already exists.")
        assert side.command("RESTORE", "g", "0", payload, "REPLACE") == "OK"
        assert side.command("RESTORE", "h", "0", payload, "IDLETIME", "10",
                            "REPLACE") == "OK"
        assert side.command("RESTORE", "i", "0", payload, "FREQ", "3") == "OK"
        # An absolute time already past makes nothing.
        assert side.command("RESTORE", "j", "1000", payload,
                            "ABSTTL") == "OK"
        assert side.command("EXISTS", "j") == 0
        # ... and what it would have replaced is gone.
        assert side.command("RESTORE", "i", "1000", payload, "ABSTTL",
                            "REPLACE") == "OK"
        assert side.command("EXISTS", "i") == 0
        for i in range(50):
            assert side.command("CF.EXISTS", "g", "item%d" % i) == 1
        assert side.command("CF.INFO", "g") == side.command("CF.INFO", "f")
        assert side.command("DUMP", "g") == payload
    pair.same("EXISTS", "f", "g", "h", "i", "j")


def test_restore_errors(pair):
    filters(pair, "a")
    ours_payload = pair.ours.raw().command("DUMP", "a")
    theirs_payload = pair.theirs.raw().command("DUMP", "a")
    # A Redis string's DUMP, and garbage of several lengths.
    theirs = pair.theirs.raw()
    assert theirs.command("SET", "str", "v") == "OK"
    string_payload = theirs.command("DUMP", "str")
    assert theirs.command("DEL", "str") == 1
    assert pair.ours.raw().command("RESTORE", "new", "0",
                                   string_payload) == RespError(WRONG_PAYLOAD)
    for p in (b"", b"x", b"x" * 10, b"x" * 100):
        pair.same("RESTORE", "new", "0", p, exact=True)
    # Each side refuses the other's payload the same way.
    assert pair.ours.raw().command("RESTORE", "new", "0",
                                   theirs_payload) == RespError(WRONG_PAYLOAD)
    assert pair.theirs.raw().command("RESTORE", "new", "0",
                                     ours_payload) == RespError(WRONG_PAYLOAD)
    pair.same("EXISTS", "new")
    pair.same("RESTORE", "a", "0", b"junk", exact=True)        # BUSYKEY
    pair.same("RESTORE", "a", "-1", b"junk", exact=True)
    pair.same("RESTORE", "new", "-1", b"junk", exact=True)
    pair.same("RESTORE", "new", "x", b"junk", exact=True)
    pair.same("RESTORE", "new", "0", b"junk", exact=True)
    pair.same("RESTORE", "new", "0", b"junk", "BOGUS", exact=True)
    pair.same("RESTORE", "new", "0", b"junk", "IDLETIME", exact=True)
    pair.same("RESTORE", "new", "0", b"junk", "IDLETIME", "-1", exact=True)
    pair.same("RESTORE", "new", "0", b"junk", "IDLETIME", "x", exact=True)
    pair.same("RESTORE", "new", "0", b"junk", "FREQ", "256", exact=True)
    pair.same("RESTORE", "new", "0", b"junk", "FREQ", "-1", exact=True)
    pair.same("RESTORE", "new", "0", b"junk", "FREQ", "1", "IDLETIME", "1",
              exact=True)
    pair.same("RESTORE", "new", "0", b"junk", "IDLETIME", "1", "FREQ", "1",
              exact=True)
    pair.same("RESTORE", "new", "0", exact=True)
    pair.same("EXISTS", "new")


def test_restore_refuses_damaged_payloads(pair):
    """Every truncation and every flipped bit of a small payload is refused
    with Redis's text and creates nothing (the sanitizer build runs this
    too)."""
    a = pair.ours.raw()
    a.command("CF.RESERVE", "f", "8")
    a.command("CF.ADD", "f", "x")
    good = a.command("DUMP", "f")
    assert len(good) < 400
    for n in range(len(good)):
        assert a.command("RESTORE", "t", "0", good[:n]) == RespError(
            WRONG_PAYLOAD), n
    for i in range(len(good) * 8):
        bad = bytearray(good)
        bad[i // 8] ^= 1 << (i % 8)
        reply = a.command("RESTORE", "t", "0", bytes(bad))
        assert reply == RespError(WRONG_PAYLOAD), (i, reply)
    assert a.command("EXISTS", "t") == 0
    assert a.command("DBSIZE") == 1
    # Wrong versions and checksums with the rest intact: tests/unit's
    # test_dump.


def test_touch_exists_randomkey(pair):
    pair.same("RANDOMKEY")
    filters(pair, "a", "b")
    pair.same("TOUCH", "a", "a", "b", "nope")
    pair.same("EXISTS", "a", "a", "b", "nope")
    pair.same("TOUCH", exact=True)
    pair.same("DEL", "b")
    pair.same("RANDOMKEY")
    filters(pair, "b", "c")
    ours = pair.ours.raw()
    seen = {ours.command("RANDOMKEY") for _ in range(200)}
    assert seen == {b"a", b"b", b"c"}


def test_object(pair):
    filters(pair, "a")
    # FREQ is refused under the default policy (noeviction), with Redis's
    # text; a missing key is nil for every subcommand.
    for sub in ("ENCODING", "REFCOUNT", "IDLETIME", "FREQ"):
        for key in ("a", "nope"):
            pair.same("OBJECT", sub, key, exact=True)
    pair.same("OBJECT", "HELP", exact=True)
    pair.same("OBJECT", "BOGUS", "a", exact=True)
    pair.same("OBJECT", exact=True)
    pair.same("OBJECT", "ENCODING", exact=True)
    pair.same("OBJECT", "ENCODING", "a", "b", exact=True)
    pair.same("OBJECT", "HELP", "x", exact=True)


def test_wait(pair):
    pair.same("WAIT", "0", "0")
    pair.same("WAIT", "1", "10")
    pair.same("WAIT", "x", "0", exact=True)
    pair.same("WAIT", "0", "x", exact=True)
    pair.same("WAIT", "0", "-1", exact=True)
    pair.same("WAIT", "0", "1.5", exact=True)
    pair.same("WAIT", "0", exact=True)


COMMANDS = ["copy", "renamenx", "move", "swapdb", "dump", "restore", "touch",
            "randomkey", "wait", "exists", "object", "object|encoding",
            "object|refcount", "object|idletime", "object|freq",
            "object|help"]


@pytest.mark.parametrize("name", COMMANDS)
def test_command_info(pair, name):
    """Name, arity, flags and the first/last/step key positions."""
    ours, theirs = pair.both("COMMAND", "INFO", name)
    assert ours[0] is not None and theirs[0] is not None
    assert ours[0][:6] == theirs[0][:6]


@pytest.mark.parametrize("name", [n for n in COMMANDS if "|" not in n])
def test_command_docs_arguments(pair, name):
    """The arguments' names, types and tokens, in order."""
    def args(reply):
        doc = dict(zip(reply[0::2], reply[1::2])) if isinstance(
            reply, list) else reply
        doc = doc[name.encode()] if name.encode() in doc else doc[name]
        doc = dict(zip(doc[0::2], doc[1::2])) if isinstance(doc, list) \
            else doc
        out = []
        for a in doc.get(b"arguments", doc.get("arguments", [])):
            a = dict(zip(a[0::2], a[1::2])) if isinstance(a, list) else a
            out.append((a[b"name"], a[b"type"], a.get(b"token")))
        return out
    ours, theirs = pair.both("COMMAND", "DOCS", name)
    assert args(ours) == args(theirs)
