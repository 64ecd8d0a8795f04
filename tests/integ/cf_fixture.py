"""Fixtures for the CF.* integration tests: a real cuckood on a free port
with a temporary --dir, a redis-py client, and a raw RESP2/RESP3 connection
that keeps the wire types (booleans, doubles, maps, nulls) visible.

Imported by test_cf.py (not a conftest.py, so it cannot clash with other
integration suites' conftest)."""

import os
import signal
import socket
import subprocess
import tempfile
import time

import pytest
import redis

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("CUCKOOD_BIN",
                     os.path.join(ROOT, "build", "server", "cuckood"))
# CF_TARGET=module runs the suite against redis-server with cuckoo.so
# ($CUCKOO_MODULE) loaded instead of the daemon: one suite, two targets.
TARGET = os.environ.get("CF_TARGET", "daemon")
MODULE = os.environ.get("CUCKOO_MODULE",
                        os.path.join(ROOT, "build", "module", "cuckoo.so"))


def target_argv(port, dirname, extra):
    if TARGET == "module":
        # No per-command latency histograms: each is allocated on its
        # command's first call, which would move used_memory under a test
        # that checks a refusal allocates nothing.
        return (["redis-server", "--latency-tracking", "no", "--port", str(port), "--bind", "127.0.0.1",
                 "--dir", dirname, "--save", "", "--appendonly", "no",
                 "--enable-debug-command", "yes", "--loadmodule", MODULE] +
                list(extra))
    return [BIN, "--port", str(port), "--bind", "127.0.0.1",
            "--dir", dirname] + list(extra)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """One cuckood process; stop() sends SIGTERM and waits."""

    def __init__(self, *extra):
        if TARGET == "module":
            if not os.access(MODULE, os.R_OK):
                pytest.skip("module not built: %s" % MODULE)
        elif not os.access(BIN, os.X_OK):
            pytest.skip("cuckood binary not built: %s" % BIN)
        self.dir = tempfile.TemporaryDirectory(prefix="cuckood-cf-")
        self.port = free_port()
        self.log = open(os.path.join(self.dir.name, "log.txt"), "w+")
        args = target_argv(self.port, self.dir.name, extra)
        self.proc = subprocess.Popen(args, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        self._wait_ready()

    def _wait_ready(self):
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.log.seek(0)
                raise RuntimeError("cuckood exited: %s" % self.log.read())
            try:
                with socket.create_connection(("127.0.0.1", self.port),
                                              timeout=1) as s:
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("cuckood did not answer PING")

    def alive(self):
        return self.proc.poll() is None

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port,
                           socket_timeout=60, **kw)

    def raw(self):
        return Raw(self.port)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        self.dir.cleanup()


class Err:
    """An error reply, kept as a value so tests can compare its text."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return "Err(%r)" % self.text

    def __eq__(self, other):
        return isinstance(other, Err) and other.text == self.text


class Simple(str):
    """A simple-string reply (+OK), distinct from a bulk string (bytes)."""


class Map(list):
    """A RESP3 map, as an ordered list of (key, value) pairs."""


class Raw:
    """A blocking RESP connection that returns replies with their wire type:
    Simple, Err, int, bool (RESP3 #), float (RESP3 ,), bytes, None, list,
    Map."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.buf = b""

    def close(self):
        self.sock.close()

    @staticmethod
    def encode(*args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, int):
                a = str(a).encode()
            elif isinstance(a, str):
                a = a.encode()
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def send_raw(self, data):
        self.sock.sendall(data)

    def cmd(self, *args):
        self.sock.sendall(self.encode(*args))
        return self.read()

    def _fill(self):
        chunk = self.sock.recv(1 << 20)
        if not chunk:
            raise ConnectionError("connection closed")
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def _bytes(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return Simple(rest.decode())
        if t == b"-":
            return Err(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"#":
            assert rest in (b"t", b"f"), line
            return rest == b"t"
        if t == b",":
            return float(rest)
        if t == b"_":
            return None
        if t in (b"$", b"="):
            n = int(rest)
            return None if n < 0 else self._bytes(n)
        if t in (b"*", b"~"):
            n = int(rest)
            return None if n < 0 else [self.read() for _ in range(n)]
        if t == b"%":
            return Map((self.read(), self.read()) for _ in range(int(rest)))
        raise AssertionError("unexpected reply line %r" % line)


@pytest.fixture(scope="module")
def cf_server():
    d = Daemon()
    yield d
    d.stop()


@pytest.fixture
def r(cf_server):
    c = cf_server.client()
    yield c
    c.close()


@pytest.fixture
def raw2(cf_server):
    c = cf_server.raw()
    yield c
    c.close()


@pytest.fixture
def raw3(cf_server):
    c = cf_server.raw()
    hello = c.cmd("HELLO", "3")
    assert isinstance(hello, Map), hello
    assert dict(hello)[b"proto"] == 3
    yield c
    c.close()


@pytest.fixture
def key(request):
    """A key unique to the test, so tests share one server safely."""
    return "cf:" + request.node.name
