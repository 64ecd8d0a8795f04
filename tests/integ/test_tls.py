"""TLS on the wire: redis-cli --tls, redis-py with ssl=True and client
certificates, raw TLS sockets; client authentication required / optional /
off, wrong CA, expired certificate, plain text on the TLS port, TLS on the
plain port, stalled handshakes, a thousand handshakes at once, certificate
rotation by CONFIG SET, bad certificates at start-up, the health probe, and
a background save while TLS clients stay connected.

Certificates are made at run time (support/tls_certs.py). Each daemon keeps
its plain port open beside the TLS port: the launcher checks readiness there,
and the tests compare the two."""

import asyncio
import os
import resource
import socket
import ssl
import subprocess
import tempfile

import pytest
import redis

from support.proc import (Daemon, daemon_binary, free_port, use_redis_server,
                          wait_until)
from support.resp import Closed, RawConn, RespError, encode_command
from support.tls_certs import KEY_PASS, make_certs, server_args

pytestmark = pytest.mark.skipif(
    use_redis_server(), reason="cuckood's own TLS directives and log lines")

HANDSHAKE_TIMEOUT_MS = 3000


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(str(tmp_path_factory.mktemp("certs")))


def start(certs, auth="yes", extra=(), handshake_ms=HANDSHAKE_TIMEOUT_MS):
    tport = free_port()
    d = Daemon(*(["--tls-port", str(tport), "--loglevel", "verbose",
                  "--tls-handshake-timeout", str(handshake_ms)] +
                 server_args(certs, auth) + list(extra)))
    d.start()
    d.tls_port = tport
    return d


@pytest.fixture(scope="module")
def tls_server(certs):
    d = start(certs)
    yield d
    d.cleanup()


def context(certs, cert="client", ca="ca.crt", max_version=None):
    ctx = ssl.create_default_context(cafile=certs[ca])
    if cert is not None:
        ctx.load_cert_chain(certs[cert + ".crt"], certs[cert + ".key"])
    if max_version is not None:
        ctx.maximum_version = max_version
    return ctx


class TlsConn(RawConn):
    """RawConn over TLS (the handshake runs in the constructor)."""

    def __init__(self, port, ctx, timeout=10.0):
        super().__init__(port, timeout=timeout, tls=ctx)


def refused(port, ctx):
    """True when the server turns the client away: the handshake fails, or
    the connection ends before PING is answered (with TLS 1.3 a client
    learns that its certificate was refused only when it next reads)."""
    try:
        c = TlsConn(port, ctx)
    except (ssl.SSLError, OSError):
        return True
    try:
        rep = c.command("PING")
        return rep != "PONG"
    except (ssl.SSLError, OSError, Closed):
        return True
    finally:
        c.close()


def wait_log(d, text, timeout=15.0):
    """Waits (bounded) for text in the daemon's log; returns True, or
    raises when it does not come."""
    return wait_until(lambda: text in d.log_text(), timeout=timeout,
                      what="%r in the log" % text)


def info_field(d, name):
    c = d.raw()
    try:
        text = c.command("INFO", "stats")
    finally:
        c.close()
    for line in text.decode().split("\r\n"):
        if line.startswith(name + ":"):
            return int(line.split(":", 1)[1])
    raise AssertionError("no %s in INFO" % name)


def cli(certs, port, *args, cert="client", stdin=None):
    argv = ["redis-cli", "-p", str(port), "--tls", "--cacert",
            certs["ca.crt"]]
    if cert is not None:
        argv += ["--cert", certs[cert + ".crt"], "--key",
                 certs[cert + ".key"]]
    return subprocess.run(argv + list(args), input=stdin,
                          capture_output=True, timeout=60)


# ---- real clients ---------------------------------------------------------

def test_redis_cli_one_shot_and_pipe(tls_server, certs):
    p = cli(certs, tls_server.tls_port, "PING")
    assert p.stdout == b"PONG\n", p
    p = cli(certs, tls_server.tls_port, "CF.ADD", "cli-f", "x")
    assert p.stdout == b"1\n", p
    p = cli(certs, tls_server.tls_port, "CF.EXISTS", "cli-f", "x")
    assert p.stdout == b"1\n", p
    n = 5000
    data = b"".join(encode_command("CF.ADD", "cli-pipe", "item%d" % i)
                    for i in range(n))
    p = cli(certs, tls_server.tls_port, "--pipe", stdin=data)
    assert p.returncode == 0, p
    assert b"errors: 0, replies: %d" % n in p.stdout, p.stdout
    c = TlsConn(tls_server.tls_port, context(certs))
    assert c.command("CF.EXISTS", "cli-pipe", "item4999") == 1
    c.close()


