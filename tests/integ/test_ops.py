"""What an operator sees of the real daemon: configuration files and their
errors, --version/--help, the health probe, logging, AUTH and protected mode,
every limit and its error, and the INFO fields with their values.

Runs against $CUCKOOD_BIN (see conftest.py). Every wait is bounded.
"""

import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import textwrap
import time

import pytest
import redis

from support.proc import (daemon_binary, free_port, run_binary,
                          use_redis_server, wait_until)
from support.resp import Closed, RawConn, RespError, encode_command

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's own operations surface")

# The directory of the support package, for a script run in a namespace.
TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

OOM = "OOM command not allowed when used memory > 'maxmemory'."
LOG_LINE = re.compile(r"^\d+:M \d\d [A-Z][a-z]{2} \d{4} "
                      r"\d\d:\d\d:\d\d\.\d{3} [.\-*#] \S")


def client(d, **kw):
    return d.client(socket_timeout=10, **kw)


@pytest.fixture
def conf_daemon(daemon):
    """daemon() started as `cuckood FILE [args...]`, FILE holding text."""
    def make(text, *args, **kw):
        return daemon(*args, conf=text, **kw)
    return make


# ---- command line, config files and their errors --------------------------

def test_version_and_help():
    r = run_binary("--version")
    assert r.returncode == 0
    assert re.match(rb"cuckood v=\d+\.\d+\.\d+ ", r.stdout), r.stdout
    r = run_binary("--help")
    assert r.returncode == 0
    assert r.stdout.startswith(b"Usage: cuckood [/path/to/cuckood.conf]")
    assert b"--ping" in r.stdout


@pytest.mark.parametrize("text,line,reason", [
    ("port 7000\nfoo bar\n", 2,
     "'foo bar': Bad directive or wrong number of arguments"),
    ("# comment\n\nport 99999\n", 3,
     "'port 99999': argument must be between 0 and 65535"),
    ("maxmemory lots\n", 1, "'maxmemory lots': argument must be a memory"),
    ("bind localhost\n", 1, "'localhost' is not a numeric IPv4 or IPv6"),
    ("protected-mode maybe\n", 1, "'protected-mode maybe': argument must be"),
    ("maxclients 0\n", 1, "'maxclients 0': argument must be between"),
    ("timeout -1\n", 1, "'timeout -1': argument must be between"),
    ("requirepass\n", 1, "'requirepass': wrong number of arguments"),
    ("client-output-buffer-limit bogus 1 2 3\n", 1,
     "Invalid client class specified in buffer limit configuration."),
    ("client-output-buffer-limit normal 1 2\n", 1,
     "Wrong number of arguments in buffer limit configuration."),
    ("loglevel loud\n", 1, "'loglevel loud'"),
    ('dbfilename "a\n', 1, "Unbalanced quotes"),
])
def test_config_file_errors_stop_startup(tmp_path, text, line, reason):
    conf = tmp_path / "bad.conf"
    conf.write_text(text)
    # Should a bad line be taken, the server listens nowhere and exits.
    r = run_binary(conf, "--port", "0", cwd=tmp_path)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "*** FATAL CONFIG FILE ERROR ***" in err
    assert "%s:%d: " % (conf, line) in err, err
    assert reason.lower() in err.lower(), err


@pytest.mark.parametrize("args,reason", [
    (["--no-such-thing", "1"],
     "'--no-such-thing 1': Bad directive or wrong number of arguments"),
    (["--port", "x"], "'--port x': argument couldn't be parsed into an "
                      "integer"),
    (["--maxmemory", "abc"], "'--maxmemory abc': argument must be a memory"),
    (["--port"], "'--port': wrong number of arguments"),
])
def test_command_line_errors_stop_startup(tmp_path, args, reason):
    r = run_binary(*args, cwd=tmp_path)
    assert r.returncode == 1
    err = r.stderr.decode()
    assert "command line: " + reason in err, err


