"""Differential tests of what COMMAND says about each command: COMMAND
INFO's arity, flags, ACL categories, legacy key range and key specs,
COMMAND DOCS's key_spec_index, COMMAND GETKEYS / GETKEYSANDFLAGS, and
COMMAND LIST's filters, sent to cuckood and to redis-server 7.0 (with the
module loaded) in RESP2 and RESP3, replies compared.

The CF commands are the module's on the redis-server side, which Redis 7.0
files without categories; they are checked against RedisBloom's filing in
test_cf_categories_and_key_specs instead.
"""

import pytest

from support.diff import only_cuckood, pair_fixture
from support.resp import Map

pytestmark = only_cuckood

PROTOS = (2, 3)

pair = pair_fixture("module")

# COMMAND INFO's fields by position, and those not compared, with why.
FIELDS = ["name", "arity", "flags", "first_key", "last_key", "step",
          "categories", "tips", "key_specs", "subcommands"]
NOT_COMPARED = {
    # Request/response policies and nondeterministic-output hints are for
    # cluster proxies and test suites; cuckood has no cluster of its own
    # and sends none.
    "tips": "cuckood sends no command tips",
    # Each subcommand is compared on its own (COMMAND LIST names them).
    "subcommands": "compared one by one",
}


def _str(v):
    return v.decode() if isinstance(v, bytes) else v


def shared_names(pair, proto=2):
    """Commands and subcommands both servers have, module commands (the
    CF family on the redis-server side) left out."""
    ours, theirs = pair.both("COMMAND", "LIST", proto=proto)
    _, mod = pair.both("COMMAND", "LIST", "FILTERBY", "MODULE", "cf",
                       proto=proto)
    names = (set(map(_str, ours)) & set(map(_str, theirs))) - \
        set(map(_str, mod))
    return sorted(names)


@pytest.mark.parametrize("proto", PROTOS)
def test_command_info_matches_redis(pair, proto):
    names = shared_names(pair, proto)
    # Every command of cuckood's but the CF family (see
    # test_cf_categories_and_key_specs) and the two CLIENT subcommands of
    # Redis 7.2, which 7.0 lacks: so nothing is left out unseen.
    ours, _ = pair.both("COMMAND", "LIST", proto=proto)
    left_out = set(map(_str, ours)) - set(names)
    assert left_out == set(CF_EXPECTED) | {"client|setinfo",
                                           "client|no-touch"}
    assert len(names) >= 90
    ours, theirs = (pair.both("COMMAND", "INFO", *names, proto=proto))
    assert len(ours) == len(theirs) == len(names)
    diffs = []
    for name, o, t in zip(names, ours, theirs):
        assert o is not None and t is not None, name
        for i, field in enumerate(FIELDS):
            if field in NOT_COMPARED:
                continue
            if o[i] != t[i]:
                diffs.append("%s %s: cuckood %r, redis-server %r"
                             % (name, field, o[i], t[i]))
    assert not diffs, "\n".join(diffs)


@pytest.mark.parametrize("proto", PROTOS)
def test_command_without_arguments_matches_info(pair, proto):
    """COMMAND (all commands) shows each entry as COMMAND INFO does."""
    a, _ = pair.both("COMMAND", proto=proto)
    by_name = {_str(e[0]): e for e in a}
    info, _ = pair.both("COMMAND", "INFO", "rename", "del", "copy",
                        proto=proto)
    for e in info:
        assert by_name[_str(e[0])] == e


def _doc(reply, name):
    if isinstance(reply, list):
        reply = dict(zip(reply[0::2], reply[1::2]))
    d = reply.get(name.encode(), reply.get(name))
    return dict(zip(d[0::2], d[1::2])) if isinstance(d, list) else d


def _key_spec_indexes(doc):
    out = []
    for a in doc.get(b"arguments", doc.get("arguments", [])):
        a = dict(zip(a[0::2], a[1::2])) if isinstance(a, list) else a
        if a.get(b"type", a.get("type")) == b"key":
            out.append((a[b"name"], a[b"key_spec_index"]))
    return out


@pytest.mark.parametrize("proto", PROTOS)
def test_docs_key_spec_index(pair, proto):
    """Each key argument names the key spec that finds it."""
    checked = 0
    for name in shared_names(pair, proto):
        ours, theirs = pair.both("COMMAND", "DOCS", name, proto=proto)
        o, t = _key_spec_indexes(_doc(ours, name)), \
            _key_spec_indexes(_doc(theirs, name))
        assert o == t, name
        checked += len(o)
    assert checked >= 20


