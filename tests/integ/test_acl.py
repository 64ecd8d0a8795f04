"""ACL users on cuckood itself: what users and their connections see
(permission changes at the next command, DELUSER and ACL LOAD closing
connections, CLIENT LIST/KILL USER), users from the configuration and from
an aclfile (start-up refusals, ACL LOAD, ACL SAVE), acllog-max-len, and
that no password reaches the log, SLOWLOG, MONITOR, CLIENT LIST or ACL
LOG."""

import os
import re
import stat

import pytest

from support.proc import use_module, use_redis_server
from support.resp import RawConn, RespError

pytestmark = pytest.mark.skipif(use_redis_server() or use_module(),
                                reason="cuckood's own files and log")

SECRET = "Sup3r-Secret-Passw0rd"


def _conn(d, user=None, password=None):
    c = RawConn(d.port)
    if user is not None:
        assert c.command("AUTH", user, password) == "OK"
    return c


def test_permission_changes_apply_at_next_command(daemon):
    d = daemon()
    admin = _conn(d)
    assert admin.command("ACL", "SETUSER", "app", "on", ">pw", "~seen:*",
                         "+@read") == "OK"
    app = _conn(d, "app", "pw")
    assert app.command("CF.EXISTS", "seen:1", "x") == 0
    err = app.command("CF.ADD", "seen:1", "x")
    assert isinstance(err, RespError)
    assert err.text == ("NOPERM this user has no permissions to run the "
                        "'cf.add' command")
    assert app.command("CF.EXISTS", "other", "x").text == (
        "NOPERM this user has no permissions to access one of the keys "
        "used as arguments")
    assert admin.command("ACL", "SETUSER", "app", "+cf.add") == "OK"
    assert app.command("CF.ADD", "seen:1", "x") == 1
    # A new password: the connection stays, the old one no longer works.
    assert admin.command("ACL", "SETUSER", "app", "resetpass", ">new") == "OK"
    assert app.command("CF.EXISTS", "seen:1", "x") == 1
    other = RawConn(d.port)
    assert other.command("AUTH", "app", "pw").text.startswith("WRONGPASS")
    assert other.command("AUTH", "app", "new") == "OK"
    # off: no new authentication, existing connections keep working.
    assert admin.command("ACL", "SETUSER", "app", "off") == "OK"
    assert app.command("CF.EXISTS", "seen:1", "x") == 1
    assert RawConn(d.port).command("AUTH", "app", "new").text.startswith(
        "WRONGPASS")
    info = admin.command("INFO", "stats").decode()
    assert int(re.search(r"acl_access_denied_cmd:(\d+)", info).group(1)) == 1
    assert int(re.search(r"acl_access_denied_key:(\d+)", info).group(1)) == 1
    assert int(re.search(r"acl_access_denied_auth:(\d+)", info).group(1)) == 2
    assert "acl_access_denied_channel:0" in info


def test_read_only_user_with_percent_r_pattern(daemon):
    d = daemon()
    admin = _conn(d)
    assert admin.command("CF.ADD", "seen:1", "a") == 1
    assert admin.command("ACL", "SETUSER", "ro", "on", ">pw", "%R~seen:*",
                         "+@all") == "OK"
    ro = _conn(d, "ro", "pw")
    assert ro.command("CF.EXISTS", "seen:1", "a") == 1
    assert ro.command("CF.MEXISTS", "seen:1", "a", "b") == [1, 0]
    for cmd in (("CF.ADD", "seen:1", "b"), ("CF.DEL", "seen:1", "a"),
                ("DEL", "seen:1")):
        r = ro.command(*cmd)
        assert isinstance(r, RespError) and r.text.startswith("NOPERM"), cmd
    assert admin.command("CF.EXISTS", "seen:1", "b") == 0


def test_client_list_kill_user_and_deluser(daemon):
    d = daemon()
    admin = _conn(d)
    assert admin.command("ACL", "SETUSER", "bob", "on", ">pw", "~*",
                         "+@all") == "OK"
    assert admin.command("ACL", "SETUSER", "eve", "on", ">pw", "~*",
                         "+@all") == "OK"
    bob1, bob2 = _conn(d, "bob", "pw"), _conn(d, "bob", "pw")
    eve = _conn(d, "eve", "pw")
    assert b"user=bob" in bob1.command("CLIENT", "INFO")
    listing = admin.command("CLIENT", "LIST").decode()
    assert listing.count("user=bob ") == 2 and listing.count("user=eve ") == 1
    assert admin.command("ACL", "WHOAMI") == b"default"
    assert bob1.command("ACL", "WHOAMI") == b"bob"
    assert admin.command("CLIENT", "KILL", "USER", "bob") == 2
    assert bob1.at_eof() and bob2.at_eof()
    assert eve.command("PING") == "PONG"
    assert admin.command("CLIENT", "KILL", "USER", "nobody").text == (
        "ERR No such user 'nobody'")
    assert admin.command("ACL", "DELUSER", "eve") == 1
    assert eve.at_eof()
    # A user deleting itself gets its reply, then the connection closes.
    assert admin.command("ACL", "SETUSER", "self", "on", ">pw", "+@all") == "OK"
    me = _conn(d, "self", "pw")
    assert me.command("ACL", "DELUSER", "self") == 1
    assert me.at_eof()
    assert admin.command("PING") == "PONG"


