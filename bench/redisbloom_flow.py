#!/usr/bin/env python3
"""RedisBloom's own flow tests, run against cuckood (and RedisBloom).

    python3 bench/redisbloom_flow.py FLOWFILE [FLOWFILE ...]
        [--bin build/server/cuckood] [--rb-so PATH] [--module cuckoo.so]
        [--others-to-redisbloom] [-k SUBSTRING] [--all-messages] [-v]

FLOWFILE is one of RedisBloom's tests/flow/test_*.py, read from where it
lies (a checkout of RedisBloom, or `git show TAG:tests/flow/test_cuckoo.py
> file`); nothing of it is kept here. Those files are written for RLTest,
which comes from PyPI only (no Debian package), so this script stands in
for the part
of RLTest they use: a module `RLTest` (Env, Defaults) and a module
`common` (what RedisBloom's tests/flow/common.py exports), both made
here, then every test class and test function of the file run in the
order it defines them, as RLTest runs them: one instance per class, its
tests one after the other on the same server, nothing flushed between
them.

Each file runs against a fresh cuckood (--bin) on a free port, and, when
--rb-so (or $RB_SO) names a built redisbloom.so, against a fresh Debian
redis-server with that module, for the side-by-side column; --module
adds one for redis-server with our own cuckoo.so. The result is a table:
test, its result on each server, the first failure on cuckood (file
line and message) and how many more assertions failed.

What the stand-in does, as RLTest does it:
- Env(decodeResponses=..., protocol=2|3): a connection to the server
  under test; RESP2 through redis-py (RLTest's client, which also splits
  a first argument "CF.RESERVE a 10" at its spaces), RESP3 through the
  suites' raw client after HELLO 3, with redis-py's reply shapes (maps as
  dicts, simple strings as bytes unless decoding) and its error classes.
- env.cmd / execute_command, expect(...).equal/ok/error/contains/...,
  getConnection, getClusterConnectionIfNeeded, flush, skip, debugPrint.
- The assertions (assertEqual, assertTrue, assertRaises,
  assertResponseError, ...) do not stop a test: each failure is recorded
  with its line and the test goes on, as in RLTest. A Python `assert`
  or an exception (an unexpected error reply) ends the test.
- dumpAndReload and restartAndReload: SAVE, then the server is restarted
  on the same port and directory and loads what it saved (RLTest's
  DEBUG RELOAD does the same within the process; cuckood has no DEBUG
  RELOAD).
- Env(useSlaves=True) skips the test: no replica is started (cuckood
  has none; RedisBloom's replication is not what is compared here).
- A test whose server died is marked "crash" and the server is started
  again for the next test.
- --others-to-redisbloom (with --rb-so): on cuckood's pass (and the
  module's), the commands
  of RedisBloom's other types (BF.*, CMS.*, TOPK.*, TDIGEST.*) go to a
  second, fresh redis-server with RedisBloom, as an application that
  keeps its cuckoo filters in cuckood and the rest in RedisBloom would
  send them; so a test that mixes types (test_resp3.py) reaches its CF.*
  part on cuckood. Without it such a test fails at its first BF.* command.
Not part of the tests (CI cannot fetch RedisBloom); the result of a run
is recorded in bench/results/redisbloom_flow.md.
"""

import argparse
import contextlib
import hashlib
import importlib.util
import inspect
import os
import sys
import time
import traceback
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))  # the support package
from support.proc import Daemon, RedisServer  # noqa: E402
from support.resp import Map, RawConn, RespError, Simple  # noqa: E402

import redis  # noqa: E402
import redis.client  # noqa: E402
import redis.connection  # noqa: E402

SOCKET_TIMEOUT = 300


class Skip(Exception):
    """env.skip(): the test does not apply."""


# --------------------------------------------------------------------------
# The server a file runs against.

