"""Differential tests of ACL users: the same ACL SETUSER sequences, AUTH and
HELLO attempts, and commands run as restricted users, sent to cuckood and
to redis-server (with the module), replies compared word for word in RESP2
and RESP3.

Commands whose categories or key specs (COMMAND INFO) are not yet those
of redis-server are skipped in the permission table: what a category or a
%R~/%W~ pattern allows follows from them, and the command table carries
them (another change fills them in)."""

import pytest

from support.diff import only_cuckood, pair_fixture, same_reply
from support.resp import RawConn, RespError

pytestmark = only_cuckood

pair = pair_fixture("module")


def _reset(pair):
    """Every user but default gone, default as it starts, log empty."""
    for side in pair.both("ACL", "USERS"):
        assert isinstance(side, list)
    ours, theirs = pair.both("ACL", "USERS")
    for name in set(ours) | set(theirs):
        if name != b"default":
            pair.both("ACL", "DELUSER", name)
    pair.same("ACL", "SETUSER", "default", "reset", "on", "nopass", "~*",
              "&*", "+@all", exact=True, protos=(2,))
    pair.both("ACL", "LOG", "RESET")


@pytest.fixture
def fresh(pair):
    _reset(pair)
    yield pair
    _reset(pair)


def _user_line(pair, name):
    """The user's ACL LIST line on both sides."""
    ours, theirs = pair.both("ACL", "LIST")
    pick = lambda lines: [l for l in lines
                          if l.split(b" ")[1] == name.encode()]
    return pick(ours), pick(theirs)


# Every rule of the grammar, alone or in the sequences users write. The
# single commands named are ones both servers have.
GOOD = [
    ("on",), ("off",), ("on", ">secret"), ("on", ">a", ">b", "<a"),
    ("#" + "a" * 64,), ("#" + "0123456789abcdef" * 4, "!" + "0123456789abcdef" * 4),
    ("nopass",), (">x", "nopass"), ("nopass", "resetpass"), (">x", "resetpass"),
    ("~seen:*",), ("~a", "~b", "~a"), ("%R~r*",), ("%W~w*",), ("%RW~rw*",),
    ("%R~k", "%W~k"), ("%WR~x",), ("allkeys",), ("~*",), ("~a", "resetkeys"),
    ("~a", "allkeys"), ("allkeys", "resetkeys", "~b"),
    ("&chan",), ("&a", "&b"), ("allchannels",), ("&*",), ("&a", "resetchannels"),
    ("+@all",), ("allcommands",), ("-@all",), ("nocommands",),
    ("+@read",), ("-@all", "+@read"), ("+@all", "-@dangerous"),
    ("+@all", "-@admin"), ("-@all", "+@write"), ("+@all", "-flushall"),
    ("-@all", "+ping"), ("-@all", "+config|get"), ("+@all", "-config|set"),
    ("-@all", "+client"), ("+@all", "-client"), ("-@all", "+select|0"),
    ("-@all", "+@fast"), ("-@all", "+@slow"), ("+@all", "-@keyspace"),
    ("-@all", "+@connection"), ("-@all", "+@transaction"),
    ("reset",), ("on", ">p", "~k", "+@all", "reset"),
    ("sanitize-payload",), ("skip-sanitize-payload",),
    ("skip-sanitize-payload", "sanitize-payload"),
    ("on", "nopass", "~app:*", "&*", "-@all", "+@read", "+ping"),
    ("(~a* +ping)",), ("(~a*", "+ping)"), ("(%R~r* +@read)", "(%W~w* +del)"),
    ("on", "(~x allchannels +@all)", "clearselectors"),
    ("()",), ("", "on"),
]


def _need_same_categories(pair, rules):
    """Skips unless each category a rule names holds the same commands on
    both servers, among those both have: how a user is described follows
    from them, and the command table carries them."""
    ours_conn, theirs_conn = pair._conn(2)
    ours_names = {c[0] for c in ours_conn.command("COMMAND")}
    for rule in rules:
        rule = rule.rstrip(")")
        if "@" not in rule or rule.endswith("@all"):
            continue
        cat = rule.split("@", 1)[1]
        a = set(ours_conn.command("ACL", "CAT", cat))
        b = set(theirs_conn.command("ACL", "CAT", cat))
        a = {n for n in a if b"|" not in n and not n.startswith(b"cf.")}
        b = {n for n in b if b"|" not in n and n in ours_names}
        if a != b:
            pytest.skip("@%s differs until the command table has Redis's "
                        "categories: %r" % (cat, sorted(a ^ b)[:5]))


