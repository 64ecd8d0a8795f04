"""The integration suites' one harness: the daemon launcher, the raw RESP
reader and the bounded wait. conftest.py and every test file import it
(`from harness import ...`); nothing else starts a daemon, parses replies
off a socket or polls with a deadline.

Binary
  daemon_binary()     $CUCKOOD_BIN, else build/server/cuckood; a missing
                      binary FAILS the test. With CUCKOOD_TEST_REDIS_SERVER=1
                      (use_redis_server()) it is the system's redis-server,
                      the reference run: only there may a suite skip.
  run_binary(*args, timeout=10, **kw)
                      subprocess.run of the binary, stdout/stderr piped.
  free_port()         a port that was free a moment ago.
  module_server_env() the environment of a redis-server loading the module
                      ($CUCKOO_SERVER_PRELOAD preloaded: the sanitizer
                      build's module needs the ASan runtime first), or None.
  sanitizer_report(text)
                      the first ASan/LSan/UBSan report in a log, or None.

Waiting
  wait_until(pred, timeout=30, step=0.05, what=None)
                      calls pred until it returns a true value and returns
                      that value; past timeout it raises AssertionError
                      naming `what` and pred's last value. A bound, never a
                      measurement.

Daemon(*args, password=None, conf=None, dir=None, cwd=None, prefix=(),
       preexec_fn=None)
  Without conf, the binary runs as `--port P --dir DIR --bind 127.0.0.1
  [--requirepass PASSWORD] ARGS...`. With conf (a config file's text) it
  runs as `CONF ARGS...` and the harness adds nothing: the text and ARGS
  say where it listens, through the placeholders "{port}" and "{dir}",
  which are replaced in both; password then only says how to AUTH. prefix
  goes before the binary (it must exec it, as setpriv does). dir is the
  data directory (default: a fresh one, removed by cleanup()); the log
  (stdout and stderr) and the config file live in d.home.
  start() picks a port, starts the process and polls (bounded) until the
  port answers INFO server with the pid of the process it started: another
  process answering there (a port taken between choosing and binding, e.g.
  by a parallel ctest job) is a PidMismatch, and start() kills its process
  and tries another port, at most ATTEMPTS times. start() may be called
  again after the process stopped (a new port each time).
  stop(timeout=15) SIGTERM then wait: the exit status, None if it had to be
  killed. kill() SIGKILL. wait(timeout=15) the exit status of a process
  that exits by itself. cleanup() stops it and removes d.home (and dir
  unless the caller gave it). raw(**kw) a RawConn, client(**kw) a
  redis-py client, log_text() the whole log. Attributes: port, pid, proc,
  dir, home, conf (its path, or None), password.

RawConn(port, host="127.0.0.1", timeout=30, rcvbuf=None)
  send(bytes), command(*args) (send one command, return its reply),
  read() the next reply, read_raw_line() the next line unparsed,
  closed_by_peer(timeout=5) (unread data discarded), at_eof(timeout=30)
  (closed with nothing unread), close(); recv_pause makes a slow reader.
  Replies, RESP2 and RESP3: + Simple (a str), - and ! RespError (returned,
  not raised; equal when the texts are), : and ( int, $ and = bytes (None
  for $-1), * and ~ list (None for *-1), % Map (a dict; .pairs keeps the
  wire order), # bool, , float, _ None, > Push (a list). A reply cut short
  raises Closed (a ConnectionError).
encode_command(*args) one command as a RESP array of bulk strings.
"""

import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time

import pytest
import redis

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The password of the conftest's auth_server fixture.
PASSWORD = "s3cret pass"


def use_redis_server():
    return os.environ.get("CUCKOOD_TEST_REDIS_SERVER", "") not in ("", "0")


def use_module():
    """CUCKOOD_TEST_MODULE=1: the target is redis-server with the cuckoo.so
    module ($CUCKOO_MODULE, else build/module/cuckoo.so) loaded, which runs
    the CF suites unchanged against the module."""
    return os.environ.get("CUCKOOD_TEST_MODULE", "") not in ("", "0")


def module_server_env():
    """The environment of a redis-server that loads the module. With
    $CUCKOO_SERVER_PRELOAD (set by the sanitizer build: the ASan runtime,
    which must be the first library of a process, and Debian's redis-server
    is not linked with it) that library is preloaded into the server, and
    only there. None: the server inherits ours."""
    preload = os.environ.get("CUCKOO_SERVER_PRELOAD")
    if not preload:
        return None
    env = dict(os.environ)
    env["LD_PRELOAD"] = preload
    # A report ends the server with an exit status, not abort(): Redis's own
    # SIGABRT handler (its crash report) would hang in a process that the
    # sanitizer has stopped.
    env["ASAN_OPTIONS"] = ":".join(
        filter(None, [env.get("ASAN_OPTIONS"), "abort_on_error=0"]))
    return env


