"""What the main of 2026-11-28 wrote (version 4 of the growable filter's
serialised form, tests/fixtures/v4/make.py) loads into today's cuckood and
answers the same: its snapshot, its AOF directory (a rewritten base and an
increment), the DUMP payloads (RESTORE) and the CF.SCANDUMP chunks
(CF.LOADCHUNK) of every key; and the module's RDB into today's module.
Loaded filters keep their form: they grow on, and dump the header bytes
they were loaded from.

Run: pytest-3 tests/integ/test_compat_v4.py  (CUCKOOD_BIN names the binary;
CUCKOO_MODULE the module, for the last test).
"""

import base64
import json
import os
import shutil
import sys
import tempfile

import pytest

from support.proc import Daemon, ModuleServer, use_module, use_redis_server

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                   "fixtures", "v4")
sys.path.insert(0, FIX)
import make  # noqa: E402  (the fixtures' own description of the keys)

pytestmark = pytest.mark.skipif(use_redis_server() or use_module(),
                                reason="cuckood's own files")

WANT = make.expected()
with open(os.path.join(FIX, "keys.json")) as f:
    SAVED = json.load(f)


def check_answers(c, keys=None, rename=lambda k: k):
    for key in keys or WANT:
        live = WANT[key]
        items = sorted(live)
        got = []
        for i in range(0, len(items), 1000):
            got += c.execute_command("CF.MEXISTS", rename(key),
                                     *items[i:i + 1000])
        assert got == [1] * len(items), key
        for it, n in live.items():
            if n > 1:
                assert c.execute_command("CF.COUNT", rename(key), it) >= n
        # the deleted items of g_grown: a filter may answer 1 for a few
        # (false positives), not for most
        if key == "g_grown":
            gone = ["g%d" % i for i in range(0, 20000, 3)]
            hits = sum(c.execute_command("CF.MEXISTS", rename(key), *gone))
            assert hits < len(gone) // 50


def info(c, key):
    r = c.execute_command("CF.INFO", key)
    return {k.decode(): (v.decode() if isinstance(v, bytes) else v)
            for k, v in zip(r[::2], r[1::2])}


@pytest.fixture
def workdir():
    d = tempfile.mkdtemp(prefix="cuckood-v4-")
    servers = []
    yield d, servers
    for s in servers:
        s.stop()
    shutil.rmtree(d, ignore_errors=True)


def started(workdir, *args):
    """cuckood in the test's directory, started: its client."""
    d, servers = workdir
    s = Daemon(*args, dir=d)
    servers.append(s)
    s.start()
    return s.client()


def grows_on(c):
    """A loaded version-4 filter grows as it did, with its own form."""
    before = info(c, "g_grown")
    c.execute_command("CF.INSERT", "g_grown", "ITEMS",
                      *["n%d" % i for i in range(30000)])
    assert c.execute_command("CF.MEXISTS", "g_grown",
                             *["n%d" % i for i in range(30000)]) == \
        [1] * 30000
    after = info(c, "g_grown")
    assert after["Number of buckets"] > before["Number of buckets"]
    assert after["Fingerprint bits"] == 15


def test_snapshot_loads(workdir):
    d, _ = workdir
    shutil.copy(os.path.join(FIX, "dump.cuckoo"), d)
    c = started(workdir)
    check_answers(c)
    assert c.execute_command("CF.EXISTS", "g_reserved", "after-rewrite") == 1
    for key, saved in SAVED.items():
        now = info(c, key)
        # the size counts today's structs (40 bytes more for the growable
        # shape's state), the same tables
        assert saved["info"]["Size"] <= now["Size"] <= \
            saved["info"]["Size"] + 64
        for field in ("Number of buckets", "Number of filters",
                      "Number of items inserted", "Number of items deleted",
                      "Fingerprint bits", "Encoding", "Capacity"):
            want = saved["info"][field]
            if key == "g_reserved" and field == "Number of items inserted":
                want += 1  # after-rewrite
            assert now[field] == want, (key, field)
    # the header a loaded filter writes is the one it was loaded from
    # (version 4): a replica holds the same bytes
    for key in ("g_grown", "g_copies", "f_fixed"):
        it, data = c.execute_command("CF.SCANDUMP", key, 0)
        assert data == base64.b64decode(SAVED[key]["chunks"][0][1])
    assert data[4] in (1, 2, 3)  # the fixed shape's own versions
    grows_on(c)


def test_aof_loads(workdir):
    d, _ = workdir
    shutil.copytree(os.path.join(FIX, "appendonlydir"),
                    os.path.join(d, "appendonlydir"))
    c = started(workdir, "--appendonly", "yes")
    check_answers(c)
    assert c.execute_command("CF.EXISTS", "g_reserved", "after-rewrite") == 1
    grows_on(c)


def test_dump_payloads_restore(workdir):
    c = started(workdir)
    for key, saved in SAVED.items():
        assert c.execute_command("RESTORE", "r:" + key, 0,
                                 base64.b64decode(saved["dump"])) == b"OK"
    check_answers(c, rename=lambda k: "r:" + k)
    # and its own DUMP of a restored version-4 filter restores again
    payload = c.dump("r:g_grown")
    assert c.execute_command("RESTORE", "again", 0, payload) == b"OK"
    check_answers(c, keys=["g_grown"], rename=lambda k: "again")


def test_scandump_chunks_load(workdir):
    c = started(workdir)
    for key, saved in SAVED.items():
        for it, data in saved["chunks"]:
            assert c.execute_command("CF.LOADCHUNK", "l:" + key, it,
                                     base64.b64decode(data)) == b"OK"
    check_answers(c, rename=lambda k: "l:" + k)


def test_module_rdb_loads(workdir):
    d, servers = workdir
    shutil.copy(os.path.join(FIX, "module.rdb"), os.path.join(d, "dump.rdb"))
    s = ModuleServer(dir=d)
    servers.append(s)
    s.start()
    c = s.client()
    check_answers(c)
    grows_on(c)