class Target:
    """One server kind: cuckood or redis-server with RedisBloom."""

    def __init__(self, name, make):
        self.name = name
        self.make = make
        self.server = None

    def start(self):
        self.server = self.make().start()
        port = self.server.port
        # Restarts keep the port, so that open clients reconnect to it.
        self.server.pick_port = lambda: port
        return self

    def alive(self):
        return self.server is not None and self.server.alive()

    def restart(self, save=True):
        if save and self.alive():
            with self.server.raw(timeout=SOCKET_TIMEOUT) as c:
                rep = c.command("SAVE")
                if isinstance(rep, RespError):
                    raise redis.ResponseError("SAVE: " + rep.text)
        self.server.stop()
        self.server.start()
        for env in Env.live:
            env.reconnect()

    def revive(self):
        """After a crash: a new process on the same port and directory."""
        self.server.kill()
        self.server.start()
        for env in Env.live:
            env.reconnect()

    def stop(self):
        if self.server is not None:
            self.server.cleanup()
            self.server = None


def cuckood_target(binary):
    return Target("cuckood", lambda: Daemon("--save", "", binary=binary,
                                            start_timeout=120))


def module_target(name, so):
    """redis-server with a module: RedisBloom, or our cuckoo.so."""
    return Target(name, lambda: RedisServer(
        "--enable-debug-command", "yes", "--loadmodule", so,
        start_timeout=120))


def redisbloom_target(so):
    return module_target("RedisBloom", so)


# --------------------------------------------------------------------------
# Clients with redis-py's reply shapes.

def split_first(args):
    """redis-py sends "CF.RESERVE a 10" (one argument) as three words."""
    if args and isinstance(args[0], str) and " " in args[0].strip():
        return tuple(args[0].split()) + tuple(args[1:])
    return tuple(args)


class Resp3Client:
    """A RESP3 connection answering as redis-py 5 with protocol=3 does."""

    def __init__(self, port, decode):
        self.port = port
        self.decode = decode
        self.conn = None

    def _connect(self):
        if self.conn is None:
            self.conn = RawConn(self.port, timeout=SOCKET_TIMEOUT)
            hello = self.conn.command("HELLO", "3")
            if isinstance(hello, RespError):
                raise redis.ResponseError("HELLO 3: " + hello.text)
        return self.conn

    def _shape(self, v):
        if isinstance(v, RespError):
            return redis.connection.BaseParser().parse_error(v.text)
        if isinstance(v, Simple):
            return str(v) if self.decode else str(v).encode()
        if isinstance(v, bytes):
            return v.decode(errors="replace") if self.decode else v
        if isinstance(v, Map):
            return {self._shape(k): self._shape(x) for k, x in v.pairs}
        if isinstance(v, list):
            return [self._shape(x) for x in v]
        return v

    def execute_command(self, *args):
        args = split_first(args)
        try:
            rep = self._connect().command(*args)
        except OSError:
            self.close()
            raise
        out = self._shape(rep)
        if isinstance(out, redis.ResponseError):
            raise out
        if str(args[0]).upper() == "INFO" and isinstance(out, (str, bytes)):
            text = out.decode() if isinstance(out, bytes) else out
            return redis.client.parse_info(text)
        return out

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    disconnect = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def make_client(port, decode, protocol):
    if protocol == 3:
        return Resp3Client(port, decode)
    return redis.Redis(host="127.0.0.1", port=port, decode_responses=decode,
                       socket_timeout=SOCKET_TIMEOUT)


def drop_connections(client):
    if isinstance(client, Resp3Client):
        client.close()
    else:
        client.connection_pool.disconnect()


# --------------------------------------------------------------------------
# The test being run: its recorded failures.

class Outcome:
    def __init__(self):
        self.failures = []  # (line, message)
        self.skipped = False
        self.error = None   # (line, message) of what ended the test
        self.crashed = False
        self.seconds = 0.0

    @property
    def status(self):
        if self.crashed:
            return "crash"
        if self.skipped and not self.failures:
            return "skip"
        if self.failures or self.error:
            return "FAIL"
        return "pass"

    def first(self):
        if self.failures:
            return self.failures[0]
        return self.error