def sanitizer_report(text):
    """The first sanitizer report (ASan, LSan, UBSan) in a log, or None."""
    m = re.search(r"^.*(==\d+==ERROR: \w+Sanitizer|runtime error:).*$", text,
                  re.M)
    return text[m.start():m.start() + 3000] if m else None


def module_path():
    path = os.environ.get("CUCKOO_MODULE") or os.path.join(
        ROOT, "build", "module", "cuckoo.so")
    if not os.access(path, os.R_OK):
        pytest.fail("module not found at %s (set CUCKOO_MODULE)" % path)
    return os.path.abspath(path)


def daemon_binary():
    if use_redis_server() or use_module():
        path = shutil.which("redis-server")
        if not path:
            pytest.skip("redis-server not installed")
        return path
    path = os.environ.get("CUCKOOD_BIN") or os.path.join(
        ROOT, "build", "server", "cuckood")
    if not os.access(path, os.X_OK):
        pytest.fail("cuckood binary not found at %s (set CUCKOOD_BIN)" % path)
    return os.path.abspath(path)


def run_binary(*args, timeout=10, **kw):
    opts = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                timeout=timeout)
    opts.update(kw)
    return subprocess.run([daemon_binary()] + [str(a) for a in args], **opts)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(pred, timeout=30.0, step=0.05, what=None):
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() >= deadline:
            what = what or (pred.__doc__ or pred.__name__).strip()
            raise AssertionError("timed out after %gs waiting for %s "
                                 "(last: %r)" % (timeout, what, v))
        time.sleep(step)


# --------------------------------------------------------------------------
# RESP

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
        if isinstance(a, str):
            a = a.encode()
        elif isinstance(a, int):
            a = str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


class RawConn:
    """A raw TCP connection that sends bytes and parses RESP replies."""

    def __init__(self, port, host="127.0.0.1", timeout=30.0, rcvbuf=None,
                 tls=None):
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


# --------------------------------------------------------------------------
# The daemon process.

class PidMismatch(AssertionError):
    """The port answered, but not from the process the harness started."""


class Exited(AssertionError):
    """The process exited while it was awaited."""


def info_field(info, name):
    """One field of an INFO reply (bytes or str), as a str, or None."""
    if isinstance(info, bytes):
        info = info.decode(errors="replace")
    m = re.search(r"^%s:(.*?)\r?$" % re.escape(name), info, re.M)
    return m.group(1) if m else None


def answering_pid(port, password=None):
    """The process_id that INFO server reports on port: an int, None when
    nothing answers yet, or the error reply that came instead."""
    try:
        c = RawConn(port, timeout=5.0)
    except OSError:
        return None
    try:
        if password is not None:
            c.command("AUTH", password)
        info = c.command("INFO", "server")
    except OSError:
        return None
    finally:
        c.close()
    if isinstance(info, RespError):
        return info
    pid = info_field(info, "process_id")
    return int(pid) if pid is not None else RespError("no process_id")


