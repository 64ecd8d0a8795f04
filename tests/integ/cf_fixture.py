"""Fixtures for the CF.* integration tests: a real cuckood on a free port
with a temporary --dir, a redis-py client, and a raw RESP2/RESP3 connection
that keeps the wire types (booleans, doubles, maps, nulls) visible.

Imported by test_cf.py (not a conftest.py, so it cannot clash with other
integration suites' conftest)."""

import os
import signal
import socket
import ssl
import subprocess
import tempfile
import time

import pytest
import redis

from tls_certs import make_certs, server_args

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = os.environ.get("CUCKOOD_BIN",
                     os.path.join(ROOT, "build", "server", "cuckood"))


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """One cuckood process; stop() sends SIGTERM and waits. With tls=True
    it also listens on a TLS port, and client() and raw() use that one
    (with a client certificate); the plain port serves the readiness
    check."""

    def __init__(self, *extra, tls=False):
        if not os.access(BIN, os.X_OK):
            pytest.skip("cuckood binary not built: %s" % BIN)
        self.dir = tempfile.TemporaryDirectory(prefix="cuckood-cf-")
        self.port = free_port()
        self.log = open(os.path.join(self.dir.name, "log.txt"), "w+")
        self.certs = None
        if tls:
            self.certs = make_certs(os.path.join(self.dir.name, "certs"))
            self.tls_port = free_port()
            extra = ("--tls-port", str(self.tls_port)) + tuple(
                server_args(self.certs)) + extra
        args = [BIN, "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", self.dir.name] + list(extra)
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
        if self.certs is not None:
            return redis.Redis(host="127.0.0.1", port=self.tls_port,
                               socket_timeout=60, ssl=True,
                               ssl_ca_certs=self.certs["ca.crt"],
                               ssl_certfile=self.certs["client.crt"],
                               ssl_keyfile=self.certs["client.key"], **kw)
        return redis.Redis(host="127.0.0.1", port=self.port,
                           socket_timeout=60, **kw)

    def raw(self):
        if self.certs is not None:
            ctx = ssl.create_default_context(cafile=self.certs["ca.crt"])
            ctx.load_cert_chain(self.certs["client.crt"],
                                self.certs["client.key"])
            return Raw(self.tls_port, ctx)
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

    def __init__(self, port, tls_context=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        if tls_context is not None:
            self.sock = tls_context.wrap_socket(self.sock,
                                                server_hostname="localhost")
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


@pytest.fixture(scope="module", params=["plain", "tls"])
def cf_server(request):
    """The suite runs twice: over plain TCP, then again over TLS."""
    d = Daemon(tls=request.param == "tls")
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
