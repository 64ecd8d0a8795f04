"""The cuckoo-cf data type in Redis: RDB save and restart, DEBUG RELOAD,
the AOF (rewritten and replayed), COPY, RENAME, MEMORY USAGE, maxmemory,
a corrupted payload, module arguments, read-only ACL users and the huge-page
hint of big tables."""

import os
import struct

import pytest
import redis

from support.proc import wait_until


ITEMS = [b"item:%d" % i for i in range(20000)]
OTHER = [b"other:%d" % i for i in range(20000)]


def fill(r, key="f", cap=30000):
    r.execute_command("CF.RESERVE", key, cap)
    r.execute_command("CF.INSERT", key, "ITEMS", *ITEMS)
    r.execute_command("CF.DEL", key, ITEMS[0])
    return answers(r, key)


def answers(r, key="f"):
    """Everything a client can see of a filter."""
    return (r.execute_command("CF.MEXISTS", key, *(ITEMS + OTHER)),
            r.execute_command("CF.INFO", key),
            r.execute_command("DEBUG", "DIGEST-VALUE", key))


def test_type_and_commands(servers):
    r = servers().client()
    r.execute_command("CF.ADD", "f", "a")
    assert r.type("f") == b"cuckoo-cf"
    assert r.execute_command("CF.EXISTS", "f", "a") == 1
    mods = r.execute_command("MODULE", "LIST")
    assert any(dict(zip(m[0::2], m[1::2]))[b"name"] == b"cf" for m in mods)
    info = r.execute_command("COMMAND", "INFO", "cf.exists", "cf.add")
    ex, add = info["cf.exists"], info["cf.add"]
    assert set(ex["flags"]) == {"readonly", "module", "fast"}
    assert set(add["flags"]) >= {"write", "denyoom"}
    for c in (ex, add):
        assert (c["first_key_pos"], c["last_key_pos"], c["step_count"]) == \
            (1, 1, 1)
    assert ex["key_specifications"][0][1] == [b"RO", b"access"]
    assert add["key_specifications"][0][1] == [b"RW", b"insert"]
    r.set("s", "x")
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):
        r.execute_command("CF.ADD", "s", "a")


def test_save_and_restart(servers):
    s = servers()
    r = s.client()
    want = fill(r)
    r.execute_command("CF.ADD", "auto", "x")
    assert r.save()
    s.stop()
    s.start()
    r = s.client()
    assert answers(r) == want
    assert r.execute_command("CF.EXISTS", "auto", "x") == 1


def test_debug_reload(servers):
    r = servers().client()
    want = fill(r)
    assert r.execute_command("DEBUG", "RELOAD") == b"OK"
    assert answers(r) == want


@pytest.mark.parametrize("preamble", ["no", "yes"])
def test_aof_rewrite_and_restart(servers, preamble):
    s = servers("--appendonly", "yes", "--aof-use-rdb-preamble", preamble)
    r = s.client()
    want = fill(r)
    r.bgrewriteaof()

    def rewritten():
        inf = r.info("persistence")
        return (inf["aof_rewrite_in_progress"] == 0 and
                inf["aof_rewrite_scheduled"] == 0)
    wait_until(rewritten, what="AOF rewrite")
    assert r.info("persistence")["aof_last_bgrewrite_status"] == "ok"
    # Writes after the rewrite go to the incremental file.
    r.execute_command("CF.ADD", "late", "z")
    r.execute_command("CF.ADD", "f", "after")
    want2 = answers(r)
    s.stop()
    s.start()
    r = s.client()
    assert answers(r) == want2
    assert want2[0][:len(ITEMS)] == want[0][:len(ITEMS)]
    assert r.execute_command("CF.EXISTS", "late", "z") == 1


def test_copy_rename_memory_usage(servers):
    r = servers().client()
    fill(r)
    mexists, info, digest = answers(r)
    assert r.execute_command("COPY", "f", "g") == 1
    assert answers(r, "g") == (mexists, info, digest)
    # The copy is independent of the original.
    r.execute_command("CF.DEL", "g", ITEMS[5])
    assert r.execute_command("CF.EXISTS", "f", ITEMS[5]) == 1
    assert r.rename("f", "h")
    assert answers(r, "h") == (mexists, info, digest)
    assert r.exists("f") == 0
    size = dict(zip(info[0::2], info[1::2]))[b"Size"]
    usage = r.memory_usage("h")
    assert size <= usage < size + 4096


