"""Filters imported from RedisBloom: the five recorded fixtures
(tests/fixtures/redisbloom, dumped by RedisBloom 2.6.28) loaded with
CF.LOADCHUNK into cuckood must answer every recorded CF.EXISTS and CF.COUNT
exactly as RedisBloom did, give RedisBloom's CF.INFO, give back the same
chunks from CF.SCANDUMP, survive a snapshot and DUMP/RESTORE, and damaged
chunks must be refused without creating anything."""

import random
import struct

import pytest

from support import rbfix
from support.proc import use_redis_server
from support.resp import Map, RespError, cf_debug_line, cf_info

pytestmark = [pytest.mark.cf,
              pytest.mark.skipif(use_redis_server(), reason="CF commands")]


@pytest.fixture
def raw(server):
    c = server.raw(timeout=120)
    yield c
    c.close()


def info_of(raw, key):
    rep = cf_info(raw.command("CF.INFO", key))
    return {k.decode(): v for k, v in rep.items()}


def is_err(rep, text):
    return isinstance(rep, RespError) and text in str(rep)


@pytest.mark.parametrize("name", rbfix.NAMES)
def test_fixture_answers_as_redisbloom(raw, name):
    fx = rbfix.load(name)
    key = "imp:" + name
    assert rbfix.load_into(raw, key, fx) == ["OK"] * len(fx["chunks"])
    assert info_of(raw, key) == fx["cf_info"]
    assert raw.command("TYPE", key) == "MBbloomCF"
    items, ex, cnt = rbfix.expected(fx)
    got_ex, got_cnt = rbfix.answers(raw, key, items)
    assert [i for i in range(len(items)) if got_ex[i] != ex[i]] == []
    assert [i for i in range(len(items)) if got_cnt[i] != cnt[i]] == []
    # CF.MEXISTS batches take the same path
    part = items[:500] + items[-500:]
    assert [bool(v) for v in raw.command("CF.MEXISTS", key, *part)] == \
        ex[:500] + ex[-500:]
    assert rbfix.scandump(raw, key) == rbfix.chunks(fx)


@pytest.mark.parametrize("name", rbfix.NAMES)
def test_debug_line_as_redisbloom(raw, name):
    """CF.DEBUG of an imported filter: RedisBloom's line, made of the
    figures of RedisBloom's recorded CF.INFO."""
    fx = rbfix.load(name)
    key = "imp:dbg:" + name
    rbfix.load_into(raw, key, fx)
    assert raw.command("CF.DEBUG", key) == cf_debug_line(fx["cf_info"])


def test_info_resp3_is_redisbloom_map(server):
    fx = rbfix.load("default_1000")
    c = server.raw(timeout=60)
    c.command("HELLO", "3")
    rbfix.load_into(c, "imp:r3", fx)
    rep = c.command("CF.INFO", "imp:r3")
    assert isinstance(rep, Map)
    assert {k.decode(): v for k, v in cf_info(rep).items()} == fx["cf_info"]
    assert c.command("CF.EXISTS", "imp:r3", "item:1") is True
    c.close()


@pytest.mark.parametrize("source", ["default_1000", "bucket1_exp1"])
def test_writes_replay_as_redisbloom(raw, source):
    """An imported filter keeps growing, deleting and compacting as
    RedisBloom's chain does: 4,000 recorded writes and reads answer as
    RedisBloom answered them, and the filter ends byte for byte as
    RedisBloom's did."""
    rec = rbfix.load("writes_" + source)
    key = rec["key"]
    raw.command("DEL", key)
    rbfix.load_into(raw, key, rbfix.load(source))
    cmds = rbfix.write_sequence(source, key)
    got = [rbfix.plain(r) for r in raw.pipeline([tuple(c) for c in cmds])]
    want = rec["replies"]
    assert len(got) == len(want)
    # errors keep RedisBloom's words; ours carry Redis's ERR prefix
    diff = [(i, cmds[i], want[i], got[i]) for i in range(len(cmds))
            if got[i] != want[i]]
    assert diff == []
    assert [[it, d] for it, d in rbfix.scandump(raw, key)] == \
        [[it, d] for it, d in rbfix.chunks(rec)]


