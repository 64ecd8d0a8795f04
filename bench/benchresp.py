"""The benchmarks' one RESP2 client (bench_persist.py, bench_memory.py,
bench_small.py): a raw socket, no client library, so a pipeline of many
thousands of commands costs the client little and reads in linear time."""

import socket


def enc(*args):
    """One command in RESP: an array of bulk strings."""
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        if not isinstance(a, bytes):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Conn:
    """Parses by index into its buffer; an error reply raises
    RuntimeError, simple strings come back as str, bulk strings as
    bytes."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.pos = 0

    def _fill(self):
        if self.pos > (1 << 20):
            del self.buf[:self.pos]
            self.pos = 0
        chunk = self.s.recv(1 << 22)
        if not chunk:
            raise EOFError("server closed the connection")
        self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n", self.pos)
            if i >= 0:
                line = bytes(self.buf[self.pos:i])
                self.pos = i + 2
                return line
            self._fill()

    def reply(self):
        line = self._line()
        t = line[:1]
        if t == b"$":
            n = int(line[1:])
            if n < 0:
                return None
            while len(self.buf) - self.pos < n + 2:
                self._fill()
            data = bytes(self.buf[self.pos:self.pos + n])
            self.pos += n + 2
            return data
        if t == b"*":
            n = int(line[1:])
            return None if n < 0 else [self.reply() for _ in range(n)]
        if t == b":":
            return int(line[1:])
        if t == b"-":
            raise RuntimeError(line[1:].decode())
        return line[1:].decode()

    def cmd(self, *args):
        self.s.sendall(enc(*args))
        return self.reply()

    def pipeline(self, cmds):
        """Sends cmds (argument tuples) in one write; returns the replies."""
        cmds = list(cmds)
        self.s.sendall(b"".join(enc(*c) for c in cmds))
        return [self.reply() for _ in cmds]

    def many(self, cmds, batch=10000):
        """Sends cmds (an iterable of argument tuples) in pipelined batches
        of batch and returns how many replies came back; an error reply
        stops it (RuntimeError)."""
        n = 0
        pending = []
        for c in cmds:
            pending.append(c)
            if len(pending) == batch:
                n += len(self.pipeline(pending))
                pending = []
        if pending:
            n += len(self.pipeline(pending))
        return n

    def info(self, section="memory"):
        text = self.cmd("INFO", section).decode()
        return dict(ln.split(":", 1) for ln in text.split("\r\n")
                    if ":" in ln and not ln.startswith("#"))