def test_redis_py_resp2_with_client_certificate(tls_server, certs):
    r = redis.Redis(host="127.0.0.1", port=tls_server.tls_port, ssl=True,
                    ssl_certfile=certs["client.crt"],
                    ssl_keyfile=certs["client.key"],
                    ssl_ca_certs=certs["ca.crt"], ssl_cert_reqs="required",
                    socket_timeout=60)
    try:
        assert r.ping()
        assert r.cf().create("py-f", 100000)
        assert r.cf().add("py-f", "a") == 1
        assert r.cf().exists("py-f", "a") == 1
        assert r.cf().exists("py-f", "b") == 0
        p = r.pipeline(transaction=False)
        for i in range(20000):
            p.execute_command("CF.ADD", "py-f", "i%d" % i)
        assert all(x == 1 for x in p.execute())
        assert r.cf().mexists("py-f", "i0", "i19999", "nope") == [1, 1, 0]
        with pytest.raises(redis.ResponseError, match="unknown command"):
            r.execute_command("NOSUCH")
        assert r.client_setname("py-tls")
        assert r.client_getname() == "py-tls"
    finally:
        r.close()


def exchange(conn, cmds):
    conn.send(b"".join(encode_command(*c) for c in cmds))
    out = []
    for _ in cmds:
        rep = conn.read()
        # HELLO tells the connection's own id: not part of the comparison.
        if isinstance(rep, dict):
            rep.pop(b"id", None)
        elif isinstance(rep, list) and rep[:1] == [b"server"]:
            rep = rep[:6] + rep[8:]
        out.append(rep.args[0] if isinstance(rep, RespError) else rep)
    return out


def test_replies_identical_to_plain_with_big_replies(tls_server, certs):
    plain = tls_server.raw()
    tls = TlsConn(tls_server.tls_port, context(certs))
    setup = [("CF.RESERVE", "big", 6000000, "BUCKETSIZE", "4")]
    for i in range(200):
        setup.append(("CF.ADD", "big", "m%d" % i))
    assert exchange(plain, setup)[0] == "OK"
    cmds = [("PING",), ("ECHO", "x" * 100000), ("CF.EXISTS", "big", "m1"),
            ("CF.MEXISTS", "big", "m2", "zz"), ("CF.SCANDUMP", "big", 0),
            ("CF.SCANDUMP", "big", 1), ("CF.INFO", "big"), ("NOSUCH", "a"),
            ("CF.ADD",), ("HELLO", "3"), ("CF.EXISTS", "big", "m3"),
            ("CF.INFO", "big"), ("HELLO", "2")]
    cmds = cmds * 3
    a = exchange(plain, cmds)
    b = exchange(tls, cmds)
    assert a == b
    big = [x for x in a if isinstance(x, list) and len(x) == 2 and
           isinstance(x[1], bytes) and len(x[1]) > 1000000]
    assert big, "no multi-megabyte reply in the comparison"
    plain.close()
    tls.close()


def test_output_limit_closes_a_tls_client_that_does_not_read(certs):
    d = start(certs, extra=["--client-output-buffer-limit",
                            "normal", "256kb", "0", "0"])
    try:
        c = TlsConn(d.tls_port, context(certs))
        assert c.command("CF.RESERVE", "big", 6000000) == "OK"
        # Megabytes of replies that this client never reads.
        c.send(encode_command("CF.SCANDUMP", "big", 1) * 50)
        assert wait_log(d, "for overcoming of output buffer limits")
        assert c.closed_by_peer(20)
        other = TlsConn(d.tls_port, context(certs))
        assert other.command("PING") == "PONG"
        other.close()
    finally:
        d.cleanup()


# ---- client authentication ------------------------------------------------

def test_client_certificates_required(tls_server, certs):
    before = info_field(tls_server, "tls_handshake_failures")
    port = tls_server.tls_port
    assert not refused(port, context(certs))
    assert refused(port, context(certs, cert=None))
    assert wait_log(tls_server, "peer did not return a certificate")
    assert refused(port, context(certs, cert="other"))
    assert wait_log(tls_server, "unable to get local issuer certificate")
    assert refused(port, context(certs, cert="expired"))
    assert wait_log(tls_server, "certificate has expired")
    assert info_field(tls_server, "tls_handshake_failures") == before + 3
    # A client that does not trust the server's CA gives up by itself.
    assert refused(port, context(certs, ca="other-ca.crt"))


