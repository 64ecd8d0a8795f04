"""A replica (--replicaof) of a master with the module answers as the
master does: after writes, after a full resync, after FLUSHALL; a nearly
full filter stays byte for byte identical (DEBUG DIGEST-VALUE) through
100,000 inserts full of relocations."""

from support.proc import replica_synced

ITEMS = [b"i%d" % i for i in range(5000)]
PROBE = ITEMS + [b"o%d" % i for i in range(5000)]


def view(s, keys):
    c = s.client()
    return {k: (c.execute_command("CF.MEXISTS", k, *PROBE),
                c.execute_command("CF.INFO", k),
                c.execute_command("DEBUG", "DIGEST-VALUE", k))
            for k in keys}


def test_replica_answers_identically(servers):
    m = servers()
    r = servers("--replicaof", "127.0.0.1", str(m.port))
    mc = m.client()
    mc.execute_command("CF.RESERVE", "res", 2000, "EXPANSION", 2)
    mc.execute_command("CF.INSERT", "res", "ITEMS", *ITEMS)  # grows
    mc.execute_command("CF.ADD", "auto", "x")  # created with a random seed
    mc.execute_command("CF.INSERTNX", "ins", "CAPACITY", 100, "ITEMS",
                       *ITEMS[:300])
    mc.execute_command("CF.DEL", "res", ITEMS[3])
    keys = ["res", "auto", "ins"]
    replica_synced(m, r)
    assert view(r, keys) == view(m, keys)
    assert (r.client().execute_command("DEBUG", "DIGEST") ==
            mc.execute_command("DEBUG", "DIGEST"))

    # A full resync: the replica loads the master's RDB.
    r.stop()
    mc.execute_command("CF.ADD", "auto", "y")
    r2 = servers("--replicaof", "127.0.0.1", str(m.port))
    replica_synced(m, r2)
    assert view(r2, keys) == view(m, keys)
    # Then both keep taking the same writes.
    mc.execute_command("CF.INSERT", "auto", "ITEMS", *ITEMS[:2000])
    replica_synced(m, r2)
    assert view(r2, keys) == view(m, keys)

    mc.flushall()
    replica_synced(m, r2)
    assert r2.client().dbsize() == 0
    mc.execute_command("CF.ADD", "again", "a")
    replica_synced(m, r2)
    assert view(r2, ["again"]) == view(m, ["again"])


def test_nearly_full_filter_stays_identical(servers):
    """A filter without growth kept near full: every insert relocates (and
    many fail). The replica first takes the filter through a full resync
    (RDB), then re-runs the 100,000 inserts; digests must match."""
    m = servers()
    mc = m.client()
    mc.execute_command("CF.RESERVE", "full", 50000, "EXPANSION", 0,
                       "MAXITERATIONS", 50)
    batch = [b"pre%d" % i for i in range(44000)]
    mc.execute_command("CF.INSERT", "full", "ITEMS", *batch)
    r = servers("--replicaof", "127.0.0.1", str(m.port))
    replica_synced(m, r)
    pipe = mc.pipeline(transaction=False)
    for n in range(100):
        items = [b"x%d" % (n * 1000 + i) for i in range(1000)]
        pipe.execute_command("CF.INSERT", "full", "ITEMS", *items)
        # deletes keep free slots coming, so the walks keep moving
        pipe.execute_command("CF.DEL", "full", b"pre%d" % (n * 7))
    res = pipe.execute()
    fails = sum(x == -1 for rep in res[0::2] for x in rep)
    assert fails > 0
    replica_synced(m, r)
    a = mc.execute_command("DEBUG", "DIGEST-VALUE", "full")
    b = r.client().execute_command("DEBUG", "DIGEST-VALUE", "full")
    assert a == b
    assert (mc.execute_command("CF.INFO", "full") ==
            r.client().execute_command("CF.INFO", "full"))