CURRENT = {"outcome": None, "target": None, "file": None, "others": None}

# RedisBloom's types other than the cuckoo filter.
OTHER_TYPES = ("BF.", "CMS.", "TOPK.", "TDIGEST.")


def flow_frame(tb=None):
    """The frame summary of the flow file's line that is running (or that
    raised), or None."""
    frames = (traceback.extract_tb(tb) if tb is not None
              else traceback.extract_stack())
    for fr in reversed(frames):
        if fr.filename == CURRENT["file"]:
            return fr
    return None


def flow_line(tb=None):
    fr = flow_frame(tb)
    return None if fr is None else fr.lineno


def clip(v, n=160):
    s = repr(v)
    return s if len(s) <= n else s[:n] + "...(%d chars)" % len(s)


def fail(message):
    CURRENT["outcome"].failures.append((flow_line(), message))


# --------------------------------------------------------------------------
# The RLTest surface.

class Query:
    """env.expect(*args): the command runs at once; the checks record."""

    def __init__(self, env, args):
        self.env = env
        self.args = args
        self.res = None
        self.err = None
        try:
            self.res = env.cmd(*args)
        except redis.ResponseError as e:
            self.err = e

    def _value(self):
        return str(self.err) if self.err is not None else self.res

    def equal(self, expected):
        if self.err is not None or self.res != expected:
            fail("%s: %s != %s" % (clip(self.args), clip(self._value()),
                                   clip(expected)))
        return self

    def ok(self):
        if self.err is not None or self.res not in ("OK", b"OK", True):
            fail("%s: %s is not OK" % (clip(self.args), clip(self._value())))
        return self

    def true(self):
        if self.err is not None or not self.res:
            fail("%s: %s is not true" % (clip(self.args),
                                         clip(self._value())))
        return self

    def error(self):
        if self.err is None:
            fail("%s: expected an error, got %s" % (clip(self.args),
                                                    clip(self.res)))
        return self

    raiseError = error

    def noError(self):
        if self.err is not None:
            fail("%s: unexpected error %s" % (clip(self.args),
                                              clip(str(self.err))))
        return self

    notRaiseError = noError

    def contains(self, part):
        v = self._value()
        if isinstance(v, bytes) and isinstance(part, str):
            part = part.encode()
        if not isinstance(v, (str, bytes, list, dict)) or part not in v:
            fail("%s: %s does not contain %s" % (clip(self.args), clip(v),
                                                 clip(part)))
        return self

    def apply(self, fn):
        if self.err is None:
            self.res = fn(self.res)
        return self


