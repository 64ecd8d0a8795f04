"""Memory as Redis users read it and as a container's limit charges it:
INFO memory's process and allocator fields, MEMORY STATS / DOCTOR / PURGE
/ MALLOC-STATS / HELP in Redis's shapes, and the resident set going back
after FLUSHALL or after every filter is deleted.
"""

import os
import shutil
import subprocess

import pytest
import redis

from support.proc import daemon_binary, use_redis_server, wait_until
from support.resp import RespError

MB = 1 << 20

# MEMORY STATS's fields in Redis 7's order; db.N maps sit after
# functions.caches, one for each database with keys.
STATS_HEAD = ["peak.allocated", "total.allocated", "startup.allocated",
              "replication.backlog", "clients.slaves", "clients.normal",
              "cluster.links", "aof.buffer", "lua.caches", "functions.caches"]
STATS_TAIL = ["overhead.total", "keys.count", "keys.bytes-per-key",
              "dataset.bytes", "dataset.percentage", "peak.percentage",
              "allocator.allocated", "allocator.active", "allocator.resident",
              "allocator-fragmentation.ratio",
              "allocator-fragmentation.bytes", "allocator-rss.ratio",
              "allocator-rss.bytes", "rss-overhead.ratio",
              "rss-overhead.bytes", "fragmentation", "fragmentation.bytes"]


def sanitized():
    """Whether the daemon is a sanitizer build: ASan keeps freed memory in
    its quarantine, so the resident set cannot follow the keyspace."""
    ldd = shutil.which("ldd")
    if ldd is None or use_redis_server():
        return False
    out = subprocess.run([ldd, daemon_binary()], stdout=subprocess.PIPE,
                         check=True).stdout.decode()
    return "libasan" in out