def test_client_certificates_optional(certs):
    d = start(certs, auth="optional")
    try:
        port = d.tls_port
        assert not refused(port, context(certs))
        assert not refused(port, context(certs, cert=None))
        assert refused(port, context(certs, cert="other"))
        assert refused(port, context(certs, cert="expired"))
        assert wait_log(d, "certificate has expired")
    finally:
        d.cleanup()


def test_client_certificates_off(certs):
    d = start(certs, auth="no")
    try:
        assert not refused(d.tls_port, context(certs, cert=None))
        # Not asked for, so not checked.
        assert not refused(d.tls_port, context(certs, cert="other"))
    finally:
        d.cleanup()


def test_protocols_and_ciphers(certs):
    d = start(certs, extra=["--tls-protocols", "TLSv1.3"])
    try:
        assert not refused(d.tls_port, context(certs))
        assert refused(d.tls_port, context(
            certs, max_version=ssl.TLSVersion.TLSv1_2))
        c = d.raw()
        rep = c.command("CONFIG", "SET", "tls-protocols", "TLSv9")
        assert isinstance(rep, RespError) and "tls-protocols" in str(rep)
        rep = c.command("CONFIG", "SET", "tls-ciphers", "NO-SUCH-CIPHER")
        assert isinstance(rep, RespError) and "tls-ciphers" in str(rep)
        rep = c.command("CONFIG", "GET", "tls-protocols")
        assert rep == [b"tls-protocols", b"TLSv1.3"]
        assert c.command("CONFIG", "SET", "tls-protocols",
                         "TLSv1.2 TLSv1.3") == "OK"
        c.close()
        assert not refused(d.tls_port, context(
            certs, max_version=ssl.TLSVersion.TLSv1_2))
    finally:
        d.cleanup()


# ---- what is not TLS, or not finished --------------------------------------

def test_plain_client_on_tls_port_runs_nothing(tls_server, certs):
    c = tls_server.raw()
    assert c.command("SET", "x", "y") is not None  # any reply will do
    assert c.command("CF.ADD", "keep", "a") == 1
    before = info_field(tls_server, "tls_handshake_failures")
    p = RawConn(tls_server.tls_port)
    p.send(encode_command("FLUSHALL"))
    assert p.closed_by_peer(10)
    p.close()
    assert wait_log(tls_server, "wrong version number")
    assert info_field(tls_server, "tls_handshake_failures") == before + 1
    # Nothing of what it sent ran: not even an unauthenticated FLUSHALL.
    assert c.command("CF.EXISTS", "keep", "a") == 1
    c.close()


def test_tls_client_on_plain_port(tls_server, certs):
    with pytest.raises((ssl.SSLError, OSError)):
        TlsConn(tls_server.port, context(certs)).command("PING")
    assert wait_log(tls_server, "a TLS handshake on a plain-text port")
    c = tls_server.raw()
    assert c.command("PING") == "PONG"
    c.close()


