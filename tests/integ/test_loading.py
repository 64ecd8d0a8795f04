"""The start-up load seen by clients, as Redis 7: the server listens before
it loads its files; meanwhile commands without the `loading` flag answer
-LOADING, INFO shows loading:1 with the loading_* fields, and SHUTDOWN or
SIGTERM end the load without saving or changing a file.

Redis's hidden `key-load-delay` setting (microseconds per key or command
loaded) keeps the load going long enough to look at; the test waits on
what the server says (loading:1, then loading:0), never on a clock.

The differential part sends the same sequence to redis-server loading its
own append-only file (SADD where cuckood has CF.ADD) and compares the
replies in RESP2 and RESP3.

Run: python3 -m pytest tests/integ/test_loading.py (CUCKOOD_BIN names the
binary)."""

import hashlib
import os
import signal

import pytest

from support.diff import same_reply
from support.proc import (Daemon, RedisServer, use_module, use_redis_server,
                          wait_until)
from support.resp import RawConn, RespError, info_field

pytestmark = pytest.mark.skipif(use_redis_server() or use_module(),
                                reason="cuckood's own start-up")

COMMANDS = 1500  # logged writes: with the delay below, seconds of loading
DELAY_US = 2000


def fill(srv, write, n=COMMANDS):
    """n logged writes, pipelined: write(i) gives one command."""
    c = srv.raw()
    try:
        for base in range(0, n, 100):
            c.pipeline([write(i) for i in range(base, min(n, base + 100))])
    finally:
        c.close()


def cf_write(i):
    return ("CF.ADD", "k%d" % (i % 7), "item%d" % i)


def set_write(i):
    return ("SADD", "k%d" % (i % 7), "item%d" % i)


def info(c, section="persistence"):
    return c.command("INFO", section)


def connect(srv):
    """A connection to a server that may still be loading."""
    def conn():
        try:
            return RawConn(srv.port, timeout=10.0)
        except OSError:
            if srv.proc.poll() is not None:
                raise AssertionError("exited with %d" % srv.proc.returncode)
            return None
    return wait_until(conn, what="port %d to accept" % srv.port)


def start_loading(srv):
    """Restarts srv (stopped) without waiting for its load: a connection,
    once INFO says loading:1."""
    srv._spawn(srv.pick_port())
    c = connect(srv)
    wait_until(lambda: info_field(info(c), "loading") == "1",
               what="loading:1")
    return c


def wait_loaded(c):
    wait_until(lambda: info_field(info(c), "loading") == "0",
               timeout=120, what="loading:0")


def tree_digest(path):
    """The names and bytes of every file under path."""
    h = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(path)):
        dirs.sort()
        for name in sorted(files):
            p = os.path.join(root, name)
            h.update(os.path.relpath(p, path).encode() + b"\0")
            with open(p, "rb") as f:
                h.update(f.read())
    return h.hexdigest()


@pytest.fixture
def aof_server():
    srv = Daemon("--appendonly", "yes", "--appendfsync", "no",
                 "--key-load-delay", str(DELAY_US), "--save", "")
    srv.start()  # an empty start: nothing to delay
    fill(srv, cf_write)
    assert srv.shutdown() == 0
    yield srv
    srv.cleanup()


