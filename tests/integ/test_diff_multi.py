"""Differential tests of transactions (MULTI, EXEC, DISCARD, WATCH,
UNWATCH): the same sequences to cuckood and to redis-server with the
module, replies compared in RESP2 and RESP3, another client's commands
driven the same way on both sides."""

import os

import pytest

from support.diff import DiffPair, only_cuckood, pair_fixture, same_reply
from support.proc import wait_until
from support.resp import Closed, RespError, info_field

pytestmark = only_cuckood

PROTOS = (2, 3)


pair = pair_fixture("module")


def run(pair, proto, cmds, exact=True):
    """cmds on the shared connections of proto; errors compared whole."""
    return pair.script(cmds, exact=exact, proto=proto)


def both(conns, *cmd, exact=True):
    """cmd on a (ours, theirs) pair of connections; replies must agree."""
    ours, theirs = conns[0].command(*cmd), conns[1].command(*cmd)
    assert same_reply(ours, theirs, exact), (
        "%r: cuckood %r, redis-server %r" % (cmd, ours, theirs))
    return ours


def close(conns):
    for c in conns:
        c.close()


@pytest.fixture
def other(pair, proto):
    """Another client on both sides, speaking the test's protocol."""
    conns = pair.conns(proto)
    yield conns
    close(conns)


@pytest.mark.parametrize("proto", PROTOS)
def test_queue_exec_discard(pair, proto):
    out = run(pair, proto, [
        ("FLUSHALL",),
        ("MULTI",),
        ("CF.ADD", "k", "a"),
        ("CF.EXISTS", "k", "a"),
        ("CF.EXISTS", "k", "b"),
        ("PING",),
        ("EXEC",),
        ("MULTI",),
        ("CF.ADD", "k", "z"),
        ("DISCARD",),
        ("CF.EXISTS", "k", "z"),
        ("MULTI",),
        ("EXEC",),
    ])
    assert out[2] == "QUEUED" and out[6] == [1, 1, 0, "PONG"]
    assert out[10] == 0 and out[12] == []


@pytest.mark.parametrize("proto", PROTOS)
def test_long_queue_and_big_arguments(pair, proto):
    """Queued copies that fill many blocks of the queue's memory, and
    arguments bigger than a block, come back intact, and again in the
    next transaction of the same client."""
    big = "x" * 100000
    items = ["item-%d-%s" % (i, "y" * (i % 300)) for i in range(1500)]
    for _ in range(2):
        cmds = [("FLUSHALL",), ("MULTI",), ("CF.ADD", "k", big)]
        cmds += [("CF.ADD", "k", it) for it in items]
        cmds += [("ECHO", big), ("CF.MEXISTS", "k", big, *items[::100]),
                 ("EXEC",)]
        out = run(pair, proto, cmds)
        res = out[-1]
        assert len(res) == len(items) + 3
        assert res[len(items) + 1] == big.encode()
        assert res[-1] == [1] * (1 + len(items[::100]))


@pytest.mark.parametrize("proto", PROTOS)
def test_queue_time_errors_abort(pair, proto):
    out = run(pair, proto, [
        ("FLUSHALL",),
        # An unknown command.
        ("MULTI",),
        ("CF.ADD", "k", "a"),
        ("NOSUCHCMD", "x"),
        ("CF.ADD", "k", "b"),
        ("EXEC",),
        ("CF.EXISTS", "k", "a"),
        # Wrong arity.
        ("MULTI",),
        ("CF.ADD", "k"),
        ("CF.ADD", "k", "a"),
        ("EXEC",),
        ("DEL",),
        # An unknown subcommand.
        ("MULTI",),
        ("CLIENT", "NOSUCH"),
        ("CF.ADD", "k", "a"),
        ("EXEC",),
        ("EXISTS", "k"),
        # The transaction is gone after the abort.
        ("EXEC",),
    ])
    assert out[5] == RespError(
        "EXECABORT Transaction discarded because of previous errors.")
    assert out[6] == 0 and out[16] == 0
    assert out[17] == RespError("ERR EXEC without MULTI")


