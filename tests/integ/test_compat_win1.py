"""What a build of 2026-11-28 wrote for window filters (version 1 of the
CKW1 form, 16-bit slots; tests/fixtures/win1/make.py) loads into today's
cuckood and answers the same: its snapshot, the DUMP payloads (RESTORE)
and the CF.SCANDUMP chunks (CF.LOADCHUNK) of every key; and the module's
RDB into today's module. A loaded version-1 filter keeps its form: it
takes writes, forgets on time and dumps the header version it was loaded
with, while a new window filter writes version 2.

Run: pytest-3 tests/integ/test_compat_win1.py  (CUCKOOD_BIN names the
binary; CUCKOO_MODULE the module, for the last test).
"""

import base64
import json
import os
import shutil
import sys

import pytest

from support.proc import Fleet, ModuleServer, use_module, use_redis_server

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                   "fixtures", "win1")
sys.path.insert(0, FIX)
import make  # noqa: E402  (the fixtures' own description of the keys)

pytestmark = pytest.mark.skipif(use_redis_server() or use_module(),
                                reason="cuckood's own files")

WANT = make.expected()
with open(os.path.join(FIX, "keys.json")) as f:
    SAVED = json.load(f)


def mexists(c, key, items):
    got = []
    for i in range(0, len(items), 1000):
        got += c.execute_command("CF.MEXISTS", key, *items[i:i + 1000])
    return got


def check_answers(c, rename=lambda k: k):
    # w_long holds its items for 127 years; the deleted ones answer 0 but
    # for false positives (about 0.2% of them at most)
    assert mexists(c, rename("w_long"), WANT["w_long"]) == \
        [1] * len(WANT["w_long"])
    gone = ["l%d" % i for i in range(0, 3000, 7)]
    assert sum(mexists(c, rename("w_long"), gone)) <= 3
    # w_gone's minute is long over
    assert sum(mexists(c, rename("w_gone"), WANT["w_gone"])) <= 2
    i = info(c, rename("w_long"))
    assert (i["Window"], i["Capacity"]) == (make.LONG, 5000)
    assert len(WANT["w_long"]) - 5 <= i["Live items"] <= \
        len(WANT["w_long"])
    assert info(c, rename("w_gone"))["Live items"] == 0


def info(c, key):
    r = c.execute_command("CF.INFO", key)
    return {k.decode(): v for k, v in zip(r[::2], r[1::2])}


def version(c, key):
    """The serialised form's version, from the header's bytes 4-5."""
    it, data = c.execute_command("CF.SCANDUMP", key, 0)
    assert data[:4] == b"CKW1"
    return data[4] | data[5] << 8


def takes_writes(c, key):
    """A loaded version-1 filter takes adds and deletes in its own form."""
    new = ["n%d" % i for i in range(1000)]
    c.execute_command("CF.INSERT", key, "ITEMS", *new)
    assert mexists(c, key, new) == [1] * len(new)
    assert c.execute_command("CF.DEL", key, "n1") == 1
    assert mexists(c, key, WANT["w_long"]) == [1] * len(WANT["w_long"])
    assert version(c, key) == 1
    # and a copy through DUMP keeps it
    assert c.execute_command("RESTORE", key + ":again", 0,
                             c.dump(key)) == b"OK"
    assert mexists(c, key + ":again", new[2:]) == [1] * (len(new) - 2)
    assert version(c, key + ":again") == 1


@pytest.fixture
def modules():
    fleet = Fleet(ModuleServer)
    yield fleet
    fleet.cleanup()


def test_snapshot_loads(daemon, tmp_path):
    shutil.copy(os.path.join(FIX, "dump.cuckoo"), tmp_path)
    c = daemon(dir=str(tmp_path)).client()
    check_answers(c)
    # the header a loaded filter writes is the one it was loaded from
    for key in SAVED:
        it, data = c.execute_command("CF.SCANDUMP", key, 0)
        assert data == base64.b64decode(SAVED[key]["chunks"][0][1])
    takes_writes(c, "w_long")
    # a filter made now writes version 2
    c.execute_command("CF.RESERVE", "fresh", 100, "WINDOW", 60000)
    assert version(c, "fresh") == 2


def test_dump_payloads_restore(daemon):
    c = daemon().client()
    for key, saved in SAVED.items():
        assert c.execute_command("RESTORE", "r:" + key, 0,
                                 base64.b64decode(saved["dump"])) == b"OK"
    check_answers(c, rename=lambda k: "r:" + k)
    takes_writes(c, "r:w_long")


def test_scandump_chunks_load(daemon):
    c = daemon().client()
    for key, saved in SAVED.items():
        for it, data in saved["chunks"]:
            assert c.execute_command("CF.LOADCHUNK", "l:" + key, it,
                                     base64.b64decode(data)) == b"OK"
    check_answers(c, rename=lambda k: "l:" + k)


def test_module_rdb_loads(modules, tmp_path):
    shutil.copy(os.path.join(FIX, "module.rdb"), tmp_path / "dump.rdb")
    c = modules(dir=str(tmp_path)).client()
    check_answers(c)
    takes_writes(c, "w_long")
