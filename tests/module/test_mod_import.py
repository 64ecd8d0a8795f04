"""Filters imported from RedisBloom in the module: the recorded fixtures
(tests/fixtures/redisbloom) loaded with CF.LOADCHUNK into redis-server with
cuckoo.so answer every recorded probe as RedisBloom did, dump back the same
chunks, and keep all of it through the RDB (DEBUG RELOAD) and an AOF rewrite
and restart."""

import pytest

from support import rbfix
from support.proc import wait_until
from support.resp import cf_info


def check(raw, key, fx, items=None):
    """Every recorded answer (or those of the first items probes)."""
    ps, ex, cnt = rbfix.expected(fx)
    n = len(ps) if items is None else items
    assert rbfix.answers(raw, key, ps[:n]) == (ex[:n], cnt[:n])
    rep = cf_info(raw.command("CF.INFO", key))
    assert {k.decode(): v for k, v in rep.items()} == fx["cf_info"]
    assert rbfix.scandump(raw, key) == rbfix.chunks(fx)


@pytest.mark.parametrize("name", rbfix.NAMES)
def test_fixture_answers_as_redisbloom(servers, name):
    s = servers()
    raw = s.raw(timeout=120)
    fx = rbfix.load(name)
    assert rbfix.load_into(raw, "f", fx) == ["OK"] * len(fx["chunks"])
    check(raw, "f", fx)
    raw.close()


def test_rdb_and_aof_carry_it(servers):
    s = servers("--appendonly", "yes", "--aof-use-rdb-preamble", "no")
    raw = s.raw(timeout=120)
    fx = rbfix.load("autocreated_dups")
    rbfix.load_into(raw, "f", fx)
    assert raw.command("DEBUG", "RELOAD") == "OK"
    check(raw, "f", fx, 4000)
    assert raw.command("BGREWRITEAOF").startswith("Background")

    def rewritten():
        inf = raw.command("INFO", "persistence").decode()
        return ("aof_rewrite_in_progress:0" in inf and
                "aof_rewrite_scheduled:0" in inf)
    wait_until(rewritten, what="AOF rewrite")
    raw.close()
    s.stop()
    s.start()
    raw = s.raw(timeout=120)
    check(raw, "f", fx, 4000)
    raw.close()


def test_recorded_writes_replay(servers):
    raw = servers().raw(timeout=120)
    rec = rbfix.load("writes_default_1000")
    rbfix.load_into(raw, rec["key"], rbfix.load(rec["source"]))
    cmds = rbfix.write_sequence(rec["source"], rec["key"])
    got = [rbfix.plain(r) for r in raw.pipeline([tuple(c) for c in cmds])]
    assert got == rec["replies"]
    assert rbfix.scandump(raw, rec["key"]) == rbfix.chunks(rec)
    raw.close()


def test_migrate_skips_other_types(servers):
    """scripts/migrate from a Redis holding an imported filter beside keys
    of other types (as a Redis with RedisBloom holds Bloom filters and
    strings): the filter is copied into cuckood and verified, the others
    are listed and skipped."""
    import os
    import subprocess
    import sys
    from support.proc import ROOT, Daemon
    s = servers()
    raw = s.raw(timeout=60)
    fx = rbfix.load("bucket1_exp1")
    rbfix.load_into(raw, "f", fx)
    raw.command("SET", "s", "x")
    raw.command("RPUSH", "l", "a")
    d = Daemon().start()
    try:
        out = subprocess.run(
            [sys.executable, os.path.join(ROOT, "scripts", "migrate"),
             "--from", "127.0.0.1:%d" % s.port,
             "--to", "127.0.0.1:%d" % d.port],
            capture_output=True, timeout=300, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "key b's': skipped (type string)" in out.stdout
        assert "key b'l': skipped (type list)" in out.stdout
        assert "db 0: 3 keys, 1 copied and verified, 2 of other types " \
            "skipped" in out.stdout
        t = d.raw(timeout=60)
        check(t, "f", fx)
        assert t.command("EXISTS", "s") == 0
        t.close()
    finally:
        d.cleanup()
    raw.close()