@pytest.mark.parametrize("proto", PROTOS)
def test_exec_refused_aborts(pair, proto):
    out = run(pair, proto, [
        ("FLUSHALL",),
        ("EXEC", "x"),
        ("MULTI",),
        ("CF.ADD", "k", "a"),
        ("EXEC", "x"),
        ("EXEC",),
        ("EXISTS", "k"),
    ])
    assert out[4] == RespError(
        "EXECABORT Transaction discarded because of: wrong number of "
        "arguments for 'exec' command")
    assert out[6] == 0


@pytest.mark.parametrize("proto", PROTOS)
def test_run_time_errors_in_place(pair, proto):
    out = run(pair, proto, [
        ("FLUSHALL",),
        ("MULTI",),
        ("CF.DEL", "missing", "a"),
        ("CF.ADD", "k", "a"),
        ("CF.RESERVE", "k", "100"),
        ("CF.EXISTS", "k", "a"),
        ("CF.DEL", "k", "a"),
        ("CF.EXISTS", "k", "a"),
        ("EXEC",),
    ], exact=False)
    res = out[-1]
    assert isinstance(res[0], RespError) and isinstance(res[2], RespError)
    assert res[1] == 1 and res[3] == 1 and res[4] == 1 and res[5] == 0


@pytest.mark.parametrize("proto", PROTOS)
def test_misplaced_commands(pair, proto):
    run(pair, proto, [
        ("FLUSHALL",),
        ("EXEC",),
        ("DISCARD",),
        ("MULTI",),
        ("MULTI",),
        ("WATCH", "k"),
        ("CF.ADD", "k", "a"),
        ("EXEC",),
        ("MULTI",),
        ("DISCARD", "x"),
        ("DISCARD",),
        ("DISCARD",),
        ("WATCH",),
        ("UNWATCH", "x"),
        ("MULTI", "x"),
        ("UNWATCH",),
        ("MULTI",),
        ("UNWATCH",),
        ("EXEC",),
    ])


@pytest.mark.parametrize("proto", PROTOS)
def test_select_and_protocol_inside_exec(pair, proto):
    run(pair, proto, [
        ("FLUSHALL",),
        ("MULTI",),
        ("SELECT", "1"),
        ("CF.ADD", "k", "a"),
        ("EXEC",),
        ("EXISTS", "k"),
        ("SELECT", "0"),
        ("EXISTS", "k"),
    ])


# Writes of another client to the watched key w, and what setting up for
# them takes first.
OTHER_WRITES = [
    ([], [("CF.ADD", "w", "b")]),
    ([], [("CF.DEL", "w", "a")]),
    ([], [("DEL", "w")]),
    ([], [("RENAME", "w", "z")]),
    ([("CF.ADD", "src", "x")], [("RENAME", "src", "w")]),
    ([], [("FLUSHDB",)]),
    ([], [("FLUSHALL",)]),
    ([], [("CF.RESERVE", "new", "100"), ("RENAME", "new", "w")]),
]


@pytest.mark.parametrize("proto", PROTOS)
@pytest.mark.parametrize("setup,writes", OTHER_WRITES,
                         ids=["add", "del-item", "del", "rename-from",
                              "rename-to", "flushdb", "flushall",
                              "rename-new-over"])
def test_watch_invalidated_by_another_client(pair, proto, setup, writes,
                                            other):
    run(pair, proto, [("FLUSHALL",), ("CF.ADD", "w", "a")] + setup +
        [("WATCH", "w")])
    for cmd in writes:
        both(other, *cmd)
    out = run(pair, proto, [
        ("MULTI",),
        ("CF.ADD", "w", "c"),
        ("EXEC",),
        ("EXISTS", "w"),
    ])
    assert out[2] is None
    # A nil EXEC ran nothing, and the watch is over.
    out = run(pair, proto, [("MULTI",), ("PING",), ("EXEC",)])
    assert out[2] == ["PONG"]


@pytest.mark.parametrize("proto", PROTOS)
def test_watch_invalidated_by_same_client(pair, proto):
    out = run(pair, proto, [
        ("FLUSHALL",),
        ("WATCH", "w"),
        ("CF.ADD", "w", "a"),
        ("MULTI",),
        ("CF.ADD", "w", "b"),
        ("EXEC",),
        ("CF.EXISTS", "w", "b"),
    ])
    assert out[5] is None and out[6] == 0


