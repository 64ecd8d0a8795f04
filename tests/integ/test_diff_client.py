"""Differential tests of the client commands: CLIENT KILL, PAUSE, UNPAUSE,
REPLY, NO-EVICT, NO-TOUCH, MONITOR and RESET sent to cuckood and to
redis-server with the module, replies compared in RESP2 and RESP3."""

import re

import pytest

from support.diff import only_cuckood, pair_fixture, same_reply
from support.resp import RespError, encode_command

pytestmark = only_cuckood


pair = pair_fixture()


def _field(info, name):
    if isinstance(info, bytes):
        info = info.decode()
    return re.search(r"\b%s=(\S*)" % name, info).group(1)


KILL_ERRORS = [
    ("CLIENT", "KILL"),
    ("CLIENT", "KILL", "1.2.3.4:5"),
    ("CLIENT", "KILL", "ID"),
    ("CLIENT", "KILL", "ID", "0"),
    ("CLIENT", "KILL", "ID", "abc"),
    ("CLIENT", "KILL", "ID", "99", "TYPE", "foo"),
    ("CLIENT", "KILL", "SKIPME", "maybe"),
    ("CLIENT", "KILL", "USER", "bob"),
    ("CLIENT", "KILL", "foo", "bar"),
    ("CLIENT", "KILL", "a", "b", "c"),
    ("CLIENT", "KILL", "ID", "1", "TYPE"),
]


@pytest.mark.parametrize("cmd", KILL_ERRORS, ids=lambda c: " ".join(c[1:]))
def test_client_kill_errors(pair, cmd):
    pair.same(*cmd, exact=True)


KILL_NONE = [
    ("CLIENT", "KILL", "ID", "999999"),
    ("CLIENT", "KILL", "TYPE", "master"),
    ("CLIENT", "KILL", "TYPE", "replica"),
    ("CLIENT", "KILL", "TYPE", "slave"),
    ("CLIENT", "KILL", "TYPE", "pubsub"),
    ("CLIENT", "KILL", "ADDR", "1.1.1.1:1", "SKIPME", "no"),
    ("CLIENT", "KILL", "LADDR", "1.1.1.1:1"),
    ("CLIENT", "KILL", "USER", "default", "ID", "999999"),
]


@pytest.mark.parametrize("cmd", KILL_NONE, ids=lambda c: " ".join(c[2:]))
def test_client_kill_filters_matching_none(pair, cmd):
    assert pair.same(*cmd, exact=True) == 0


@pytest.mark.parametrize("proto", [2, 3])
def test_client_kill_forms_kill_one(pair, proto):
    """Each form kills the other client it names, on both sides alike: the
    old form answers OK, the filter form the number killed."""
    def addrs(c):
        info = c.command("CLIENT", "INFO")
        return _field(info, "addr"), _field(info, "laddr"), _field(info, "id")

    for form in ("old", "addr", "id", "laddr-id", "user-id"):
        victims = pair.conns(proto)
        killers = pair.conns(proto)
        replies = []
        for victim, killer in zip(victims, killers):
            addr, laddr, cid = addrs(victim)
            cmd = {"old": ("CLIENT", "KILL", addr),
                   "addr": ("CLIENT", "KILL", "ADDR", addr),
                   "id": ("CLIENT", "KILL", "ID", cid),
                   "laddr-id": ("CLIENT", "KILL", "LADDR", laddr, "ID", cid),
                   "user-id": ("CLIENT", "KILL", "USER", "default",
                               "ID", cid)}[form]
            replies.append(killer.command(*cmd))
            assert victim.closed_by_peer(), form
            killer.close()
        assert same_reply(*replies, exact=True), (form, replies)
        assert replies[0] == ("OK" if form == "old" else 1)


def test_client_kill_self_closes_after_reply(pair):
    replies = []
    for c in pair.conns(2):
        cid = c.command("CLIENT", "ID")
        replies.append(c.command("CLIENT", "KILL", "ID", cid, "SKIPME", "no"))
        assert c.at_eof(), "a client that killed itself is closed"
    assert replies == [1, 1]
    replies = []
    for c in pair.conns(2):
        cid = c.command("CLIENT", "ID")
        replies.append(c.command("CLIENT", "KILL", "ID", cid))
        assert c.command("PING") == "PONG"  # SKIPME yes by default
        c.close()
    assert replies == [0, 0]


PAUSE_CMDS = [
    ("CLIENT", "PAUSE"),
    ("CLIENT", "PAUSE", "abc"),
    ("CLIENT", "PAUSE", "-1"),
    ("CLIENT", "PAUSE", "10", "foo"),
    ("CLIENT", "PAUSE", "10", "WRITE", "x"),
    ("CLIENT", "PAUSE", "1.5"),
    ("CLIENT", "UNPAUSE", "x"),
    ("CLIENT", "PAUSE", "0"),
    ("CLIENT", "PAUSE", "10", "write"),
    ("CLIENT", "PAUSE", "10", "ALL"),
    ("CLIENT", "UNPAUSE"),
]


def test_pause_unpause_replies(pair):
    for cmd in PAUSE_CMDS:
        pair.same(*cmd, exact=True)
        pair.same("CLIENT", "UNPAUSE")


def _replies_until_marker(conn, marker):
    out = []
    while True:
        r = conn.read()
        if r == marker:
            return out
        out.append(r)