def test_reset_returns_to_default_user(daemon):
    d = daemon()
    admin = _conn(d)
    assert admin.command("ACL", "SETUSER", "x", "on", "nopass", "+@all") == "OK"
    c = _conn(d, "x", "any")
    assert c.command("ACL", "WHOAMI") == b"x"
    assert c.command("RESET") == "RESET"
    assert c.command("ACL", "WHOAMI") == b"default"


def test_requirepass_is_default_password(daemon):
    d = daemon(password="first")
    c = RawConn(d.port)
    assert c.command("PING").text.startswith("NOAUTH")
    assert c.command("AUTH", "default", "first") == "OK"
    assert c.command("CONFIG", "SET", "requirepass", "second") == "OK"
    # The connection stays; the old password no longer authenticates.
    assert c.command("PING") == "PONG"
    assert RawConn(d.port).command("AUTH", "first").text.startswith(
        "WRONGPASS")
    assert RawConn(d.port).command("AUTH", "second") == "OK"
    passwords = c.command("ACL", "GETUSER", "default")[3]
    assert len(passwords) == 1 and len(passwords[0]) == 64
    # ACL SETUSER default nopass: no authentication needed any more.
    assert c.command("ACL", "SETUSER", "default", "nopass") == "OK"
    assert RawConn(d.port).command("PING") == "PONG"


def test_user_lines_in_config(daemon):
    d = daemon(conf="port {port}\ndir {dir}\nbind 127.0.0.1\n"
                    "user app on >pw ~seen:* +@read\n"
                    "user loader on >lpw ~* +@all\n"
                    "user default on nopass ~* +@all\n")
    c = RawConn(d.port)
    assert c.command("ACL", "USERS") == [b"app", b"default", b"loader"]
    assert _conn(d, "loader", "lpw").command("CF.ADD", "seen:k", "a") == 1
    app = _conn(d, "app", "pw")
    assert app.command("CF.EXISTS", "seen:k", "a") == 1
    assert app.command("CF.ADD", "seen:k", "b").text.startswith("NOPERM")
    assert c.command("ACL", "LOAD").text.startswith(
        "ERR This Redis instance is not configured to use an ACL file")


def test_config_users_and_aclfile_together_refused(tmp_path):
    from support.proc import Daemon
    acl = tmp_path / "users.acl"
    acl.write_text("user a on nopass +@all\n")
    d = Daemon(conf="user b on nopass\naclfile %s\n" % acl)
    try:
        assert d.fail_to_start() == 1
        assert "users defined in redis.conf and at the same setting an " \
               "ACL file path is invalid" in d.log_text()
    finally:
        d.cleanup()


def test_bad_config_user_line_refused(tmp_path):
    from support.proc import Daemon
    d = Daemon(conf="user bad on +nosuchcommand\n")
    try:
        assert d.fail_to_start() == 1
        log = d.log_text()
        assert "Error loading ACL rules for the user named 'bad'" in log
        assert "Unknown command or category name in ACL" in log
    finally:
        d.cleanup()


def test_bad_aclfile_line_stops_startup(tmp_path):
    from support.proc import Daemon
    acl = tmp_path / "users.acl"
    acl.write_text("user ok on nopass +@all\n\nuser bad on nosuchrule\n")
    d = Daemon("--aclfile", str(acl))
    try:
        assert d.fail_to_start() == 1
        log = d.log_text()
        assert "Aborting Redis startup because of ACL errors" in log
        assert "%s:3: Syntax error." % acl in log
    finally:
        d.cleanup()


def test_missing_aclfile_stops_startup(tmp_path):
    from support.proc import Daemon
    d = Daemon("--aclfile", str(tmp_path / "missing.acl"))
    try:
        assert d.fail_to_start() == 1
        assert "Error loading ACLs, opening file" in d.log_text()
    finally:
        d.cleanup()


