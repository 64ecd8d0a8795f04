"""Output limits under pipelining: a read batch whose replies are far bigger
than its requests (CF.SCANDUMP returns up to 4 MB for 20 bytes) must not make
the server buffer the whole batch. Dispatching pauses once a client's pending
output passes a few megabytes (or its hard limit), and resumes as the client
reads; a client that does not read is closed at its hard limit.
"""

import socket
import time

import pytest
import redis

from conftest import Daemon, encode_command

pytestmark = pytest.mark.cf

CHUNK = 4 << 20  # bytes of one CF.SCANDUMP data chunk


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (field, pid))


def wait_until(pred, timeout=30.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


@pytest.fixture
def daemon():
    made = []

    def make(*args):
        d = Daemon(extra_args=[str(a) for a in args]).start()
        made.append(d)
        return d

    yield make
    for d in made:
        d.cleanup()


def client(d):
    return redis.Redis(host="127.0.0.1", port=d.port, socket_timeout=30)


def big_filter(r, key="g"):
    """A filter whose first data chunk is a full 4 MB, with some items in
    it so the chunk is not all zeros; returns CF.SCANDUMP's reply for it
    (the next iterator and the chunk)."""
    assert r.execute_command("CF.RESERVE", key, 5000000) == b"OK"
    r.execute_command("CF.INSERT", key, "ITEMS",
                      *["item-%d" % i for i in range(20000)])
    it, chunk = r.execute_command("CF.SCANDUMP", key, 1)
    assert it != 0 and len(chunk) == CHUNK
    assert chunk.count(0) < len(chunk)
    return [it, chunk]


class Reader:
    """Reads RESP2 replies off a socket into a bytearray (big bulk replies
    without quadratic copying), optionally slowly."""

    def __init__(self, sock, pause=0.0, recv_size=65536):
        self.sock = sock
        self.buf = bytearray()
        self.pause = pause
        self.recv_size = recv_size

    def _fill(self):
        if self.pause:
            time.sleep(self.pause)
        data = self.sock.recv(self.recv_size)
        if not data:
            raise EOFError("closed by the server")
        self.buf += data

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return line
            self._fill()

    def read(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t in (b"+", b"-"):
            return line.decode()
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data = bytes(self.buf[:n])
            assert self.buf[n:n + 2] == b"\r\n"
            del self.buf[:n + 2]
            return data
        if t == b"*":
            return [self.read() for _ in range(int(rest))]
        raise AssertionError("unexpected reply line %r" % line)

    def at_eof(self, timeout=30.0):
        """True when the server closes the connection with nothing more."""
        self.sock.settimeout(timeout)
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            return not self.buf
        return data == b"" and not self.buf


def client_entry(r, name):
    for c in r.client_list():
        if c.get("name") == name:
            return c
    return None


def test_non_reader_pipelining_big_replies_is_cut_off(daemon):
    d = daemon("--client-output-buffer-limit", "normal", "1mb", "0", "0")
    r = client(d)
    big_filter(r)
    hwm_before = status_kb(d.proc.pid, "VmHWM")

    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", d.port))
    n = 250  # 1 GB of replies, from 7 kB of requests in one write
    s.sendall(encode_command("CF.SCANDUMP", "g", 1) * n)

    def cut_off():
        return r.info("clients")["connected_clients"] == 1
    assert wait_until(cut_off), "the non-reading client was not closed"
    assert "output buffer limits" in d.log_text()

    # The server held about one reply for it, never the whole batch.
    grew_kb = status_kb(d.proc.pid, "VmHWM") - hwm_before
    assert grew_kb < 64 * 1024, "peak RSS grew by %d kB" % grew_kb
    stats = r.info("commandstats").get("cmdstat_cf.scandump", {})
    # 1 from big_filter, then the few run before the limit was passed.
    assert stats.get("calls", 0) < 10, stats

    # Everyone else is served as usual.
    assert r.ping()
    other = client(d)
    assert other.execute_command("CF.EXISTS", "g", "item-7") == 1
    it, chunk = other.execute_command("CF.SCANDUMP", "g", 1)
    assert len(chunk) == CHUNK
    other.close()
    s.close()


def test_stalled_reader_without_hard_limit_times_out(daemon):
    """No hard limit: a client that stops reading is held (bounded), and
    as in Redis the idle timeout counts it idle once neither its input nor
    its output moves, so it does not stay forever."""
    d = daemon("--timeout", "1")
    r = client(d)
    big_filter(r)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", d.port))
    s.sendall(encode_command("CF.SCANDUMP", "g", 1) * 250)

    def gone():
        # r is closed by the timeout too while it sits idle; ask afresh
        probe = client(d)
        try:
            return probe.info("clients")["connected_clients"] == 1
        finally:
            probe.close()
    assert wait_until(gone, timeout=60, step=0.5), \
        "a client stuck with unread replies was never closed"
    probe = client(d)
    stats = probe.info("commandstats").get("cmdstat_cf.scandump", {})
    assert stats.get("calls", 0) < 10, stats  # held, never the whole batch
    probe.close()
    s.close()


def test_slow_reader_gets_every_reply_in_order(daemon):
    d = daemon()  # no output limit
    r = client(d)
    first = big_filter(r)

    s = socket.create_connection(("127.0.0.1", d.port), timeout=30)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.sendall(encode_command("CLIENT", "SETNAME", "slow"))
    rd = Reader(s)
    assert rd.read() == "+OK"

    # 30 chunks (120 MB of replies) with markers between them, in one write.
    n = 30
    batch = b"".join(encode_command("CF.SCANDUMP", "g", 1) +
                     encode_command("ECHO", "marker-%d" % i)
                     for i in range(n))
    s.sendall(batch + encode_command("PING"))

    # Before the client reads anything, the server has run only part of the
    # batch: the rest waits unparsed, and the output held stays small.
    def paused():
        e = client_entry(r, "slow")
        return e is not None and int(e["qbuf"]) > 0 and \
            int(e["omem"]) > 0
    assert wait_until(paused), client_entry(r, "slow")
    e = client_entry(r, "slow")
    assert int(e["omem"]) < 4 * CHUNK, e

    rd.pause = 0.0005
    for i in range(n):
        got = rd.read()
        assert isinstance(got, list) and len(got) == 2, i
        assert got == first, "chunk %d differs" % i
        assert rd.read() == b"marker-%d" % i
    assert rd.read() == "+PONG"
    # The connection is in a normal state again: commands and reads work.
    s.sendall(encode_command("ECHO", "after"))
    assert rd.read() == b"after"
    assert int(client_entry(r, "slow")["qbuf"]) == 0
    s.close()


def test_pause_keeps_protocol_error_order(daemon):
    d = daemon()
    r = client(d)
    first = big_filter(r)
    s = socket.create_connection(("127.0.0.1", d.port), timeout=30)
    n = 6
    s.sendall(encode_command("CF.SCANDUMP", "g", 1) * n +
              encode_command("ECHO", "last") + b"*1\r\n$x\r\n" +
              encode_command("CF.ADD", "g2", "after-error"))
    time.sleep(0.2)  # let the server pause on this client
    rd = Reader(s)
    for i in range(n):
        assert rd.read() == first, i
    assert rd.read() == b"last"
    err = rd.read()
    assert err.startswith("-ERR Protocol error"), err
    assert rd.at_eof()
    assert r.exists("g2") == 0


def test_pause_keeps_quit_semantics(daemon):
    d = daemon()
    r = client(d)
    first = big_filter(r)
    s = socket.create_connection(("127.0.0.1", d.port), timeout=30)
    n = 6
    s.sendall(encode_command("CF.SCANDUMP", "g", 1) * n +
              encode_command("QUIT") +
              encode_command("CF.ADD", "g2", "after-quit"))
    time.sleep(0.2)
    rd = Reader(s)
    for i in range(n):
        assert rd.read() == first, i
    assert rd.read() == "+OK"
    assert rd.at_eof()
    assert r.exists("g2") == 0
    assert r.info("clients")["connected_clients"] == 1