def test_stalled_handshakes_are_closed(tls_server, certs):
    before = info_field(tls_server, "tls_handshake_failures")
    half = RawConn(tls_server.tls_port, timeout=30)
    half.send(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03")  # a start
    silent = RawConn(tls_server.tls_port, timeout=30)
    # Others are served meanwhile.
    ok = TlsConn(tls_server.tls_port, context(certs))
    assert ok.command("PING") == "PONG"
    assert half.closed_by_peer(30)
    assert silent.closed_by_peer(30)
    assert wait_log(tls_server, "TLS handshake timed out")
    assert info_field(tls_server, "tls_handshake_failures") >= before + 2
    assert ok.command("PING") == "PONG"  # done handshakes never time out
    for c in (half, silent, ok):
        c.close()


@pytest.fixture
def patient_server(certs):
    # The clients' own side of 1,000 handshakes may take seconds here.
    d = start(certs, handshake_ms=120000)
    yield d
    d.cleanup()


def test_thousand_handshakes_at_once(patient_server, certs):
    tls_server = patient_server
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 1000 + 64
    if soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            pytest.skip("descriptor limit %d < %d" % (hard, want))
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    ctx = context(certs)
    n = 1000

    async def one(i):
        r, w = await asyncio.open_connection(
            "127.0.0.1", tls_server.tls_port, ssl=ctx,
            server_hostname="localhost", ssl_handshake_timeout=120)
        w.write(encode_command("ECHO", "c%d" % i))
        await w.drain()
        line = await r.readline()
        data = await r.readexactly(int(line[1:]) + 2)
        return r, w, data[:-2]

    async def main():
        got = await asyncio.gather(*(one(i) for i in range(n)))
        info = tls_server.raw()
        text = info.command("INFO", "stats").decode()
        info.close()
        for _, w, _ in got:
            w.close()
        return [g[2] for g in got], text

    replies, text = asyncio.run(main())
    assert replies == [b"c%d" % i for i in range(n)]
    connected = [int(x.split(":")[1]) for x in text.split("\r\n")
                 if x.startswith("tls_connected_clients:")]
    assert connected and connected[0] >= n


# ---- rotation, start-up, unix socket, probe, background save ---------------

def test_certificate_rotation_by_config_set(certs):
    d = start(certs)
    try:
        old = [TlsConn(d.tls_port, context(certs)) for _ in range(3)]
        admin = d.raw()
        rep = admin.command("CONFIG", "SET",
                            "tls-cert-file", certs["server2.crt"],
                            "tls-key-file", certs["server2.key"])
        assert rep == "OK", rep
        assert wait_log(d, "TLS configuration updated")
        for c in old:
            assert c.command("PING") == "PONG"
        # New clients meet the new certificate (signed by the other CA).
        assert refused(d.tls_port, context(certs))
        assert not refused(d.tls_port, context(certs, ca="other-ca.crt"))
        # A bad file keeps the current ones, and says which file.
        missing = certs["server.crt"] + ".missing"
        rep = admin.command("CONFIG", "SET", "tls-cert-file", missing)
        assert isinstance(rep, RespError) and missing in str(rep), rep
        rep = admin.command("CONFIG", "SET", "tls-cert-file",
                            certs["server.crt"])  # not server2.key's
        assert isinstance(rep, RespError) and "does not match" in str(rep)
        assert admin.command("CONFIG", "GET", "tls-cert-file") == [
            b"tls-cert-file", certs["server2.crt"].encode()]
        assert not refused(d.tls_port, context(certs, ca="other-ca.crt"))
        for c in old:
            assert c.command("PING") == "PONG"
            c.close()
        admin.close()
    finally:
        d.cleanup()


def run_daemon(args, timeout=20):
    return subprocess.run([daemon_binary()] + args, capture_output=True,
                          timeout=timeout)


def test_bad_certificates_stop_start_up(certs, tmp_path):
    port = str(free_port())
    base = ["--port", "0", "--tls-port", port, "--dir", str(tmp_path)]
    missing = str(tmp_path / "nope.crt")
    cases = [
        (["--tls-cert-file", missing, "--tls-key-file", certs["server.key"],
          "--tls-ca-cert-file", certs["ca.crt"]], missing),
        (["--tls-cert-file", certs["server.crt"], "--tls-key-file", missing,
          "--tls-ca-cert-file", certs["ca.crt"]], missing),
        (["--tls-cert-file", certs["server.crt"], "--tls-key-file",
          certs["server.key"], "--tls-ca-cert-file", missing], missing),
        (["--tls-cert-file", certs["ca.key"], "--tls-key-file",
          certs["server.key"], "--tls-ca-cert-file", certs["ca.crt"]],
         certs["ca.key"]),
        (["--tls-cert-file", certs["server.crt"], "--tls-key-file",
          certs["client.key"], "--tls-ca-cert-file", certs["ca.crt"]],
         "does not match"),
        (["--tls-cert-file", certs["server.crt"], "--tls-key-file",
          certs["server-enc.key"], "--tls-key-file-pass", "wrong",
          "--tls-ca-cert-file", certs["ca.crt"]], certs["server-enc.key"]),
        (["--tls-key-file", certs["server.key"]], "tls-cert-file"),
        (["--tls-cert-file", certs["server.crt"], "--tls-key-file",
          certs["server.key"]], "tls-ca-cert-file"),
    ]
    for args, needle in cases:
        p = run_daemon(base + args)
        out = (p.stdout + p.stderr).decode()
        assert p.returncode != 0, out
        assert needle in out, out


def test_key_pass_phrase_and_unix_socket_stays_plain(certs, tmp_path):
    sock = str(tmp_path / "c.sock")
    d = start(certs, extra=["--tls-key-file", certs["server-enc.key"],
                            "--tls-key-file-pass", KEY_PASS,
                            "--unixsocket", sock])
    try:
        assert not refused(d.tls_port, context(certs))
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        s.sendall(encode_command("PING"))
        assert s.recv(64) == b"+PONG\r\n"
        s.close()
    finally:
        d.cleanup()


def test_ping_probe_speaks_tls_when_only_the_tls_port_is_open(certs):
    tport = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        args = ["--port", "0", "--tls-port", str(tport), "--dir", tmp,
                "--save", ""] + server_args(certs)
        log = open(os.path.join(tmp, "log"), "wb")
        proc = subprocess.Popen([daemon_binary()] + args, stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            def probe():
                q = run_daemon(args + ["--ping"])
                return q if q.returncode == 0 else None
            p = wait_until(probe, timeout=15, what="the probe to answer")
            assert p.stdout == b"PONG\n", p
            # An explicit address, and a probe without a client certificate.
            p = run_daemon(["--tls-ca-cert-file", certs["ca.crt"],
                            "--tls-cert-file", certs["client.crt"],
                            "--tls-key-file", certs["client.key"], "--ping",
                            "tls://127.0.0.1:%d" % tport])
            assert p.returncode == 0, p
            p = run_daemon(["--tls-ca-cert-file", certs["ca.crt"], "--ping",
                            "tls://127.0.0.1:%d" % tport])
            assert p.returncode == 1, p
            # A plain probe of the TLS port gets no PONG.
            p = run_daemon(["--ping", "127.0.0.1:%d" % tport])
            assert p.returncode == 1, p
        finally:
            proc.terminate()
            proc.wait(20)
            log.close()


def test_background_save_leaves_tls_sessions_alone(tls_server, certs):
    c = TlsConn(tls_server.tls_port, context(certs))
    assert c.command("CF.RESERVE", "bg", 2000000) == "OK"
    for i in range(100):
        c.send(encode_command("CF.ADD", "bg", "x%d" % i))
    for i in range(100):
        assert c.read() == 1
    assert c.command("BGSAVE") == "Background saving started"
    def saved():
        t = c.command("INFO", "persistence").decode()
        return t if "rdb_bgsave_in_progress:0" in t else None
    text = wait_until(saved, what="BGSAVE to end")
    assert "rdb_last_bgsave_status:ok" in text
    assert c.command("CF.EXISTS", "bg", "x99") == 1
    assert c.command("PING") == "PONG"
    n = TlsConn(tls_server.tls_port, context(certs))
    assert n.command("CF.EXISTS", "bg", "x1") == 1
    n.close()
    c.close()


# ---- record boundaries against socket reads -------------------------------

class RecordConn(RawConn):
    """A TLS client over memory BIOs: the test decides where records start
    and end and how their bytes are cut into socket writes."""

    def __init__(self, port, ctx):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.recv_pause = 0.0
        self.inc, self.out = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = ctx.wrap_bio(self.inc, self.out,
                                server_hostname="localhost")
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._flush()
                self._recv()
        self._flush()

    def _flush(self):
        data = self.out.read()
        if data:
            self.sock.sendall(data)

    def _recv(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise Closed("closed by the server")
        self.inc.write(chunk)

    def record(self, plain):
        """The ciphertext of plain as one record (plain <= 16 KB), not
        sent."""
        self.tls.write(plain)
        return self.out.read()

    def send(self, data):
        self.tls.write(data)
        self._flush()

    def _fill(self):
        while True:
            try:
                chunk = self.tls.read(65536)
            except ssl.SSLWantReadError:
                self._recv()
                continue
            if not chunk:
                raise Closed("closed by the server")
            self.buf += chunk
            return


def test_records_cut_anywhere_and_many_in_one_read(tls_server, certs):
    c = RecordConn(tls_server.tls_port, context(certs))
    vals = ["v%05d-" % i + "x" * 40 for i in range(4000)]
    recs = [c.record(encode_command("ECHO", v)) for v in vals]

    # One record byte by byte: the header and the body come in pieces.
    for b in recs[0]:
        c.sock.sendall(bytes([b]))
    assert c.read() == vals[0].encode()

    # Records cut at every kind of place, a cut landing inside a header,
    # inside a body and on a boundary; each send ends mid-record until the
    # last, and the replies come back in order.
    stream = b"".join(recs[1:300])
    sizes = [1, 2, 3, 4, 5, 6, 7, 11, 13, 64, 97, 1000, 4093]
    pos = i = 0
    while pos < len(stream):
        n = sizes[i % len(sizes)]
        c.sock.sendall(stream[pos:pos + n])
        pos += n
        i += 1
    for k in range(1, 300):
        assert c.read() == vals[k].encode(), k

    # A whole batch in one write: many records to one socket read, more
    # than one read's worth, and replies that take many records back.
    c.sock.sendall(b"".join(recs[300:]))
    for k in range(300, len(vals)):
        assert c.read() == vals[k].encode(), k
    assert c.command("PING") == "PONG"
    c.close()