GETKEYS_CALLS = [
    ("DEL", "a", "b", "c"),
    ("UNLINK", "a"),
    ("EXISTS", "a", "b"),
    ("TOUCH", "a", "b", "c"),
    ("TYPE", "a"),
    ("RENAME", "a", "b"),
    ("RENAMENX", "a", "b"),
    ("COPY", "a", "b"),
    ("COPY", "a", "b", "DB", "1", "REPLACE"),
    ("MOVE", "a", "1"),
    ("DUMP", "a"),
    ("RESTORE", "a", "0", "payload", "REPLACE"),
    ("OBJECT", "ENCODING", "a"),
    ("OBJECT", "freq", "a"),
    ("MEMORY", "USAGE", "a"),
    ("MEMORY", "USAGE", "a", "SAMPLES", "5"),
    ("EXPIRE", "a", "10"),
    ("PEXPIREAT", "a", "10", "NX"),
    ("TTL", "a"),
    ("EXPIRETIME", "a"),
    ("PERSIST", "a"),
    ("WATCH", "a", "b"),
    ("del", "x"),
    # The CF family: the module declares the same key specs on 7.0.
    ("CF.ADD", "k", "v"),
    ("CF.EXISTS", "k", "v"),
    ("CF.MEXISTS", "k", "v", "w"),
    ("CF.DEL", "k", "v"),
    ("CF.INSERT", "k", "ITEMS", "v"),
    ("CF.RESERVE", "k", "100"),
    ("CF.LOADCHUNK", "k", "1", "x"),
    ("CF.SCANDUMP", "k", "0"),
    ("CF.INFO", "k"),
    # Errors, word for word.
    ("PING", "a"),
    ("KEYS", "*"),
    ("SCAN", "0"),
    ("FLUSHALL", "ASYNC"),
    ("CLIENT", "LIST"),
    ("OBJECT", "ENCODING"),
    ("OBJECT", "NOSUCH", "a"),
    ("NOSUCH", "a", "b"),
    ("TYPE", "a", "b"),
    ("EXPIRE", "a"),
    ("RENAME", "a"),
    ("MEMORY", "USAGE"),
    ("CF.ADD", "k"),
]


@pytest.mark.parametrize("sub", ["GETKEYS", "GETKEYSANDFLAGS"])
@pytest.mark.parametrize("call", GETKEYS_CALLS, ids=" ".join)
def test_getkeys(pair, sub, call):
    pair.same("COMMAND", sub, *call, exact=True)


@pytest.mark.parametrize("args", [(), ("DEL",), ("OBJECT",)])
@pytest.mark.parametrize("sub", ["GETKEYS", "GETKEYSANDFLAGS"])
def test_getkeys_arity(pair, sub, args):
    pair.same("COMMAND", sub, *args, exact=True)


def _categories(pair):
    _, cats = pair.both("ACL", "CAT")
    return [_str(c) for c in cats]


@pytest.mark.parametrize("proto", PROTOS)
def test_list_filterby_aclcat(pair, proto):
    names = set(shared_names(pair, proto))
    cats = _categories(pair)
    assert "keyspace" in cats and "connection" in cats
    nonempty = 0
    for cat in cats + ["KEYSPACE", "Read", "nosuchcategory", "@read", "all",
                       ""]:
        ours, theirs = pair.both("COMMAND", "LIST", "FILTERBY", "ACLCAT",
                                 cat, proto=proto)
        o = sorted(set(map(_str, ours)) & names)
        t = sorted(set(map(_str, theirs)) & names)
        assert o == t, cat
        nonempty += bool(o)
    assert nonempty >= 10


@pytest.mark.parametrize("proto", PROTOS)
def test_list_filterby_pattern_and_module(pair, proto):
    names = set(shared_names(pair, proto))
    for pat in ["c*", "*|*", "CLIENT|*", "object|enc*", "?et", "nosuch*"]:
        ours, theirs = pair.both("COMMAND", "LIST", "FILTERBY", "PATTERN",
                                 pat, proto=proto)
        assert sorted(set(map(_str, ours)) & names) == \
            sorted(set(map(_str, theirs)) & names), pat
        # Subcommands match by their full name, as in Redis.
        if pat in ("*|*", "CLIENT|*", "object|enc*"):
            assert ours and all(b"|" in n for n in ours), pat
    pair.same("COMMAND", "LIST", "FILTERBY", "MODULE", "nosuch",
              protos=(proto,))
    for bad in [("FILTERBY",), ("FILTERBY", "ACLCAT"),
                ("FILTERBY", "NOSUCH", "x"), ("FILTERBY", "ACLCAT", "a", "b"),
                ("NOSUCH", "ACLCAT", "read")]:
        pair.same("COMMAND", "LIST", *bad, exact=True, protos=(proto,))


