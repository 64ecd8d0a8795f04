"""redis-cli 7 (Debian's redis-tools) against cuckood: one-shot commands,
-n, -a, -3, commands read from stdin, --scan and --pipe mass insertion.

redis-cli exits 0 even when the server answers with an error, so every test
checks the printed text. With stdout not a terminal redis-cli prints raw
replies; --no-raw asks for the "(integer) 1" form.
"""

import os
import re
import shutil
import signal
import subprocess

import pytest

from support.proc import PASSWORD, wait_until
from support.resp import encode_command

REDIS_CLI = shutil.which("redis-cli")


@pytest.fixture(autouse=True)
def redis_cli_installed():
    """The tools are part of the test set-up (scripts/deps.sh test): their
    absence fails the suite."""
    assert REDIS_CLI is not None, "redis-cli not installed (redis-tools)"

CF_INFO_FIELDS = [
    "Size", "Number of buckets", "Number of filters",
    "Number of items inserted", "Number of items deleted", "Bucket size",
    "Expansion rate", "Max iterations",
]


def cli(server, *args, stdin=None, password=None, timeout=120, rc=0):
    argv = [REDIS_CLI, "-h", "127.0.0.1", "-p", str(server.port)]
    if password is not None:
        argv += ["-a", password, "--no-auth-warning"]
    argv += [str(a) for a in args]
    p = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    assert p.returncode == rc, (argv, p.returncode, p.stdout, p.stderr)
    return p.stdout.decode(errors="replace")


def lines(out):
    return out.rstrip("\n").split("\n")


@pytest.fixture
def clean(server):
    assert cli(server, "FLUSHALL").strip() == "OK"
    return server


def test_ping(clean):
    assert cli(clean, "PING") == "PONG\n"
    assert cli(clean, "--no-raw", "PING") == "PONG\n"
    assert cli(clean, "ECHO", "hello world") == "hello world\n"


def test_error_reply_exits_zero(clean):
    out = cli(clean, "foo", "bar")
    assert out == \
        "ERR unknown command 'foo', with args beginning with: 'bar' \n\n"
    out = cli(clean, "--no-raw", "foo", "bar")
    assert out.startswith("(error) ERR unknown command 'foo'")


def test_info_and_dbsize(clean):
    out = cli(clean, "INFO")
    assert "redis_version:" in out
    assert "loading:0" in out
    assert cli(clean, "DBSIZE") == "0\n"
    assert cli(clean, "--no-raw", "DBSIZE") == "(integer) 0\n"


