"""scripts/migrate: every filter of every database of a running cuckood
into a Redis Cluster with the module (3 masters), counts and answers
verified."""

import os
import subprocess
import sys

import pytest
from redis.cluster import RedisCluster

from support.proc import ROOT, Daemon, cleanup_all, module_cluster

MIGRATE = os.path.join(ROOT, "scripts", "migrate")
BIN = os.environ.get("CUCKOOD_BIN",
                     os.path.join(ROOT, "build", "server", "cuckood"))


@pytest.fixture
def masters3():
    nodes = module_cluster(3, "--appendonly", "no")
    yield nodes
    cleanup_all(nodes)


def test_migrate_every_database(masters3):
    if not os.access(BIN, os.X_OK):
        pytest.fail("cuckood not built: %s" % BIN)
    d = Daemon().start()
    try:
        src = {}
        for db in (0, 3):
            c = d.client(db=db)
            for i in range(300):
                k = b"f%d" % i
                c.execute_command("CF.RESERVE", k, 1000 + i)
                c.execute_command("CF.INSERT", k, "ITEMS",
                                  *[b"%d:%d:%d" % (db, i, j)
                                    for j in range(20)])
            c.execute_command("CF.RESERVE", "big", 3000000)  # 2 chunks
            c.execute_command("CF.INSERT", "big", "ITEMS",
                              *[b"b%d" % j for j in range(5000)])
            src[db] = c
        cl = RedisCluster(host="127.0.0.1", port=masters3[0].port)
        cl.execute_command("CF.ADD", "f7", "already here")
        out = subprocess.run([sys.executable, MIGRATE, "--from",
                              "127.0.0.1:%d" % d.port, "--to",
                              "127.0.0.1:%d" % masters3[1].port],
                             capture_output=True, timeout=300, text=True)
        # f7 of database 0 exists in the target: reported, exit 1.
        assert out.returncode == 1, out.stdout + out.stderr
        assert "b'f7'" in out.stderr and "exists" in out.stderr
        assert "db 0: 301 keys, 300 copied and verified" in out.stdout
        assert "db 3: 301 keys, 301 copied and verified" in out.stdout
        assert sum(n.client().dbsize() for n in masters3) == 602
        for db, prefix in ((0, b""), (3, b"db3:")):
            for i in range(300):
                if db == 0 and i == 7:
                    continue
                items = [b"%d:%d:%d" % (db, i, j) for j in range(20)]
                probe = items + [b"x%d" % j for j in range(50)]
                k = b"f%d" % i
                assert cl.execute_command("CF.MEXISTS", prefix + k, *probe) \
                    == src[db].execute_command("CF.MEXISTS", k, *probe)
            # Every field but Size, which is the host's (the daemon maps
            # this table and keeps a 32-byte entry for it on its own).
            mine = cl.execute_command("CF.INFO", prefix + b"big")
            theirs = src[db].execute_command("CF.INFO", b"big")
            assert mine[0] == theirs[0] == b"Size"
            assert 0 <= theirs[1] - mine[1] <= 32
            # the error rate is one double, in each host's digits
            rate = mine.index(b"Error rate") + 1
            assert float(mine[rate]) == float(theirs[rate])
            mine[rate] = theirs[rate]
            assert mine[2:] == theirs[2:]
        # Run again into a clean target: exit 0.
        cl.flushall()
        out = subprocess.run([sys.executable, MIGRATE, "--from",
                              "127.0.0.1:%d" % d.port, "--to",
                              "127.0.0.1:%d" % masters3[2].port],
                             capture_output=True, timeout=300, text=True)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "total: 602 filters copied, 0 failed" in out.stdout
    finally:
        d.cleanup()
