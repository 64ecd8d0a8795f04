"""The module's commands under Redis's ACLs: the key specs it declares
(SetCommandInfo, Redis 7.0+) make key patterns with read/write
permissions (%R~, %W~) apply to CF keys; the ACL categories it files them
in (SetCommandACLCategories, Redis 7.2+) make +@read apply, and +@cuckoo
where it can add that category (AddACLCategory, Redis 7.4+); on a server
without them (the installed 7.0) the module says so once in the log and
the commands belong to no category. Passes on Redis 7.0 and on 7.2
(redis-server 7.2.6 first on PATH)."""

import pytest
import redis

from support.proc import Daemon

READS = [("CF.EXISTS", "f", "a"), ("CF.MEXISTS", "f", "a", "b"),
         ("CF.COUNT", "f", "a"), ("CF.INFO", "f"), ("CF.SCANDUMP", "f", "0")]
WRITES = [("CF.ADD", "f", "b"), ("CF.ADDNX", "f", "c"),
          ("CF.INSERT", "f", "ITEMS", "d"), ("CF.INSERTNX", "f", "ITEMS", "e"),
          ("CF.DEL", "f", "a"), ("CF.RESERVE", "g", "100"),
          ("CF.LOADCHUNK", "f", "1", "x")]

# The key refusal's words: Redis 7.0's, then 7.2's.
DENIED_KEY = ("NOPERM this user has no permissions to access one of the "
              "keys used as arguments", "NOPERM No permissions to access a key")


def user(r, name, *rules):
    r.execute_command("ACL", "SETUSER", name, "reset", "on", "nopass",
                      *rules)
    port = r.connection_pool.connection_kwargs["port"]
    return redis.Redis(host="127.0.0.1", port=port, username=name,
                       password="x")


def refused(c, cmd):
    """The error text c gets for cmd, or None when it ran (whatever its
    own reply)."""
    try:
        c.execute_command(*cmd)
    except redis.exceptions.NoPermissionError as e:
        return "NOPERM " + str(e)
    except redis.exceptions.ResponseError:
        return None
    return None


def version(r):
    return tuple(int(x) for x in r.info("server")["redis_version"]
                 .split(".")[:2])


def info_of(srv, *names):
    """COMMAND INFO in RESP3 through the raw client: name -> (categories,
    key specs as dicts)."""
    c = srv.raw()
    try:
        c.command("HELLO", "3")
        out = {}
        for e in c.command("COMMAND", "INFO", *names):
            out[e[0].decode()] = (list(e[6]), list(e[8]))
        return out
    finally:
        c.close()


def test_command_info_shows_the_key_specs(servers):
    s = servers()
    info = info_of(s, "cf.add", "cf.exists", "cf.mexists", "cf.del",
                   "cf.loadchunk")
    assert [k[b"flags"] for k in info["cf.add"][1]] == [["RW", "insert"]]
    assert [k[b"flags"] for k in info["cf.exists"][1]] == [["RO", "access"]]
    assert [k[b"flags"] for k in info["cf.mexists"][1]] == \
        [["RO", "access"]]
    assert [k[b"flags"] for k in info["cf.del"][1]] == [["RW", "delete"]]
    assert [k[b"flags"] for k in info["cf.loadchunk"][1]] == \
        [["RW", "update"]]
    spec = info["cf.mexists"][1][0]
    assert spec[b"begin_search"] == {b"type": b"index",
                                     b"spec": {b"index": 1}}
    assert spec[b"find_keys"] == {
        b"type": b"range",
        b"spec": {b"lastkey": 0, b"keystep": 1, b"limit": 0}}
    # One key however many items: the server finds it by the spec.
    c = s.raw()
    assert c.command("COMMAND", "GETKEYS", "CF.MEXISTS", "k", "a", "b",
                     "c") == [b"k"]
    c.close()


def test_specs_are_the_daemons(servers):
    """Both hosts declare the command layer's one table."""
    m = servers().raw()
    d = Daemon().start()
    try:
        c = d.raw()
        for call in [("CF.ADD", "k", "a"), ("CF.EXISTS", "k", "a"),
                     ("CF.MEXISTS", "k", "a", "b"), ("CF.DEL", "k", "a"),
                     ("CF.SCANDUMP", "k", "0"), ("CF.RESERVE", "k", "100"),
                     ("CF.INSERTNX", "k", "ITEMS", "a"),
                     ("CF.LOADCHUNK", "k", "1", "x"), ("CF.INFO", "k")]:
            ours = c.command("COMMAND", "GETKEYSANDFLAGS", *call)
            assert ours == m.command("COMMAND", "GETKEYSANDFLAGS", *call)
            assert ours[0][0] == b"k"
        c.close()
    finally:
        m.close()
        d.cleanup()


