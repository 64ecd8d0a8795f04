"""The one RESP client of the suites and the benchmarks: a raw socket, no
client library, so exact bytes can be sent and every reply type seen, and
a pipeline of many thousands of commands costs the client little.

encode_command(*args) one command as a RESP array of bulk strings (bytes go
                      as they are, anything else as its str()).

RawConn(port, host="127.0.0.1", timeout=30, rcvbuf=None, tls=None,
        nodelay=False)
  tls: an ssl.SSLContext (the handshake runs in the constructor); rcvbuf:
  SO_RCVBUF set before connecting (a small window); nodelay: TCP_NODELAY
  (the benchmarks' round trips).
  send(bytes), command(*args) (send one command, return its reply),
  call(*args) (the same, raising an error reply), read() the next reply,
  read_raw_line() the next line unparsed, pipeline(cmds) (one write, the
  replies), many(cmds, batch) (pipelined batches; an error reply raises),
  info(section) (INFO as a dict of str), closed_by_peer(timeout=5)
  (unread data discarded), at_eof(timeout=30) (closed with nothing
  unread), close(); recv_pause makes a slow reader.
  Replies, RESP2 and RESP3: + Simple (a str), - and ! RespError (returned,
  not raised, by command() and read(); equal when the texts are), : and (
  int, $ and = bytes (None for $-1), * and ~ list (None for *-1), % Map (a
  dict; .pairs keeps the wire order), # bool, , float, _ None, > Push (a
  list). A reply cut short raises Closed (a ConnectionError).
"""

import re
import socket
import time


class RespError(Exception):
    """An error reply (-ERR ... or a RESP3 blob error), as a value."""

    @property
    def text(self):
        return self.args[0]

    def __eq__(self, other):
        return isinstance(other, RespError) and other.text == self.text

    def __hash__(self):
        return hash(self.text)

    def __repr__(self):
        return "RespError(%r)" % self.text


class Simple(str):
    """A simple-string reply (+OK), distinct from a bulk string (bytes)."""


class Map(dict):
    """A RESP3 map; .pairs holds its (key, value) pairs in wire order."""

    def __init__(self, pairs):
        super().__init__(pairs)
        self.pairs = pairs
        if len(self) != len(pairs):
            raise ValueError("a map with a repeated key: %r" % (pairs,))


class Push(list):
    """A RESP3 push message."""


class Closed(ConnectionError):
    """The peer closed the connection."""


