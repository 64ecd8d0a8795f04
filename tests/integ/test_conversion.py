"""A default filter converting from its compact table to the 16-bit table
(docs/growth.md, "A filter that has not grown"), interrupted. A reserve of
20,000 is not inline: past its reserve its 5,320 base buckets convert 32
per write, so the 50 single adds after the reserve leave the conversion
about a third done (the conversion has no outside view; the count of
writes fixes where it is). Then SAVE or BGSAVE and kill -9, kill -9 under
`appendfsync always` with adds in flight, and copies by CF.SCANDUMP /
CF.LOADCHUNK and DUMP / RESTORE: every item is found, and the filter goes
on converting and growing from where it was. Each for a default filter and
for a growable pair (ERROR 0.001: two such tables converting side by
side).

Run: pytest-3 tests/integ/test_conversion.py  (CUCKOOD_BIN names the
binary)."""

import pytest

from support.proc import Daemon, shared_dir, use_redis_server, wait_until

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's own filter form")

RESERVE = 20000
KEY = "conv"

# the options, and the fingerprint bits CF.INFO says while compact
KINDS = {"growable": ((), 13), "pair": (("ERROR", "0.001"), 26)}


def info(c, key):
    r = c.execute_command("CF.INFO", key)
    return dict(zip(r[::2], r[1::2]))


def items(prefix, n, start=0):
    return [b"%s%d" % (prefix, i) for i in range(start, start + n)]


def all_found(c, key, its):
    got = []
    for i in range(0, len(its), 5000):
        got += c.execute_command("CF.MEXISTS", key, *its[i:i + 5000])
    return got.count(0)


def mid_conversion(c, kind, key=KEY):
    """The reserve filled, then 50 single adds: converting. The items."""
    opts, compact = KINDS[kind]
    assert c.execute_command("CF.RESERVE", key, RESERVE, *opts) == b"OK"
    its = items(b"r", RESERVE)
    for i in range(0, RESERVE, 5000):
        c.execute_command("CF.INSERT", key, "ITEMS", *its[i:i + 5000])
    assert info(c, key)[b"Fingerprint bits"] == compact
    more = items(b"m", 50)
    for it in more:
        assert c.execute_command("CF.ADD", key, it) == 1
    # converting: 15 bits a table
    assert info(c, key)[b"Fingerprint bits"] == compact // 13 * 15
    return its + more


def goes_on(c, its, key=KEY):
    """Every item there; 30,000 more go in (the conversion ends, the table
    splits) and are found with the others."""
    assert all_found(c, key, its) == 0
    more = items(b"n", 30000)
    for i in range(0, len(more), 5000):
        c.execute_command("CF.INSERT", key, "ITEMS", *more[i:i + 5000])
    assert all_found(c, key, its + more) == 0
    assert info(c, key)[b"Number of filters"] == 1


@pytest.fixture
def workdir():
    with shared_dir("cuckood-conv-") as (d, made):
        def make(*args):
            s = Daemon("--save", "", *args, dir=d)
            made.append(s)
            return s.start()
        yield make


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("how", ["SAVE", "BGSAVE"])
def test_snapshot_mid_conversion_then_kill9(workdir, how, kind):
    s = workdir()
    c = s.client(socket_timeout=60)
    its = mid_conversion(c, kind)
    if how == "SAVE":
        assert c.save()
    else:
        c.bgsave()
        # adds while the child writes: not in the snapshot
        c.execute_command("CF.INSERT", KEY, "ITEMS", *items(b"late", 100))
        wait_until(lambda: c.info("persistence")["rdb_bgsave_in_progress"]
                   == 0 and c.info("persistence")["rdb_last_bgsave_status"]
                   == "ok", 60, what="BGSAVE")
    s.kill()
    s.start()
    goes_on(s.client(socket_timeout=60), its)


@pytest.mark.parametrize("kind", KINDS)
def test_aof_always_kill9_mid_conversion(workdir, kind):
    s = workdir("--appendonly", "yes", "--appendfsync", "always")
    c = s.client(socket_timeout=60)
    its = mid_conversion(c, kind)
    # more adds in flight, none read: the log holds a prefix of them
    flight = items(b"f", 2000)
    raw = s.raw(timeout=60)
    with raw as rc:
        rc.send(b"".join(b"*3\r\n$6\r\nCF.ADD\r\n$4\r\nconv\r\n$%d\r\n%s\r\n"
                         % (len(it), it) for it in flight))
        s.kill()
    s.start()
    c = s.client(socket_timeout=60)
    n = info(c, KEY)[b"Number of items inserted"]
    assert len(its) <= n <= len(its) + len(flight)
    goes_on(c, its + flight[:n - len(its)])


@pytest.fixture(scope="module")
def server():
    d = Daemon("--save", "").start()
    yield d
    d.cleanup()


@pytest.mark.parametrize("kind", KINDS)
def test_copies_mid_conversion(server, kind):
    c = server.client(socket_timeout=60)
    c.delete("orig", "chunked", "restored")
    its = mid_conversion(c, kind, "orig")
    chunks, it = [], 0
    while True:
        it, data = c.execute_command("CF.SCANDUMP", "orig", it)
        if it == 0:
            break
        chunks.append((it, data))
    for it, data in chunks:
        assert c.execute_command("CF.LOADCHUNK", "chunked", it, data) == b"OK"
    assert c.execute_command("RESTORE", "restored", 0, c.dump("orig")) == b"OK"
    # the same bytes, the same answers, and each goes on alike
    for key in ("chunked", "restored"):
        assert info(c, key) == info(c, "orig")
        assert c.dump(key) == c.dump("orig")
    for key in ("orig", "chunked", "restored"):
        goes_on(c, its, key)
    assert c.dump("chunked") == c.dump("orig") == c.dump("restored")