@pytest.mark.parametrize("proto", PROTOS)
def test_watch_kept_by_reads_and_other_keys(pair, proto, other):
    run(pair, proto, [("FLUSHALL",), ("CF.ADD", "w", "a"),
                      ("WATCH", "w", "missing")])
    for cmd in [("CF.EXISTS", "w", "a"), ("EXISTS", "w"),
                ("CF.COUNT", "w", "a"), ("CF.ADD", "other", "x"),
                ("DEL", "nothere"), ("SELECT", "1"),
                ("CF.ADD", "w", "x"), ("FLUSHDB",), ("SELECT", "0")]:
        both(other, *cmd, exact=False)
    out = run(pair, proto, [("MULTI",), ("CF.ADD", "w", "c"), ("EXEC",)])
    assert out[2] == [1]


@pytest.mark.parametrize("proto", PROTOS)
def test_flush_touches_only_existing_watched_keys(pair, proto, other):
    run(pair, proto, [("FLUSHALL",), ("CF.ADD", "x", "a"),
                      ("WATCH", "missing")])
    both(other, "FLUSHDB")
    out = run(pair, proto, [("MULTI",), ("PING",), ("EXEC",)])
    assert out[2] == ["PONG"]


@pytest.mark.parametrize("proto", PROTOS)
def test_unwatch_and_exec_end_the_watch(pair, proto, other):
    run(pair, proto, [("FLUSHALL",), ("CF.ADD", "w", "a"),
                      ("WATCH", "w"), ("UNWATCH",)])
    both(other, "CF.ADD", "w", "b")
    out = run(pair, proto, [("MULTI",), ("PING",), ("EXEC",)])
    assert out[2] == ["PONG"]
    # DISCARD ends the watch too.
    run(pair, proto, [("WATCH", "w"), ("MULTI",), ("DISCARD",)])
    both(other, "CF.ADD", "w", "c")
    out = run(pair, proto, [("MULTI",), ("PING",), ("EXEC",)])
    assert out[2] == ["PONG"]
    # The transaction's own write does not doom the next one.
    out = run(pair, proto, [("WATCH", "w"), ("MULTI",),
                            ("CF.ADD", "w", "d"), ("EXEC",),
                            ("MULTI",), ("PING",), ("EXEC",)])
    assert out[3] == [1] and out[6] == ["PONG"]


@pytest.mark.parametrize("proto", PROTOS)
def test_reset_ends_multi_and_watch(pair, proto, other):
    """RESET inside MULTI runs at once and discards the queue; it also ends
    a WATCH, so another client's write no longer dooms the next EXEC."""
    run(pair, proto, [("FLUSHALL",), ("CF.ADD", "r", "a")])
    both(other, "MULTI")
    assert both(other, "CF.ADD", "r", "queued") == "QUEUED"
    assert both(other, "RESET") == "RESET"
    both(other, "EXEC")  # ERR EXEC without MULTI, on both sides
    assert both(other, "CF.EXISTS", "r", "queued") == 0
    both(other, "WATCH", "r")
    both(other, "RESET")
    run(pair, proto, [("CF.ADD", "r", "b")])
    both(other, "MULTI")
    both(other, "PING")
    assert both(other, "EXEC") == ["PONG"]


@pytest.mark.parametrize("proto", PROTOS)
def test_watch_in_another_database(pair, proto, other):
    run(pair, proto, [("FLUSHALL",), ("SELECT", "2"),
                      ("CF.ADD", "w", "a"), ("WATCH", "w"),
                      ("SELECT", "0")])
    both(other, "CF.ADD", "w", "b")  # database 0: not watched
    out = run(pair, proto, [("MULTI",), ("PING",), ("EXEC",)])
    assert out[2] == ["PONG"]
    run(pair, proto, [("WATCH", "w")])  # database 0 now
    both(other, "SELECT", "2")
    both(other, "CF.ADD", "w", "b")
    both(other, "SELECT", "0")
    both(other, "CF.ADD", "w", "c")
    out = run(pair, proto, [("MULTI",), ("PING",), ("EXEC",)])
    assert out[2] is None


