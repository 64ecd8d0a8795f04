"""Debian's python3-redis (4.3.x) drives cuckood exactly as it drives Redis
with RedisBloom: plain commands, the r.cf() helpers, pipelines, binary-safe
data, large batches, authentication, RESP3 (over a raw socket, since this
redis-py speaks RESP2 only) and protocol errors.

Run against redis-server with CUCKOOD_TEST_REDIS_SERVER=1 to check the
non-CF expectations; tests marked `cf` are skipped there.
"""

import threading

import pytest
import redis

from support.proc import PASSWORD, wait_until
from support.resp import RespError, cf_info, encode_command

CF_INFO_FIELDS = [
    "Size", "Number of buckets", "Number of filters",
    "Number of items inserted", "Number of items deleted", "Bucket size",
    "Expansion rate", "Max iterations",
]


@pytest.fixture
def r(server):
    c = redis.Redis(host="127.0.0.1", port=server.port,
                    socket_timeout=30)
    c.flushall()
    yield c
    c.close()


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


# ---------------------------------------------------------------- basics

def test_ping_echo(server, r):
    assert r.ping() is True
    assert r.echo("hello") == b"hello"
    assert r.echo(b"a\x00b\r\nc") == b"a\x00b\r\nc"
    raw = server.raw()
    assert raw.command("PING", "msg") == b"msg"
    raw.close()


def test_client_name_and_id(server):
    c = redis.Redis(host="127.0.0.1", port=server.port, client_name="integ-py")
    assert c.client_getname() == "integ-py"
    assert isinstance(c.client_id(), int)
    names = [cl.get("name") for cl in c.client_list()]
    assert "integ-py" in names
    c.close()


def test_select_via_db_argument(server):
    c = redis.Redis(host="127.0.0.1", port=server.port, db=3)
    assert c.ping() is True
    assert c.connection_pool.connection_kwargs["db"] == 3
    c.close()
    raw = server.raw()
    assert raw.command("SELECT", "15") == "OK"
    for db in ("16", "-1"):
        assert raw.command("SELECT", db) == \
            RespError("ERR DB index is out of range")
    for db in ("x", "1x"):
        assert raw.command("SELECT", db) == \
            RespError("ERR value is not an integer or out of range")
    assert raw.command("PING") == "PONG"
    raw.close()


def test_info(r):
    info = r.info()
    assert "redis_version" in info
    assert info["loading"] == 0
    server_section = r.info("server")
    assert "redis_version" in server_section


def test_config_get(server, r):
    assert r.config_get("port") == {"port": str(server.port)}
    assert r.config_get("databases") == {"databases": "16"}
    assert r.config_get("nonexistent-directive-xyz") == {}


def test_time_and_command_count(r):
    secs, usecs = r.time()
    assert secs > 1_600_000_000 and 0 <= usecs < 1_000_000
    assert r.command_count() > 10


def test_command_introspection(server):
    c = server.raw()
    n = c.command("COMMAND", "COUNT")
    assert isinstance(n, int) and n > 10
    names = c.command("COMMAND", "LIST")
    assert b"ping" in names and b"select" in names
    assert len(names) >= n   # LIST also names subcommands (client|id)
    info = c.command("COMMAND", "INFO", "ping", "nosuchcommand")
    assert info[0][0] == b"ping" and info[0][1] == -1
    assert info[1] is None
    docs = c.command("COMMAND", "DOCS", "echo")
    d = dict(zip(docs[0::2], docs[1::2]))
    assert b"echo" in d
    doc = dict(zip(d[b"echo"][0::2], d[b"echo"][1::2]))
    assert b"summary" in doc and b"arguments" in doc
    c.close()


@pytest.mark.cf
def test_command_introspection_cf(server):
    c = server.raw()
    names = c.command("COMMAND", "LIST")
    for name in (b"cf.reserve", b"cf.add", b"cf.addnx", b"cf.insert",
                 b"cf.insertnx", b"cf.exists", b"cf.mexists", b"cf.del",
                 b"cf.count", b"cf.info", b"cf.scandump", b"cf.loadchunk"):
        assert name in names, name
    info = c.command("COMMAND", "INFO", "cf.add")
    assert info[0][0] == b"cf.add" and info[0][1] == 3
    docs = c.command("COMMAND", "DOCS", "cf.insert")
    d = dict(zip(docs[0::2], docs[1::2]))
    doc = dict(zip(d[b"cf.insert"][0::2], d[b"cf.insert"][1::2]))
    argnames = [dict(zip(a[0::2], a[1::2]))[b"name"]
                for a in doc[b"arguments"]]
    assert argnames[0] == b"key"
    assert b"items" in [x.lower() for x in argnames] or \
        b"item" in [x.lower() for x in argnames]
    # Client library handshakes send CLIENT SETINFO; it must not fail.
    assert c.command("CLIENT", "SETINFO", "LIB-NAME", "integ") == "OK"
    assert c.command("CLIENT", "SETINFO", "LIB-VER", "1.0") == "OK"
    c.close()