@pytest.mark.parametrize("rules", GOOD, ids=lambda r: " ".join(r) or "empty")
def test_setuser_good_rules_same_user(fresh, rules):
    _need_same_categories(fresh, rules)
    fresh.same("ACL", "SETUSER", "u1", *rules, exact=True, protos=(2,))
    fresh.same("ACL", "GETUSER", "u1", exact=True)
    ours, theirs = _user_line(fresh, "u1")
    assert ours == theirs


def test_setuser_sequence_accumulates(fresh):
    steps = [("on", ">one"), ("~k1",), ("+@read",), (">two", "<one"),
             ("%R~k2",), ("-@read", "+ping"), ("off",), ("(~z +ping)",),
             ("resetpass", "nopass")]
    for rules in steps:
        fresh.same("ACL", "SETUSER", "seq", *rules, exact=True, protos=(2,))
        fresh.same("ACL", "GETUSER", "seq", exact=True)


# Malformed rules: each answers Redis's error naming the rule, and the user
# is left as it was.
BAD = [
    "nosuchrule", "+nosuchcommand", "-nosuchcommand", "+@nosuchcategory",
    "-@nosuchcategory", "+", "-", "+@", "-@", "~a b", "%", "%~x", "%X~x",
    "%RR~x", "%WW~x", "%R", "%RWX~x", "&a b", "#abc", "#" + "A" * 64,
    "#" + "g" * 64, "#" + "a" * 63, "#" + "a" * 65, "!abc", "!" + "a" * 64,
    "<notthere", "+config|get|x", "+config|nosuch", "+config|", "-config|nosuch",
    "+get|x|y", "(~a nosuch)", "(+nosuchcmd)", "(on)", "(>pass)", "(reset)",
    "(nopass)", "(~a", "~a)", "ON!", "offf", "allkeyss", "resetkey",
    "allchannel", "+@all!", "@read", "read", "*", "x~y", "nopass2",
]


def test_fifty_bad_rules():
    assert len(BAD) >= 50


@pytest.mark.parametrize("rule", BAD)
def test_setuser_bad_rule_same_error_and_no_change(fresh, rule):
    fresh.same("ACL", "SETUSER", "bad", "on", ">keep", "~k", exact=True,
               protos=(2,))
    fresh.same("ACL", "SETUSER", "bad", "+ping", rule, exact=True)
    fresh.same("ACL", "GETUSER", "bad", exact=True)


BAD_AFTER = [
    ("allkeys", "~x"), ("~*", "%R~x"), ("allchannels", "&x"), ("&*", "&y"),
    ("(~a", "+ping"), ("on", "(~a"), ("+select|0|1",),
    ("+config|get|x",),
]


@pytest.mark.parametrize("rules", BAD_AFTER, ids=" ".join)
def test_setuser_bad_sequences(fresh, rules):
    fresh.same("ACL", "SETUSER", "seqbad", *rules, exact=True)
    fresh.same("ACL", "GETUSER", "seqbad", exact=True)


def test_bad_username(fresh):
    fresh.same("ACL", "SETUSER", "a b", "on", exact=True)
    fresh.same("ACL", "SETUSER", "a\x00b", "on", exact=True)
    fresh.same("ACL", "GETUSER", "a b", exact=True)


def test_users_deluser_whoami(fresh):
    fresh.same("ACL", "SETUSER", "zed", exact=True, protos=(2,))
    fresh.same("ACL", "SETUSER", "amy", exact=True, protos=(2,))
    fresh.same("ACL", "USERS", exact=True)
    fresh.same("ACL", "WHOAMI", exact=True)
    fresh.same("ACL", "DELUSER", "default", exact=True)
    fresh.same("ACL", "DELUSER", "amy", "default", exact=True)
    fresh.same("ACL", "DELUSER", "amy", "nobody", exact=True, protos=(2,))
    fresh.same("ACL", "USERS", exact=True)
    fresh.same("ACL", "GETUSER", "amy", exact=True)
    fresh.same("ACL", "LIST", exact=True)


