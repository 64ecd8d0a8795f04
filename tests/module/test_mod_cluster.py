"""Redis Cluster on loopback with the module: 3 masters + 3 replicas made by
redis-cli --cluster create; 10,000 filters written through redis-cli -c,
redis-py's RedisCluster and ioredis' Cluster (hash tags too); a reshard of
slots holding filters while a client keeps querying; every item found and
the false positives unchanged after it; kill -9 of a master, its replica
promoted, every filter answering as before."""

import json
import os
import random
import subprocess
import threading

import pytest
import redis
from redis.cluster import RedisCluster

from support.proc import REDIS_CLI, cleanup_all, module_cluster, wait_until

HERE = os.path.dirname(os.path.abspath(__file__))
NITEMS = 5
NODE = os.environ.get("NODE") or "node"
IOREDIS = os.path.join(HERE, "..", "integ", "node", "node_modules", "ioredis")


def items(key):
    return [b"%s:%d" % (key, j) for j in range(NITEMS)]


@pytest.fixture(scope="module")
def cluster():
    nodes = module_cluster(6, "--cluster-node-timeout", "2000",
                           "--appendonly", "no", replicas=1)
    yield nodes
    cleanup_all(nodes)


def rc(nodes):
    alive = [n for n in nodes if n.alive()]
    return RedisCluster(host="127.0.0.1", port=alive[0].port,
                        socket_timeout=60)


def masters(nodes):
    out = []
    for n in nodes:
        if n.alive() and n.client().info("replication")["role"] == "master":
            out.append(n)
    return out


def all_keys():
    keys = [b"cli:%d" % i for i in range(4000)]
    keys += [(b"py:%d" % i) if i % 2 else (b"{pytag}:%d" % i)
             for i in range(3000)]
    keys += [(b"{iotag}:%d" % i) if i % 2 else (b"io:%d" % i)
             for i in range(3000)]
    return keys


def check_all(c, keys):
    pipe = c.pipeline()
    for k in keys:
        pipe.execute_command("CF.MEXISTS", k, *items(k))
    res = pipe.execute()
    return sum(sum(r) for r in res), len(keys) * NITEMS


def false_positives(c, keys):
    pipe = c.pipeline()
    for k in keys:
        pipe.execute_command("CF.MEXISTS", k,
                             *[b"never:%d" % j for j in range(200)])
    return [tuple(r) for r in pipe.execute()]


def test_cluster_end_to_end(cluster):
    nodes = cluster
    # 4,000 filters through redis-cli -c (commands on stdin).
    lines = []
    for i in range(4000):
        k = b"cli:%d" % i
        lines.append(b"CF.INSERT %s CAPACITY 100 ITEMS %s" %
                     (k, b" ".join(items(k))))
    out = subprocess.run([REDIS_CLI, "-c", "-p", str(nodes[0].port)],
                         input=b"\n".join(lines) + b"\n",
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert b"ERR" not in out.stdout and b"MOVED" not in out.stdout

    # 3,000 through redis-py's RedisCluster, half under one hash tag.
    c = rc(nodes)
    pipe = c.pipeline()
    for i in range(3000):
        k = (b"py:%d" % i) if i % 2 else (b"{pytag}:%d" % i)
        pipe.execute_command("CF.INSERT", k, "CAPACITY", 100, "ITEMS",
                             *items(k))
    assert all(r == [1] * NITEMS for r in pipe.execute())

    # 3,000 through ioredis' Cluster.
    if not os.path.isdir(IOREDIS):
        pytest.fail("ioredis not installed (tests/integ/node: npm ci)")
    out = subprocess.run([NODE, os.path.join(HERE, "cluster_ioredis.mjs"),
                          str(nodes[1].port), "io", "3000", str(NITEMS)],
                         capture_output=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"found": 3000 * NITEMS,
                                      "expected": 3000 * NITEMS}

    keys = all_keys()
    total = sum(n.client().dbsize() for n in masters(nodes))
    assert total == len(keys)
    assert check_all(c, keys) == (len(keys) * NITEMS, len(keys) * NITEMS)
    sample = random.Random(1).sample(keys, 500)
    fp_before = false_positives(c, sample)
    assert sum(map(sum, fp_before)) < 500 * 200 * 0.01

    # Every write on a replica before anything moves or dies.
    for m in masters(nodes):
        assert m.client().execute_command("WAIT", 1, 10000) >= 1

    # Reshard 3,000 slots from one master to another while a client keeps
    # asking for items that must be found.
    src, dst = masters(nodes)[:2]
    src_id = src.client().execute_command("CLUSTER", "MYID").decode()
    dst_id = dst.client().execute_command("CLUSTER", "MYID").decode()
    moved_before = src.client().dbsize()
    stop = threading.Event()
    seen = {"queries": 0, "misses": 0, "errors": []}

    def query():
        qc = rc(nodes)
        rnd = random.Random(2)
        while not stop.is_set():
            k = rnd.choice(keys)
            try:
                if qc.execute_command("CF.EXISTS", k, items(k)[0]) != 1:
                    seen["misses"] += 1
            except redis.RedisError as e:  # pragma: no cover
                seen["errors"].append(repr(e))
            seen["queries"] += 1
    t = threading.Thread(target=query)
    t.start()
    try:
        out = subprocess.run(
            [REDIS_CLI, "--cluster", "reshard", "127.0.0.1:%d" % src.port,
             "--cluster-from", src_id, "--cluster-to", dst_id,
             "--cluster-slots", "3000", "--cluster-yes"],
            capture_output=True, timeout=300)
    finally:
        stop.set()
        t.join()
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr
    assert seen["queries"] > 100
    assert seen["misses"] == 0 and seen["errors"] == [], seen
    assert src.client().dbsize() < moved_before

    c = rc(nodes)
    assert check_all(c, keys) == (len(keys) * NITEMS, len(keys) * NITEMS)
    assert false_positives(c, sample) == fp_before

    # kill -9 a master: its replica takes over and every filter answers.
    for m in masters(nodes):
        assert m.client().execute_command("WAIT", 1, 10000) >= 1
    victim = masters(nodes)[0]
    victim.kill()
    others = [n for n in nodes if n.alive()]

    def failed_over():
        try:
            return all(n.client().execute_command("CLUSTER", "INFO")
                       .find(b"cluster_state:ok") >= 0 for n in others) \
                and len(masters(nodes)) == 3
        except redis.RedisError:
            return False
    wait_until(failed_over, 60, what="failover")
    c = rc(nodes)
    assert check_all(c, keys) == (len(keys) * NITEMS, len(keys) * NITEMS)
    assert false_positives(c, sample) == fp_before