@pytest.mark.parametrize("proto", PROTOS)
def test_swapdb_touches_watched_keys(pair, proto, other):
    ours, _ = pair.both("SWAPDB", "0", "0", proto=proto)
    if isinstance(ours, RespError) and "unknown command" in ours.text:
        pytest.skip("SWAPDB is not there yet")
    # Watched in 0, exists only in 1: the swap brings it in.
    run(pair, proto, [("FLUSHALL",), ("SELECT", "1"),
                      ("CF.ADD", "w", "a"), ("SELECT", "0"),
                      ("WATCH", "w")])
    both(other, "SWAPDB", "0", "1")
    out = run(pair, proto, [("MULTI",), ("PING",), ("EXEC",)])
    assert out[2] is None
    # Exists on neither side: untouched.
    run(pair, proto, [("WATCH", "nothere")])
    both(other, "SWAPDB", "0", "1")
    out = run(pair, proto, [("MULTI",), ("PING",), ("EXEC",)])
    assert out[2] == ["PONG"]


@pytest.mark.parametrize("proto", PROTOS)
def test_disconnect_discards_the_queue(pair, proto, other):
    run(pair, proto, [("FLUSHALL",)])
    c = pair.conns(proto)
    both(c, "WATCH", "w")
    both(c, "MULTI")
    both(c, "CF.ADD", "k", "a")
    before = [connected(x) for x in other]
    close(c)
    for x, n in zip(other, before):
        wait_until(lambda: connected(x) == n - 1, what="the close")
    assert both(other, "EXISTS", "k") == 0
    both(other, "CF.ADD", "w", "x")  # a freed watcher is not touched
    assert both(other, "EXISTS", "k") == 0


def connected(conn):
    return int(info_field(conn.command("INFO", "clients"),
                          "connected_clients"))


def info_stats(conn, name):
    info = conn.command("INFO", "commandstats")
    line = info_field(info, "cmdstat_" + name)
    if line is None:
        return None
    fields = dict(kv.split("=") for kv in line.split(","))
    fields.pop("usec")
    fields.pop("usec_per_call")
    return fields


def test_commandstats_count_as_redis(pair):
    c = pair.conns(2)
    try:
        both(c, "CONFIG", "RESETSTAT")
        for cmd in [("MULTI",), ("CF.ADD", "s", "a"), ("CF.EXISTS", "s", "a"),
                    ("PING",), ("EXEC",), ("MULTI",), ("NOSUCH",),
                    ("PING",), ("EXEC",), ("EXEC",), ("MULTI",),
                    ("CF.EXISTS", "s"), ("DISCARD",), ("WATCH", "s"),
                    ("UNWATCH",), ("MULTI",), ("CF.DEL", "nokey", "x"),
                    ("EXEC",)]:
            both(c, *cmd, exact=False)
        for name in ["multi", "exec", "discard", "watch", "unwatch", "ping",
                     "cf.add", "cf.exists", "cf.del"]:
            assert info_stats(c[0], name) == info_stats(c[1], name), name
    finally:
        close(c)


def test_command_info_and_docs(pair):
    for name in ["multi", "exec", "discard", "watch", "unwatch"]:
        ours, theirs = pair.both("COMMAND", "INFO", name)
        # name, arity, first key, last key, step
        pick = (0, 1, 3, 4, 5)
        assert [ours[0][i] for i in pick] == [theirs[0][i] for i in pick]
        assert set(ours[0][2]) <= set(theirs[0][2]), name
        assert set(ours[0][6]) == set(theirs[0][6]), name  # categories
        ours, theirs = pair.both("COMMAND", "DOCS", name)
        assert ours == theirs, name
    ours, theirs = pair.both("COMMAND", "LIST", "FILTERBY", "ACLCAT",
                             "transaction")
    assert sorted(ours) == sorted(theirs)


def test_slowlog_logs_the_commands_not_exec(pair):
    c = pair.conns(2)
    try:
        both(c, "CONFIG", "SET", "slowlog-log-slower-than", "0")
        both(c, "SLOWLOG", "RESET")
        for cmd in [("MULTI",), ("CF.ADD", "sl", "a"), ("PING",), ("EXEC",)]:
            both(c, *cmd)
        logged = [[e[3] for e in x.command("SLOWLOG", "GET", "10")]
                  for x in c]
        assert logged[0] == logged[1]
        assert [b"EXEC"] not in logged[0] and [b"PING"] in logged[0]
    finally:
        both(c, "CONFIG", "SET", "slowlog-log-slower-than", "10000")
        close(c)


