"""Differential testing: the same commands sent to cuckood and to Debian's
redis-server (with the module loaded, so that CF.* keys exist on both
sides), replies compared.

    pair = DiffPair()           # starts both; pair.close() stops them
    pair.same("EXPIRE", "k", 10)            # RESP2 and RESP3 replies equal
    ours, theirs = pair.both("TTL", "k")    # RESP2 replies, to compare by hand
    pair.script([("MULTI",), ("CF.ADD", "k", "a"), ("EXEC",)])

Each side keeps one connection per protocol (RESP2, and RESP3 after HELLO
3), so state such as SELECT, MULTI or WATCH follows the script on both.
Replies are equal when their types and values are; error replies compare
by their first word (ERR, WRONGTYPE, EXECABORT ...) unless exact=True,
which compares the whole text. A test that needs another client opens it
with pair.conns(proto) and drives both the same way.
"""

import pytest

from support.proc import (Daemon, RedisServer, cleanup_all, use_module,
                          use_redis_server, wait_expired)
from support.resp import RawConn, RespError


def _normal(v, exact):
    """A reply in a comparable form: error replies by their first word
    (or whole text when exact), lists, maps and sets element by element."""
    if isinstance(v, RespError):
        return ("error", v.text if exact else v.text.split(" ", 1)[0])
    if isinstance(v, dict):
        return (type(v).__name__,
                tuple((_normal(k, exact), _normal(x, exact))
                      for k, x in getattr(v, "pairs", v.items())))
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, tuple(_normal(x, exact) for x in v))
    return (type(v).__name__, v)


def same_reply(a, b, exact=False):
    return _normal(a, exact) == _normal(b, exact)


class DiffPair:
    def __init__(self, *ours_args, theirs_args=()):
        self.ours = Daemon(*ours_args).start()
        try:
            self.theirs = RedisServer(*theirs_args, module=True).start()
        except BaseException:
            self.ours.cleanup()
            raise
        self._conns = {}

    def conns(self, proto=2):
        """A new (ours, theirs) pair of connections speaking proto."""
        pair = []
        for srv in (self.ours, self.theirs):
            c = RawConn(srv.port)
            if proto == 3:
                hello = c.command("HELLO", "3")
                assert not isinstance(hello, RespError), hello
            pair.append(c)
        return tuple(pair)

    def _conn(self, proto):
        if proto not in self._conns:
            self._conns[proto] = self.conns(proto)
        return self._conns[proto]

    def wait_expired(self, key, proto=2):
        """proc.wait_expired() on each side: key's time has passed by
        that server's clock, and nothing has touched the key since."""
        for c in self._conn(proto):
            wait_expired(c.command, key)

    def both(self, *cmd, proto=2):
        """cmd on both sides (the shared connection of proto): (ours,
        theirs)."""
        a, b = self._conn(proto)
        return a.command(*cmd), b.command(*cmd)

    def same(self, *cmd, exact=False, protos=(2, 3)):
        """cmd on both sides in each protocol; asserts the replies are
        equal and returns ours of the last protocol."""
        ours = None
        for proto in protos:
            ours, theirs = self.both(*cmd, proto=proto)
            assert same_reply(ours, theirs, exact), (
                "RESP%d %r: cuckood %r, redis-server %r"
                % (proto, cmd, ours, theirs))
        return ours

    def script(self, cmds, exact=False, proto=2):
        """Each command of cmds in turn on one protocol's connections,
        asserting every reply equal; returns ours."""
        out = []
        for cmd in cmds:
            ours, theirs = self.both(*cmd, proto=proto)
            assert same_reply(ours, theirs, exact), (
                "RESP%d %r: cuckood %r, redis-server %r"
                % (proto, cmd, ours, theirs))
            out.append(ours)
        return out

    def close(self):
        for pair in self._conns.values():
            for c in pair:
                c.close()
        self._conns = {}
        cleanup_all([self.ours, self.theirs])


# The mark of every differential test file: it compares cuckood itself with
# redis-server, so it has nothing to do when the suites run against
# redis-server or the module instead of cuckood.
only_cuckood = pytest.mark.skipif(
    use_redis_server() or use_module(),
    reason="compares cuckood itself with redis-server")


def pair_fixture(scope="function"):
    """A pytest fixture giving a started DiffPair, stopped after its
    scope: `pair = pair_fixture("module")` in a test file."""
    @pytest.fixture(scope=scope)
    def pair():
        p = DiffPair()
        yield p
        p.close()
    return pair