def test_chain_at_its_cap_refuses_writes(raw):
    """RedisBloom refuses every insert, the whole command, once its chain
    has 32 sub-filters (answers observed on RedisBloom 2.6.28)."""
    h = struct.pack("<QQQQHHH", 0, 1, 0, 32, 1, 20, 1)
    assert raw.command("CF.LOADCHUNK", "imp:cap", 1, h) == "OK"
    for cmd in (("CF.ADD", "imp:cap", "a"), ("CF.ADDNX", "imp:cap", "a"),
                ("CF.INSERT", "imp:cap", "ITEMS", "a", "b"),
                ("CF.INSERTNX", "imp:cap", "ITEMS", "a")):
        assert is_err(raw.command(*cmd), "Maximum expansions reached"), cmd
    assert raw.command("CF.EXISTS", "imp:cap", "a") == 0
    h = struct.pack("<QQQQHHH", 0, 1, 0, 31, 1, 20, 1)
    assert raw.command("CF.LOADCHUNK", "imp:cap31", 1, h) == "OK"
    assert raw.command("CF.INSERT", "imp:cap31", "ITEMS",
                       *["x%d" % i for i in range(10)]) == [1] * 10


def test_compact_missing_key(raw):
    assert is_err(raw.command("CF.COMPACT", "imp:nokey"),
                  "Cuckoo filter was not found")
    assert raw.command("CF.RESERVE", "imp:own", 100) == "OK"
    assert raw.command("CF.COMPACT", "imp:own") == "OK"


def test_empty_imported_filter_dumps_as_redisbloom(raw):
    hdr = struct.pack("<QQQQHHH", 0, 4, 0, 1, 2, 20, 1)
    assert raw.command("CF.LOADCHUNK", "imp:empty", 1, hdr) == "OK"
    assert raw.command("CF.SCANDUMP", "imp:empty", 0) == [0, None]
    assert raw.command("CF.EXISTS", "imp:empty", "x") == 0


def test_snapshot_and_dump_restore_carry_it(daemon):
    s = daemon()
    c = s.raw(timeout=60)
    fx = rbfix.load("bucket4_grown")
    rbfix.load_into(c, "f", fx)
    assert c.command("SAVE") == "OK"
    payload = c.command("DUMP", "f")
    s.kill()
    s.start()
    c = s.raw(timeout=60)
    items, ex, cnt = rbfix.expected(fx)
    assert rbfix.answers(c, "f", items) == (ex, cnt)
    assert info_of(c, "f") == fx["cf_info"]
    assert c.command("RESTORE", "g", 0, payload) == "OK"
    assert rbfix.answers(c, "g", items[:3000]) == (ex[:3000], cnt[:3000])
    assert rbfix.scandump(c, "g") == rbfix.chunks(fx)
    c.close()


# ---- damaged chunks ---------------------------------------------------------

def header(fx):
    return rbfix.chunks(fx)[0][1]


def fields(h):
    return list(struct.unpack("<QQQQHHH", h))


def pack(f):
    return struct.pack("<QQQQHHH", *f)


BAD_HEADERS = {
    "bucket size 0": lambda f: f[:4] + [0] + f[5:],
    "buckets not a power of two": lambda f: [f[0], 513] + f[2:],
    "buckets past 56 bits": lambda f: [f[0], 1 << 57] + f[2:],
    "no filters": lambda f: f[:3] + [0] + f[4:],
    "filters past 16 bits": lambda f: f[:3] + [65537] + f[4:],
    "max iterations 0": lambda f: f[:5] + [0, f[6]],
    "expansion 0 with a chain": lambda f: f[:6] + [0],
    "expansion not a power of two": lambda f: f[:6] + [3],
    "more items than slots": lambda f: [10 ** 9] + f[1:],
    "sizes overflow": lambda f: [0, 1 << 50, 0, 40, 255, 20, 32768],
    "terabytes": lambda f: [0, 1 << 40, 0, 1, 255, 20, 1],
}


@pytest.mark.parametrize("what", sorted(BAD_HEADERS))
def test_lying_header_refused_creates_nothing(raw, what):
    h = pack(BAD_HEADERS[what](fields(header(rbfix.load("default_1000")))))
    rep = raw.command("CF.LOADCHUNK", "imp:bad", 1, h)
    assert isinstance(rep, RespError), rep
    assert raw.command("EXISTS", "imp:bad") == 0


def test_header_of_wrong_length_refused(raw):
    h = header(rbfix.load("default_1000"))
    for bad in (h[:-1], h + b"\0"):
        assert is_err(raw.command("CF.LOADCHUNK", "imp:len", 1, bad),
                      "Invalid header")
        assert raw.command("EXISTS", "imp:len") == 0