def encode_command(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def cf_info(rep):
    """A CF.INFO reply (a RESP2 flat list or a RESP3 map) as a dict of
    bytes names, after checking that every name came as a simple string,
    as RedisBloom sends them."""
    if isinstance(rep, Map):
        pairs = rep.pairs
    else:
        pairs = list(zip(rep[0::2], rep[1::2]))
    for k, _ in pairs:
        if not isinstance(k, Simple):
            raise AssertionError("CF.INFO name %r is not a simple string" % k)
    return {k.encode(): v for k, v in pairs}


def cf_debug_line(info):
    """RedisBloom's CF.DEBUG line (bytes) made of the figures of a CF.INFO
    dict, whose names are bytes (cf_info()) or str."""
    names = ("Bucket size", "Number of buckets", "Number of items inserted",
             "Number of items deleted", "Number of filters", "Max iterations",
             "Expansion rate")
    v = [info[n] if n in info else info[n.encode()] for n in names]
    return ("bktsize:%d buckets:%d items:%d deletes:%d filters:%d "
            "max_iterations:%d expansion:%d" % tuple(v)).encode()


def info_field(info, name):
    """One field of an INFO reply (bytes or str), as a str, or None."""
    if isinstance(info, bytes):
        info = info.decode(errors="replace")
    m = re.search(r"^%s:(.*?)\r?$" % re.escape(name), info, re.M)
    return m.group(1) if m else None


class RawConn:
    """A raw TCP connection that sends bytes and parses RESP replies."""

    def __init__(self, port, host="127.0.0.1", timeout=30.0, rcvbuf=None,
                 tls=None, nodelay=False):
        if tls is not None:  # an ssl.SSLContext: the handshake runs here
            raw = socket.create_connection((host, port), timeout=timeout)
            self.sock = tls.wrap_socket(raw, server_hostname="localhost")
        elif rcvbuf is None:
            self.sock = socket.create_connection((host, port),
                                                 timeout=timeout)
        else:  # set before connecting, so the window starts that small
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            self.sock.settimeout(timeout)
            self.sock.connect((host, port))
        if nodelay:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.recv_pause = 0.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.sock.close()

    def send(self, data):
        self.sock.sendall(data)

    def command(self, *args):
        self.send(encode_command(*args))
        return self.read()

    def call(self, *args):
        """command(), but an error reply raises it."""
        return _raised(self.command(*args))

    def pipeline(self, cmds):
        """Sends cmds (argument tuples) in one write; returns the replies,
        error replies among them as values."""
        cmds = list(cmds)
        self.send(b"".join(encode_command(*c) for c in cmds))
        return [self.read() for _ in cmds]

    def many(self, cmds, batch=10000):
        """Sends cmds (an iterable of argument tuples) in pipelined batches
        of batch and returns how many replies came back; an error reply
        raises it (RespError)."""
        n = 0
        pending = []
        for c in cmds:
            pending.append(c)
            if len(pending) == batch:
                n += len([_raised(r) for r in self.pipeline(pending)])
                pending = []
        if pending:
            n += len([_raised(r) for r in self.pipeline(pending)])
        return n

    def info(self, section="memory"):
        """INFO section as a dict of str."""
        text = self.call("INFO", section).decode()
        return dict(ln.split(":", 1) for ln in text.split("\r\n")
                    if ":" in ln and not ln.startswith("#"))

    def _fill(self):
        if self.recv_pause:
            time.sleep(self.recv_pause)  # a slow reader, by design
        chunk = self.sock.recv(65536)
        if not chunk:
            raise Closed("closed by the server")
        self.buf += chunk

    def read_raw_line(self):
        """The next reply line, type byte included, unparsed."""
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line = bytes(self.buf[:i])
                del self.buf[:i + 2]
                return line
            self._fill()

    def _exact(self, n):
        while len(self.buf) < n + 2:
            self._fill()
        if self.buf[n:n + 2] != b"\r\n":
            raise ValueError("bulk of %d bytes not ended by CRLF" % n)
        data = bytes(self.buf[:n])
        del self.buf[:n + 2]
        return data

    def read(self):
        line = self.read_raw_line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return Simple(rest.decode())
        if t == b"-":
            return RespError(rest.decode())
        if t in (b":", b"("):
            return int(rest)
        if t in (b"$", b"="):
            n = int(rest)
            return None if n < 0 else self._exact(n)
        if t == b"!":
            return RespError(self._exact(int(rest)).decode())
        if t in (b"*", b"~", b">"):
            n = int(rest)
            if n < 0:
                return None
            items = [self.read() for _ in range(n)]
            return Push(items) if t == b">" else items
        if t == b"%":
            return Map([(self.read(), self.read()) for _ in range(int(rest))])
        if t == b"|":  # attributes describe the reply that follows
            for _ in range(2 * int(rest)):
                self.read()
            return self.read()
        if t == b"#":
            if rest not in (b"t", b"f"):
                raise ValueError("bad boolean %r" % line)
            return rest == b"t"
        if t == b"_":
            return None
        if t == b",":
            return float(rest)
        raise ValueError("unknown reply type %r" % line)

    def _drain(self, timeout):
        """(closed, the bytes that came first) once the peer closes or
        timeout passes."""
        self.sock.settimeout(timeout)
        left = bytes(self.buf)
        self.buf.clear()
        try:
            while True:
                chunk = self.sock.recv(65536)
                if not chunk:
                    return True, left
                left += chunk
        except ConnectionResetError:
            return True, left
        except socket.timeout:
            return False, left

    def closed_by_peer(self, timeout=5.0):
        """True when the peer closes the connection within timeout (any
        unread data is discarded)."""
        return self._drain(timeout)[0]

    def at_eof(self, timeout=30.0):
        """True when the peer closes the connection within timeout with
        nothing left unread."""
        closed, left = self._drain(timeout)
        return closed and not left


def _raised(reply):
    if isinstance(reply, RespError):
        raise reply
    return reply