ERRORS = [
    ("ACL",), ("ACL", "NOSUCH"), ("ACL", "GETUSER"), ("ACL", "GETUSER", "a", "b"),
    ("ACL", "SETUSER"), ("ACL", "DELUSER"), ("ACL", "LIST", "x"),
    ("ACL", "USERS", "x"), ("ACL", "WHOAMI", "x"), ("ACL", "CAT", "a", "b"),
    ("ACL", "CAT", "nosuch"), ("ACL", "GENPASS", "0"), ("ACL", "GENPASS", "-1"),
    ("ACL", "GENPASS", "4097"), ("ACL", "GENPASS", "x"),
    ("ACL", "GENPASS", "1", "2"), ("ACL", "LOG", "x"), ("ACL", "LOG", "1", "2"),
    ("ACL", "DRYRUN", "default"), ("ACL", "DRYRUN", "default", "nosuch"),
    ("ACL", "DRYRUN", "nobody", "ping"), ("ACL", "DRYRUN", "default", "del"),
    ("ACL", "DRYRUN", "default", "config", "nosuch"),
    ("ACL", "DRYRUN", "default", "config"), ("ACL", "LOAD"), ("ACL", "SAVE"),
    ("ACL", "LOAD", "x"), ("ACL", "HELP", "x"),
]


@pytest.mark.parametrize("cmd", ERRORS, ids=lambda c: " ".join(c[1:]) or "none")
def test_acl_errors(fresh, cmd):
    fresh.same(*cmd, exact=True)


def test_help_and_cat(fresh):
    fresh.same("ACL", "HELP", exact=True)
    ours, theirs = fresh.both("ACL", "CAT")
    # @cuckoo is ours, as current Redis files RedisBloom's commands.
    assert [c for c in ours if c != b"cuckoo"] == theirs


def test_genpass_lengths(fresh):
    for bits, chars in ((None, 64), ("1", 1), ("5", 2), ("128", 32),
                        ("4096", 1024)):
        args = ("ACL", "GENPASS") if bits is None else ("ACL", "GENPASS", bits)
        ours, theirs = fresh.both(*args)
        assert len(ours) == len(theirs) == chars
        assert all(c in b"0123456789abcdef" for c in ours)
    a, _ = fresh.both("ACL", "GENPASS")
    b, _ = fresh.both("ACL", "GENPASS")
    assert a != b


def _as_user(pair, user, password, proto):
    """A fresh connection pair authenticated as user (HELLO 3 for RESP3)."""
    out = []
    for srv in (pair.ours, pair.theirs):
        c = RawConn(srv.port)
        if proto == 3:
            r = c.command("HELLO", "3", "AUTH", user, password)
        else:
            r = c.command("AUTH", user, password)
        assert not isinstance(r, RespError), r
        out.append(c)
    return out


AUTH_CASES = [
    ("AUTH", "nobody", "x"), ("AUTH", "alice", "wrong"), ("AUTH", "alice", "pw"),
    ("AUTH", "off1", "pw"), ("AUTH", "nopw", "anything"), ("AUTH", "pw"),
    ("AUTH", "default", "x"), ("AUTH",), ("AUTH", "a", "b", "c"),
    ("HELLO", "2", "AUTH", "alice", "pw"), ("HELLO", "3", "AUTH", "alice", "no"),
    ("HELLO", "3", "AUTH", "nobody", "pw"), ("HELLO", "2", "AUTH", "alice"),
    ("HELLO", "2", "AUTH", "off1", "pw"),
]


@pytest.mark.parametrize("cmd", AUTH_CASES, ids=" ".join)
def test_auth_outcomes(fresh, cmd):
    fresh.same("ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*",
               protos=(2,))
    fresh.same("ACL", "SETUSER", "off1", "off", ">pw", "+@all", protos=(2,))
    fresh.same("ACL", "SETUSER", "nopw", "on", "nopass", "+@all", protos=(2,))
    for proto in (2, 3):
        ours, theirs = fresh.conns(proto)
        try:
            a, b = ours.command(*cmd), theirs.command(*cmd)
            if cmd[0] == "HELLO" and not isinstance(a, RespError):
                # The server's own fields differ; who answered is the same.
                assert not isinstance(b, RespError), b
                a = ours.command("ACL", "WHOAMI")
                b = theirs.command("ACL", "WHOAMI")
            assert same_reply(a, b, exact=True), (proto, cmd, a, b)
            a, b = ours.command("ACL", "WHOAMI"), theirs.command("ACL", "WHOAMI")
            assert same_reply(a, b, exact=True), (proto, cmd, a, b)
        finally:
            ours.close()
            theirs.close()


def test_auth_with_requirepass_default(fresh):
    fresh.same("CONFIG", "SET", "requirepass", "rp", exact=True, protos=(2,))
    try:
        for proto in (2,):
            ours, theirs = fresh.conns(proto)
            for cmd in (("PING",), ("AUTH", "bad"), ("AUTH", "rp"), ("PING",),
                        ("ACL", "WHOAMI")):
                a, b = ours.command(*cmd), theirs.command(*cmd)
                assert same_reply(a, b, exact=True), (cmd, a, b)
            ours.close()
            theirs.close()
        fresh.same("ACL", "GETUSER", "default", exact=True)
    finally:
        fresh.same("CONFIG", "SET", "requirepass", "", protos=(2,))