def test_list_names_subcommands(pair):
    ours, theirs = pair.both("COMMAND", "LIST")
    ours = set(map(_str, ours))
    assert "client|kill" in ours and "object|encoding" in ours
    assert ours & set(map(_str, theirs)) >= {"client|kill", "config|get"}


def test_count_unchanged(pair):
    """COMMAND COUNT counts the top-level commands only."""
    c = pair.ours.raw()
    try:
        n = c.command("COMMAND", "COUNT")
        assert n == len(c.command("COMMAND"))
        assert n < len(c.command("COMMAND", "LIST"))
    finally:
        c.close()


# The CF family as filed here, derived from RedisBloom (src/rebloom.c's
# registrations and cmd_info/cf_info.c's key specs), completed by Redis's
# implicit rule on our flags (reads are readonly fast, CF.RESERVE,
# CF.INSERT(NX), CF.LOADCHUNK and CF.SCANDUMP are not fast), plus @cuckoo.
CF_EXPECTED = {
    "cf.reserve": (["@write", "@slow", "@cuckoo"], ["RW", "insert"]),
    "cf.add": (["@write", "@fast", "@cuckoo"], ["RW", "insert"]),
    "cf.addnx": (["@write", "@fast", "@cuckoo"], ["RW", "insert"]),
    "cf.insert": (["@write", "@slow", "@cuckoo"], ["RW", "insert"]),
    "cf.insertnx": (["@write", "@slow", "@cuckoo"], ["RW", "insert"]),
    "cf.exists": (["@read", "@fast", "@cuckoo"], ["RO", "access"]),
    "cf.mexists": (["@read", "@fast", "@cuckoo"], ["RO", "access"]),
    "cf.del": (["@write", "@fast", "@cuckoo"], ["RW", "delete"]),
    "cf.count": (["@read", "@fast", "@cuckoo"], ["RO", "access"]),
    "cf.info": (["@read", "@fast", "@cuckoo"], ["RO", "access"]),
    "cf.scandump": (["@read", "@slow", "@cuckoo"], ["RO", "access"]),
    "cf.loadchunk": (["@write", "@slow", "@cuckoo"], ["RW", "update"]),
    "cf.compact": (["@write", "@slow", "@cuckoo"], ["RW", "update"]),
    "cf.debug": (["@read", "@fast", "@cuckoo"], ["RO", "access"]),
}


@pytest.mark.parametrize("proto", PROTOS)
def test_cf_categories_and_key_specs(pair, proto):
    c = pair.ours.raw()
    try:
        if proto == 3:
            c.command("HELLO", "3")
        names = sorted(CF_EXPECTED)
        info = c.command("COMMAND", "INFO", *names)
        for name, e in zip(names, info):
            cats, flags = CF_EXPECTED[name]
            assert e[6] == cats, name
            assert (e[3], e[4], e[5]) == (1, 1, 1), name
            assert len(e[8]) == 1, name
            spec = e[8][0]
            if not isinstance(spec, Map):
                spec = dict(zip(spec[0::2], spec[1::2]))
            assert spec[b"flags"] == flags, name
            bs = spec[b"begin_search"]
            bs = bs if isinstance(bs, dict) else dict(zip(bs[0::2], bs[1::2]))
            spec_bs = bs[b"spec"]
            spec_bs = spec_bs if isinstance(spec_bs, dict) else \
                dict(zip(spec_bs[0::2], spec_bs[1::2]))
            assert spec_bs[b"index"] == 1
        cuckoo = c.command("COMMAND", "LIST", "FILTERBY", "ACLCAT", "cuckoo")
        assert sorted(map(_str, cuckoo)) == names
        # GETKEYSANDFLAGS names the access of each key.
        assert c.command("COMMAND", "GETKEYSANDFLAGS", "CF.ADD", "k",
                         "v") == [[b"k", ["RW", "insert"]]]
        assert c.command("COMMAND", "GETKEYSANDFLAGS", "CF.MEXISTS", "k",
                         "a", "b") == [[b"k", ["RO", "access"]]]
    finally:
        c.close()


@pytest.mark.parametrize("proto", PROTOS)
def test_no_multi_commands_refused_in_a_transaction(pair, proto):
    """The no_multi flag COMMAND INFO shows is enforced: SAVE and SHUTDOWN
    are refused when queued, and EXEC then aborts."""
    pair.script([("MULTI",), ("SAVE",), ("SHUTDOWN", "NOSAVE"), ("PING",),
                 ("EXEC",), ("PING",)], exact=True, proto=proto)


def test_getkeys_docs(pair):
    pair.same("COMMAND", "DOCS", "command|getkeys", "command|getkeysandflags",
              exact=True)
    pair.same("COMMAND", "INFO", "command|getkeys", "command|getkeysandflags",
              exact=True)
