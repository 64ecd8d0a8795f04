"""What a read does to a connection, over plain text and over TLS: a
request the parser refuses is answered with its reason and the connection
closes after the answer, whichever layer carried it (and a refused request
over TLS is not counted as a TLS failure); a TLS client that ends its
session with close_notify still gets the replies to what it sent before;
a failed TLS handshake gets the session's alert and a close."""

import socket
import ssl

import pytest

from support.proc import (Daemon, free_port, use_module, use_redis_server,
                          wait_until)
from support.resp import Closed, RawConn
from support.tls_certs import make_certs, server_args

pytestmark = pytest.mark.skipif(
    use_redis_server() or use_module(),
    reason="cuckood's own TLS directives and log lines")

REFUSED = b"PING\r\n*abc\r\n"
REFUSAL = "ERR Protocol error: invalid multibulk length"


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(str(tmp_path_factory.mktemp("certs")))


@pytest.fixture(scope="module")
def server(certs):
    d = Daemon("--loglevel", "verbose", "--tls-port", str(free_port()),
               *server_args(certs))
    d.start()
    d.tls_port = int(d.args[d.args.index("--tls-port") + 1])
    yield d
    d.cleanup()


def context(certs):
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["client.crt"], certs["client.key"])
    return ctx


def tls_failures(d):
    c = d.raw()
    try:
        text = c.command("INFO", "stats").decode()
    finally:
        c.close()
    for line in text.split("\r\n"):
        if line.startswith("tls_handshake_failures:"):
            return int(line.split(":", 1)[1])
    raise AssertionError("no tls_handshake_failures in INFO")


def refused_then_closed(c):
    """Sends REFUSED on c: PONG, then the refusal, then the close."""
    c.send(REFUSED)
    assert c.read() == "PONG"
    assert str(c.read()) == REFUSAL
    with pytest.raises((Closed, ConnectionError, ssl.SSLError)):
        c.read()


def test_refused_request_on_plain_text(server):
    c = server.raw()
    refused_then_closed(c)
    c.close()
    wait_until(lambda: "Protocol error (Protocol error: invalid multibulk "
               "length) from client" in server.log_text(),
               what="the protocol error in the log")


def test_refused_request_over_tls(server, certs):
    before = tls_failures(server)
    c = RawConn(server.tls_port, tls=context(certs))
    refused_then_closed(c)
    c.close()
    # The parser refused it, not the TLS layer.
    assert tls_failures(server) == before
    # Others are served meanwhile.
    ok = RawConn(server.tls_port, tls=context(certs))
    assert ok.command("PING") == "PONG"
    ok.close()


def test_close_notify_after_a_pipeline(server, certs):
    # A memory-BIO session, so that close_notify goes out right behind the
    # request and the replies are read after it.
    ctx = context(certs)
    sock = socket.create_connection(("127.0.0.1", server.tls_port),
                                    timeout=30)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, out, server_hostname="localhost")

    def pump():
        data = out.read()
        if data:
            sock.sendall(data)

    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            pump()
            chunk = sock.recv(65536)
            assert chunk, "closed during the handshake"
            inc.write(chunk)
    pump()
    tls.write(b"*3\r\n$6\r\nCF.ADD\r\n$1\r\nk\r\n$1\r\na\r\n"
              b"*2\r\n$4\r\nECHO\r\n$5\r\nlater\r\n")
    try:
        tls.unwrap()  # writes close_notify
    except ssl.SSLWantReadError:
        pass
    pump()
    got = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        inc.write(chunk)
        while True:
            try:
                data = tls.read(65536)
            except (ssl.SSLWantReadError, ssl.SSLZeroReturnError):
                break
            if not data:
                break
            got += data
    sock.close()
    assert got == b":1\r\n$5\r\nlater\r\n", got


def test_failed_handshake_gets_an_alert_and_a_close(server, certs):
    before = tls_failures(server)
    # A client certificate from a CA the server does not trust.
    ctx = ssl.create_default_context(cafile=certs["ca.crt"])
    ctx.load_cert_chain(certs["other.crt"], certs["other.key"])
    with pytest.raises(ssl.SSLError, match="ALERT"):
        c = RawConn(server.tls_port, tls=ctx)
        try:
            c.command("PING")
        finally:
            c.close()
    wait_until(lambda: tls_failures(server) == before + 1,
               what="the failure counted")