def _info(conn, cmd):
    r = conn.command("COMMAND", "INFO", cmd)
    return r[0] if r else None


def _need_same_table(pair, names, rules=("+@all", "%")):
    """Skips unless both servers file each command alike where the rules
    depend on it (categories other than @all; key-spec flags for %R~ and
    %W~ patterns): the permission follows from them."""
    cats = any("@" in r and not r.endswith("@all") for r in rules)
    keyflags = any("%" in r for r in rules)
    for name in names:
        a, b = _info(pair._conn(2)[0], name), _info(pair._conn(2)[1], name)
        if a is None or b is None:
            pytest.skip("%s: not on both servers" % name)
        if cats and set(a[6]) != set(b[6]):
            pytest.skip("%s: categories differ until the command table "
                        "has Redis's (%r vs %r)" % (name, a[6], b[6]))
        flags = lambda info: [spec[1] for spec in info[8]] if len(info) > 8 else []
        if keyflags and flags(a) != flags(b):
            pytest.skip("%s: key specs differ until the command table has "
                        "Redis's" % name)


USERS = {
    "allk": ("~*", "+@all"),
    "pat": ("~foo*", "+@all"),
    "noping": ("~*", "+@all", "-ping"),
    "only_ping": ("allkeys", "-@all", "+ping"),
    "readers": ("~*", "-@all", "+@read"),
    "writers": ("~foo*", "-@all", "+@write"),
    "cfgget": ("-@all", "+config|get"),
    "ro": ("%R~foo*", "+@all"),
    "wo": ("%W~foo*", "+@all"),
    "sels": ("-@all", "(~a* +exists)", "(~b* +del)"),
    "first": ("-@all", "+select|0"),
    "nokeys": ("+@all",),
}

CASES = [
    ("allk", ("DEL", "x")), ("pat", ("DEL", "foo1")), ("pat", ("DEL", "bar")),
    ("pat", ("DEL", "foo1", "bar")), ("pat", ("EXISTS", "foo", "foo2")),
    ("pat", ("KEYS", "*")), ("pat", ("RENAME", "foo1", "bar")),
    ("pat", ("COPY", "foo1", "foo2")), ("pat", ("COPY", "foo1", "bar")),
    ("noping", ("PING",)), ("noping", ("ECHO", "x")),
    ("only_ping", ("PING",)), ("only_ping", ("DEL", "x")),
    ("only_ping", ("CONFIG", "GET", "port")), ("only_ping", ("AUTH", "a", "b")),
    ("readers", ("EXISTS", "k")), ("readers", ("DEL", "k")),
    ("readers", ("TYPE", "k")), ("writers", ("DEL", "foo")),
    ("writers", ("DEL", "bar")), ("writers", ("EXISTS", "foo")),
    ("cfgget", ("CONFIG", "GET", "port")), ("cfgget", ("CONFIG", "SET", "port", "1")),
    ("cfgget", ("CONFIG", "RESETSTAT")), ("ro", ("EXISTS", "foo1")),
    ("ro", ("DEL", "foo1")), ("ro", ("TYPE", "foo1")), ("wo", ("DEL", "foo1")),
    ("wo", ("EXISTS", "foo1")), ("wo", ("TYPE", "foo1")),
    ("ro", ("RENAME", "foo1", "foo2")), ("wo", ("RENAME", "foo1", "foo2")),
    ("sels", ("EXISTS", "a1")), ("sels", ("EXISTS", "b1")),
    ("sels", ("DEL", "b1")), ("sels", ("DEL", "a1")), ("sels", ("DEL", "a1", "b1")),
    ("first", ("SELECT", "0")), ("first", ("SELECT", "1")),
    ("nokeys", ("DEL", "k")), ("nokeys", ("PING",)), ("nokeys", ("KEYS", "*")),
]