class Env:
    """What RedisBloom's flow tests call on RLTest's Env."""

    live = []

    def __init__(self, decodeResponses=False, protocol=2, useSlaves=False,
                 **_ignored):
        if useSlaves:
            raise Skip("needs a replica (useSlaves), which this runner does "
                       "not start")
        self.decode = decodeResponses
        self.protocol = protocol
        self.con = make_client(CURRENT["target"].server.port, self.decode,
                               self.protocol)
        others = CURRENT["others"]
        self.other = None if others is None else make_client(
            others.server.port, self.decode, self.protocol)
        Env.live.append(self)

    def reconnect(self):
        drop_connections(self.con)
        self.con = make_client(CURRENT["target"].server.port, self.decode,
                               self.protocol)

    # Commands.
    def cmd(self, *args, **kw):
        args = split_first(args)
        if self.other is not None and \
                str(args[0]).upper().startswith(OTHER_TYPES):
            return self.other.execute_command(*args, **kw)
        return self.con.execute_command(*args, **kw)

    execute_command = cmd

    def expect(self, *args):
        return Query(self, args)

    def getConnection(self, shardId=1):
        return self.con

    def getClusterConnectionIfNeeded(self):
        return make_client(CURRENT["target"].server.port, self.decode,
                           self.protocol)

    def flush(self):
        self.cmd("FLUSHALL")

    def isCluster(self):
        return False

    def shardsCount(self):
        return 1

    # Reloads.
    def dumpAndReload(self, restart=False, shardId=None, timeout_sec=40):
        CURRENT["target"].restart(save=True)

    def restartAndReload(self, shardId=None, timeout_sec=40):
        CURRENT["target"].restart(save=True)

    # Skips and prints.
    def skip(self):
        raise Skip("env.skip()")

    def skipOnCluster(self):
        pass

    def skipOnSlave(self):
        pass

    def skipOnAOF(self):
        pass

    def skipOnVersionSmaller(self, _version):
        pass

    def debugPrint(self, msg, force=False):
        if VERBOSE or force:
            print("    " + str(msg), file=sys.stderr)

    # Assertions: a failure is recorded and the test goes on.
    def _check(self, ok, message):
        if not ok:
            fail(message)
        return ok

    def assertTrue(self, v, depth=0, message=None):
        return self._check(bool(v), message or "%s is not true" % clip(v))

    def assertFalse(self, v, depth=0, message=None):
        return self._check(not v, message or "%s is not false" % clip(v))

    def assertOk(self, v, depth=0, message=None):
        return self._check(v in ("OK", b"OK", True),
                           message or "%s is not OK" % clip(v))

    def assertEqual(self, a, b, depth=0, message=None):
        return self._check(a == b, message or "%s != %s" % (clip(a), clip(b)))

    def assertNotEqual(self, a, b, depth=0, message=None):
        return self._check(a != b, message or "%s == %s" % (clip(a), clip(b)))

    def assertGreater(self, a, b, depth=0, message=None):
        return self._check(a > b, message or "%s <= %s" % (clip(a), clip(b)))

    def assertGreaterEqual(self, a, b, depth=0, message=None):
        return self._check(a >= b, message or "%s < %s" % (clip(a), clip(b)))

    def assertLess(self, a, b, depth=0, message=None):
        return self._check(a < b, message or "%s >= %s" % (clip(a), clip(b)))

    def assertLessEqual(self, a, b, depth=0, message=None):
        return self._check(a <= b, message or "%s > %s" % (clip(a), clip(b)))

    def assertAlmostEqual(self, a, b, delta, depth=0, message=None):
        return self._check(abs(a - b) <= delta, message or
                           "%s not within %s of %s" % (clip(a), delta,
                                                       clip(b)))

    def assertContains(self, part, whole, depth=0, message=None):
        return self._check(part in whole, message or "%s not in %s"
                           % (clip(part), clip(whole)))

    def assertIsNone(self, v, depth=0, message=None):
        return self._check(v is None, message or "%s is not None" % clip(v))

    def assertIsNotNone(self, v, depth=0, message=None):
        return self._check(v is not None, message or "None")

    def assertCmdOk(self, *args, **kw):
        return self.assertOk(self.cmd(*args, **kw))

    def assertRaises(self, exc, func=None, *args, **kw):
        if func is None:
            return self._raises(exc)
        try:
            rep = func(*args, **kw)
        except exc:
            return True
        self._check(False, "%s: expected %s, got the reply %s"
                    % (clip(args), exc.__name__, clip(rep)))
        return False

    @contextlib.contextmanager
    def _raises(self, exc, contained=None):
        try:
            yield
        except exc as e:
            if contained is not None and contained not in str(e):
                fail("error %s does not contain %s" % (clip(str(e)),
                                                       clip(contained)))
            return
        fail("expected %s, none was raised" % exc.__name__)

    def assertResponseError(self, msg=None, contained=None):
        return self._raises(redis.ResponseError, contained)


class Defaults:
    decode_responses = False
    module = None
    module_args = None


VERBOSE = False


