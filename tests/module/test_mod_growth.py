"""The module in redis-server, with a replica, while filters grow through
more than ten doublings: random CF.ADD / CF.INSERT / CF.DEL on the master
(reserved, and created by CF.ADD and CF.INSERT on a missing key); after
WAIT the replica holds the same bytes (DUMP and every CF.SCANDUMP chunk
equal) and answers every item alike. Then the replica restarts and takes
the master's RDB (a full sync), and both keep taking the same writes.

CUCKOOD_GROWTH_SEED sets the seed (default 24)."""

import os

import pytest

from support.growth import RESERVE, Model, check_all, grow, mexists
from support.proc import wait_until

SEED = int(os.environ.get("CUCKOOD_GROWTH_SEED", "24"))
ARGS = ["cf-initial-size", str(RESERVE), "cf-expansion-factor", "2"]
KEYS = {"res": False, "auto": False, "ins": True}  # key -> by CF.INSERT


def linked(r):
    def up():
        inf = r.client().info("replication")
        return inf.get("master_link_status") == "up"
    wait_until(up, 60, what="replica link up")


def waited(mc):
    """WAIT until the one replica has every write (bounded, not timed)."""
    assert mc.call("WAIT", 1, 60000) == 1


def scandump(c, key):
    chunks, it = [], 0
    while True:
        it, data = c.call("CF.SCANDUMP", key, it)
        if it == 0:
            return chunks
        chunks.append((it, data))


def same_bytes(m, r, models):
    with m.raw(timeout=120) as mc, r.raw(timeout=120) as rc:
        for key, model in models.items():
            a, b = mc.call("DUMP", key), rc.call("DUMP", key)
            assert a is not None and a == b, "%s: DUMP differs" % key
            assert scandump(mc, key) == scandump(rc, key), key
            every = list(model.seen) + [b"no:%d" % i for i in range(5000)]
            assert mexists(mc, key, every) == mexists(rc, key, every), key
            check_all(rc, key, model)


def test_replica_holds_the_same_bytes_through_growth(servers):
    m = servers(module_args=ARGS)
    r = servers("--replicaof", "127.0.0.1", str(m.port), module_args=ARGS)
    linked(r)
    models = {k: Model(SEED, k, k.encode()) for k in KEYS}
    with m.raw(timeout=120) as mc:
        assert mc.call("CF.RESERVE", "res", RESERVE, "EXPANSION", 2) == "OK"
        for key, insert in KEYS.items():
            grow(mc, key, models[key], 40000, insert=insert)
        waited(mc)
    same_bytes(m, r, models)

    # The replica restarts empty (no persistence) and loads the master's
    # RDB, taken mid-growth; meanwhile the master went on.
    r.stop()
    with m.raw(timeout=120) as mc:
        for key, insert in KEYS.items():
            grow(mc, key, models[key], 55000, insert=insert)
    r.start()
    linked(r)
    with m.raw(timeout=120) as mc:
        waited(mc)
    same_bytes(m, r, models)

    # Both take the same writes from there, past the tenth doubling.
    with m.raw(timeout=120) as mc:
        for key, insert in KEYS.items():
            grow(mc, key, models[key], 80000, insert=insert)
        waited(mc)
    same_bytes(m, r, models)


def test_copies_past_the_buckets_on_a_replica(servers):
    """One item added 40 times (RedisBloom takes every add; past its two
    buckets the copies are counted beside the table): the replica holds
    the same bytes, and after a full sync too; deletes give every copy
    back on both."""
    m = servers()
    r = servers("--replicaof", "127.0.0.1", str(m.port))
    linked(r)
    with m.raw() as mc:
        assert mc.call("CF.RESERVE", "seen", 1000) == "OK"
        for i in range(40):
            assert mc.call("CF.ADD", "seen", "user:1") == 1, i
        assert mc.call("CF.INSERT", "seen", "ITEMS", "user:1",
                       "user:2") == [1, 1]
        assert mc.call("CF.COUNT", "seen", "user:1") == 41
        waited(mc)
    with m.raw() as mc, r.raw() as rc:
        assert mc.call("DUMP", "seen") == rc.call("DUMP", "seen")
        assert rc.call("CF.COUNT", "seen", "user:1") == 41
    r.stop()
    r.start()
    linked(r)
    with m.raw() as mc, r.raw() as rc:
        waited(mc)
        assert mc.call("DUMP", "seen") == rc.call("DUMP", "seen")
        for i in range(41):
            assert mc.call("CF.DEL", "seen", "user:1") == 1, i
        waited(mc)
        assert mc.call("DUMP", "seen") == rc.call("DUMP", "seen")
        assert rc.call("CF.EXISTS", "seen", "user:1") == 0
        assert rc.call("CF.EXISTS", "seen", "user:2") == 1


@pytest.mark.parametrize("opts", [(), ("ERROR", "0.001")],
                         ids=["growable", "pair"])
def test_replica_mid_conversion(servers, opts):
    """A reserve of 20,000 filled, then 50 single adds: the compact table
    is converting (32 buckets per write; docs/growth.md). The replica
    holds the same bytes mid-conversion, after a full sync taken then, and
    once the conversion ends on both. Also for a growable pair (ERROR
    0.001), whose two tables convert side by side."""
    m = servers()
    r = servers("--replicaof", "127.0.0.1", str(m.port))
    linked(r)
    items = [b"r%d" % i for i in range(20000)]
    with m.raw(timeout=120) as mc:
        assert mc.call("CF.RESERVE", "conv", 20000, *opts) == "OK"
        for i in range(0, 20000, 5000):
            mc.call("CF.INSERT", "conv", "ITEMS", *items[i:i + 5000])
        for i in range(50):
            assert mc.call("CF.ADD", "conv", b"m%d" % i) == 1
        items += [b"m%d" % i for i in range(50)]
        waited(mc)
    with m.raw(timeout=120) as mc, r.raw(timeout=120) as rc:
        assert mc.call("DUMP", "conv") == rc.call("DUMP", "conv")
        assert scandump(mc, "conv") == scandump(rc, "conv")
        assert mexists(rc, "conv", items) == [1] * len(items)
    r.stop()
    r.start()
    linked(r)
    with m.raw(timeout=120) as mc, r.raw(timeout=120) as rc:
        waited(mc)
        assert mc.call("DUMP", "conv") == rc.call("DUMP", "conv")
        more = [b"n%d" % i for i in range(5000)]
        mc.call("CF.INSERT", "conv", "ITEMS", *more)
        waited(mc)
        assert mc.call("DUMP", "conv") == rc.call("DUMP", "conv")
        assert mexists(rc, "conv", items + more) == [1] * (len(items) + 5000)
