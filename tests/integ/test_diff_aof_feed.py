"""What the append-only file logs, against redis-server 7.0 with the
module: the same commands go to both (appendonly yes, appendfsync always),
then both increment files are read back as lists of commands and compared
command by command, names and case included. Only what cannot be equal is
masked: an absolute time (compared within the run's span), a new filter's
header (its random seed), a DUMP payload. Covers the rewrites (EXPIRE to
PEXPIREAT with its options, a past time to DEL, expiry to DEL), the
transaction rules (one write alone, more in MULTI ... EXEC, reads none),
FLUSHDB of an empty database, SELECT, and a filter's creation as
CF.LOADCHUNK of its header before the command, as the module logs it."""

import glob
import os
import time

import pytest

from support.diff import DiffPair, only_cuckood
from support.aof import need_aof_writer
from support.proc import wait_until

pytestmark = only_cuckood

AOF = ("--appendonly", "yes", "--appendfsync", "always")


need_aof_writer = need_aof_writer(*AOF)


def read_incr(srv):
    """The commands of srv's increment files, in manifest order."""
    d = os.path.join(srv.dir, "appendonlydir")
    man = glob.glob(os.path.join(d, "*.manifest"))
    assert len(man) == 1, os.listdir(d)
    names = []
    for line in open(man[0]):
        f = line.split()
        if "type" in f and f[f.index("type") + 1] == "i":
            names.append(f[f.index("file") + 1])
    cmds = []
    for name in names:
        data = open(os.path.join(d, name), "rb").read()
        i = 0
        while i < len(data):
            assert data[i:i + 1] == b"*", (name, i, data[i:i + 20])
            j = data.index(b"\r\n", i)
            argc = int(data[i + 1:j])
            i = j + 2
            args = []
            for _ in range(argc):
                j = data.index(b"\r\n", i)
                n = int(data[i + 1:j])
                args.append(data[j + 2:j + 2 + n])
                i = j + 2 + n + 2
            cmds.append(args)
    return cmds


def masked(cmds, t0, t1):
    """cmds with what differs by nature masked: absolute times made from
    the clock during the run (within [t0, t1 + 1 day]), filter headers."""
    out = []
    for a in cmds:
        a = list(a)
        name = a[0].upper()
        if name == b"PEXPIREAT" and len(a) >= 3:
            if t0 <= int(a[2]) <= t1 + 86400 * 1000:
                a[2] = b"<time>"
        if name == b"CF.LOADCHUNK" and len(a) == 4 and a[2] == b"1":
            a[3] = b"<header>"
        out.append(a)
    return out


def run(pair, script):
    for cmd in script:
        pair.both(*cmd)


def test_feed_matches_redis():
    pair = DiffPair(*AOF, theirs_args=AOF)
    try:
        t0 = int(time.time() * 1000)
        run(pair, [
            ("CF.RESERVE", "r", 1000),
            ("CF.ADD", "a", "x"),            # created: header, then itself
            ("CF.ADD", "a", "y"),            # verbatim
            ("CF.EXISTS", "a", "x"),         # a read: nothing
            ("CF.ADD", "a"),                 # refused: nothing
            ("CF.DEL", "a", "never"),        # changed nothing: nothing
            ("CF.DEL", "a", "y"),
            ("EXPIRE", "a", 100),            # PEXPIREAT <abs>
            ("PEXPIRE", "a", 500000, "GT"),  # PEXPIREAT <abs> GT
            ("EXPIREAT", "a", 99999999999),  # PEXPIREAT <abs in ms>
            ("PERSIST", "a"),
            ("CF.INSERTNX", "b", "ITEMS", "p", "q"),
            ("EXPIRE", "b", -1),             # DEL b
            ("MULTI",), ("CF.ADD", "a", "m"), ("CF.EXISTS", "a", "m"),
            ("EXEC",),                        # one write: alone
            ("MULTI",), ("CF.ADD", "a", "n"), ("SELECT", 2),
            ("CF.ADD", "c", "o"), ("EXEC",),  # in MULTI ... EXEC
            ("MULTI",), ("CF.EXISTS", "a", "n"), ("EXEC",),  # nothing
            ("SELECT", 3), ("FLUSHDB",),      # logged even when empty
            ("SELECT", 0), ("COPY", "a", "d", "DB", 1), ("RENAME", "a", "e"),
            ("MOVE", "e", 4), ("SWAPDB", 0, 4), ("UNLINK", "r"),
            ("PEXPIRE", "e", 150),
        ])
        # expiry: gone by itself or by a lookup, logged as DEL either way
        wait_until(lambda: pair.both("EXISTS", "e") == (0, 0),
                   what="e expired on both")
        run(pair, [("FLUSHALL",)])
        t1 = int(time.time() * 1000)
        ours = masked(read_incr(pair.ours), t0, t1)
        theirs = masked(read_incr(pair.theirs), t0, t1)
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert a == b, (i, a, b, ours, theirs)
        assert len(ours) == len(theirs), (ours, theirs)
    finally:
        pair.close()
