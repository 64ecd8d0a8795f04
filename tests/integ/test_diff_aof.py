"""Differential tests of the append-only file's surface: the directives
through CONFIG GET and CONFIG SET (values, refusals and their wording),
INFO persistence's aof_* fields (names and order), BGREWRITEAOF's replies,
and the manifest's lines after switching the AOF on at run time. The same
commands go to cuckood and to redis-server, in RESP2 and RESP3."""

import os
import re

from support.diff import DiffPair, only_cuckood, pair_fixture
from support.proc import wait_until
from support.resp import RespError

pytestmark = only_cuckood

pair = pair_fixture("module")

DIRECTIVES = ("appendonly", "appenddirname", "appendfilename", "appendfsync",
              "no-appendfsync-on-rewrite", "auto-aof-rewrite-percentage",
              "auto-aof-rewrite-min-size", "aof-load-truncated",
              "aof-timestamp-enabled", "aof-use-rdb-preamble")


def test_config_get_defaults(pair):
    for name in DIRECTIVES:
        pair.same("CONFIG", "GET", name, exact=True)


def test_config_set_values_and_refusals(pair):
    sets = [("appendfsync", "always"), ("appendfsync", "no"),
            ("appendfsync", "everysec"), ("appendfsync", "sometimes"),
            ("no-appendfsync-on-rewrite", "yes"),
            ("no-appendfsync-on-rewrite", "no"),
            ("no-appendfsync-on-rewrite", "maybe"),
            ("auto-aof-rewrite-percentage", "50"),
            ("auto-aof-rewrite-percentage", "-1"),
            ("auto-aof-rewrite-percentage", "x"),
            ("auto-aof-rewrite-percentage", "100"),
            ("auto-aof-rewrite-min-size", "1mb"),
            ("auto-aof-rewrite-min-size", "lots"),
            ("auto-aof-rewrite-min-size", "64mb"),
            ("aof-load-truncated", "no"), ("aof-load-truncated", "yes"),
            ("aof-use-rdb-preamble", "no"), ("aof-use-rdb-preamble", "yes"),
            ("appendfilename", "other.aof"), ("appenddirname", "elsewhere")]
    for name, value in sets:
        pair.same("CONFIG", "SET", name, value, exact=True, protos=(2,))
        pair.same("CONFIG", "GET", name, exact=True)


def test_timestamps_refused():
    """aof-timestamp-enabled yes is refused by cuckood (no annotations),
    with CONFIG SET's wording; no is accepted as by redis-server."""
    p = DiffPair()
    try:
        ours, theirs = p.both("CONFIG", "SET", "aof-timestamp-enabled", "yes")
        assert isinstance(ours, RespError)
        assert ours.text.startswith(
            "ERR CONFIG SET failed (possibly related to argument "
            "'aof-timestamp-enabled') - "), ours.text
        assert theirs == "OK"
        p.same("CONFIG", "SET", "aof-timestamp-enabled", "no", exact=True)
    finally:
        p.close()


def aof_fields(info_text):
    if isinstance(info_text, bytes):
        info_text = info_text.decode()
    return [line.split(":", 1)[0] for line in info_text.split("\r\n")
            if line.startswith(("aof_", "module_fork"))]


def test_info_fields_in_order(pair):
    ours, theirs = pair.both("INFO", "persistence")
    assert aof_fields(ours) == aof_fields(theirs)


def test_switch_on_at_run_time(pair):
    """CONFIG SET appendonly yes: a base of the current data written in the
    background, the manifest naming it and an increment; the same INFO
    fields once on; BGREWRITEAOF's replies."""
    pair.same("CF.ADD", "k", "a", protos=(2,))
    pair.same("CONFIG", "SET", "appendonly", "yes", exact=True, protos=(2,))

    def done(srv):
        return lambda: not pending(srv)

    def pending(srv):
        with srv.raw() as c:
            text = c.command("INFO", "persistence")
        if isinstance(text, bytes):
            text = text.decode()
        return ("aof_rewrite_scheduled:1" in text
                or "aof_rewrite_in_progress:1" in text)

    for srv in (pair.ours, pair.theirs):
        wait_until(done(srv), what="the first rewrite")
    ours, theirs = pair.both("INFO", "persistence")
    assert aof_fields(ours) == aof_fields(theirs)
    assert b"aof_enabled:1" in ours
    assert b"aof_last_bgrewrite_status:ok" in ours
    for srv in (pair.ours, pair.theirs):
        with open(os.path.join(srv.dir, "appendonlydir",
                               "appendonly.aof.manifest")) as f:
            lines = f.read().splitlines()
        kinds = [re.sub(r"\.\d+\.", ".N.", ln) for ln in lines]
        assert kinds == ["file appendonly.aof.N.base.rdb seq 1 type b",
                         "file appendonly.aof.N.incr.aof seq 1 type i"] or \
            kinds == ["file appendonly.aof.N.base.rdb seq 1 type b",
                      "file appendonly.aof.N.incr.aof seq 2 type i"], lines
    pair.same("BGREWRITEAOF", exact=True, protos=(2,))
    for srv in (pair.ours, pair.theirs):
        wait_until(done(srv), what="BGREWRITEAOF's rewrite")
    pair.same("CONFIG", "SET", "appendonly", "no", exact=True, protos=(2,))
    ours, theirs = pair.both("INFO", "persistence")
    assert aof_fields(ours) == aof_fields(theirs)
    assert b"aof_enabled:0" in ours