def fake_modules():
    """The modules `RLTest` and `common` a flow file imports."""
    from packaging import version
    rltest = types.ModuleType("RLTest")
    rltest.Env = Env
    rltest.Defaults = Defaults
    common = types.ModuleType("common")
    names = dict(Env=Env, Defaults=Defaults,
                 ResponseError=redis.ResponseError, version=version,
                 os=os, sys=sys, ONLY_STABLE=False, SANITIZER="",
                 VALGRIND=False, CODE_COVERAGE=False, OSNICK="", OS="linux",
                 ARCH="x64")

    def server_version_at_least(env, ver):
        v = env.execute_command("INFO")["redis_version"]
        return version.parse(str(v)) >= version.parse(str(ver))

    names["server_version_at_least"] = server_version_at_least
    names["server_version_less_than"] = \
        lambda env, ver: not server_version_at_least(env, ver)
    # No module version is asked of cuckood: what the tests guard by
    # version is taken as present.
    names["module_version_at_least"] = lambda env, ver: True
    names["module_version_less_than"] = lambda env, ver: False
    for k, v in names.items():
        setattr(common, k, v)
    sys.modules["RLTest"] = rltest
    sys.modules["common"] = common


# --------------------------------------------------------------------------
# Running a file.

def load_flow(path, n):
    spec = importlib.util.spec_from_file_location("flow_%d" % n, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def collect(mod):
    """(name, class or None, function) in the file's order."""
    items = []
    for name, obj in vars(mod).items():
        if inspect.isclass(obj) and name.lower().startswith("test") and \
                obj.__module__ == mod.__name__:
            items.append((name, obj))
        elif inspect.isfunction(obj) and name.startswith("test") and \
                obj.__module__ == mod.__name__:
            items.append((name, obj))
    return items


def run_one(target, fn, out):
    CURRENT["outcome"] = out
    t0 = time.monotonic()
    try:
        res = fn()
        if inspect.isgenerator(res):
            for _ in res:
                pass
    except Skip as e:
        out.skipped = True
        out.error = (flow_line(e.__traceback__), "skipped: %s" % e)
    except BaseException as e:  # an assert, an error reply, a lost server
        if isinstance(e, KeyboardInterrupt):
            raise
        fr = flow_frame(e.__traceback__)
        text = str(e)
        if not text and fr is not None:  # a bare assert: show its line
            text = fr.line
        out.error = (None if fr is None else fr.lineno,
                     "%s: %s" % (type(e).__name__, clip(text, 300)))
    out.seconds = time.monotonic() - t0
    if not target.alive():
        out.crashed = True
        target.revive()


def run_file(path, target, pattern, n):
    """{test name: Outcome} of one flow file on one target."""
    CURRENT["target"] = target
    CURRENT["file"] = os.path.abspath(path)
    results = {}
    mod = load_flow(path, n)
    for name, obj in collect(mod):
        if inspect.isclass(obj):
            methods = [(m, f) for m, f in vars(obj).items()
                       if m.startswith("test") and inspect.isfunction(f)]
            methods = [(m, f) for m, f in methods
                       if pattern is None or pattern in "%s.%s" % (name, m)]
            if not methods:
                continue
            Env.live = []
            out = Outcome()
            CURRENT["outcome"] = out
            try:
                inst = obj()
            except BaseException as e:
                out.error = (flow_line(e.__traceback__),
                             "constructor: %s: %s" % (type(e).__name__, e))
                for m, _ in methods:
                    results["%s.%s" % (name, m)] = out
                continue
            for m, f in methods:
                out = Outcome()
                run_one(target, lambda: f(inst), out)
                results["%s.%s" % (name, m)] = out
                if VERBOSE:
                    print("  %s %s.%s %s" % (target.name, name, m,
                                             out.status), file=sys.stderr)
        else:
            if pattern is not None and pattern not in name:
                continue
            Env.live = []
            out = Outcome()
            nargs = len(inspect.signature(obj).parameters)
            run_one(target, (lambda: obj(Env())) if nargs else obj, out)
            results[name] = out
    Env.live = []
    return results


def describe(out):
    if out is None:
        return ""
    first = out.first()
    if first is None:
        return ""
    line, msg = first
    more = len(out.failures) - 1 + (1 if out.error and out.failures else 0)
    text = ("line %s: %s" % (line, msg)) if line else msg
    if more > 0:
        text += " (+%d more)" % more
    return text


def git_blob_sha(path):
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def main():
    global VERBOSE
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="+", help="RedisBloom flow test files")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "server",
                                                  "cuckood"))
    ap.add_argument("--rb-so", default=os.environ.get("RB_SO"),
                    help="a built redisbloom.so (default $RB_SO)")
    ap.add_argument("-k", dest="pattern", help="only tests whose "
                    "Class.test name contains this")
    ap.add_argument("-v", action="store_true", help="progress and "
                    "debugPrint lines on stderr")
    ap.add_argument("--module", help="our cuckoo.so: adds a column for "
                    "redis-server with it")
    ap.add_argument("--others-to-redisbloom", action="store_true",
                    help="on cuckood's pass, send BF.*, CMS.*, TOPK.* and "
                    "TDIGEST.* to a RedisBloom server (needs --rb-so)")
    ap.add_argument("--all-messages", action="store_true",
                    help="print every recorded failure after the table")
    args = ap.parse_args()
    VERBOSE = args.v
    fake_modules()
    targets = [cuckood_target(args.bin)]
    if args.module:
        targets.append(module_target("cuckoo.so",
                                     os.path.abspath(args.module)))
    if args.rb_so:
        targets.append(redisbloom_target(os.path.abspath(args.rb_so)))
    elif args.others_to_redisbloom:
        ap.error("--others-to-redisbloom needs --rb-so or RB_SO")
    if args.others_to_redisbloom:
        print("on cuckood's pass, %s commands go to RedisBloom"
              % "/".join(t + "*" for t in OTHER_TYPES))

    rows = []  # (file, test, {target: Outcome})
    n = 0
    for path in args.files:
        print("file %s (git blob %s)" % (path, git_blob_sha(path)))
        per = {}
        for t in targets:
            others = None
            if args.others_to_redisbloom and t.name != "RedisBloom":
                others = redisbloom_target(os.path.abspath(args.rb_so))
                CURRENT["others"] = others.start()
            t.start()
            try:
                n += 1
                per[t.name] = run_file(path, t, args.pattern, n)
            finally:
                t.stop()
                if others is not None:
                    others.stop()
                CURRENT["others"] = None
        names = list(per["cuckood"])
        for t in targets[1:]:
            names += [x for x in per[t.name] if x not in names]
        for name in names:
            rows.append((os.path.basename(path), name,
                         {t.name: per[t.name].get(name) for t in targets}))

    head = ["file", "test"] + [t.name for t in targets]
    head.append("first failure on cuckood")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for f, name, outs in rows:
        cells = [f, name]
        for t in targets:
            o = outs.get(t.name)
            cells.append("-" if o is None else
                         "%s (%.1f s)" % (o.status, o.seconds))
        cells.append(describe(outs.get("cuckood")).replace("|", "\\|"))
        print("| " + " | ".join(cells) + " |")
    for t in targets:
        counts = {}
        for _, _, outs in rows:
            o = outs.get(t.name)
            if o is not None:
                counts[o.status] = counts.get(o.status, 0) + 1
        print("%s: %s" % (t.name, ", ".join("%d %s" % (v, k) for k, v in
                                            sorted(counts.items()))))
    if args.all_messages:
        for f, name, outs in rows:
            for t in targets:
                o = outs.get(t.name)
                if o is None or o.status == "pass":
                    continue
                for line, msg in o.failures + ([o.error] if o.error else []):
                    print("%s %s %s line %s: %s" % (t.name, f, name, line,
                                                    msg))
    return 0


if __name__ == "__main__":
    sys.exit(main())