class Daemon:
    START_TIMEOUT = 30.0
    STOP_TIMEOUT = 15.0
    ATTEMPTS = 5
    pick_port = staticmethod(free_port)

    def __init__(self, *args, password=None, conf=None, dir=None, cwd=None,
                 prefix=(), preexec_fn=None, tls=None):
        self.is_redis = use_redis_server() or use_module()
        self.binary = daemon_binary()
        self.args = [str(a) for a in args]
        self.password = password
        self.conf_text = conf
        self.prefix = list(prefix)
        self.preexec_fn = preexec_fn
        self.home = tempfile.mkdtemp(prefix="cuckood-integ-")
        os.chmod(self.home, 0o755)  # a daemon that drops root reads conf
        self.own_dir = dir is None
        self.dir = self.home if dir is None else dir
        self.cwd = cwd
        self.conf = None if conf is None else os.path.join(self.home,
                                                           "cuckood.conf")
        self.logpath = os.path.join(self.home, "daemon.log")
        self.proc = None
        self.port = None
        self.log = None
        # tls: a certificate set from tls_certs.make_certs(): the daemon also
        # listens on a TLS port (the plain port answers the readiness
        # check), and client() and raw() use TLS with the client's
        # certificate.
        self.certs = tls
        self.tls_port = None

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def _fill(self, text, port):
        return text.replace("{port}", str(port)).replace("{dir}", self.dir)

    def argv(self, port):
        argv = self.prefix + [self.binary]
        if self.conf is not None:
            with open(self.conf, "w") as f:
                f.write(self._fill(self.conf_text, port))
            os.chmod(self.conf, 0o644)
            argv.append(self.conf)
        else:
            argv += ["--port", str(port), "--dir", self.dir,
                     "--bind", "127.0.0.1"]
            if self.is_redis:
                argv += ["--save", "", "--daemonize", "no",
                         "--appendonly", "no"]
            if use_module():
                # No per-command latency histograms: each is allocated on
                # its command's first call, which would move used_memory
                # under a test that checks a refusal allocates nothing.
                argv += ["--latency-tracking", "no",
                         "--enable-debug-command", "yes",
                         "--loadmodule", module_path()]
            if self.password is not None:
                argv += ["--requirepass", self.password]
        if self.certs is not None:
            from tls_certs import server_args
            self.tls_port = free_port()
            argv += ["--tls-port", str(self.tls_port)]
            argv += server_args(self.certs)
        return argv + [self._fill(a, port) for a in self.args]

    def tls_context(self):
        ctx = ssl.create_default_context(cafile=self.certs["ca.crt"])
        ctx.load_cert_chain(self.certs["client.crt"],
                            self.certs["client.key"])
        return ctx

    def start(self):
        assert not self.alive(), "already running"
        why = None
        for _ in range(self.ATTEMPTS):
            port = self.pick_port()
            self.log = open(self.logpath, "wb")
            self.port = port
            self.proc = subprocess.Popen(
                self.argv(port), cwd=self.cwd or self.dir, stdout=self.log,
                stderr=subprocess.STDOUT, preexec_fn=self.preexec_fn,
                env=module_server_env() if use_module() else None)
            try:
                self._await_own_answer()
                return self
            except (PidMismatch, Exited) as e:
                why = e
                self.kill()
            except BaseException:
                self.kill()
                raise
        raise type(why)("daemon not started in %d attempts: %s\nlog:\n%s"
                        % (self.ATTEMPTS, why, self.log_text()[-4000:]))

    def _await_own_answer(self):
        """Returns once the port answers with this process's pid."""
        last = []

        def answered():
            if self.proc.poll() is not None:
                raise Exited("exited with status %d" % self.proc.returncode)
            pid = answering_pid(self.port, self.password)
            last[:] = [pid]
            return isinstance(pid, int) and pid

        try:
            pid = wait_until(answered, self.START_TIMEOUT, what="port %d to "
                             "answer INFO server" % self.port)
        except (PidMismatch, Exited):
            raise
        except AssertionError:
            self.kill()
            raise AssertionError("port %d never answered INFO server (last: "
                                 "%r)\nlog:\n%s" % (self.port, last,
                                                    self.log_text()[-4000:]))
        if pid != self.proc.pid:
            raise PidMismatch("port %d is answered by pid %d, not by the "
                              "daemon started (pid %d)"
                              % (self.port, pid, self.proc.pid))

    def _close_log(self):
        if self.log is not None:
            self.log.close()
            self.log = None

    def stop(self, timeout=None):
        """SIGTERM, then wait: the exit status (None if it had to be
        killed)."""
        if self.proc is None:
            return None
        rc = self.proc.poll()
        if rc is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout=timeout or self.STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                rc = None
        self._close_log()
        return rc

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._close_log()

    def wait(self, timeout=None):
        """The exit status of a process that exits by itself."""
        rc = self.proc.wait(timeout=timeout or self.STOP_TIMEOUT)
        self._close_log()
        return rc

    def cleanup(self):
        self.stop()
        # The module under the sanitizers: a report (a leak shows at exit)
        # fails the test that ran it.
        report = sanitizer_report(self.log_text()) if (
            use_module() and module_server_env() is not None) else None
        shutil.rmtree(self.home, ignore_errors=True)
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        assert report is None, "sanitizer report:\n" + report

    def log_text(self):
        try:
            with open(self.logpath, "rb") as f:
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def raw(self, **kw):
        if self.certs is not None:
            return RawConn(self.tls_port, tls=self.tls_context(), **kw)
        return RawConn(self.port, **kw)

    def client(self, **kw):
        opts = dict(host="127.0.0.1", port=self.port,
                    password=self.password, socket_timeout=30)
        if self.certs is not None:
            opts.update(port=self.tls_port, ssl=True,
                        ssl_ca_certs=self.certs["ca.crt"],
                        ssl_certfile=self.certs["client.crt"],
                        ssl_keyfile=self.certs["client.key"])
        opts.update(kw)
        return redis.Redis(**opts)