def test_used_memory_counts_filters(servers):
    r = servers().client()
    before = r.info("memory")["used_memory"]
    r.execute_command("CF.RESERVE", "big", 10000000)
    grown = r.info("memory")["used_memory"] - before
    info = r.execute_command("CF.INFO", "big")
    size = dict(zip(info[0::2], info[1::2]))[b"Size"]
    # The growable table is about 23.5 MB (16-bit slots at a load of
    # 0.85) in 2 MiB segments; the allocator may round up (jemalloc; the
    # sanitizer build's allocator does not).
    assert size >= 15000000
    assert grown >= size
    r.delete("big")
    assert r.info("memory")["used_memory"] - before < 1000000


def hinted_bytes(pid):
    """Bytes of the process's mappings marked for transparent huge pages
    (madvise(MADV_HUGEPAGE): "hg" among an area's VmFlags)."""
    total = size = 0
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            if line.startswith("Size:"):
                size = int(line.split()[1]) * 1024
            elif line.startswith("VmFlags:") and "hg" in line.split()[1:]:
                total += size
    return total


THP = "/sys/kernel/mm/transparent_hugepage/enabled"


@pytest.mark.skipif(not os.path.exists(THP) or
                    "[madvise]" not in open(THP).read(),
                    reason="transparent huge pages are not in madvise mode")
def test_big_tables_hinted_for_huge_pages(servers):
    s = servers()
    r = s.client()
    want = fill(r)  # a table of about 24 KB: left alone
    assert hinted_bytes(s.pid) == 0
    # a fixed table (EXPANSION 0) is one block
    r.execute_command("CF.RESERVE", "big", 10000000, "EXPANSION", 0)
    r.execute_command("CF.INSERT", "big", "ITEMS", *ITEMS)
    # The 2 MiB pages of the 15.8 MB table: at least 7.
    fixed = hinted_bytes(s.pid)
    assert fixed >= 7 * 2 * 1024 * 1024
    assert r.execute_command("CF.MEXISTS", "big", *ITEMS) == [1] * len(ITEMS)
    # a default filter's compact table (16 MB, one block) as the fixed one
    r.execute_command("CF.RESERVE", "grow", 10000000)
    r.execute_command("CF.INSERT", "grow", "ITEMS", *ITEMS)
    compact = hinted_bytes(s.pid)
    assert compact - fixed >= 7 * 2 * 1024 * 1024
    # once it needs room past its reserve, its 16-bit table's 2 MiB
    # segments (not 2 MiB-aligned by the server's allocator), the pages
    # they touch: a reserve of 2M converts into two whole segments
    r.execute_command("CF.RESERVE", "grow2", 2000000)
    for k in range(0, 2000000, 100000):
        r.execute_command("CF.INSERT", "grow2", "ITEMS",
                          *[b"g%d" % i for i in range(k, k + 100000)])
    before = hinted_bytes(s.pid)
    r.execute_command("CF.INSERT", "grow2", "ITEMS",
                      *[b"h%d" % i for i in range(10000)])
    assert hinted_bytes(s.pid) - before >= 2 * 2 * 1024 * 1024
    assert answers(r) == want


def test_maxmemory_refuses_growth(servers):
    r = servers("--maxmemory", "8mb").client()
    with pytest.raises(redis.ResponseError, match="OOM command not allowed"):
        r.execute_command("CF.RESERVE", "big", 10000000)
    assert r.exists("big") == 0
    # fixed tables (EXPANSION 0) of about 3.3 MB
    r.execute_command("CF.RESERVE", "a", 2000000, "EXPANSION", 0)
    r.execute_command("CF.RESERVE", "b", 2000000, "EXPANSION", 0)
    # Past maxmemory the server itself refuses deny-oom commands.
    with pytest.raises(redis.ResponseError, match="OOM"):
        for k in "cdefgh":
            r.execute_command("CF.RESERVE", k, 2000000)
    assert r.execute_command("CF.EXISTS", "a", "x") == 0


def crc64(data):
    """Redis's CRC-64 (Jones polynomial, reflected), as DUMP payloads end."""
    poly = 0x95AC9329AC4BC9B5
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (poly if crc & 1 else 0)
    return crc


def test_crc64_reference():
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA


