"""The append-only file end to end: a workload under appendfsync always,
then kill -9 and a restart from the files alone (no snapshot): every
database holds the same keys with the same filters, byte for byte
(CF.SCANDUMP, so the same seeds and the same fingerprints in the same
slots) and the same absolute expiry times. The workload has what the log
must rewrite or carry: filters created by CF.ADD/CF.INSERTNX/CF.RESERVE
(their random seeds), small filters that fill, stash and grow, CF.DEL,
CF.LOADCHUNK, DEL, UNLINK, RENAME, COPY, MOVE, SWAPDB, FLUSHDB, FLUSHALL,
relative timeouts, transactions, and a key that expires on its own."""

import os
import random

import pytest

from support.aof import need_aof_writer
from support.proc import Daemon, use_module, use_redis_server, wait_until

pytestmark = pytest.mark.skipif(use_redis_server() or use_module(),
                                reason="cuckood's own append-only file")

AOF = ("--appendonly", "yes", "--appendfsync", "always", "--save", "")


need_aof_writer = need_aof_writer(*AOF)
DBS = 4


def dataset(r):
    """{(db, key): (dump chunks, PEXPIRETIME)} over the first DBS
    databases."""
    out = {}
    for db in range(DBS):
        r.execute_command("SELECT", db)
        for key in r.execute_command("KEYS", "*"):
            chunks, it = [], 0
            while True:
                it, data = r.execute_command("CF.SCANDUMP", key, it)
                if it == 0:
                    break
                chunks.append((it, data))
            out[(db, key)] = (chunks,
                              r.execute_command("PEXPIRETIME", key))
    r.execute_command("SELECT", 0)
    return out


def copy_by_chunks(r, src, dst):
    it = 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", src, it)
        if it == 0:
            return
        r.execute_command("CF.LOADCHUNK", dst, it, data)


def workload(r, rnd, steps):
    cmd = r.execute_command
    for step in range(steps):
        k, k2 = "k%d" % rnd.randrange(10), "k%d" % rnd.randrange(10)
        item = "i%d" % rnd.randrange(2000)
        op = rnd.randrange(30)
        try:
            if op == 0 or (op > 15 and not cmd("EXISTS", k)):
                cmd("CF.RESERVE", k, rnd.randrange(8, 64), "BUCKETSIZE",
                    rnd.choice((1, 2, 4)), "MAXITERATIONS",
                    rnd.choice((3, 20)), "EXPANSION", rnd.choice((0, 1, 2)))
            elif op == 1:
                cmd("CF.INSERTNX", k, "CAPACITY", 16, "ITEMS", item, "x")
            elif op in (2, 3, 4):
                cmd("CF.DEL", k, item)
            elif op == 5:
                cmd("EXPIRE", k, 1000)
            elif op == 6:
                cmd("COPY", k, k2, "DB", rnd.randrange(DBS), "REPLACE")
            elif op == 7:
                cmd("RENAME", k, k2)
            elif op == 8:
                cmd("MOVE", k, rnd.randrange(DBS))
            elif op == 9:
                cmd("SELECT", rnd.randrange(DBS))
            elif op == 10 and step % 50 == 0:
                cmd("SWAPDB", 0, rnd.randrange(1, DBS))
            elif op == 11:
                cmd(rnd.choice(("DEL", "UNLINK")), k)
            elif op == 12 and k != k2 and cmd("EXISTS", k):
                cmd("DEL", k2)
                copy_by_chunks(r, k, k2)
            elif op == 13:
                p = r.pipeline(transaction=True)
                p.execute_command("CF.ADD", k, item)
                p.execute_command("CF.ADD", k2, item)
                p.execute()
            elif op == 14 and step % 200 == 0:
                cmd("FLUSHDB")
            else:
                cmd(rnd.choice(("CF.ADD", "CF.ADDNX")), k, item)
        except Exception as e:  # refusals are part of the workload
            msg = str(e).lower()
            assert any(w in msg for w in ("filter is full", "no such key",
                                          "not found", "exists", "same")), e


def restart_same(tmp_path, d):
    d.kill()
    d2 = Daemon(*AOF, dir=str(tmp_path))
    d2.start()
    return d2


def test_kill_and_replay(tmp_path):
    d = Daemon(*AOF, dir=str(tmp_path)).start()
    d2 = None
    try:
        r = d.client()
        workload(r, random.Random(7), 3000)
        r.execute_command("SELECT", 0)
        r.execute_command("CF.ADD", "short", "x")
        r.execute_command("PEXPIRE", "short", 100)
        wait_until(lambda: r.execute_command("EXISTS", "short") == 0,
                   what="short expired")
        before = dataset(r)
        assert len(before) > 5
        d2 = restart_same(tmp_path, d)
        assert dataset(d2.client()) == before
        assert os.listdir(os.path.join(str(tmp_path), "appendonlydir"))
    finally:
        d.cleanup()
        if d2 is not None:
            d2.cleanup()


def test_flushall_replays(tmp_path):
    d = Daemon(*AOF, dir=str(tmp_path)).start()
    d2 = None
    try:
        r = d.client()
        r.execute_command("CF.ADD", "a", "x")
        r.execute_command("SELECT", 2)
        r.execute_command("CF.ADD", "b", "x")
        r.execute_command("FLUSHALL")
        r.execute_command("CF.ADD", "c", "y")
        before = dataset(r)
        assert list(before) == [(2, b"c")]
        d2 = restart_same(tmp_path, d)
        assert dataset(d2.client()) == before
    finally:
        d.cleanup()
        if d2 is not None:
            d2.cleanup()
