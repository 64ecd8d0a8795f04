"""cuckood-load, the bulk loader, against the real daemon over TCP, TLS
and with ACL users: every input format (binary-safe NUL items, CSV with
quotes and newlines, PostgreSQL's COPY text format), empty lines, the
refusals it must report with a line number (a full filter, maxmemory, an
ACL user without write), a dropped connection, --swap seen by a reader
polling during the swap, --verify, the progress line on a terminal, its
usage errors, and the same file loaded into redis-server with the module
giving the same answers.

Every load is checked against the server: the items are there
(CF.MEXISTS, all of them) and the count is exactly what the input held."""

import os
import pty
import re
import select
import subprocess
import threading

import pytest
import redis

from support.proc import ROOT, ModuleServer, use_module, use_redis_server, \
    wait_until
from support.tls_certs import make_certs

pytestmark = [
    pytest.mark.cf,
    pytest.mark.skipif(use_module(), reason="the loader has its own suite"),
]


def loader():
    path = os.environ.get("CUCKOOD_LOAD_BIN") or os.path.join(
        ROOT, "build", "tools", "cuckood-load")
    if not os.access(path, os.X_OK):
        pytest.fail("cuckood-load not found at %s (set CUCKOOD_LOAD_BIN)"
                    % path)
    return path