def test_select_out_of_range(clean):
    p = subprocess.run([REDIS_CLI, "-h", "127.0.0.1", "-p", str(clean.port),
                        "-n", "99", "PING"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    assert b"SELECT 99 failed" in p.stderr


def test_commands_from_stdin(clean):
    out = cli(clean, stdin=b'PING\nECHO "a b"\nECHO \'c d\'\n')
    assert out == "PONG\na b\nc d\n"


def test_resp3_hello(clean):
    out = cli(clean, "-3", "--no-raw", "HELLO", "3")
    assert '"proto" => (integer) 3' in out
    assert '"version" =>' in out


def test_auth(auth_server):
    assert cli(auth_server, "PING").startswith("NOAUTH Authentication "
                                               "required.")
    assert cli(auth_server, "PING", password=PASSWORD) == "PONG\n"
    p = subprocess.run([REDIS_CLI, "-h", "127.0.0.1", "-p",
                        str(auth_server.port), "-a", "wrong",
                        "--no-auth-warning", "PING"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    assert b"WRONGPASS" in p.stdout + p.stderr
    out = cli(auth_server, "-n", "2", "-3", "--no-raw", "HELLO",
              password=PASSWORD)
    assert '"proto" => (integer) 3' in out


def test_pipe_plain(clean):
    payload = b"".join(encode_command("ECHO", "m%d" % i)
                       for i in range(100000))
    out = cli(clean, "--pipe", stdin=payload)
    assert "errors: 0, replies: 100000" in out


def test_pipe_reports_errors(clean):
    payload = encode_command("PING") + encode_command("NOSUCHCMD", "x") + \
        encode_command("PING")
    out = cli(clean, "--pipe", stdin=payload, rc=1)  # --pipe: 1 on errors
    assert "errors: 1, replies: 3" in out


# -------------------------------------------------------------- CF.*

@pytest.mark.cf
def test_cf_one_shot(clean):
    s = clean
    assert cli(s, "CF.RESERVE", "f", "1000") == "OK\n"
    out = cli(s, "CF.RESERVE", "f", "1000")
    assert "exists" in out                      # error text, exit 0
    assert cli(s, "CF.ADD", "f", "a") == "1\n"
    assert cli(s, "--no-raw", "CF.ADD", "f", "b") == "(integer) 1\n"
    assert cli(s, "CF.ADDNX", "f", "a") == "0\n"
    assert cli(s, "CF.EXISTS", "f", "a") == "1\n"
    assert cli(s, "CF.EXISTS", "f", "not-added") == "0\n"
    assert cli(s, "CF.MEXISTS", "f", "a", "not-added", "b") == "1\n0\n1\n"
    assert cli(s, "--no-raw", "CF.MEXISTS", "f", "a", "not-added") == \
        "1) (integer) 1\n2) (integer) 0\n"
    assert cli(s, "CF.INSERT", "f", "ITEMS", "c", "d") == "1\n1\n"
    assert cli(s, "CF.COUNT", "f", "a") == "1\n"
    assert cli(s, "CF.DEL", "f", "a") == "1\n"
    assert cli(s, "CF.EXISTS", "f", "a") == "0\n"
    assert cli(s, "TYPE", "f") == "MBbloomCF\n"
    assert cli(s, "KEYS", "*") == "f\n"

    info = lines(cli(s, "CF.INFO", "f"))
    assert info[0:16:2] == CF_INFO_FIELDS
    vals = dict(zip(info[0::2], info[1::2]))
    assert vals["Number of items inserted"] == "3"
    assert vals["Number of items deleted"] == "1"
    assert vals["Number of filters"] == "1"
    assert int(vals["Size"]) > 0
    out = cli(s, "--no-raw", "CF.INFO", "f")
    # redis-cli pads the indexes when there are ten or more elements; the
    # names are simple strings, as RedisBloom sends them: unquoted.
    assert re.match(r' ?1\) Size\n ?2\) \(integer\) \d+\n', out), out

    assert "not found" in cli(s, "CF.INFO", "missing").lower()
    assert "not found" in cli(s, "CF.DEL", "missing", "x").lower()


@pytest.mark.cf
def test_cf_per_database(clean):
    s = clean
    assert cli(s, "-n", "3", "CF.ADD", "g", "x") == "1\n"
    assert cli(s, "-n", "3", "CF.EXISTS", "g", "x") == "1\n"
    assert cli(s, "CF.EXISTS", "g", "x") == "0\n"
    assert cli(s, "-n", "3", "DBSIZE") == "1\n"
    assert cli(s, "DBSIZE") == "0\n"
    assert cli(s, "-n", "4", "CF.EXISTS", "g", "x") == "0\n"


@pytest.mark.cf
def test_cf_auth(auth_server):
    s = auth_server
    assert cli(s, "CF.ADD", "af", "x").startswith("NOAUTH")
    assert cli(s, "CF.ADD", "af", "x", password=PASSWORD) == "1\n"
    assert cli(s, "CF.EXISTS", "af", "x", password=PASSWORD) == "1\n"
    assert cli(s, "-n", "5", "CF.EXISTS", "af", "x",
               password=PASSWORD) == "0\n"


@pytest.mark.cf
def test_cf_resp3(clean):
    s = clean
    assert cli(s, "-3", "CF.ADD", "r3", "a") == "(true)\n"
    assert cli(s, "-3", "CF.EXISTS", "r3", "nope") == "(false)\n"
    assert cli(s, "-3", "--no-raw", "CF.MEXISTS", "r3", "a", "nope") == \
        "1) (true)\n2) (false)\n"
    assert cli(s, "-3", "CF.COUNT", "r3", "a") == "1\n"
    out = cli(s, "-3", "--no-raw", "CF.INFO", "r3")
    assert re.match(r' ?1# Size => \(integer\) \d+\n', out), out
    names = [ln.split("# ", 1)[1].split(" => ")[0] for ln in lines(out)[:8]]
    assert names == CF_INFO_FIELDS


@pytest.mark.cf
def test_cf_scan(clean):
    s = clean
    for k in ("fa", "fb", "x"):
        cli(s, "CF.ADD", k, "1")
    out = cli(s, "--scan", "--pattern", "f*")
    assert sorted(lines(out)) == ["fa", "fb"]


@pytest.mark.cf
def test_cf_pipe_100k(clean):
    s = clean
    n = 100000
    payload = encode_command("CF.RESERVE", "piped", 200000) + b"".join(
        encode_command("CF.ADD", "piped", "item-%d" % i) for i in range(n))
    out = cli(s, "--pipe", stdin=payload)
    assert "errors: 0, replies: %d" % (n + 1) in out, out
    info = dict(zip(*[iter(lines(cli(s, "CF.INFO", "piped")))] * 2))
    assert info["Number of items inserted"] == str(n)
    sample = ["item-%d" % i for i in range(0, n, 997)]
    assert cli(s, "CF.MEXISTS", "piped", *sample) == "1\n" * len(sample)

    # Only CF.ADD commands. The filter is reserved first: an auto-created
    # one has the default capacity and, as in RedisBloom, a cap on growth.
    assert cli(s, "CF.RESERVE", "piped2", 150000) == "OK\n"
    payload = b"".join(encode_command("CF.ADD", "piped2", "x%d" % i)
                       for i in range(n))
    out = cli(s, "--pipe", stdin=payload)
    assert "errors: 0, replies: 100000" in out, out


@pytest.mark.cf
def test_cf_pipe_errors_counted(clean):
    s = clean
    payload = encode_command("CF.ADD", "pe", "a") + \
        encode_command("CF.INFO", "missing") + \
        encode_command("CF.EXISTS", "pe", "a")
    out = cli(s, "--pipe", stdin=payload, rc=1)
    assert "errors: 1, replies: 3" in out


@pytest.mark.cf
def test_cf_interactive_help(clean):
    """Interactive redis-cli learns hints from COMMAND DOCS: `help cf.insert`
    prints the argument synopsis."""
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:
        os.environ["HOME"] = "/nonexistent"
        os.environ["TERM"] = "dumb"   # no cursor-position queries
        os.execv(REDIS_CLI, [REDIS_CLI, "-h", "127.0.0.1",
                             "-p", str(clean.port)])
    out = bytearray()

    def help_printed():
        r, _, _ = select.select([fd], [], [], 0.5)
        if r:
            try:
                out.extend(os.read(fd, 65536))
            except OSError:  # redis-cli is gone: the assertions below say
                return True
        return b"ITEMS" in out

    def exited():
        return os.waitpid(pid, os.WNOHANG)[0] == pid
    try:
        os.write(fd, b"help cf.insert\r\n")
        try:
            wait_until(help_printed, timeout=20, step=0,
                       what="the help text")
        except AssertionError as e:
            raise AssertionError("%s; it printed %r" % (e, bytes(out)))
        os.write(fd, b"quit\r\n")
    finally:
        try:
            wait_until(exited, timeout=5, what="redis-cli to exit")
        except AssertionError:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(fd)
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.decode(errors="replace"))
    # Our ERROR extension may sit between CAPACITY and NOCREATE, our
    # WINDOW and AT after it.
    assert "CF.INSERT key [CAPACITY capacity] " in text, text
    assert ("[NOCREATE] [WINDOW milliseconds] [AT unix-time-milliseconds] "
            "ITEMS item [item ...]") in text, text