def test_empty_keyspace(r):
    assert r.dbsize() == 0
    assert r.keys("*") == []
    assert list(r.scan_iter()) == []
    assert r.exists("nope") == 0
    assert r.type("nope") == b"none"
    assert r.delete("nope") == 0


def test_unknown_command_wording(server):
    raw = server.raw()
    reply = raw.command("foo", "a", "b")
    assert isinstance(reply, RespError)
    assert str(reply) == \
        "ERR unknown command 'foo', with args beginning with: 'a' 'b' "
    reply = raw.command("foo")
    assert str(reply) == \
        "ERR unknown command 'foo', with args beginning with: "
    # The connection survives.
    assert raw.command("PING") == "PONG"
    raw.close()


def test_unknown_command_redis_py(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("NOSUCHCOMMAND", "x")
    assert "unknown command 'NOSUCHCOMMAND'" in str(e.value)
    assert r.ping() is True


def test_wrong_arity(r):
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("ECHO")
    assert "wrong number of arguments" in str(e.value)


def test_quit(server):
    raw = server.raw()
    # What comes after QUIT in the same read is not run.
    raw.send(encode_command("QUIT") + encode_command("PING"))
    assert raw.read() == "OK"
    assert raw.at_eof()
    raw.close()


def test_many_clients_at_once(server):
    conns = [server.raw() for _ in range(50)]
    for i, c in enumerate(conns):
        c.send(encode_command("ECHO", "client-%d" % i))
    for i, c in enumerate(conns):
        assert c.read() == b"client-%d" % i
    for c in conns:
        c.close()


# ------------------------------------------------------------ keyspace

@pytest.mark.cf
def test_keyspace_commands(r):
    for k in ("f1", "f2", "g1", "other"):
        assert r.cf().add(k, "x") == 1
    assert r.dbsize() == 4
    assert sorted(r.keys("*")) == [b"f1", b"f2", b"g1", b"other"]
    assert sorted(r.keys("f?")) == [b"f1", b"f2"]
    assert sorted(r.keys("[fg]1")) == [b"f1", b"g1"]
    assert sorted(r.scan_iter(match="f*")) == [b"f1", b"f2"]
    assert sorted(r.scan_iter(count=1)) == [b"f1", b"f2", b"g1", b"other"]
    assert sorted(r.scan_iter(_type="MBbloomCF")) == \
        [b"f1", b"f2", b"g1", b"other"]
    assert list(r.scan_iter(_type="string")) == []
    assert r.type("f1") == b"MBbloomCF"
    assert r.exists("f1", "f2", "nope") == 2

    assert r.rename("f1", "renamed") is True
    assert r.exists("f1") == 0
    assert r.cf().exists("renamed", "x") == 1
    with pytest.raises(redis.ResponseError):
        r.rename("nope", "x")

    assert r.delete("f2", "nope") == 1
    assert r.unlink("g1") == 1
    assert r.dbsize() == 2
    assert r.flushdb() is True
    assert r.dbsize() == 0
    assert r.cf().exists("renamed", "x") == 0


@pytest.mark.cf
def test_filters_are_per_database(server):
    c0 = redis.Redis(host="127.0.0.1", port=server.port, db=0)
    c3 = redis.Redis(host="127.0.0.1", port=server.port, db=3)
    c0.flushall()
    assert c3.cf().add("f", "only-in-3") == 1
    assert c3.cf().exists("f", "only-in-3") == 1
    assert c0.cf().exists("f", "only-in-3") == 0
    assert c0.dbsize() == 0 and c3.dbsize() == 1
    assert c0.cf().add("f", "only-in-0") == 1
    assert c3.cf().exists("f", "only-in-0") == 0
    assert c0.cf().info("f").insertedNum == 1
    c3.flushdb()
    assert c3.dbsize() == 0 and c0.dbsize() == 1
    c0.close()
    c3.close()


# ------------------------------------------------------------- r.cf()

@pytest.mark.cf
def test_cf_helpers(r):
    cf = r.cf()
    assert cf.create("f", 1000, expansion=2, bucket_size=4,
                     max_iterations=20) is True
    with pytest.raises(redis.ResponseError) as e:
        cf.create("f", 1000)
    assert "exists" in str(e.value)

    assert cf.add("f", "a") == 1
    assert cf.add("f", "a") == 1          # ADD never deduplicates
    assert cf.addnx("f", "a") == 0
    assert cf.addnx("f", "b") == 1
    assert cf.insert("f", ["c", "d"]) == [1, 1]
    assert cf.insertnx("f", ["d", "e"]) == [0, 1]
    assert cf.exists("f", "a") == 1
    assert cf.exists("f", "zzz-not-added") == 0
    assert cf.mexists("f", "a", "b", "zzz-not-added") == [1, 1, 0]
    assert cf.count("f", "a") == 2
    assert cf.count("f", "zzz-not-added") == 0
    assert cf.delete("f", "a") == 1
    assert cf.count("f", "a") == 1
    assert cf.delete("f", "zzz-not-added") == 0

    info = cf.info("f")
    assert info.filterNum == 1
    # a twice, b, c, d, e; CF.DEL lowers the count (RedisBloom's meaning).
    assert info.insertedNum == 5
    assert info.deletedNum == 1
    assert info.bucketSize == 4
    assert info.expansionRate == 2
    assert info.maxIteration == 20
    assert info.bucketNum >= 1000 // 4
    assert info.size > 0


@pytest.mark.cf
def test_cf_info_order_resp2(server, r):
    r.cf().create("f", 100)
    raw = server.raw()
    reply = raw.command("CF.INFO", "f")
    raw.close()
    names = [x.decode() for x in cf_info(reply)]
    assert names[:8] == CF_INFO_FIELDS
    assert all(isinstance(v, int) for v in reply[1:16:2])


@pytest.mark.cf
def test_cf_missing_keys_and_errors(r):
    cf = r.cf()
    assert cf.exists("missing", "x") == 0
    assert cf.mexists("missing", "x", "y") == [0, 0]
    assert cf.count("missing", "x") == 0
    with pytest.raises(redis.ResponseError) as e:
        cf.delete("missing", "x")
    assert "not found" in str(e.value).lower()
    with pytest.raises(redis.ResponseError) as e:
        cf.info("missing")
    assert "not found" in str(e.value).lower()
    with pytest.raises(redis.ResponseError):
        cf.insert("missing", ["x"], nocreate=True)
    assert r.exists("missing") == 0
    with pytest.raises(redis.ResponseError):
        cf.create("bad", 0)
    with pytest.raises(redis.ResponseError):
        cf.create("bad", 1000, bucket_size=256)
    with pytest.raises(redis.ResponseError):
        r.execute_command("CF.RESERVE", "bad", "1000", "BOGUS", "1")
    with pytest.raises(redis.ResponseError) as e:
        r.execute_command("CF.ADD", "f")
    assert "wrong number of arguments" in str(e.value)
    assert r.exists("bad") == 0


@pytest.mark.cf
def test_cf_insert_with_capacity_autocreates(r):
    assert r.cf().insert("auto", ["a", "b"], capacity=5000) == [1, 1]
    assert r.type("auto") == b"MBbloomCF"
    info = r.cf().info("auto")
    assert info.insertedNum == 2
    assert info.bucketNum * info.bucketSize >= 5000


@pytest.mark.cf
def test_cf_scandump_loadchunk_round_trip(r):
    cf = r.cf()
    cf.create("src", 20000)
    items = ["item-%d" % i for i in range(15000)]
    assert all(x == 1 for x in cf.insert("src", items))
    chunks = []
    it = 0
    while True:
        it, data = cf.scandump("src", it)
        if it == 0:
            break
        assert data is not None
        chunks.append((it, data))
        assert len(chunks) < 10000
    assert chunks
    for it, data in chunks:
        assert cf.loadchunk("dst", it, data) in (b"OK", "OK", True)
    assert r.type("dst") == b"MBbloomCF"
    assert cf.mexists("dst", *items) == [1] * len(items)
    a, b = cf.info("src"), cf.info("dst")
    assert (a.size, a.bucketNum, a.filterNum, a.insertedNum, a.deletedNum,
            a.bucketSize, a.expansionRate, a.maxIteration) == \
        (b.size, b.bucketNum, b.filterNum, b.insertedNum, b.deletedNum,
         b.bucketSize, b.expansionRate, b.maxIteration)
    # The copy is independent of the source.
    assert cf.delete("dst", "item-0") == 1
    assert cf.exists("src", "item-0") == 1


# ----------------------------------------------------- pipelines, batches

@pytest.mark.cf
def test_pipeline_10k(r):
    pipe = r.pipeline(transaction=False)
    for i in range(10000):
        pipe.execute_command("CF.ADD", "p", "item-%d" % i)
    assert pipe.execute() == [1] * 10000
    pipe = r.pipeline(transaction=False)
    for i in range(10000):
        pipe.execute_command("CF.EXISTS", "p", "item-%d" % i)
        if i % 1000 == 0:
            pipe.ping()
    res = pipe.execute()
    assert len(res) == 10010
    assert all(x == 1 or x is True for x in res)
    assert r.cf().info("p").insertedNum == 10000


def test_pipeline_10k_plain(r):
    pipe = r.pipeline(transaction=False)
    for i in range(10000):
        pipe.echo("m%d" % i)
    res = pipe.execute()
    assert res == [b"m%d" % i for i in range(10000)]


@pytest.mark.cf
def test_100k_item_batches(r):
    items = [b"batch-%d" % i for i in range(100000)]
    assert r.cf().insert("big", items, capacity=200000) == [1] * 100000
    assert r.cf().mexists("big", *items) == [1] * 100000
    others = [b"other-%d" % i for i in range(100000)]
    fp = sum(r.cf().mexists("big", *others))
    assert fp < 1000, "false positives %d of 100000" % fp
    assert r.cf().info("big").insertedNum == 100000


@pytest.mark.cf
def test_binary_safe_keys_and_items(r):
    key = b"k\x00\r\n\xff*3\r\n"
    items = [b"\x00", b"\r\n", b"a\x00b", bytes(range(256)), b"$-1\r\n",
             b"*1\r\n$4\r\nPING\r\n", b""]
    for it in items:
        assert r.cf().add(key, it) == 1
    assert r.cf().mexists(key, *items) == [1] * len(items)
    assert r.keys("*") == [key]
    assert r.type(key) == b"MBbloomCF"
    assert r.cf().exists(key, b"\x00\x00") in (0, 1)  # no crash, any answer
    assert r.cf().exists(b"k", b"\x00") == 0
    assert r.cf().exists(b"k\x00", b"\x00") == 0
    assert r.rename(key, b"\x00new") is True
    assert r.cf().mexists(b"\x00new", *items) == [1] * len(items)


@pytest.mark.cf
def test_concurrent_clients(server):
    errors = []

    def work(n):
        try:
            c = redis.Redis(host="127.0.0.1", port=server.port)
            p = c.pipeline(transaction=False)
            for i in range(500):
                p.execute_command("CF.ADD", "conc", "t%d-%d" % (n, i))
            assert p.execute() == [1] * 500
            c.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    c = redis.Redis(host="127.0.0.1", port=server.port)
    c.flushall()
    c.cf().create("conc", 20000)
    threads = [threading.Thread(target=work, args=(n,)) for n in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert c.cf().info("conc").insertedNum == 10000
    sample = ["t%d-%d" % (n, i) for n in range(20) for i in range(0, 500, 7)]
    assert c.cf().mexists("conc", *sample) == [1] * len(sample)
    c.close()


# ------------------------------------------------------- protocol errors

PROTOCOL_ERRORS = [
    (b"*abc\r\n", "ERR Protocol error: invalid multibulk length"),
    (b"*1\r\n$-5\r\n", "ERR Protocol error: invalid bulk length"),
    (b"*1\r\n$abc\r\n", "ERR Protocol error: invalid bulk length"),
    (b"*1\r\n+PING\r\n", "ERR Protocol error: expected '$', got '+'"),
    (b"*2\r\n$4\r\nECHO\r\n:12\r\n",
     "ERR Protocol error: expected '$', got ':'"),
    (b'ECHO "abc\r\n', "ERR Protocol error: unbalanced quotes in request"),
    (b"*1\r\n$600000000\r\n", "ERR Protocol error: invalid bulk length"),
]


@pytest.mark.parametrize("frame,expected", PROTOCOL_ERRORS)
def test_protocol_error_closes_only_that_connection(server, frame, expected):
    healthy = server.raw()
    assert healthy.command("PING") == "PONG"
    bad = server.raw()
    bad.send(frame)
    reply = bad.read()
    assert isinstance(reply, RespError)
    assert str(reply) == expected
    assert bad.closed_by_peer()
    bad.close()
    assert healthy.command("ECHO", "still here") == b"still here"
    other = server.raw()
    assert other.command("PING") == "PONG"
    other.close()
    healthy.close()


def test_protocol_error_after_pipelined_commands(server):
    c = server.raw()
    c.send(b"PING\r\n*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nok\r\n"
           b"*abc\r\n*1\r\n$4\r\nPING\r\n")
    assert c.read() == "PONG"
    assert c.read() == "PONG"
    assert c.read() == b"ok"
    err = c.read()
    assert str(err) == "ERR Protocol error: invalid multibulk length"
    assert c.closed_by_peer()
    c.close()


def test_too_big_inline_request(server):
    c = server.raw()
    try:
        c.send(b"a" * (70 * 1024))
    except OSError:
        pass
    reply = c.read()
    assert str(reply) == "ERR Protocol error: too big inline request"
    assert c.closed_by_peer()
    c.close()


def test_inline_commands(server):
    c = server.raw()
    c.send(b"PING\r\n")
    assert c.read() == "PONG"
    c.send(b'ECHO "a b" \'c d\'\r\n')
    err = c.read()   # ECHO takes one argument: two is an arity error
    assert isinstance(err, RespError)
    c.send(b'ECHO "a b\\x41\\n"\r\n')
    assert c.read() == b"a bA\n"
    c.send(b"ECHO 'x y'\n")
    assert c.read() == b"x y"
    c.close()


def test_empty_frames_are_ignored(server):
    c = server.raw()
    c.send(b"*0\r\n*-1\r\n\r\n*1\r\n$4\r\nPING\r\n")
    assert c.read() == "PONG"
    c.send(b"*1\r\n$4\r\nPING\r\n")
    assert c.read() == "PONG"
    c.close()


def net_input_bytes(conn):
    info = conn.command("INFO", "stats").decode()
    for line in info.split("\r\n"):
        if line.startswith("total_net_input_bytes:"):
            return int(line.split(":")[1])
    raise AssertionError("no total_net_input_bytes in INFO stats")


def test_huge_multibulk_header_does_not_allocate(server, is_redis):
    # Were the header's 100M elements allocated up front, RSS would grow by
    # at least 800 MB (a pointer each); 200 MB leaves room for any noise.
    probe = server.raw()
    c = server.raw()
    header = b"*100000000\r\n"
    base = net_input_bytes(probe)  # counts this INFO itself too
    before = rss_kb(server.proc.pid)
    c.send(header)
    # Measure only once the server has read the header: the input counter
    # then shows it on top of the probe's own INFO commands.
    info_len = len(encode_command("INFO", "stats"))
    polls = []

    def header_read():
        polls.append(1)
        return net_input_bytes(probe) - base - len(polls) * info_len >= \
            len(header)
    wait_until(header_read, step=0.01, what="the server to read the header")
    assert probe.command("PING") == "PONG"
    after = rss_kb(server.proc.pid)
    assert after - before < 200 * 1024, "RSS grew %d kB" % (after - before)
    probe.close()
    c.close()


def test_split_reads(server):
    c = server.raw()
    frame = encode_command("ECHO", "split-frame-payload")
    for i in range(len(frame)):
        c.send(frame[i:i + 1])
    assert c.read() == b"split-frame-payload"
    c.close()


# ------------------------------------------------------------------ AUTH

def test_auth_flows(auth_server):
    raw = auth_server.raw()
    err = raw.command("PING")
    assert str(err) == "NOAUTH Authentication required."
    err = raw.command("AUTH", "wrong")
    assert str(err) == \
        "WRONGPASS invalid username-password pair or user is disabled."
    assert raw.command("AUTH", PASSWORD) == "OK"
    assert raw.command("PING") == "PONG"
    raw.close()

    with pytest.raises(redis.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=auth_server.port).ping()
    with pytest.raises(redis.ResponseError) as e:
        redis.Redis(host="127.0.0.1", port=auth_server.port,
                    password="wrong").ping()
    assert "WRONGPASS" in str(e.value)
    ok = redis.Redis(host="127.0.0.1", port=auth_server.port,
                     password=PASSWORD, db=2, client_name="authed")
    assert ok.ping() is True
    assert ok.client_getname() == "authed"
    ok.close()


def test_auth_via_hello(auth_server):
    raw = auth_server.raw()
    err = raw.command("HELLO", "3", "AUTH", "default", "wrong")
    assert isinstance(err, RespError) and str(err).startswith("WRONGPASS")
    m = raw.command("HELLO", "3", "AUTH", "default", PASSWORD)
    assert isinstance(m, dict) and m[b"proto"] == 3
    assert raw.command("PING") == "PONG"
    raw.close()


@pytest.mark.cf
def test_auth_cf(auth_server):
    c = redis.Redis(host="127.0.0.1", port=auth_server.port, password=PASSWORD)
    assert c.cf().add("authf", "x") == 1
    assert c.cf().exists("authf", "x") == 1
    c.close()
    raw = auth_server.raw()
    err = raw.command("CF.EXISTS", "authf", "x")
    assert str(err) == "NOAUTH Authentication required."
    raw.close()


# ----------------------------------------------------------------- RESP3

def test_hello(server):
    c = server.raw()
    c.send(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")
    assert c.read_raw_line().startswith(b"%")
    c.close()
    c = server.raw()
    m = c.command("HELLO", "3")
    assert isinstance(m, dict)
    for k in (b"server", b"version", b"proto", b"id", b"mode", b"role",
              b"modules"):
        assert k in m, k
    assert m[b"proto"] == 3
    # In RESP3 a map stays a map for later commands too.
    info = c.command("HELLO")
    assert isinstance(info, dict) and info[b"proto"] == 3
    flat = c.command("HELLO", "2")
    assert isinstance(flat, list)
    d = dict(zip(flat[0::2], flat[1::2]))
    assert d[b"proto"] == 2
    err = c.command("HELLO", "4")
    assert isinstance(err, RespError) and str(err).startswith("NOPROTO")
    assert c.command("PING") == "PONG"
    c.close()


def test_hello_setname(server):
    c = server.raw()
    m = c.command("HELLO", "3", "SETNAME", "resp3-client")
    assert m[b"proto"] == 3
    assert c.command("CLIENT", "GETNAME") == b"resp3-client"
    c.close()


@pytest.mark.cf
def test_resp3_cf_reply_shapes(server):
    c = server.raw()
    c.command("FLUSHALL")
    c.send(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")
    assert isinstance(c.read(), dict)
    c.send(encode_command("CF.ADD", "r3", "a"))
    assert c.read_raw_line() == b"#t"
    c.send(encode_command("CF.EXISTS", "r3", "a"))
    assert c.read_raw_line() == b"#t"
    c.send(encode_command("CF.EXISTS", "r3", "not-there"))
    assert c.read_raw_line() == b"#f"
    c.send(encode_command("CF.ADDNX", "r3", "a"))
    assert c.read_raw_line() == b"#f"
    assert c.command("CF.MEXISTS", "r3", "a", "not-there") == [True, False]
    assert c.command("CF.INSERT", "r3", "ITEMS", "b", "c") == [True, True]
    c.send(encode_command("CF.INSERTNX", "r3", "ITEMS", "b", "d"))
    assert c.read_raw_line() == b"*2"
    assert c.read_raw_line() == b":0"
    assert c.read_raw_line() == b":1"
    c.send(encode_command("CF.COUNT", "r3", "a"))
    assert c.read_raw_line() == b":1"
    c.send(encode_command("CF.DEL", "r3", "a"))
    assert c.read_raw_line() == b"#t"
    info = c.command("CF.INFO", "r3")
    assert isinstance(info, dict)
    info = cf_info(info)
    assert [k.decode() for k in list(info)[:8]] == CF_INFO_FIELDS
    assert info[b"Number of items inserted"] == 3
    assert info[b"Number of items deleted"] == 1
    c.close()


# ------------------------------------------------------------- shutdown

def test_sigterm_exits_zero(daemon):
    d = daemon()
    c = redis.Redis(host="127.0.0.1", port=d.port)
    assert c.ping() is True
    if not d.is_redis:
        c.cf().insert("persist", ["a", "b"])
    c.close()
    rc = d.stop()
    assert rc == 0, "exit status %r; log:\n%s" % (rc, d.log_text())