def test_clients_get_loading_while_the_aof_loads(aof_server):
    srv = aof_server
    c = start_loading(srv)
    try:
        fields = info(c)
        assert info_field(fields, "async_loading") == "0"
        total = int(info_field(fields, "loading_total_bytes"))
        adir = os.path.join(srv.dir, "appendonlydir")
        assert total == sum(os.path.getsize(os.path.join(adir, f))
                            for f in os.listdir(adir)
                            if not f.endswith(".manifest"))
        loaded = int(info_field(fields, "loading_loaded_bytes"))
        assert 0 <= loaded <= total
        assert 0.0 <= float(info_field(fields, "loading_loaded_perc")) <= 100
        assert int(info_field(fields, "loading_start_time")) > 0
        assert int(info_field(fields, "loading_eta_seconds")) >= 0
        assert info_field(fields, "loading_rdb_used_mem") == "0"
        # refused: the reply is Redis's, word for word
        for cmd in (("PING",), ("CF.EXISTS", "k1", "item1"),
                    ("CF.ADD", "new", "x"), ("DBSIZE",), ("SAVE",)):
            r = c.command(*cmd)
            assert isinstance(r, RespError), (cmd, r)
            assert r.text == ("LOADING Redis is loading the dataset in "
                              "memory"), (cmd, r)
        # what carries the loading flag runs
        assert c.command("CLIENT", "SETNAME", "early") == "OK"
        assert c.command("CLIENT", "GETNAME") == b"early"
        assert c.command("CONFIG", "GET", "key-load-delay") == [
            b"key-load-delay", str(DELAY_US).encode()]
        assert c.command("SELECT", "0") == "OK"
        # a transaction: the refused command dooms EXEC
        assert c.command("MULTI") == "OK"
        assert c.command("CF.ADD", "k1", "late").text.startswith("LOADING")
        r = c.command("EXEC")
        assert isinstance(r, RespError) and r.text.startswith("EXECABORT")
        # switching the AOF now would write a base of half the data
        r = c.command("CONFIG", "SET", "appendonly", "no")
        assert isinstance(r, RespError), r
        assert info_field(info(c), "loading") == "1", "load ended too early"
        wait_loaded(c)
        after = info(c)
        assert b"loading_total_bytes" not in after
        assert c.command("PING") == "PONG"
        assert c.command("CONFIG", "GET", "appendonly") == [b"appendonly",
                                                            b"yes"]
        for i in range(0, COMMANDS, 97):
            assert c.command(*(("CF.EXISTS",) + cf_write(i)[1:])) == 1
        assert c.command("CLIENT", "GETNAME") == b"early"
    finally:
        c.close()


def test_hidden_settings_only_by_name():
    srv = Daemon().start()
    c = srv.raw()
    try:
        names = c.command("CONFIG", "GET", "*")[0::2]
        assert b"key-load-delay" not in names
        assert b"loading-process-events-interval-bytes" not in names
        assert b"appendonly" in names
        assert c.command("CONFIG", "GET", "loading-process-events-interval-"
                         "bytes") == [b"loading-process-events-interval-bytes",
                                      b"2097152"]
        r = c.command("CONFIG", "SET",
                      "loading-process-events-interval-bytes", "1000")
        assert isinstance(r, RespError), r  # 1024 at least, as Redis
        assert c.command("CONFIG", "SET", "key-load-delay", "-10") == "OK"
        assert c.command("CONFIG", "GET", "key-load-delay") == [
            b"key-load-delay", b"-10"]
    finally:
        c.close()
        srv.cleanup()


@pytest.mark.parametrize("how", ["shutdown", "sigterm"])
def test_shutdown_while_loading_changes_no_file(aof_server, how):
    srv = aof_server
    # a snapshot too: SHUTDOWN SAVE must not write it from half the data
    before = tree_digest(srv.dir + "/appendonlydir")
    c = start_loading(srv)
    try:
        if how == "shutdown":
            c.send(b"*2\r\n$8\r\nSHUTDOWN\r\n$4\r\nSAVE\r\n")
            assert c.at_eof(), "SHUTDOWN answered instead of closing"
        else:
            srv.proc.send_signal(signal.SIGTERM)
        assert srv.wait(60) == 0
    finally:
        c.close()
    assert tree_digest(srv.dir + "/appendonlydir") == before
    assert not os.path.exists(os.path.join(srv.dir, "dump.cuckoo"))
    assert "stopped: the server is shutting down" in srv.log_text()
    # and the files still load whole
    srv.args = [a for a in srv.args]
    i = srv.args.index("--key-load-delay")
    srv.args[i + 1] = "0"
    srv.start()
    c = srv.raw()
    try:
        for i in range(0, COMMANDS, 89):
            assert c.command(*(("CF.EXISTS",) + cf_write(i)[1:])) == 1
    finally:
        c.close()


def test_snapshot_load_answers_loading_too():
    srv = Daemon("--key-load-delay", "10000")
    try:
        srv.start()
        c = srv.raw()
        for i in range(200):  # one key per step of the snapshot's load
            c.command("CF.ADD", "key%d" % i, "x")
        assert c.command("SAVE") == "OK"
        c.close()
        assert srv.shutdown() == 0
        size = os.path.getsize(os.path.join(srv.dir, "dump.cuckoo"))
        c = start_loading(srv)
        try:
            fields = info(c)
            assert int(info_field(fields, "loading_total_bytes")) == size
            r = c.command("CF.EXISTS", "key1", "x")
            assert isinstance(r, RespError) and r.text.startswith("LOADING")
            wait_loaded(c)
            assert c.command("DBSIZE") == 200
        finally:
            c.close()
    finally:
        srv.cleanup()