def vm_rss(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS for %d" % pid)


# ---- INFO memory ------------------------------------------------------------

def test_info_memory_process_and_allocator_fields(daemon, is_redis):
    d = daemon()
    m = d.client().info("memory")
    assert m["used_memory_rss"] > 0
    # The process's own figure, read as /proc reads it (within a factor of
    # two: the two readings are moments apart).
    rss = vm_rss(d.pid)
    assert rss / 2 <= m["used_memory_rss"] <= rss * 2, (m, rss)
    assert isinstance(m["mem_fragmentation_ratio"], float)
    assert m["mem_fragmentation_bytes"] == pytest.approx(
        m["used_memory_rss"] - m["used_memory"], abs=4 * MB)
    assert m["used_memory_rss_human"].endswith(("K", "M", "G"))
    alloc = m["mem_allocator"]
    assert alloc == "libc" or alloc.startswith("jemalloc-"), alloc
    assert m["allocator_allocated"] > 0 or alloc == "libc"
    assert m["allocator_active"] >= m["allocator_allocated"] or alloc == "libc"
    if alloc.startswith("jemalloc"):
        assert m["allocator_resident"] >= m["allocator_active"]
        assert isinstance(m["allocator_frag_ratio"], float)
        assert isinstance(m["allocator_rss_ratio"], float)
    else:
        assert "allocator_resident" not in m or is_redis
    assert m["maxmemory"] == 0
    if not is_redis:
        # Without maxmemory the bound is the machine's or the cgroup's.
        assert m["maxmemory_effective"] == m["total_system_memory"]


@pytest.mark.cf
def test_info_maxmemory_effective_follows_maxmemory(daemon):
    r = daemon("--maxmemory", "64mb").client()
    m = r.info("memory")
    assert m["maxmemory"] == 64 * MB
    assert m["maxmemory_effective"] == 64 * MB
    assert m["maxmemory_effective_human"] == "64.00M"
    assert m["maxmemory_effective"] <= m["total_system_memory"]


# ---- MEMORY STATS / DOCTOR / PURGE / MALLOC-STATS / HELP ------------------

def stats_pairs(flat):
    assert len(flat) % 2 == 0, flat
    return [(flat[i].decode(), flat[i + 1]) for i in range(0, len(flat), 2)]


def test_memory_stats_empty_shape(daemon):
    r = daemon().client()
    pairs = stats_pairs(r.execute_command("MEMORY", "STATS"))
    assert [k for k, _ in pairs] == STATS_HEAD + STATS_TAIL
    st = dict(pairs)
    assert st["keys.count"] == 0
    assert st["keys.bytes-per-key"] == 0
    for k in STATS_HEAD + ["overhead.total", "keys.count", "dataset.bytes"]:
        assert isinstance(st[k], int), (k, st[k])


@pytest.mark.cf
def test_memory_stats_counts_filters_and_databases(daemon):
    r = daemon().client()
    r.execute_command("CF.RESERVE", "a", 100000)
    r.execute_command("CF.RESERVE", "b", 1000)
    r3 = redis.Redis(port=r.connection_pool.connection_kwargs["port"], db=3)
    r3.execute_command("CF.RESERVE", "c", 1000)
    pairs = stats_pairs(r.execute_command("MEMORY", "STATS"))
    names = [k for k, _ in pairs]
    assert names == STATS_HEAD + ["db.0", "db.3"] + STATS_TAIL
    st = dict(pairs)
    assert st["keys.count"] == 3
    total = r.info("memory")["used_memory"]
    assert st["total.allocated"] == total
    # The filters are the dataset; each key's entry is the overhead.
    assert 0 < st["dataset.bytes"] < total
    usage = sum(r.memory_usage(k) for k in ("a", "b"))
    assert st["dataset.bytes"] <= usage + r3.memory_usage("c")
    db0 = stats_pairs(st["db.0"])
    assert [k for k, _ in db0] == ["overhead.hashtable.main",
                                   "overhead.hashtable.expires"]
    assert dict(db0)["overhead.hashtable.main"] > 0
    assert float(st["dataset.percentage"]) > 90
    assert st["keys.bytes-per-key"] == total // 3
    assert float(st["fragmentation"]) > 0


@pytest.mark.cf
def test_memory_stats_resp3_is_a_map(daemon):
    c = daemon().raw()
    assert c.command("HELLO", "3")[b"proto"] == 3
    c.command("CF.RESERVE", "a", 1000)
    st = c.command("MEMORY", "STATS")
    assert list(st.keys()) == [k.encode() for k in STATS_HEAD] + [b"db.0"] + \
        [k.encode() for k in STATS_TAIL]
    assert isinstance(st[b"dataset.percentage"], float)
    assert isinstance(st[b"db.0"], dict)
    assert st[b"keys.count"] == 1


def test_memory_subcommand_arity_errors(daemon):
    c = daemon().raw()
    for sub in ("stats", "doctor", "purge", "malloc-stats", "help"):
        assert c.command("MEMORY", sub, "extra") == RespError(
            "ERR wrong number of arguments for 'memory|%s' command" % sub)
    reply = c.command("MEMORY", "nosuch")
    assert isinstance(reply, RespError)
    assert "unknown subcommand" in reply.text and "MEMORY HELP" in reply.text
    assert c.command("PING") == "PONG"


def test_memory_doctor_on_an_empty_instance(daemon):
    r = daemon().client()
    text = r.execute_command("MEMORY", "DOCTOR")
    assert isinstance(text, bytes)
    assert b"empty" in text


@pytest.mark.cf
def test_memory_doctor_with_data_reports_as_text(daemon):
    d = daemon()
    r = d.client()
    # About 15 MB: a 10M-item filter, every page of it touched.
    r.execute_command("CF.RESERVE", "big", 10000000)
    r.execute_command("CF.INSERT", "big", "ITEMS",
                      *[str(i) for i in range(20000)])
    text = r.execute_command("MEMORY", "DOCTOR").decode()
    assert "empty" not in text
    assert text.startswith(("No memory problems", "Memory problems found")), \
        text
    # The peak finding: most of the data deleted again.
    r.execute_command("CF.RESERVE", "small", 1000)
    r.delete("big")
    r.execute_command("CF.RESERVE", "mid", 4000000)
    text = r.execute_command("MEMORY", "DOCTOR").decode()
    assert text.startswith("Memory problems found"), text
    assert "Peak memory" in text
    # RESP3: verbatim text.
    c = d.raw()
    c.command("HELLO", "3")
    assert isinstance(c.command("MEMORY", "DOCTOR"), bytes)


def test_memory_purge_and_malloc_stats(daemon):
    r = daemon().client()
    assert r.execute_command("MEMORY", "PURGE") in (b"OK", "OK", True)
    text = r.execute_command("MEMORY", "MALLOC-STATS")
    alloc = r.info("memory")["mem_allocator"]
    if alloc.startswith("jemalloc"):
        assert b"jemalloc statistics" in text
    else:
        assert text == b"Stats not supported for the current allocator"


def test_memory_help_lists_the_subcommands(daemon):
    lines = daemon().client().execute_command("MEMORY", "HELP")
    text = "\n".join(l.decode() if isinstance(l, bytes) else l
                     for l in lines)
    for sub in ("DOCTOR", "MALLOC-STATS", "PURGE", "STATS", "USAGE", "HELP"):
        assert "\n" + sub in text, text


# ---- memory goes back --------------------------------------------------------

def churn(r, rounds=6, per_round=500):
    """Rounds of filters below the size the core maps directly (so the
    allocator holds them), their pages touched by inserts, 90% of each
    round deleted again: about 50 MB stays, interleaved with freed space,
    as a keyspace that lives a while has it."""
    items = [str(i) for i in range(100)]
    for rnd in range(rounds):
        p = r.pipeline(transaction=False)
        keys = ["f:%d:%d" % (rnd, i) for i in range(per_round)]
        for k in keys:
            p.execute_command("CF.RESERVE", k, 100000)
            p.execute_command("CF.INSERT", k, "ITEMS", *items)
        p.execute()
        doomed = [k for i, k in enumerate(keys) if i % 10 != 0]
        for i in range(0, len(doomed), 500):
            r.delete(*doomed[i:i + 500])


@pytest.mark.cf
@pytest.mark.parametrize("how", ["flushall", "del"])
def test_rss_goes_back_after_the_data_goes(daemon, how):
    if sanitized():
        pytest.skip("sanitizer build: ASan's quarantine keeps freed memory")
    d = daemon()
    r = d.client()
    rss = lambda: vm_rss(d.pid)
    start = rss()
    churn(r)
    full = rss()
    used = r.info("memory")["used_memory"]
    # Something to give back: the bound below must be able to fail.
    assert used > 40 * MB, used
    assert full - start > 40 * MB, (start, full)
    if how == "flushall":
        assert r.flushall()
    else:
        keys = r.keys("*")
        for i in range(0, len(keys), 500):
            r.delete(*keys[i:i + 500])
    # What is left is the keyspace's empty hash table.
    assert r.info("memory")["used_memory"] < 64 << 10
    # A bound on the wait, not a measurement: the assertion is on the
    # value.
    low = wait_until(lambda: rss() <= start + 16 * MB and rss(),
                     timeout=60, what="RSS back near its start")
    assert low - start <= 16 * MB, (start, full, low)
    assert r.info("memory")["used_memory_rss"] <= start + 16 * MB