def load(port, *args, data=b"", timeout=60):
    """Runs cuckood-load -p PORT ARGS with data on its standard input:
    (exit status, standard error)."""
    r = subprocess.run([loader(), "-p", str(port)] + [str(a) for a in args],
                       input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return r.returncode, r.stderr.decode(errors="replace")


def items_in(c, key, items):
    """CF.MEXISTS of every item, in chunks: the answers."""
    out = []
    items = list(items)
    for i in range(0, len(items), 1000):
        out += c.execute_command("CF.MEXISTS", key, *items[i:i + 1000])
    return out


def count(c, key):
    info = c.execute_command("CF.INFO", key)
    return dict(zip(info[::2], info[1::2]))[b"Number of items inserted"]


def check_loaded(c, key, items):
    assert items_in(c, key, items) == [1] * len(items)
    assert count(c, key) == len(items)


def loads(server, key, args, data, want):
    """cuckood-load ARGS KEY succeeds and KEY holds exactly want."""
    rc, err = load(server.port, *(list(args) + [key]), data=data)
    assert rc == 0, err
    check_loaded(server.client(), key, want)
    return err


# ---- input formats ---------------------------------------------------------

def test_lines_with_crlf_and_empty_lines(server):
    c = server.client()
    data = b"alpha\r\nbeta\n\n\r\ngamma\n \nlast-without-newline"
    rc, err = load(server.port, "lines", data=data)
    assert rc == 0, err
    check_loaded(c, "lines", [b"alpha", b"beta", b"gamma", b" ",
                              b"last-without-newline"])
    assert "5 items into lines" in err and "2 empty records skipped" in err
    assert c.execute_command("CF.EXISTS", "lines", b"alpha\r") == 0


def test_nul_items_hold_any_bytes(server, tmp_path):
    c = server.client()
    items = [bytes(range(1, 256)), b"line\nbreak", b"cr\r", b"\xff\xfe",
             b"tab\tx", b" "] + [os.urandom(20).replace(b"\0", b"\1")
                                 for _ in range(2000)]
    path = tmp_path / "items.bin"
    path.write_bytes(b"\0".join(items) + b"\0\0")
    rc, err = load(server.port, "--format", "nul", "--batch", "7", "nul",
                   path)
    assert rc == 0, err
    check_loaded(c, "nul", items)


def test_csv_column_by_number_and_by_name(server):
    data = (b'id,email,name\r\n'
            b'1,"a@x.org","Smith, Ann"\r\n'
            b'2,"quote""d@x.org","multi\nline"\r\n'
            b'3,,"no email"\r\n'
            b'4,"line\nbreak@x.org",x\n'
            b'\n'
            b'5,"",x\n'
            b'6,plain@x.org,x')
    want = [b"a@x.org", b'quote"d@x.org', b"line\nbreak@x.org",
            b"plain@x.org"]
    csv = ["--format", "csv", "--column"]
    loads(server, "csv-name", csv + ["email"], data, want)
    # By number the header is an item like any other.
    loads(server, "csv-num", csv + ["2"], data, [b"email"] + want)
    loads(server, "csv-3", csv + ["3"], data,
          [b"name", b"Smith, Ann", b"multi\nline", b"no email", b"x", b"x",
           b"x"])


def test_postgres_copy_text_format(server):
    data = (b"1\tplain\tx\n"
            b"2\ttab\\there\tx\n"
            b"3\tnew\\nline\\\\back\tx\n"
            b"4\t\\N\tx\n"
            b"5\t\tx\n"
            b"6\toct\\101\\x42\tx\n"
            b"7\tlast\n")
    err = loads(server, "copy", ["--format", "copy", "--column", "2"], data,
                [b"plain", b"tab\there", b"new\nline\\back", b"octAB",
                 b"last"])
    assert "2 empty records skipped" in err
    loads(server, "copy1", ["--format", "copy"], data,
          [b"%d" % i for i in range(1, 8)])


@pytest.mark.parametrize("fmt,data,line,what", [
    ("csv", b'a\n"b\n\n', 2, "unterminated quoted field"),
    ("csv", b'a\n"b"c\n', 2, "a character after a closing quote"),
    ("copy", b"1\tx\n2\n", 2, "no column 2"),
    ("csv", b"1,x\n2\n", 2, "no column 2"),
])
def test_bad_input_names_its_line(server, fmt, data, line, what):
    args = ["--format", fmt] + (["--column", "2"] if what.startswith("no")
                                else [])
    rc, err = load(server.port, *(args + ["bad-" + fmt]), data=data)
    assert rc == 1
    assert "line %d: %s" % (line, what) in err, err


def test_record_longer_than_the_limit(server):
    rc, err = load(server.port, "long", data=b"x" * (5 << 20) + b"\n")
    assert rc == 1 and "line 1: record longer than 4 MiB" in err, err


# ---- refusals and failures -------------------------------------------------

@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(str(tmp_path_factory.mktemp("certs")))


def acknowledged(err, key):
    m = re.search(r"(\d+) items acknowledged by the server into %s," %
                  re.escape(key), err)
    assert m, err
    return int(m.group(1))


def test_full_filter_is_an_error_with_the_line(server):
    c = server.client()
    c.execute_command("CF.RESERVE", "full", 64, "EXPANSION", 0)
    data = b"".join(b"item-%d\n" % i for i in range(1000))
    rc, err = load(server.port, "--batch", "10", "full", data=data)
    assert rc == 1
    n = acknowledged(err, "full")
    # Later batches were in flight: some of their items may have fitted.
    assert 0 < n <= count(c, "full") < 1000
    assert "line %d: the item was not added to full" % (n + 1) in err, err


def test_maxmemory_refuses_mid_load(daemon):
    d = daemon("--maxmemory", "2mb")
    data = b"".join(b"%d\n" % i for i in range(2000000))
    rc, err = load(d.port, "big", data=data)
    assert rc == 1, err
    n = acknowledged(err, "big")
    assert 0 < n <= count(d.client(), "big") < 2000000
    assert "line %d: the item was not added" % (n + 1) in err, err


def test_acl_users(daemon):
    d = daemon()
    c = d.client()
    c.execute_command("ACL", "SETUSER", "loader", "on", ">lpw", "~*",
                      "+@all")
    c.execute_command("ACL", "SETUSER", "reader", "on", ">rpw", "~*",
                      "+cf.exists", "+cf.mexists")
    data = b"a\nb\nc\n"
    rc, err = load(d.port, "--user", "loader", "--pass", "lpw", "acl",
                   data=data)
    assert rc == 0, err
    check_loaded(c, "acl", [b"a", b"b", b"c"])
    # The loader's user of docs/operations.md: its keys only, --swap's
    # temporary key included.
    c.execute_command("ACL", "SETUSER", "swapper", "on", ">spw", "~users",
                      "~{users}:*", "+@all", "-@admin", "-@dangerous",
                      "+rename")
    rc, err = load(d.port, "--user", "swapper", "--pass", "spw", "--swap",
                   "--verify", "3", "users", data=data)
    assert rc == 0, err
    check_loaded(c, "users", [b"a", b"b", b"c"])
    rc, err = load(d.port, "--user", "swapper", "--pass", "spw", "other",
                   data=data)
    assert rc == 1 and "NOPERM" in err, err
    rc, err = load(d.port, "--user", "reader", "--pass", "rpw", "acl2",
                   data=data)
    assert rc == 1 and "lines 1-3: the server answered: NOPERM" in err, err
    assert c.exists("acl2") == 0
    rc, err = load(d.port, "--user", "loader", "--pass", "wrong", "acl3",
                   data=data)
    assert rc == 1 and "AUTH: WRONGPASS" in err, err
    c.execute_command("CONFIG", "SET", "requirepass", "s3cret")
    rc, err = load(d.port, "-a", "s3cret", "acl4", data=data)
    assert rc == 0, err
    rc, err = load(d.port, "acl5", data=data)
    assert rc == 1 and "NOAUTH" in err, err


@pytest.mark.parametrize("tls", [False, True], ids=["tcp", "tls"])
def test_dropped_connection_says_how_far(daemon, certs, tls):
    """The server closes the loader's connection after 5 batches: it exits
    non-zero (no SIGPIPE, over TLS either) and says how many items the
    server acknowledged."""
    d = daemon(tls=certs) if tls else daemon()
    c = redis.Redis(port=d.port)
    args = ["-p", str(d.tls_port), "-h", "localhost", "--tls", "--cacert",
            certs["ca.crt"], "--cert", certs["client.crt"], "--key",
            certs["client.key"]] if tls else ["-p", str(d.port)]
    p = subprocess.Popen([loader()] + args + ["--batch", "100", "--window",
                                              "4", "dropped"],
                         stdin=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdin.write(b"".join(b"x%d\n" % i for i in range(500)))
    p.stdin.flush()
    wait_until(lambda: c.exists("dropped") and count(c, "dropped") == 500,
               what="the first 500 items")
    c.execute_command("CLIENT", "KILL", "SKIPME", "yes")
    try:
        for _ in range(50):
            p.stdin.write(b"".join(b"y%d\n" % i for i in range(1000)))
            p.stdin.flush()
    except BrokenPipeError:
        pass
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
    err = p.stderr.read().decode()
    assert p.wait(timeout=30) == 1, err
    assert "connection" in err, err
    assert "500 items acknowledged by the server into dropped" in err, err


def test_server_gone(tmp_path):
    from support.proc import free_port
    rc, err = load(free_port(), "k", data=b"a\n")
    assert rc == 1 and "cannot connect" in err, err


# ---- --swap, --verify, capacity --------------------------------------------

def test_swap_readers_never_see_a_missing_item(server):
    c = server.client()
    old = [b"u%d" % i for i in range(20000)]
    rc, err = load(server.port, "--reserve", "40000", "{guard}users",
                   data=b"\n".join(old))
    assert rc == 0, err
    # The new set keeps every second old item (those probed among them)
    # and adds 20000: the live filter holds 20000 items, then 30000,
    # never anything between.
    new = old[::2] + [b"n%d" % i for i in range(20000)]
    probe = old[::50]
    misses, counts, rounds = [], set(), [0]
    stop = threading.Event()

    def reader():
        r = server.client()
        while not stop.is_set():
            got = r.execute_command("CF.MEXISTS", "{guard}users", *probe)
            if got != [1] * len(probe):
                misses.append(got)
            counts.add(count(r, "{guard}users"))
            rounds[0] += 1

    t = threading.Thread(target=reader)
    t.start()
    try:
        wait_until(lambda: rounds[0] > 0, what="the reader's first round")
        rc, err = load(server.port, "--swap", "--count", "40000",
                       "--batch", "100", "--window", "2", "{guard}users",
                       data=b"\n".join(new))
        # a whole round begun after the swap (under load one round may
        # last as long as the load did)
        after = rounds[0]
        wait_until(lambda: rounds[0] > after + 1, what="two more rounds")
    finally:
        stop.set()
        t.join()
    assert rc == 0, err
    assert not misses
    assert counts == {20000, 30000}, counts
    check_loaded(c, "{guard}users", new)
    assert c.keys("*guard*") == [b"{guard}users"]


def test_swap_of_an_empty_input_makes_an_empty_filter(server):
    c = server.client()
    c.execute_command("CF.ADD", "emptied", "stale")
    rc, err = load(server.port, "--swap", "emptied", data=b"\n\n")
    assert rc == 0, err
    assert count(c, "emptied") == 0
    assert c.execute_command("CF.EXISTS", "emptied", "stale") == 0


def test_failed_swap_leaves_the_key_alone(server):
    c = server.client()
    c.execute_command("CF.ADD", "kept", "old")
    rc, err = load(server.port, "--swap", "--format", "csv", "--column", "2",
                   "kept", data=b"1,a\n2\n")
    assert rc == 1 and "line 2" in err, err
    assert "dropped, kept left as it was" in err
    assert c.keys("*kept*") == [b"kept"]
    assert c.execute_command("CF.EXISTS", "kept", "old") == 1


def test_reserve_and_count_size_a_new_filter(server):
    c = server.client()
    rc, err = load(server.port, "--reserve", "100000", "--verify", "50",
                   "sized", data=b"a\nb\n")
    assert rc == 0 and "sample verified" in err, err
    info = c.execute_command("CF.INFO", "sized")
    assert dict(zip(info[::2], info[1::2]))[b"Size"] > 100000 // 2
    rc, err = load(server.port, "--count", "100000", "counted",
                   data=b"a\nb\n")
    assert rc == 0, err
    info2 = c.execute_command("CF.INFO", "counted")
    assert info2 == info


def test_verify_finds_a_missing_item(server):
    """--verify asks the server: items deleted behind the loader's back
    (after their batches were sent, before the input ended) are caught."""
    c = server.client()
    c.execute_command("CF.RESERVE", "leaky", 10000)
    p = subprocess.Popen([loader(), "-p", str(server.port), "--verify",
                          "100", "leaky"], stdin=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdin.write(b"".join(b"v%d\n" % i for i in range(5000)))
    p.stdin.flush()
    wait_until(lambda: count(c, "leaky") == 5000, what="5 batches")
    for i in range(5000):
        c.execute_command("CF.DEL", "leaky", b"v%d" % i)
    p.stdin.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 1
    assert "--verify: 100 of 100 sampled items are missing from leaky" in \
        err, err


# ---- transports --------------------------------------------------------------

@pytest.mark.skipif(use_redis_server(), reason="cuckood's TLS directives")
def test_tls(daemon, certs):
    d = daemon(tls=certs)
    tls = ["-h", "localhost", "--tls", "--cacert", certs["ca.crt"],
           "--cert", certs["client.crt"], "--key", certs["client.key"]]
    data = b"".join(b"t%d\n" % i for i in range(10000))
    r = subprocess.run([loader(), "-p", str(d.tls_port)] + tls +
                       ["--verify", "100", "tls"], input=data,
                       stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr
    c = redis.Redis(port=d.port)
    check_loaded(c, "tls", [b"t%d" % i for i in range(10000)])
    # A server whose certificate the CA did not sign is refused.
    bad = list(tls)
    bad[bad.index(certs["ca.crt"])] = certs["other-ca.crt"]
    r = subprocess.run([loader(), "-p", str(d.tls_port)] + bad + ["tls2"],
                       input=b"a\n", stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 1
    assert b"cuckood-load: TLS handshake: " in r.stderr, r.stderr
    # Plain text on the TLS port is not mistaken for a load.
    rc, err = load(d.tls_port, "plain", data=b"a\n")
    assert rc == 1
    assert c.exists("tls2", "plain") == 0


def test_unix_socket(daemon, tmp_path):
    sock = str(tmp_path / "s.sock")
    d = daemon("--unixsocket", sock)
    r = subprocess.run([loader(), "-s", sock, "unix"], input=b"a\nb\n",
                       stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr
    check_loaded(d.client(), "unix", [b"a", b"b"])


# ---- what it prints, usage ---------------------------------------------------

def test_progress_line_on_a_terminal(server, tmp_path):
    path = tmp_path / "ids"
    path.write_bytes(b"".join(b"p%d\n" % i for i in range(200000)))
    master, slave = pty.openpty()
    p = subprocess.Popen([loader(), "-p", str(server.port), "--batch", "10",
                          "--window", "1", "prog", str(path)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=slave)
    os.close(slave)
    out = b""
    while True:
        r, _, _ = select.select([master], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert p.wait(timeout=60) == 0, out
    assert b"items/s  ETA" in out, out
    assert b"200000 items into prog" in out, out
    # Not a terminal: only the summary; --quiet: nothing.
    rc, err = load(server.port, "prog2", path)
    assert rc == 0 and err.count("\n") == 1 and "ETA" not in err, err
    rc, err = load(server.port, "--quiet", "prog3", path)
    assert (rc, err) == (0, "")


def test_help_and_usage_errors():
    r = subprocess.run([loader(), "--help"], stdout=subprocess.PIPE,
                       timeout=10)
    assert r.returncode == 0 and b"SYNOPSIS" in r.stdout
    for args, what in [
            ([], "no KEY given"),
            (["--bogus", "k"], "unknown option '--bogus'"),
            (["--batch", "0", "k"], "--batch: must be 1 to 100000"),
            (["--reserve", "10x", "k"], "'10x' is not a capacity"),
            (["-p", "70000", "k"], "'70000' is not a port"),
            (["--format", "xml", "k"], "'xml' is not lines, nul, csv"),
            (["--column", "2", "k"], "--column needs --format csv or copy"),
            (["--format", "copy", "--column", "id", "k"],
             "'id' is not a column number"),
            (["--user", "u", "k"], "--user needs --pass"),
            (["--cacert", "x", "k"], "TLS options need --tls"),
            (["--cert", "x", "--tls", "k"], "--cert and --key go together"),
            (["k", "f", "extra"], "unexpected argument 'extra'"),
            (["--window"], "--window needs a value")]:
        r = subprocess.run([loader()] + args, stderr=subprocess.PIPE,
                           timeout=10)
        assert r.returncode == 2, args
        assert what in r.stderr.decode(), (args, r.stderr)
    r = subprocess.run([loader(), "k", "/nonexistent/file"],
                       stderr=subprocess.PIPE, timeout=10)
    assert r.returncode == 1 and b"cannot open /nonexistent/file" in r.stderr


# ---- the same load into redis-server with the module -------------------------

def test_same_answers_from_redis_with_the_module(server, tmp_path):
    if not os.environ.get("CUCKOO_MODULE") and not os.path.exists(
            os.path.join(ROOT, "build", "module", "cuckoo.so")):
        pytest.skip("no module built")
    items = [b"m%d" % i for i in range(5000)] + [b"sp ace", b"\xff"]
    absent = [b"absent%d" % i for i in range(5000)]
    path = tmp_path / "ids"
    path.write_bytes(b"\n".join(items))
    m = ModuleServer().start()
    try:
        for port in (server.port, m.port):
            rc, err = load(port, "--reserve", "10000", "same", path)
            assert rc == 0, err
        ours = items_in(server.client(), "same", items + absent)
        theirs = items_in(m.client(), "same", items + absent)
        assert ours[:len(items)] == theirs[:len(items)] == [1] * len(items)
        assert count(server.client(), "same") == \
            count(m.client(), "same") == len(items)
    finally:
        m.cleanup()