# -- against redis-server ---------------------------------------------------

LOADING_SCRIPT = [
    ("PING",),
    ("ECHO", "x"),
    ("DBSIZE",),
    ("CLIENT", "SETNAME", "early"),
    ("CLIENT", "GETNAME"),
    ("SELECT", "0"),
    ("CONFIG", "GET", "key-load-delay"),
    ("MULTI",),
    ("PING",),
    ("EXEC",),
    ("MULTI",),
    ("DISCARD",),
    ("LASTSAVE",),
]


# Redis serves its clients once every 1024 commands of an AOF it loads:
# the script goes in one pipeline, answered in one of those rounds.
DIFF_COMMANDS = 25000
DIFF_DELAY_US = 100


def script_replies(c, proto):
    cmds = list(LOADING_SCRIPT)
    if proto == 3:
        cmds.insert(0, ("HELLO", "3"))
    replies = c.pipeline(cmds)
    if proto == 3:
        assert not isinstance(replies.pop(0), RespError)
    return [type(r) if cmd[0] == "LASTSAVE" else r
            for cmd, r in zip(LOADING_SCRIPT, replies)]


def loading_replies(srv):
    """From srv (stopped, with its files) restarted: the replies of
    LOADING_SCRIPT in RESP2 and RESP3 while it loads, INFO's loading
    fields then and once loaded, and a PING once loaded."""
    c = start_loading(srv)
    c3 = connect(srv)
    try:
        replies = {p: script_replies(conn, p) for p, conn in ((2, c), (3, c3))}
        text = c.command("INFO", "persistence").decode()
        fields = {line.split(":", 1)[0] for line in text.splitlines()
                  if line.startswith(("loading", "async_loading"))}
        assert info_field(text, "loading") == "1", "the load ended too soon"
        wait_loaded(c)
        pong = c.command("PING")
        text = c.command("INFO", "persistence").decode()
        after = {line.split(":", 1)[0] for line in text.splitlines()
                 if line.startswith(("loading", "async_loading"))}
        return replies, fields, after, pong
    finally:
        c.close()
        c3.close()
        srv.stop()


def test_same_replies_as_redis_while_loading(tmp_path):
    args = ("--appendonly", "yes", "--appendfsync", "no", "--save", "",
            "--key-load-delay", str(DIFF_DELAY_US))
    ours = Daemon(*args)
    (tmp_path / "r").mkdir()
    theirs = RedisServer(*args, dir=str(tmp_path / "r"))
    try:
        got = []
        for srv, write in ((ours, cf_write), (theirs, set_write)):
            srv.start()
            fill(srv, write, DIFF_COMMANDS)
            assert srv.shutdown() == 0
            got.append(loading_replies(srv))
        (ours_r, ours_f, ours_a, ours_p), (th_r, th_f, th_a, th_p) = got
        for proto in (2, 3):
            for cmd, a, b in zip(LOADING_SCRIPT, ours_r[proto],
                                 th_r[proto]):
                assert same_reply(a, b, exact=True), (proto, cmd, a, b)
        assert ours_f == th_f
        assert "loading_total_bytes" in ours_f
        assert ours_a == th_a == {"loading", "async_loading"}
        assert ours_p == th_p == "PONG"
    finally:
        ours.cleanup()
        theirs.cleanup()


def test_replayed_commands_are_not_a_clients(aof_server):
    """As Redis's AOF client: what the load replays never reaches the slow
    log (its client is no connection and has no address), however slow."""
    srv = aof_server
    srv.args += ["--slowlog-log-slower-than", "0", "--slowlog-max-len",
                 "100000"]
    srv.args[srv.args.index("--key-load-delay") + 1] = "0"
    srv.start()
    c = srv.raw()
    try:
        entries = c.command("SLOWLOG", "GET", "-1")
        names = {e[3][0].upper() for e in entries}
        assert names, "the slow log records nothing: nothing was tested"
        assert not names & {b"CF.ADD", b"CF.LOADCHUNK", b"SELECT"}, names
        assert c.command("CF.EXISTS", "k1", "item1") == 1
    finally:
        c.close()