def test_data_chunks_that_do_not_fit_refused(raw):
    fx = rbfix.load("default_1000")
    (it0, h), (it1, d1), (it2, d2) = rbfix.chunks(fx)
    key = "imp:fit"
    assert raw.command("CF.LOADCHUNK", key, 1, h) == "OK"
    for it, data in ((it1 + 1, d1),          # past its sub-filter's end
                     (it2 + 1, d2),          # past the last one
                     (it1, d1 + b"x"),       # longer than a sub-filter
                     (it1 + 512, d1),        # across two sub-filters
                     (-5, d1), (3, d1), (it1, b"")):
        rep = raw.command("CF.LOADCHUNK", key, it, data)
        assert isinstance(rep, RespError), (it, len(data))
    # the filter still answers and takes the right chunks
    assert raw.command("CF.LOADCHUNK", key, it1, d1) == "OK"
    assert raw.command("CF.LOADCHUNK", key, it2, d2) == "OK"
    items, ex, _ = rbfix.expected(fx)
    assert rbfix.answers(raw, key, items[:2000])[0] == ex[:2000]


def test_mutated_chunks_never_crash(raw, server):
    """Truncated, bit-flipped and reordered chunks of every fixture: each
    is answered (OK or an error) and the server keeps serving."""
    rng = random.Random(25)
    for name in rbfix.NAMES[:4]:
        ch = rbfix.chunks(rbfix.load(name))
        for n in range(40):
            key = "imp:mut:%s:%d" % (name, n)
            seq = list(ch)
            kind = n % 4
            if kind == 0:       # reordered: data before the header
                rng.shuffle(seq)
            elif kind == 1:     # truncated chunk
                i = rng.randrange(len(seq))
                it, d = seq[i]
                seq[i] = (it, d[:rng.randrange(len(d))])
            else:               # flipped bits, header included
                i = 0 if kind == 2 else rng.randrange(len(seq))
                it, d = seq[i]
                b = bytearray(d)
                for _ in range(1 + rng.randrange(3)):
                    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
                seq[i] = (it, bytes(b))
            reps = raw.pipeline([("CF.LOADCHUNK", key, it, d)
                                 for it, d in seq])
            assert all(r == "OK" or isinstance(r, RespError) for r in reps)
            if reps[0] != "OK" and kind == 2:  # a refused header
                assert raw.command("EXISTS", key) == 0
            raw.pipeline([("CF.EXISTS", key, "item:%d" % i)
                          for i in range(50)] + [("CF.ADD", key, "z"),
                                                  ("CF.DEL", key, "z")])
    assert raw.command("PING") == "PONG"


# ---- scripts/migrate from a server holding RedisBloom's filters ------------

def test_migrate_imported_filters(daemon):
    """scripts/migrate --from a server holding filters of RedisBloom's form
    (cuckood serving the imported fixtures: the same chunks, TYPE and
    CF.INFO as RedisBloom itself) into another cuckood: every filter of
    every database copied and verified, an empty one included (RedisBloom's
    CF.SCANDUMP gives no chunk for it), and every recorded answer kept."""
    import os
    import subprocess
    import sys
    from support.proc import ROOT
    src, dst = daemon(), daemon()
    c = src.raw(timeout=60)
    names = ["default_1000", "bucket1_exp1", "autocreated_dups"]
    for n in names:
        rbfix.load_into(c, "rb:" + n, rbfix.load(n))
    c.command("SELECT", "3")
    rbfix.load_into(c, "three", rbfix.load("bucket4_grown"))
    empty = struct.pack("<QQQQHHH", 0, 64, 0, 1, 2, 20, 1)
    assert c.command("CF.LOADCHUNK", "empty", 1, empty) == "OK"
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts", "migrate"), "--from",
         "127.0.0.1:%d" % src.port, "--to", "127.0.0.1:%d" % dst.port],
        capture_output=True, timeout=300, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "db 0: 3 keys, 3 copied and verified" in out.stdout
    assert "db 3: 2 keys, 2 copied and verified" in out.stdout
    t = dst.raw(timeout=60)
    for key, n in [("rb:" + n, n) for n in names] + \
            [("db3:three", "bucket4_grown")]:
        fx = rbfix.load(n)
        items, ex, cnt = rbfix.expected(fx)
        assert rbfix.answers(t, key, items) == (ex, cnt), key
        assert info_of(t, key) == fx["cf_info"]
        assert rbfix.scandump(t, key) == rbfix.chunks(fx)
    assert t.command("CF.SCANDUMP", "db3:empty", 0) == [0, None]
    assert info_of(t, "db3:empty")["Number of buckets"] == 64
    t.close()
    c.close()