def test_aclfile_load_save(daemon, tmp_path):
    acl = tmp_path / "users.acl"
    acl.write_text("user app on >pw ~seen:* +@read\n"
                   "user gone on >pw +@all ~*\n")
    d = daemon("--aclfile", str(acl))
    admin = _conn(d)
    assert admin.command("CONFIG", "GET", "aclfile") == [b"aclfile",
                                                         str(acl).encode()]
    assert admin.command("ACL", "USERS") == [b"app", b"default", b"gone"]
    gone = _conn(d, "gone", "pw")
    app = _conn(d, "app", "pw")

    # A bad file changes nothing and says why.
    before = admin.command("ACL", "LIST")
    acl.write_text("user app on >pw +@all\nbogus line\nuser x on +nosuch\n")
    err = admin.command("ACL", "LOAD")
    assert isinstance(err, RespError)
    assert ("%s:2 should start with user keyword followed by the username."
            % acl) in err.text
    assert ("%s:3: Error in applying operation '+nosuch': Unknown command "
            "or category name in ACL." % acl) in err.text
    assert err.text.endswith("WARNING: ACL errors detected, no change to "
                             "the previously active ACL rules was performed")
    assert admin.command("ACL", "LIST") == before

    # A good file without "gone": its connection is closed, app's stays
    # with the new rules, default is as at start.
    acl.write_text("user app on >pw ~* +@all\n")
    assert admin.command("ACL", "LOAD") == "OK"
    assert gone.at_eof()
    assert app.command("CF.ADD", "k", "a") == 1
    assert admin.command("ACL", "USERS") == [b"app", b"default"]

    # ACL SAVE: hashes only, mode 0600, readable back.
    assert admin.command("ACL", "SETUSER", "new", "on", ">" + SECRET,
                         "~n:*", "+@read") == "OK"
    assert admin.command("ACL", "SAVE") == "OK"
    text = acl.read_text()
    assert SECRET not in text
    assert stat.S_IMODE(os.stat(acl).st_mode) == 0o600
    lines = text.splitlines()
    assert lines == [l.decode() for l in admin.command("ACL", "LIST")]
    assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f]
    assert admin.command("ACL", "DELUSER", "new") == 1
    assert admin.command("ACL", "LOAD") == "OK"
    assert _conn(d, "new", SECRET).command("CF.EXISTS", "n:1", "x") == 0


def test_acllog_max_len(daemon):
    d = daemon("--acllog-max-len", 2)
    c = RawConn(d.port)
    assert c.command("CONFIG", "GET", "acllog-max-len") == [
        b"acllog-max-len", b"2"]
    for i in range(4):
        assert c.command("AUTH", "u%d" % i, "x").text.startswith("WRONGPASS")
    log = c.command("ACL", "LOG")
    assert [e[9] for e in log] == [b"u3", b"u2"]
    assert c.command("CONFIG", "SET", "acllog-max-len", 1) == "OK"
    assert len(c.command("ACL", "LOG")) == 1
    assert c.command("ACL", "LOG", "RESET") == "OK"
    assert c.command("ACL", "LOG") == []


def test_no_password_anywhere(daemon):
    d = daemon("--slowlog-log-slower-than", 0, "--loglevel", "debug")
    admin = _conn(d)
    mon = RawConn(d.port)
    assert mon.command("MONITOR") == "OK"
    c = RawConn(d.port)
    cmds = [
        ("ACL", "SETUSER", "sec", "on", ">" + SECRET, "~*", "+@all"),
        ("AUTH", "sec", SECRET),
        ("HELLO", "2", "AUTH", "sec", SECRET),
        ("AUTH", "sec", SECRET + "x"),
        ("AUTH", "nobody", SECRET),
        ("ACL", "SETUSER", "sec", "<" + SECRET, ">" + SECRET + "2"),
        ("CONFIG", "SET", "requirepass", SECRET),
        ("AUTH", SECRET),
        ("CONFIG", "SET", "requirepass", ""),
        ("ACL", "SETUSER", "bad", ">" + SECRET, "nosuchrule"),
        ("PING", "end-of-secrets"),
    ]
    for cmd in cmds:
        c.command(*cmd)
    seen = []
    while True:
        line = mon.read()
        seen.append(line)
        if b"end-of-secrets" in line.encode() if isinstance(line, str) \
                else b"end-of-secrets" in line:
            break
    monitor_text = " ".join(str(x) for x in seen)
    assert "(redacted)" in monitor_text
    slowlog = repr(admin.command("SLOWLOG", "GET", -1))
    acllog = repr(admin.command("ACL", "LOG"))
    clients = repr(admin.command("CLIENT", "LIST"))
    d.stop()
    log = d.log_text()
    for where, text in (("MONITOR", monitor_text), ("SLOWLOG", slowlog),
                        ("ACL LOG", acllog), ("CLIENT LIST", clients),
                        ("log", log)):
        assert SECRET not in text, where
    assert "sec" in acllog and "auth" in acllog.lower()