@pytest.mark.parametrize("proto", [2, 3])
def test_client_reply_suppresses_as_redis(pair, proto):
    """What CLIENT REPLY OFF and SKIP leave out, errors and the
    switching commands' own answers included."""
    script = [
        ("CLIENT", "REPLY", "SKIP"),
        ("PING", "skipped"),
        ("PING", "shown1"),
        ("CLIENT", "REPLY", "SKIP"),
        ("NOSUCHCOMMAND",),
        ("PING", "shown2"),
        ("CLIENT", "REPLY", "SKIP"),
        ("CLIENT", "REPLY", "SKIP"),
        ("PING", "skipped-by-second-skip"),
        ("PING", "shown3"),
        ("CLIENT", "REPLY", "OFF"),
        ("PING", "off1"),
        ("GET",),
        ("CLIENT", "REPLY", "SKIP"),
        ("PING", "off2"),
        ("CLIENT", "REPLY", "ON"),
        ("PING", "shown4"),
        ("CLIENT", "REPLY", "bogus"),
        ("CLIENT", "REPLY", "SKIP"),
        ("CLIENT", "REPLY", "ON"),
        ("PING", "shown5"),
    ]
    seen = []
    for c in pair.conns(proto):
        c.send(b"".join(encode_command(*cmd) for cmd in script))
        c.send(encode_command("PING", "marker"))
        seen.append(_replies_until_marker(c, b"marker"))
        c.close()
    assert same_reply(seen[0], seen[1], exact=True), seen
    assert seen[0][:4] == [b"shown1", b"shown2", b"shown3", "OK"]
    assert seen[0][4] == b"shown4"
    assert isinstance(seen[0][5], RespError)
    # SKIP then ON: ON ends the skip before it answers.
    assert seen[0][6:] == ["OK", b"shown5"]


def test_no_evict_and_no_touch(pair):
    pair.same("CLIENT", "NO-EVICT", "on", exact=True)
    pair.same("CLIENT", "NO-EVICT", "OFF", exact=True)
    pair.same("CLIENT", "NO-EVICT", "maybe", exact=True)
    pair.same("CLIENT", "NO-EVICT", exact=True)
    # NO-TOUCH is Redis 7.2's; Debian's 7.0 does not know it. cuckood
    # answers as 7.2 (it reports 7.2.0, as for CLIENT SETINFO).
    ours, theirs = pair.both("CLIENT", "NO-TOUCH", "on")
    assert ours == "OK"
    assert isinstance(theirs, RespError)
    assert "unknown subcommand" in theirs.text


@pytest.mark.parametrize("proto", [2, 3])
def test_reset(pair, proto):
    pair.same("SELECT", "1", protos=(proto,))
    pair.same("CLIENT", "SETNAME", "someone", protos=(proto,))
    assert pair.same("RESET", exact=True, protos=(proto,)) == "RESET"
    pair.same("CLIENT", "GETNAME", protos=(proto,))
    ours, theirs = pair.both("HELLO", proto=proto)
    for hello in (ours, theirs):  # the protocol is 2 again: a flat array
        assert isinstance(hello, list) and hello[4:6] == [b"proto", 2]
    pair.same("RESET", "x", exact=True, protos=(proto,))


MONITOR_LINE = re.compile(
    r'^\d{10}\.\d{6} \[(\d+) 127\.0\.0\.1:\d+\] (.*)$')


@pytest.mark.parametrize("proto", [2, 3])
def test_monitor_lines(pair, proto):
    """The first lines a monitor gets have Redis's format, escapes and
    redactions, the same on both sides once the time and port are set
    aside; admin commands and refused ones are not shown."""
    sent = [
        ("PING", b'a\x01"\\\n\r\t\x07\x08b\xff'),
        ("CONFIG", "GET", "maxmemory"),
        ("GET",),
        ("NOSUCH",),
        ("AUTH", "secret"),
        ("AUTH", "default", "secret"),
        ("HELLO", "2", "AUTH", "default", "pw", "SETNAME", "nm"),
        ("CLIENT", "LIST"),
        ("CLIENT", "ID"),
        ("SELECT", "1"),
        ("ECHO", "12"),
    ]
    lines = []
    for mon, other in zip(pair.conns(proto), pair.conns(proto)):
        assert mon.command("MONITOR") == "OK"
        for cmd in sent:
            other.command(*cmd)
        got = []
        for _ in range(7):
            line = mon.read()
            m = MONITOR_LINE.match(line)
            assert m, line
            got.append((m.group(1), m.group(2)))
        # A monitor's own commands reach it after their replies; a second
        # MONITOR is not answered.
        mon.send(encode_command("MONITOR") + encode_command("PING"))
        assert mon.read() == "PONG"
        m = MONITOR_LINE.match(mon.read())
        got.append((m.group(1), m.group(2)))
        assert b"flags=O" in other.command("CLIENT", "LIST")
        lines.append(got)
    assert lines[0] == lines[1]
    assert lines[0][0] == (
        "0", r'"PING" "a\x01\"\\\n\r\t\a\bb\xff"')
    assert lines[0][1] == ("0", '"AUTH" "(redacted)"')
    assert lines[0][3][1].startswith('"HELLO" "2" "AUTH" "(redacted)" '
                                     '"(redacted)"')
    assert lines[0][5] == ("1", '"SELECT" "1"')


def test_command_info_arity(pair):
    for name in ("reset", "monitor", "client|kill", "client|pause",
                 "client|unpause", "client|reply", "client|no-evict"):
        ours, theirs = pair.both("COMMAND", "INFO", name)
        assert ours[0][:2] == theirs[0][:2], name
        assert ("admin" in ours[0][2]) == ("admin" in theirs[0][2]), name