def split_user(servers, pattern, runs, refuses):
    """A user with pattern and +@all over a filter f holding "a": each of
    runs runs, each of refuses gets the key refusal. The admin client."""
    r = servers().client()
    r.execute_command("CF.ADD", "f", "a")
    u = user(r, "u", pattern, "+@all")
    for cmd in runs:
        assert refused(u, cmd) is None, cmd
    for cmd in refuses:
        assert refused(u, cmd) in DENIED_KEY, cmd
    return r


def test_read_key_pattern_reads_not_writes(servers):
    r = split_user(servers, "%R~*", READS, WRITES)
    # The filter is unchanged by the refused writes.
    assert r.execute_command("CF.EXISTS", "f", "b") == 0
    assert r.execute_command("CF.EXISTS", "f", "a") == 1


def test_write_key_pattern_writes_not_reads(servers):
    r = split_user(servers, "%W~*", [("CF.ADD", "f", "b"),
                                     ("CF.DEL", "f", "b"),
                                     ("CF.INSERT", "f", "ITEMS", "z")], READS)
    assert r.execute_command("CF.EXISTS", "f", "z") == 1


def test_patterns_by_key_name(servers):
    """The sidecar's split: the application reads seen:*, the loader
    writes load:*."""
    r = servers().client()
    r.execute_command("CF.ADD", "seen:1", "a")
    r.execute_command("CF.ADD", "load:1", "a")
    app = user(r, "app", "%R~seen:*", "+@all")
    assert app.execute_command("CF.EXISTS", "seen:1", "a") == 1
    assert refused(app, ("CF.EXISTS", "load:1", "a")) in DENIED_KEY
    assert refused(app, ("CF.ADD", "seen:1", "b")) in DENIED_KEY
    loader = user(r, "loader", "%RW~load:*", "+@all")
    assert loader.execute_command("CF.ADD", "load:1", "b") == 1
    assert refused(loader, ("CF.ADD", "seen:1", "b")) in DENIED_KEY


def test_categories_or_the_clean_degrade(servers):
    s = servers()
    r = s.client()
    info = info_of(s, "cf.exists", "cf.add", "cf.reserve")
    log = s.log_text()
    if version(r) >= (7, 2):
        # SetCommandACLCategories: filed as the daemon files them; @cuckoo
        # from 7.4 (AddACLCategory), said once at load before that.
        cuckoo = ["@cuckoo"] if version(r) >= (7, 4) else []
        assert log.count("cannot add ACL categories") == (0 if cuckoo else 1)
        assert "cannot file module commands" not in log
        assert info["cf.exists"][0] == ["@read", "@fast"] + cuckoo
        assert info["cf.add"][0] == ["@write", "@fast"] + cuckoo
        assert info["cf.reserve"][0] == ["@write", "@slow"] + cuckoo
        reader = user(r, "reader", "~*", "+@read")
        r.execute_command("CF.ADD", "f", "a")
        assert reader.execute_command("CF.EXISTS", "f", "a") == 1
        assert refused(reader, ("CF.ADD", "f", "b")).startswith("NOPERM")
        assert refused(reader, ("CF.ADD", "f", "b")) not in DENIED_KEY
        if cuckoo:
            every = user(r, "cuckoo", "~*", "+@cuckoo")
            assert every.execute_command("CF.ADD", "f", "b") == 1
            assert refused(every, ("GET", "f")).startswith("NOPERM")
        return
    # Redis 7.0: no categories for module commands, said once at load.
    for name in ("cf.exists", "cf.add", "cf.reserve"):
        assert info[name][0] == []
    assert log.count("cannot file module commands in ACL categories") == 1
    reader = user(r, "reader", "~*", "+@read")
    r.execute_command("CF.ADD", "f", "a")
    assert refused(reader, ("CF.EXISTS", "f", "a")).startswith(
        "NOPERM this user has no permissions to run the 'cf.exists' command")
    # By name, as the log says.
    named = user(r, "named", "%R~*", "+cf.exists")
    assert named.execute_command("CF.EXISTS", "f", "a") == 1