def test_redis_py_username(daemon):
    import redis
    d = daemon()
    admin = d.client()
    assert admin.acl_setuser("app", enabled=True, passwords=["+app-pw"],
                             keys=["seen:*"], commands=["+@read"])
    assert admin.acl_setuser("loader", enabled=True, passwords=["+load-pw"],
                             keys=["*"], commands=["+@all"])
    loader = d.client(username="loader", password="load-pw")
    app = d.client(username="app", password="app-pw")
    assert loader.acl_whoami() == "loader"
    assert loader.cf().add("seen:py", "x") == 1
    assert app.cf().exists("seen:py", "x") == 1
    with pytest.raises(redis.exceptions.NoPermissionError):
        app.cf().add("seen:py", "y")
    with pytest.raises(redis.exceptions.NoPermissionError):
        app.flushall()
    bad = d.client(username="app", password="nope")
    with pytest.raises(redis.exceptions.ResponseError, match="WRONGPASS"):
        bad.ping()
    user = admin.acl_getuser("app")
    assert user["enabled"] and user["keys"] == ["~seen:*"]
    assert "app" in admin.acl_users()


def test_redis_cli_user_pass(daemon):
    import shutil
    import subprocess
    cli = shutil.which("redis-cli")
    assert cli is not None, "redis-cli not installed (redis-tools)"
    d = daemon()
    admin = RawConn(d.port)
    assert admin.command("ACL", "SETUSER", "app", "on", ">app-pw", "~seen:*",
                         "+@read") == "OK"
    assert admin.command("CF.ADD", "seen:cli", "x") == 1

    def run(*args):
        p = subprocess.run([cli, "-h", "127.0.0.1", "-p", str(d.port),
                            "--no-auth-warning"] + list(args),
                           capture_output=True, text=True, timeout=60)
        return (p.stdout + p.stderr).strip()

    assert run("--user", "app", "--pass", "app-pw", "CF.EXISTS", "seen:cli",
               "x") == "1"
    assert run("--user", "app", "--pass", "app-pw", "CF.ADD", "seen:cli",
               "y").startswith("NOPERM")
    # redis-cli reports the failed AUTH and goes on as the default user.
    out = run("--user", "app", "--pass", "bad", "ACL", "WHOAMI")
    assert "WRONGPASS" in out and "default" in out.splitlines()


@pytest.mark.parametrize("key,allowed", [
    ("apple", True), ("ab1", True), ("b", True), ("bb", False),
    ("zzx", True), ("zzy", False), ("", False), ("c", False), ("abc", True),
    ("exact", True), ("exactly", False), ("q[1]", True), ("q1", False),
])
def test_key_patterns_of_every_kind(daemon, key, allowed):
    # Prefix, exact and glob patterns, several on one first byte, with the
    # one that matches anywhere in the list.
    d = daemon()
    admin = _conn(d)
    assert admin.command("ACL", "SETUSER", "k", "on", ">pw", "+@all",
                         "~a*", "~ab?", "~b", "~*x", "~exact", "~aa*",
                         "~q\\[1]") == "OK"
    c = _conn(d, "k", "pw")
    r = c.command("CF.EXISTS", key, "item")
    assert (r == 0) is allowed, r
    assert (admin.command("ACL", "DRYRUN", "k", "CF.EXISTS", key, "i") ==
            "OK") is allowed


def test_read_write_star_pattern_saves_and_loads_back(daemon, tmp_path):
    """%RW~* is a pattern, not allkeys: further patterns may follow it.
    Its description is %RW~* (Redis 7.0 writes ~*, the allkeys word, which
    refuses the patterns after it), so ACL SAVE writes a file ACL LOAD and
    a restart read back as it was."""
    acl = tmp_path / "users.acl"
    acl.write_text("user default on nopass ~* &* +@all\n")
    d = daemon("--aclfile", str(acl))
    admin = _conn(d)
    assert admin.command("ACL", "SETUSER", "u", "on", "nopass", "%R~r*",
                         "%RW~*", "%W~w*", "+@all") == "OK"
    line = [l for l in admin.command("ACL", "LIST")
            if l.startswith(b"user u ")][0]
    assert b" %R~r* %RW~* %W~w* " in line
    assert admin.command("ACL", "SAVE") == "OK"
    assert admin.command("ACL", "LOAD") == "OK"
    assert [l for l in admin.command("ACL", "LIST")
            if l.startswith(b"user u ")] == [line]