@pytest.mark.parametrize("proto", PROTOS)
def test_oom_inside_multi(pair, proto):
    run(pair, proto, [("FLUSHALL",), ("CF.RESERVE", "big", "100000")])
    try:
        run(pair, proto, [
            ("CONFIG", "SET", "maxmemory", "1"),
            ("MULTI",),
            # Over maxmemory nothing is queued, not even a read.
            ("CF.EXISTS", "big", "a"),
            ("EXEC",),
            ("MULTI",),
            ("DISCARD",),
            ("CF.EXISTS", "big", "a"),
        ])
    finally:
        run(pair, proto, [("CONFIG", "SET", "maxmemory", "0")])


@pytest.fixture
def misconf_pair():
    # Redis 7 protects dbfilename unless told otherwise.
    p = DiffPair(theirs_args=("--enable-protected-configs", "yes"))
    yield p
    p.close()


def test_misconf_at_exec(misconf_pair):
    """A write queued before a background save failed: EXEC aborts with
    MISCONF, as Redis 7's execCommand checks the queued flags."""
    pair = misconf_pair
    c = pair.conns(2)
    try:
        both(c, "FLUSHALL")
        both(c, "CF.ADD", "f", "a")
        both(c, "MULTI")
        both(c, "CF.ADD", "f", "x")
        both(c, "CF.EXISTS", "f", "a")
        ctl = pair.conns(2)
        for conn, srv in zip(ctl, (pair.ours, pair.theirs)):
            os.mkdir(os.path.join(srv.dir, "adir"))
            assert conn.command("CONFIG", "SET", "save", "900 1") == "OK"
            assert conn.command("CONFIG", "SET", "dbfilename",
                                "adir") == "OK"
            assert not isinstance(conn.command("BGSAVE"), RespError)
        for conn in ctl:
            wait_until(lambda: info_field(conn.command("INFO", "persistence"),
                                          "rdb_last_bgsave_status") == "err",
                       what="a failed background save")
        out = both(c, "EXEC", exact=False)
        assert isinstance(out, RespError) and out.text.startswith(
            "EXECABORT Transaction discarded because of: MISCONF"), out
        # A read-only transaction still runs.
        both(c, "MULTI")
        both(c, "CF.EXISTS", "f", "a")
        assert both(c, "EXEC") == [1]
        # A write queued now is refused at once and dooms EXEC.
        both(c, "MULTI")
        assert isinstance(both(c, "CF.ADD", "f", "y", exact=False),
                          RespError)
        assert both(c, "EXEC") == RespError(
            "EXECABORT Transaction discarded because of previous errors.")
        close(ctl)
    finally:
        close(c)


def test_query_buffer_limit_counts_the_queue(pair):
    """client-query-buffer-limit: the queue and the unparsed input together;
    passing it closes the client. Newer Redis counts the queue so; Debian's
    7.0 does not yet, so only cuckood is checked here."""
    srv = pair.ours
    ctl = srv.raw()
    assert ctl.command("CONFIG", "SET", "client-query-buffer-limit",
                       "1mb") == "OK"
    try:
        item = "x" * (100 * 1024)
        with srv.raw() as c:
            assert c.command("WATCH", "w") == "OK"
            assert c.command("MULTI") == "OK"
            closed = None
            for i in range(30):
                try:
                    assert c.command("CF.ADD", "q", item) == "QUEUED"
                except (Closed, ConnectionError):
                    closed = i
                    break
            assert closed is not None and 9 <= closed <= 11, closed
        assert "max query buffer length" in srv.log_text()
        # Nothing ran, the server serves on, the closed client's watch
        # went with it.
        assert ctl.command("EXISTS", "q") == 0
        assert ctl.command("CF.ADD", "w", "x") == 1
        # A queue under the limit stays.
        with srv.raw() as c:
            assert c.command("MULTI") == "OK"
            for i in range(5):
                assert c.command("CF.ADD", "q", item) == "QUEUED"
            assert c.command("EXEC") == [1] * 5
    finally:
        ctl.command("CONFIG", "SET", "client-query-buffer-limit", "1gb")
        ctl.close()