def test_corrupted_payload_refused(servers):
    s = servers()
    r = s.client()
    r.execute_command("CF.RESERVE", "f", 1000)
    r.execute_command("CF.INSERT", "f", "ITEMS", "a", "b", "c")
    good = r.dump("f")
    body = good[:-8]
    assert struct.unpack("<Q", good[-8:])[0] == crc64(body)
    assert r.restore("copy", 0, good) == b"OK"
    assert r.execute_command("CF.MEXISTS", "copy", "a", "b", "c") == [1, 1, 1]
    magic = body.find(b"CKF1")
    assert magic > 0
    refused = 0
    # Every byte of the value flipped in turn, with a valid CRC: the module
    # refuses what does not parse; the server answers and stays up.
    for i in range(9, len(body) - 2, max(1, (len(body) - 11) // 300)):
        bad = bytearray(body)
        bad[i] ^= 0x5A
        bad = bytes(bad)
        payload = bad + struct.pack("<Q", crc64(bad))
        r.delete("evil")
        try:
            r.restore("evil", 0, payload, replace=True)
        except redis.ResponseError as e:
            assert "payload" in str(e) or "Bad data" in str(e), e
            refused += 1
            assert r.exists("evil") == 0
    assert refused > 0
    # A header with a bad checksum inside the value is the module's refusal.
    bad = bytearray(body)
    bad[magic + 8] ^= 0x01
    bad = bytes(bad)
    with pytest.raises(redis.ResponseError):
        r.restore("evil", 0, bad + struct.pack("<Q", crc64(bad)))
    assert s.alive() and r.ping()


def test_corrupted_rdb_refuses_to_start(servers):
    s = servers()
    r = s.client()
    r.execute_command("CF.RESERVE", "f", 1000)
    r.execute_command("CF.ADD", "f", "a")
    r.save()
    s.stop()
    path = os.path.join(s.dir, "dump.rdb")
    data = bytearray(open(path, "rb").read())
    at = data.find(b"CKF1")
    assert at > 0
    data[at + 9] ^= 0xFF
    open(path, "wb").write(bytes(data))
    # With rdbchecksum off nothing but the module's own checks sees the
    # damage: it refuses the value and the server refuses to start (Redis
    # 7.0 then runs its RDB check and exits), never a crash by a signal.
    s.args += ["--rdbchecksum", "no", "--sanitize-dump-payload", "no"]
    rc = s.fail_to_start()
    assert rc is not None and rc >= 0, rc
    log = s.log_text()
    assert "cuckoo-cf: invalid filter header" in log
    assert "ready to accept connections" not in log.split("RDB age")[-1]


def test_module_arguments(servers):
    r = servers(module_args=["cf-bucket-size", "2", "cf-initial-size",
                             "5000", "cf-error-rate", "0.0001"]).client()
    r.execute_command("CF.ADD", "f", "a")
    info = r.execute_command("CF.INFO", "f")
    d = dict(zip(info[0::2], info[1::2]))
    assert d[b"Bucket size"] == 2
    assert d[b"Fingerprint bits"] == 16
    assert d[b"Capacity"] >= 5000


@pytest.mark.parametrize("args", [["cf-bucket-size", "0"],
                                  ["cf-bucket-size"],
                                  ["cf-nonsense", "1"],
                                  ["cf-fingerprint-bits", "13"],
                                  ["cf-error-rate", "2"],
                                  ["cf-initial-size", "1"]])
def test_bad_module_arguments_refuse_to_start(servers, args):
    s = servers(module_args=args, start=False)
    rc = s.fail_to_start()
    assert rc is not None and rc != 0
    assert "cuckoo: bad module argument" in s.log_text()


def test_read_only_acl_user(servers):
    r = servers().client()
    r.execute_command("CF.ADD", "f", "a")
    r.execute_command("ACL", "SETUSER", "reader", "on", ">pw", "%R~*",
                      "+@all")
    ro = redis.Redis(host="127.0.0.1", port=r.connection_pool.
                     connection_kwargs["port"], username="reader",
                     password="pw")
    assert ro.execute_command("CF.EXISTS", "f", "a") == 1
    assert ro.execute_command("CF.MEXISTS", "f", "a", "b") == [1, 0]
    assert ro.execute_command("CF.INFO", "f")[0] == b"Size"
    with pytest.raises(redis.exceptions.NoPermissionError):
        ro.execute_command("CF.ADD", "f", "b")