@pytest.mark.parametrize("user,cmd", CASES,
                         ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_noperm_table(fresh, user, cmd):
    _need_same_table(fresh, [cmd[0].lower()], USERS[user])
    fresh.same("ACL", "SETUSER", user, "reset", "on", ">pw", *USERS[user],
               exact=True, protos=(2,))
    for proto in (2, 3):
        ours, theirs = _as_user(fresh, user, "pw", proto)
        try:
            a, b = ours.command(*cmd), theirs.command(*cmd)
            denied = isinstance(b, RespError) and b.text.startswith("NOPERM")
            if denied or isinstance(a, RespError):
                assert same_reply(a, b, exact=True), (proto, a, b)
            else:
                assert not isinstance(a, RespError), (proto, a, b)
        finally:
            ours.close()
            theirs.close()
    fresh.same("ACL", "DRYRUN", user, *cmd, exact=True, protos=(2,))


def test_noperm_in_transaction(fresh):
    _need_same_table(fresh, ["del", "exists"], ("+exists",))
    fresh.same("ACL", "SETUSER", "tx", "on", ">pw", "~*", "-@all", "+multi",
               "+exec", "+exists", "+discard", protos=(2,))
    for proto in (2, 3):
        ours, theirs = _as_user(fresh, "tx", "pw", proto)
        try:
            for cmd in (("MULTI",), ("EXISTS", "a"), ("DEL", "a"), ("EXEC",)):
                a, b = ours.command(*cmd), theirs.command(*cmd)
                assert same_reply(a, b, exact=True), (proto, cmd, a, b)
        finally:
            ours.close()
            theirs.close()


def test_permissions_change_between_queue_and_exec(fresh):
    _need_same_table(fresh, ["del"], ("-del",))
    fresh.same("ACL", "SETUSER", "tx2", "on", ">pw", "~*", "+@all",
               protos=(2,))
    ours, theirs = _as_user(fresh, "tx2", "pw", 2)
    try:
        for cmd in (("MULTI",), ("DEL", "a"), ("PING",)):
            a, b = ours.command(*cmd), theirs.command(*cmd)
            assert same_reply(a, b, exact=True), (cmd, a, b)
        fresh.same("ACL", "SETUSER", "tx2", "-del", protos=(2,))
        a, b = ours.command("EXEC"), theirs.command("EXEC")
        assert same_reply(a, b, exact=True), (a, b)
    finally:
        ours.close()
        theirs.close()


def test_acl_log_entries(fresh):
    _need_same_table(fresh, ["del"], ("~a*",))
    fresh.same("ACL", "SETUSER", "lg", "on", ">pw", "~a*", "+@all",
               protos=(2,))
    ours, theirs = _as_user(fresh, "lg", "pw", 2)
    try:
        for cmd in (("DEL", "b"), ("DEL", "b"), ("ACL", "WHOAMI")):
            ours.command(*cmd)
            theirs.command(*cmd)
        for c in (ours, theirs):
            c.command("AUTH", "lg", "wrong")
    finally:
        ours.close()
        theirs.close()
    for proto in (2, 3):
        a, b = fresh.both("ACL", "LOG", proto=proto)
        assert len(a) == len(b) == 2
        for ea, eb in zip(a, b):
            da = dict(ea) if isinstance(ea, dict) else dict(zip(ea[::2], ea[1::2]))
            db = dict(eb) if isinstance(eb, dict) else dict(zip(eb[::2], eb[1::2]))
            assert list(da) == list(db)
            for k in (b"count", b"reason", b"context", b"object", b"username"):
                assert da[k] == db[k], (k, da[k], db[k])
    fresh.same("ACL", "LOG", "RESET", exact=True)
    fresh.same("ACL", "LOG", exact=True)


CONFIGS = [
    ("CONFIG", "GET", "aclfile"), ("CONFIG", "GET", "acllog-max-len"),
    ("CONFIG", "SET", "acllog-max-len", "5"),
    ("CONFIG", "GET", "acl-pubsub-default"),
    ("CONFIG", "SET", "acl-pubsub-default", "allchannels"),
    ("ACL", "SETUSER", "pubsub-user"), ("ACL", "GETUSER", "pubsub-user"),
    ("CONFIG", "SET", "acl-pubsub-default", "nosuch"),
    ("CONFIG", "SET", "acl-pubsub-default", "resetchannels"),
    ("CONFIG", "SET", "acllog-max-len", "-1"),
    ("CONFIG", "SET", "acllog-max-len", "x"),
    ("CONFIG", "SET", "aclfile", "/tmp/x.acl"),
    ("CONFIG", "SET", "acllog-max-len", "128"),
]


@pytest.mark.parametrize("cmd", CONFIGS, ids=lambda c: " ".join(c[1:]))
def test_acl_config_directives(fresh, cmd):
    fresh.same(*cmd, exact=True)


def test_acl_config_glob(fresh):
    # Redis lists a pattern's matches in its hash table's order.
    ours, theirs = fresh.both("CONFIG", "GET", "acl*")
    pairs = lambda r: dict(zip(r[::2], r[1::2]))
    assert pairs(ours) == pairs(theirs)