def test_missing_data_directory_stops_startup(tmp_path):
    r = run_binary("--port", 0, "--unixsocket", "s",
                   "--dir", tmp_path / "no-such-dir", cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert b"Can't chdir to" in r.stderr, r.stderr


def test_missing_config_file(tmp_path):
    r = run_binary(tmp_path / "nope.conf", cwd=tmp_path)
    assert r.returncode == 1
    assert b"nope.conf: can't open the config file" in r.stderr


def test_config_file_then_command_line(conf_daemon):
    d = conf_daemon(textwrap.dedent("""\
        # a config file as an operator writes it
        port {port}
        bind 127.0.0.1
        dir "{dir}"
        maxclients 50
        timeout 0
        save ""
        cf-initial-size 2048
        """), "--maxclients", "40", "--loglevel", "verbose")
    r = client(d)
    assert r.config_get("maxclients") == {"maxclients": "40"}
    assert r.config_get("loglevel") == {"loglevel": "verbose"}
    assert r.config_get("cf-initial-size") == {"cf-initial-size": "2048"}
    assert r.config_get("dir")["dir"] == d.dir
    info = r.info("server")
    assert info["config_file"] == d.conf
    assert info["tcp_port"] == d.port
    out = d.log_text()
    assert "Configuration loaded from %s" % d.conf in out
    assert "Ready to accept connections tcp on port %d" % d.port in out


def test_every_directive_readable(daemon):
    r = client(daemon())
    names = [
        "port", "bind", "unixsocket", "unixsocketperm", "protected-mode",
        "requirepass", "databases", "dir", "dbfilename", "save",
        "stop-writes-on-bgsave-error", "maxclients", "maxmemory", "timeout",
        "tcp-keepalive", "tcp-backlog", "proto-max-bulk-len",
        "client-query-buffer-limit", "client-output-buffer-limit",
        "loglevel", "logfile", "pidfile", "daemonize", "cf-bucket-size",
        "cf-fingerprint-bits", "cf-error-rate", "cf-max-iterations",
        "cf-expansion-factor", "cf-max-expansions", "cf-initial-size"]
    got = r.config_get("*")
    for n in names:
        assert n in got, n
    assert got["daemonize"] == "no"
    assert got["maxmemory"] == "0"
    assert got["client-output-buffer-limit"].startswith("normal 0 0 0")


def test_config_set_rules(daemon):
    r = client(daemon())
    assert r.config_set("maxmemory", "1mb")
    assert r.config_get("maxmemory") == {"maxmemory": "1048576"}
    assert r.info("memory")["maxmemory"] == 1048576
    assert r.config_set("maxmemory", "0")
    with pytest.raises(redis.ResponseError, match="CONFIG SET failed"):
        r.config_set("bind", "0.0.0.0")  # only at start-up
    with pytest.raises(redis.ResponseError, match="CONFIG SET failed"):
        r.config_set("timeout", "soon")
    with pytest.raises(redis.ResponseError, match="Unknown option"):
        r.config_set("no-such-directive", "1")


def test_bind_wildcard_forms(daemon):
    # "-" marks an address that may be missing; both forms load and serve.
    d = daemon("--bind", "-127.0.0.1", "-::1", password="pw")
    r = client(d)
    assert r.ping()
    assert r.config_get("bind") == {"bind": "-127.0.0.1 -::1"}


def test_bind_star(conf_daemon):
    # "* -::*" as the container configuration has it (with a password, as
    # this listens on every interface of the machine for a moment).
    d = conf_daemon("port {port}\nbind * -::*\nrequirepass pw\n"
                    "dir \"{dir}\"\nsave \"\"\n", password="pw")
    assert client(d).ping()
    with socket.create_connection(("::1", d.port), timeout=5) as s:
        s.sendall(b"PING\r\n")
        assert s.recv(100).startswith(b"-NOAUTH")


# ---- logging --------------------------------------------------------------

def test_log_format_levels_and_shutdown(conf_daemon):
    d = conf_daemon("port {port}\nbind 127.0.0.1\nloglevel notice\n"
                    "dir \"{dir}\"\nsave \"\"\n")
    assert d.stop() == 0
    lines = d.log_text().splitlines()
    assert lines, "nothing logged"
    for ln in lines:
        assert LOG_LINE.match(ln), ln
    text = "\n".join(lines)
    assert "just started" in text
    assert "Received SIGTERM" in text
    assert "ready to exit" in text
    assert str(d.proc.pid) + ":M " in lines[0]


def test_logfile_and_loglevel(conf_daemon):
    d = conf_daemon("port {port}\nbind 127.0.0.1\nlogfile server.log\n"
                    "loglevel warning\ndir \"{dir}\"\nsave \"\"\n")
    client(d).config_set("loglevel", "notice")
    client(d).config_set("loglevel", "warning")
    assert d.stop() == 0
    assert d.log_text() == ""  # nothing on stdout with a logfile
    with open(os.path.join(d.dir, "server.log")) as f:
        lines = f.read().splitlines()
    assert lines
    for ln in lines:
        assert LOG_LINE.match(ln), ln
        # warning level: only '#' lines
        assert ln.split(" ")[5] == "#", ln
    assert any("Received SIGTERM" in ln for ln in lines)


# ---- the health probe -----------------------------------------------------

def test_health_probe(daemon):
    d = daemon()
    r = run_binary("--ping", "127.0.0.1:%d" % d.port)
    assert r.returncode == 0
    assert r.stdout == b"PONG\n"
    locked = daemon(password="pw")
    r = run_binary("--ping", "127.0.0.1:%d" % locked.port)
    assert r.returncode == 0  # NOAUTH: up, just wants a password
    port = d.port
    assert d.stop() == 0
    r = run_binary("--ping", "127.0.0.1:%d" % port)
    assert r.returncode != 0
    assert b"cannot connect" in r.stderr


def test_health_probe_rejects_non_redis(tmp_path):
    # Something listening that is not cuckood is not healthy.
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    p = subprocess.Popen([daemon_binary(), "--ping", "127.0.0.1:%d" % port],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    conn, _ = srv.accept()
    conn.recv(100)
    conn.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n")
    conn.close()
    srv.close()
    assert p.wait(timeout=10) != 0


def test_health_probe_reads_the_config_file(conf_daemon):
    # `cuckood FILE --ping` probes the port the file names, not 6379.
    d = conf_daemon("port {port}\ndir {dir}\nsave \"\"\n")
    addr = os.path.join(d.dir, "cuckood.addr")
    with open(addr) as f:
        assert f.read() == "127.0.0.1:%d\n" % d.port
    os.unlink(addr)  # only the file's directives are left to go by
    r = run_binary(d.conf, "--ping")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"PONG\n"
    # Directives after the file override it, as for the server.
    other = free_port()
    r = run_binary(d.conf, "--port", other, "--ping")
    assert r.returncode != 0
    assert ("127.0.0.1:%d" % other).encode() in r.stderr
    assert d.stop() == 0
    r = run_binary(d.conf, "--ping")
    assert r.returncode != 0  # down: unhealthy
    assert b"cannot connect" in r.stderr


def test_health_probe_authenticates_with_requirepass(conf_daemon):
    d = conf_daemon("port {port}\ndir {dir}\nrequirepass s3cret\n",
                    password="s3cret")
    os.unlink(os.path.join(d.dir, "cuckood.addr"))
    r = run_binary(d.conf, "--ping")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"PONG\n"  # AUTH went first: a real PONG
    # Without the password it is still up: NOAUTH.
    r = run_binary("--ping", "127.0.0.1:%d" % d.port)
    assert r.returncode == 0
    assert r.stdout.startswith(b"NOAUTH")
    # A wrong password is reported, and the server still counts as up.
    r = run_binary(d.conf, "--requirepass", "wrong", "--ping")
    assert r.returncode == 0
    assert r.stdout.startswith(b"NOAUTH")
    assert b"WRONGPASS" in r.stderr
    port = d.port
    assert d.stop() == 0
    r = run_binary(d.conf, "--ping")
    assert r.returncode != 0
    r = run_binary("--ping", "127.0.0.1:%d" % port)
    assert r.returncode != 0


def test_health_probe_follows_the_running_servers_arguments(conf_daemon):
    # Directives given only to the server (docker run IMAGE --port N) reach
    # `cuckood FILE --ping` through the address file it leaves in its dir.
    d = conf_daemon("port 0\ndir {dir}\nsave \"\"\n", "--port", "{port}",
                    cwd="/")
    addr = os.path.join(d.dir, "cuckood.addr")
    assert run_binary("--ping", "127.0.0.1:%d" % d.port).returncode == 0
    with open(addr) as f:
        assert f.read() == "127.0.0.1:%d\n" % d.port
    r = run_binary(d.conf, "--ping")  # the file itself says port 0
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"PONG\n"
    assert d.stop() == 0
    assert not os.path.exists(addr)  # removed on a clean exit
    r = run_binary(d.conf, "--ping")
    assert r.returncode != 0
    assert b"no port" in r.stderr


def test_health_probe_unix_socket_from_config(conf_daemon):
    d = conf_daemon("port {port}\ndir {dir}\nunixsocket cuckood.sock\n")
    addr = os.path.join(d.dir, "cuckood.addr")
    with open(addr) as f:  # the socket, made absolute
        assert f.read() == os.path.join(d.dir, "cuckood.sock") + "\n"
    os.unlink(addr)
    # With no TCP port left, only the (relative) socket can answer.
    r = run_binary(d.conf, "--port", 0, "--ping", cwd="/")
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"PONG\n"
    r = run_binary("--ping", os.path.join(d.dir, "cuckood.sock"))
    assert r.returncode == 0
    assert d.stop() == 0
    r = run_binary(d.conf, "--port", 0, "--ping")
    assert r.returncode != 0


def test_health_probe_bad_arguments(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("port 99999\n")
    r = run_binary(conf, "--ping")
    assert r.returncode != 0
    assert b"argument must be between 0 and 65535" in r.stderr
    r = run_binary("--ping", "--no-such-directive", "x")
    assert r.returncode != 0
    assert b"Bad directive" in r.stderr
    r = run_binary("--port", 0, "--ping", cwd=str(tmp_path))
    assert r.returncode != 0
    assert b"no port and no Unix socket" in r.stderr


# ---- authentication -------------------------------------------------------

def test_auth_wording_and_forms(daemon):
    d = daemon(password="s3cret")
    c = d.raw()
    assert str(c.command("PING")) == "NOAUTH Authentication required."
    assert str(c.command("CF.ADD", "k", "a")) == \
        "NOAUTH Authentication required."
    assert str(c.command("AUTH", "nope")) == \
        "WRONGPASS invalid username-password pair or user is disabled."
    assert str(c.command("AUTH", "default", "nope")) == \
        "WRONGPASS invalid username-password pair or user is disabled."
    assert str(c.command("AUTH", "alice", "s3cret")) == \
        "WRONGPASS invalid username-password pair or user is disabled."
    # a password that shares a prefix, and one that is longer
    assert isinstance(c.command("AUTH", "s3cre"), RespError)
    assert isinstance(c.command("AUTH", "s3cret!"), RespError)
    assert c.command("AUTH", "default", "s3cret") == "OK"
    assert c.command("PING") == "PONG"
    c.close()

    c = d.raw()
    assert c.command("AUTH", "s3cret") == "OK"
    assert c.command("CF.ADD", "k", "a") == 1
    c.close()

    c = d.raw()
    hello = c.command("HELLO", "3", "AUTH", "default", "s3cret")
    assert isinstance(hello, dict) and hello[b"proto"] == 3
    assert c.command("CF.EXISTS", "k", "a") == 1
    c.close()

    c = d.raw()
    err = c.command("HELLO", "3", "AUTH", "default", "bad")
    assert isinstance(err, RespError)
    assert str(err).startswith("WRONGPASS")
    assert str(c.command("PING")) == "NOAUTH Authentication required."
    c.close()


def test_unauthenticated_small_requests_only(daemon):
    d = daemon(password="pw")
    c = d.raw()
    c.send(b"*11\r\n")
    assert str(c.read()) == "ERR Protocol error: unauthenticated multibulk " \
                            "length"
    assert c.closed_by_peer()
    c.close()

    c = d.raw()
    c.send(b"*2\r\n$4\r\nAUTH\r\n$16385\r\n")
    assert str(c.read()) == "ERR Protocol error: unauthenticated bulk length"
    assert c.closed_by_peer()
    c.close()

    # At the limits exactly: still served (and refused for want of AUTH).
    c = d.raw()
    assert str(c.command("PING", *["x"] * 9)) == \
        "NOAUTH Authentication required."
    assert isinstance(c.command("AUTH", "y" * 16384), RespError)
    # Once authenticated, the ordinary limits apply.
    assert c.command("AUTH", "pw") == "OK"
    assert c.command("ECHO", "z" * 100000) == b"z" * 100000
    assert c.command("CF.INSERT", "k", "ITEMS", *["i%d" % i
                                                  for i in range(20)]) == \
        [1] * 20
    c.close()


def test_unauthenticated_replies_do_not_pile_up(daemon):
    # A client that sends PINGs without AUTH and never reads is cut off
    # before its NOAUTH replies fill the server's memory.
    d = daemon(password="pw")
    flood = b"PING\r\n" * 4096
    s = d.raw(rcvbuf=4096, timeout=5)
    closed = False
    try:
        for _ in range(64 * 1024 * 1024 // len(flood)):
            s.send(flood)
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        closed = True
    assert closed or s.closed_by_peer(timeout=10)
    s.close()
    assert client(d, password="pw").ping()


def test_requirepass_set_at_run_time(daemon):
    d = daemon()
    r = client(d)
    assert r.config_set("requirepass", "later")
    c = d.raw()
    assert str(c.command("PING")) == "NOAUTH Authentication required."
    assert c.command("AUTH", "later") == "OK"
    c.close()
    # the connection that set it stays authenticated
    assert r.ping()
    r.config_set("requirepass", "")
    c = d.raw()
    assert c.command("PING") == "PONG"
    c.close()


# ---- protected mode -------------------------------------------------------

# Run in the namespace: the daemon, started by the launcher (which checks it
# through 127.0.0.1), then the first reply line to a PING from each address.
PROTECTED_CLIENT = r"""
import json, sys
from support.proc import Daemon
from support.resp import RawConn, encode_command
args = json.loads(sys.argv[1])
pw = args[args.index("--requirepass") + 1] if "--requirepass" in args else None
d = Daemon("--save", "", *args, password=pw).start()
try:
    for addr in sys.argv[2:]:
        with RawConn(d.port, host=addr) as c:
            c.send(encode_command("PING"))
            print(c.read_raw_line().decode())
    rc = d.stop()
    assert rc == 0, "exit status %r:\n%s" % (rc, d.log_text())
finally:
    d.cleanup()
"""


def in_netns_available():
    if os.geteuid() != 0 or shutil.which("unshare") is None or \
            shutil.which("ip") is None:
        return False
    r = subprocess.run(["unshare", "-n", "true"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return r.returncode == 0


def run_protected(*server_args):
    """Starts the daemon in a network namespace of its own that has a
    non-loopback address (198.18.0.1, a benchmarking range, on its own
    loopback device: the traffic never leaves the namespace), then connects
    from that address and from 127.0.0.1. Returns the two first reply
    lines."""
    shell = "set -e; ip link set lo up; ip addr add 198.18.0.1/32 dev lo; " \
            'exec "$@"'
    r = subprocess.run(["unshare", "-n", "sh", "-c", shell, "sh",
                        sys.executable, "-c", PROTECTED_CLIENT,
                        json.dumps(server_args), "198.18.0.1", "127.0.0.1"],
                       env=dict(os.environ, PYTHONPATH=TESTS),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    assert r.returncode == 0, (r.stdout, r.stderr)
    return r.stdout.decode().splitlines()


@pytest.mark.skipif(not in_netns_available(),
                    reason="needs root and unshare -n for a non-loopback "
                           "client")
def test_protected_mode():
    far, near = run_protected("--bind", "*")
    assert far.startswith("-DENIED cuckood is running in protected mode")
    assert "requirepass" in far
    assert near == "+PONG"
    # A password, or protected-mode off, opens the server to others.
    far, near = run_protected("--bind", "*", "--requirepass", "pw")
    assert far.startswith("-NOAUTH")
    far, near = run_protected("--bind", "*", "--protected-mode",
                              "no")
    assert far == "+PONG"
    # Explicit addresses do not lift it (as in Redis 7).
    far, near = run_protected("--bind", "198.18.0.1", "127.0.0.1")
    assert far.startswith("-DENIED")


# ---- limits ---------------------------------------------------------------

def test_maxclients(daemon):
    d = daemon("--maxclients", "3")
    r = client(d)
    assert r.ping()
    held = [d.raw(), d.raw()]
    for c in held:
        assert c.command("PING") == "PONG"
    extra = d.raw()
    assert extra.read_raw_line() == b"-ERR max number of clients reached"
    assert extra.closed_by_peer()
    extra.close()
    info = r.info()
    assert info["connected_clients"] == 3
    assert info["rejected_connections"] >= 1
    held.pop().close()
    assert wait_until(lambda: r.info("clients")["connected_clients"] == 2)
    c = d.raw()
    assert c.command("PING") == "PONG"
    c.close()


def test_descriptor_limit(conf_daemon):
    """With few file descriptors, maxclients is fitted to them at start-up
    and at CONFIG SET; connections past it are told so, and the server stays
    responsive and recovers when they go."""
    def few_fds():
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    d = conf_daemon("port {port}\nbind 127.0.0.1\ndir \"{dir}\"\n"
                    "save \"\"\n", preexec_fn=few_fds)
    r = client(d)
    fitted = int(r.config_get("maxclients")["maxclients"])
    assert 1 <= fitted < 64
    assert r.info("clients")["maxclients"] == fitted
    assert "maxclients is now %d" % fitted in d.log_text()
    assert r.config_set("maxclients", "1000")
    assert int(r.config_get("maxclients")["maxclients"]) == fitted

    socks, refused = [], 0
    for _ in range(150):
        s = socket.create_connection(("127.0.0.1", d.port), timeout=10)
        socks.append(s)
    for s in socks:
        s.sendall(b"PING\r\n")
    for s in socks:
        data = s.recv(100)
        if data.startswith(b"-ERR max number of clients reached"):
            refused += 1
        else:
            assert data == b"+PONG\r\n"
    assert refused == 150 - (fitted - 1)
    assert r.ping()
    for s in socks:
        s.close()
    assert wait_until(lambda: r.info("clients")["connected_clients"] == 1)
    more = [socket.create_connection(("127.0.0.1", d.port), timeout=10)
            for _ in range(fitted - 1)]
    for s in more:
        s.sendall(b"PING\r\n")
        assert s.recv(100) == b"+PONG\r\n"
        s.close()


def test_query_buffer_limit(daemon):
    d = daemon("--client-query-buffer-limit", "1mb")
    r = client(d)
    slow = d.raw()
    slow.send(b"*3\r\n$6\r\nCF.ADD\r\n$1\r\nk\r\n$3000000\r\n")
    sent = 0
    closed = False
    try:
        while sent < 3000000:
            slow.send(b"x" * 65536)
            sent += 65536
            assert r.ping()  # others are served meanwhile
    except (BrokenPipeError, ConnectionResetError):
        closed = True
    if not closed:
        closed = slow.closed_by_peer()
    assert closed
    assert sent <= 2 * 1024 * 1024
    slow.close()
    assert r.ping()
    assert r.exists("k") == 0


def test_output_buffer_limit(daemon):
    d = daemon("--client-output-buffer-limit", "normal", "1mb", "0", "0")
    r = client(d)
    assert r.config_get("client-output-buffer-limit")[
        "client-output-buffer-limit"].startswith("normal 1048576 0 0")
    s = d.raw(rcvbuf=4096, timeout=10)
    big = encode_command("ECHO", "v" * 100000)
    closed = False
    try:
        for _ in range(400):  # 40 MB of replies, never read
            s.send(big)
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        closed = True
    assert r.ping()
    assert r.echo("still here") == b"still here"

    def gone():
        return r.info("clients")["connected_clients"] == 1
    assert wait_until(gone)
    s.close()
    assert "output buffer limits" in d.log_text()


def test_idle_timeout(daemon):
    d = daemon("--timeout", "1")
    # An idle client is closed, and not before the timeout: the server
    # counts from its accept, which comes after t0, so however loaded the
    # machine, the close is seen at least a second after t0 (less the
    # coarseness of the server's clock). Load only makes it later.
    t0 = time.monotonic()
    idle = d.raw()
    assert idle.closed_by_peer(timeout=30)
    assert time.monotonic() - t0 >= 0.9
    idle.close()

    # CONFIG SET timeout 0 turns it off. The client sending it may itself
    # be closed first if this process stalls for a second: then retry.
    kept = None
    for _ in range(10):
        conn = d.raw()
        try:
            if conn.command("CONFIG", "SET", "timeout", "0") == "OK":
                kept = conn
                break
        except (Closed, OSError):
            pass
        conn.close()
    assert kept is not None, "CONFIG SET timeout 0 never went through"
    # From here nothing may close it: idle for well past the old timeout.
    assert not kept.closed_by_peer(timeout=2.5)
    assert kept.command("PING") == "PONG"
    kept.close()


def test_maxmemory_growable_grows_to_the_limit(daemon):
    """The growable shape takes memory a step at a time: under maxmemory
    it grows until the next step would pass the limit, the add that needs
    that step is refused with OOM and changes nothing, lookups go on, and
    without the limit it grows again."""
    d = daemon()
    r = client(d)
    r.execute_command("CF.RESERVE", "g", 20000)
    used = r.info("memory")["used_memory"]
    limit = used + 200000
    r.config_set("maxmemory", limit)
    n, refused = 0, None
    while refused is None:
        for i in range(n, n + 1000):
            try:
                assert r.execute_command("CF.ADD", "g", "i%d" % i) == 1
                n += 1
            except redis.ResponseError as e:
                refused = str(e)
                break
        assert n < 1000000
    assert refused == OOM
    info = dict(zip(*[iter(r.execute_command("CF.INFO", "g"))] * 2))
    assert info[b"Number of filters"] == 1
    assert info[b"Number of items inserted"] == n
    assert n > 20000  # it grew past its reserve
    at = r.info("memory")["used_memory"]
    assert used < at <= limit
    assert r.execute_command("CF.EXISTS", "g", "i0") == 1
    assert r.execute_command("CF.EXISTS", "g", "i%d" % (n - 1)) == 1
    r.config_set("maxmemory", "0")
    assert r.execute_command("CF.ADD", "g", "i%d" % n) == 1
    for i in range(n + 1, n + 5000):
        assert r.execute_command("CF.ADD", "g", "i%d" % i) == 1
    assert r.info("memory")["used_memory"] > at


def test_maxmemory_reserve_growth_loadchunk(daemon):
    d = daemon()
    r = client(d)
    # A dump to load later, made while there is no limit.
    r.execute_command("CF.RESERVE", "src", 100000)
    chunks = []
    it = 0
    while True:
        it, data = r.execute_command("CF.SCANDUMP", "src", it)
        if it == 0:
            break
        chunks.append((it, data))
    # the chain of tables (a bucket size of 2: not the growable shape,
    # whose steps test_maxmemory_growable_grows_to_the_limit covers)
    r.execute_command("CF.RESERVE", "g", 20000, "BUCKETSIZE", 2)
    table = dict(zip(*[iter(r.execute_command("CF.INFO", "g"))] * 2))[
        b"Size"]

    used = r.info("memory")["used_memory"]
    r.config_set("maxmemory", used + table // 2)

    with pytest.raises(redis.ResponseError, match=re.escape(OOM)):
        r.execute_command("CF.RESERVE", "big", 1000000)
    assert r.exists("big") == 0

    # growth: the insert that needs a second table is refused whole
    n = 0
    while True:
        batch = ["i%d" % i for i in range(n, n + 1000)]
        got = r.execute_command("CF.INSERT", "g", "ITEMS", *batch)
        n += sum(1 for x in got if x == 1)
        if -1 in got:
            break
        assert n < 100000
    for i in range(1000):
        try:
            assert r.execute_command("CF.ADD", "g", "x%d" % i) == 1
            n += 1
        except redis.ResponseError as e:
            assert str(e) == OOM
            break
    else:
        pytest.fail("CF.ADD never needed to grow")
    info = dict(zip(*[iter(r.execute_command("CF.INFO", "g"))] * 2))
    assert info[b"Number of filters"] == 1
    assert info[b"Number of items inserted"] == n
    assert r.info("memory")["used_memory"] == used

    # LOADCHUNK of a filter bigger than what is left: nothing is created
    with pytest.raises(redis.ResponseError, match=re.escape(OOM)):
        r.execute_command("CF.LOADCHUNK", "copy", *chunks[0])
    assert r.exists("copy") == 0
    assert r.info("memory")["used_memory"] == used

    # lookups still work at the limit; without it, the filter grows
    assert r.execute_command("CF.EXISTS", "g", "i0") == 1
    r.config_set("maxmemory", "0")
    assert r.execute_command("CF.ADD", "g", "x%d" % i) == 1
    info = dict(zip(*[iter(r.execute_command("CF.INFO", "g"))] * 2))
    assert info[b"Number of filters"] == 2
    for it, data in chunks:
        assert r.execute_command("CF.LOADCHUNK", "copy", it, data) == b"OK"


@pytest.mark.parametrize("args", [
    ("CF.RESERVE", "k", "18446744073709551615"),
    ("CF.RESERVE", "k", "18446744073709551616"),
    ("CF.RESERVE", "k", "9223372036854775807"),
    ("CF.RESERVE", "k", "-1"),
    ("CF.RESERVE", "k", "1000", "BUCKETSIZE", "18446744073709551615"),
    ("CF.RESERVE", "k", "1000", "EXPANSION", "18446744073709551615"),
    ("CF.RESERVE", "k", "1000", "MAXITERATIONS", "4294967297"),
    ("CF.INSERT", "k", "CAPACITY", "18446744073709551615", "ITEMS", "a"),
    ("CF.INSERT", "k", "CAPACITY", "4611686018427387904", "ITEMS", "a"),
])
def test_capacity_arguments_cannot_overflow(daemon, args):
    d = daemon()
    r = client(d)
    with pytest.raises(redis.ResponseError):
        r.execute_command(*args)
    assert r.exists("k") == 0
    assert r.ping()


# ---- INFO -----------------------------------------------------------------

def test_info_server_and_clients(daemon):
    d = daemon()
    r = client(d)
    s = r.info("server")
    assert s["redis_version"] == "7.2.0"
    assert re.match(r"^\d+\.\d+\.\d+$", str(s["cuckood_version"]))
    assert s["process_id"] == d.proc.pid
    assert s["tcp_port"] == d.port
    assert os.path.samefile(s["executable"], daemon_binary())
    assert s["config_file"] == ""
    # The process's own age, from the kernel's clock ticks since boot.
    with open("/proc/%d/stat" % d.proc.pid) as f:
        started = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/uptime") as f:
        age = float(f.read().split()[0]) - started / os.sysconf("SC_CLK_TCK")
    assert abs(s["uptime_in_seconds"] - age) <= 1.5, (s, age)
    assert s["uptime_in_days"] == s["uptime_in_seconds"] // 86400
    others = [d.raw() for _ in range(3)]
    for c in others:
        assert c.command("PING") == "PONG"
    c = r.info("clients")
    assert c["connected_clients"] == 4
    assert c["maxclients"] == int(r.config_get("maxclients")["maxclients"])
    assert c["blocked_clients"] == 0
    for o in others:
        o.close()


def test_info_memory_counts_filters(daemon):
    d = daemon("--maxmemory", "64mb")
    r = client(d)
    m0 = r.info("memory")
    assert m0["maxmemory"] == 64 * 1024 * 1024
    assert m0["maxmemory_human"] == "64.00M"
    assert m0["maxmemory_policy"] == "noeviction"
    # The effective machine memory (the cgroup limit when lower): positive,
    # and no more than the machine's physical memory.
    phys = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert 0 < m0["total_system_memory"] <= phys
    r.execute_command("CF.RESERVE", "f", 1000000)
    info = dict(zip(*[iter(r.execute_command("CF.INFO", "f"))] * 2))
    size = info[b"Size"]
    m1 = r.info("memory")
    grew = m1["used_memory"] - m0["used_memory"]
    assert size <= grew <= size + 256, (size, grew)
    usage = r.memory_usage("f")
    assert size <= usage <= size + 256
    assert abs(grew - usage) <= 64
    assert m1["used_memory_peak"] >= m1["used_memory"]
    assert m1["used_memory_human"].endswith(("K", "M"))
    r.delete("f")
    m2 = r.info("memory")
    assert m2["used_memory"] == m0["used_memory"]
    assert m2["used_memory_peak"] >= m1["used_memory"]
    assert r.memory_usage("f") is None


def test_info_stats_commandstats_keyspace(daemon):
    d = daemon()
    r = client(d)
    s0 = r.info("stats")
    t0 = time.monotonic()
    r.execute_command("CF.RESERVE", "k", 1000)
    r.execute_command("CF.ADD", "k", "a")
    r.execute_command("CF.ADD", "k", "b")
    assert r.execute_command("CF.EXISTS", "k", "a") == 1   # hit
    assert r.execute_command("CF.EXISTS", "nokey", "a") == 0  # miss
    with pytest.raises(redis.ResponseError):
        r.execute_command("CF.ADD", "k")  # arity: rejected
    with pytest.raises(redis.ResponseError):
        r.execute_command("CF.RESERVE", "k", 1000)  # exists: failed
    took_us = (time.monotonic() - t0) * 1e6
    extra = d.raw()
    assert extra.command("PING") == "PONG"
    extra.close()
    s1 = r.info("stats")
    assert s1["total_commands_processed"] >= \
        s0["total_commands_processed"] + 6
    assert s1["total_connections_received"] == \
        s0["total_connections_received"] + 1
    assert s1["keyspace_hits"] == s0["keyspace_hits"] + 1
    assert s1["keyspace_misses"] == s0["keyspace_misses"] + 1
    assert s1["rejected_connections"] == 0
    # A rate over windows of a second or more: never more than the
    # commands there were.
    assert 0 <= s1["instantaneous_ops_per_sec"] <= \
        s1["total_commands_processed"]

    cs = r.info("commandstats")
    add = cs["cmdstat_cf.add"]
    assert add["calls"] == 2
    assert add["rejected_calls"] == 1
    assert add["failed_calls"] == 0
    # The two calls took some of the time the client waited for them.
    assert 0 <= add["usec"] <= took_us, (add, took_us)
    assert abs(add["usec_per_call"] - add["usec"] / 2) <= 0.005, add
    res = cs["cmdstat_cf.reserve"]
    assert res["calls"] == 2 and res["failed_calls"] == 1

    r.execute_command("CF.RESERVE", "k2", 1000)
    assert r.info("keyspace") == {"db0": {"keys": 2, "expires": 0,
                                          "avg_ttl": 0}}
    assert r.info("persistence")["loading"] == 0


def test_shutdown_command(daemon):
    d = daemon()
    c = d.raw()
    assert c.command("SHUTDOWN", "BOGUS") == RespError("ERR syntax error")
    c.send(encode_command("SHUTDOWN", "NOSAVE"))
    assert c.at_eof()  # no reply: the connection closes
    c.close()
    assert d.wait() == 0


def test_pidfile_and_ipv6(daemon):
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        pytest.skip("no IPv6 loopback here")
    d = daemon("--bind", "127.0.0.1", "::1", "--pidfile", "cuckood.pid")
    with RawConn(d.port, host="::1") as c:
        assert c.command("PING") == "PONG"
        assert "addr=[::1]:" in c.command("CLIENT", "INFO").decode()
    pidfile = os.path.join(d.dir, "cuckood.pid")
    with open(pidfile) as f:
        assert int(f.read()) == d.pid
    assert d.stop() == 0
    assert not os.path.exists(pidfile)  # removed at exit


def test_shutdown_on_sigterm_exits_zero(daemon):
    d = daemon()
    client(d).execute_command("CF.ADD", "k", "a")
    assert d.stop() == 0
    assert "ready to exit" in d.log_text()
