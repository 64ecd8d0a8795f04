"""Shared fixtures for the client integration tests.

The daemon under test is taken from $CUCKOOD_BIN, else build/server/cuckood
relative to the repository root. Setting CUCKOOD_TEST_REDIS_SERVER=1 runs the
same suites against the system's redis-server instead, which checks the
non-CF expectations against the server cuckood imitates; tests marked `cf`
are skipped there.

Each server runs on a free port in its own temporary directory; it is ready
when PING answers (polled, bounded), and stopped with SIGTERM at the end.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

START_TIMEOUT = 15.0
STOP_TIMEOUT = 15.0


def use_redis_server():
    return os.environ.get("CUCKOOD_TEST_REDIS_SERVER", "") not in ("", "0")


def daemon_binary():
    if use_redis_server():
        path = shutil.which("redis-server")
        if not path:
            pytest.skip("redis-server not installed")
        return path
    path = os.environ.get("CUCKOOD_BIN") or os.path.join(
        ROOT, "build", "server", "cuckood")
    if not os.access(path, os.X_OK):
        pytest.fail("cuckood binary not found at %s (set CUCKOOD_BIN)" % path)
    return os.path.abspath(path)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------
# A small RESP2/RESP3 reader for raw-socket tests.

class RespError(Exception):
    """An error reply (-ERR ... or !<len> blob error)."""


class Closed(Exception):
    """The peer closed the connection."""


class RawConn:
    """A raw TCP connection that sends bytes and parses RESP replies."""

    def __init__(self, port, timeout=10.0):
        self.sock = socket.create_connection(("127.0.0.1", port),
                                             timeout=timeout)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def command(self, *args):
        """Sends one command as a RESP array of bulk strings."""
        self.send(encode_command(*args))
        return self.read()

    def _fill(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise Closed()
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def read_raw_line(self):
        """The next reply line, type byte included, unparsed."""
        return self._line()

    def read(self):
        """The next reply; error replies are returned as RespError objects.

        Types: + simple (str), - error (RespError), : integer, $ bulk (bytes
        or None), * array (list or None), % map (dict), ~ set (list),
        # boolean, _ null, , double, ( big number (int), = verbatim (bytes),
        > push (list tagged as ('push', list)).
        """
        line = self._line()
        if not line:
            raise ValueError("empty reply line")
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest.decode()
        if t == b"-":
            return RespError(rest.decode())
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t == b"!":
            return RespError(self._exact(int(rest)).decode())
        if t == b"=":
            return self._exact(int(rest))
        if t in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return None
            items = [self.read() for _ in range(n)]
            return ("push", items) if t == b">" else items
        if t == b"%":
            n = int(rest)
            out = {}
            for _ in range(n):
                k = self.read()
                out[k] = self.read()
            return out
        if t == b"#":
            if rest not in (b"t", b"f"):
                raise ValueError("bad boolean %r" % rest)
            return rest == b"t"
        if t == b"_":
            return None
        if t == b",":
            return float(rest)
        if t == b"(":
            return int(rest)
        raise ValueError("unknown reply type %r" % line)

    def closed_by_peer(self, timeout=5.0):
        """True when the peer closes the connection within timeout (any
        unread buffered data is discarded)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                if not self.sock.recv(65536):
                    return True
        except ConnectionResetError:
            return True
        except socket.timeout:
            return False


def encode_command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


# --------------------------------------------------------------------------
# The daemon process.

class Daemon:
    def __init__(self, extra_args=(), password=None):
        self.is_redis = use_redis_server()
        self.binary = daemon_binary()
        self.password = password
        self.extra_args = list(extra_args)
        self.dir = tempfile.mkdtemp(prefix="cuckood-integ-")
        self.proc = None
        self.port = None
        self.log = None

    def _argv(self, port):
        argv = [self.binary, "--port", str(port), "--dir", self.dir,
                "--bind", "127.0.0.1"]
        if self.is_redis:
            argv += ["--save", "", "--daemonize", "no", "--appendonly", "no"]
        if self.password is not None:
            argv += ["--requirepass", self.password]
        return argv + self.extra_args

    def start(self):
        last = None
        for _ in range(5):
            port = free_port()
            self.log = open(os.path.join(self.dir, "daemon.log"), "ab")
            proc = subprocess.Popen(self._argv(port), cwd=self.dir,
                                    stdout=self.log, stderr=subprocess.STDOUT)
            if self._wait_ready(proc, port):
                self.proc, self.port = proc, port
                return self
            last = proc.poll()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            self.log.close()
        raise RuntimeError("daemon did not start (last exit %r); log:\n%s"
                           % (last, self.log_text()))

    def _wait_ready(self, proc, port):
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", port),
                                              timeout=1.0) as s:
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    data = s.recv(256)
                    # A password-protected server answers -NOAUTH: also up.
                    if data.startswith(b"+PONG") or data.startswith(
                            b"-NOAUTH"):
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def log_text(self):
        try:
            with open(os.path.join(self.dir, "daemon.log"), "rb") as f:
                return f.read().decode(errors="replace")[-4000:]
        except OSError:
            return ""

    def stop(self):
        """SIGTERM, then wait. Returns the exit status (None if it had to be
        killed)."""
        if self.proc is None:
            return None
        rc = self.proc.poll()
        if rc is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                rc = None
        self.proc = None
        self.log.close()
        return rc

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def raw(self, timeout=10.0):
        return RawConn(self.port, timeout)


@pytest.fixture(scope="session")
def is_redis():
    return use_redis_server()


@pytest.fixture(scope="module")
def server():
    d = Daemon().start()
    yield d
    d.cleanup()


PASSWORD = "s3cret pass"


@pytest.fixture(scope="module")
def auth_server():
    d = Daemon(password=PASSWORD).start()
    yield d
    d.cleanup()


@pytest.fixture
def fresh_daemon():
    """Factory for a daemon owned by one test (stopped by the test or at its
    end)."""
    made = []

    def make(**kw):
        d = Daemon(**kw).start()
        made.append(d)
        return d

    yield make
    for d in made:
        d.cleanup()


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "cf: needs the CF commands (skipped against redis-server)")


def pytest_collection_modifyitems(config, items):
    if not use_redis_server():
        return
    skip = pytest.mark.skip(reason="CF commands: not in plain redis-server")
    for item in items:
        if item.get_closest_marker("cf") is not None:
            item.add_marker(skip)
