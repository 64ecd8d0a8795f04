"""Start-up failures and the teardown after them: every phase that can
stop the server (configuration, working directory, snapshot, listeners,
TLS) ends with a line that says why, exit status 1, nothing announced as
ready, and, in the sanitizer build, no leak report: one cleanup frees
whatever was started, whichever phase stopped. A normal run that used the
slow log, the latency monitor, TLS and a background save also ends
without a report."""

import os
import socket
import subprocess

import pytest

from support.proc import (Daemon, free_port, run_binary, sanitizer_report,
                          use_module, use_redis_server, wait_until)
from support.tls_certs import make_certs, server_args

pytestmark = pytest.mark.skipif(
    use_redis_server() or use_module(),
    reason="cuckood's own start-up messages and teardown")


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(str(tmp_path_factory.mktemp("certs")))


def refused(tmp_path, *args):
    """Runs cuckood in tmp_path expecting it to refuse to start; returns
    its output (stdout and stderr together)."""
    p = run_binary(*args, cwd=tmp_path, stderr=subprocess.STDOUT,
                   timeout=60)
    out = p.stdout.decode(errors="replace")
    assert sanitizer_report(out) is None, out
    assert p.returncode == 1, out
    assert "Ready to accept" not in out, out
    return out


def base(tmp_path, port=None):
    return ["--port", str(port or free_port()), "--bind", "127.0.0.1",
            "--dir", str(tmp_path)]


def test_bad_directive(tmp_path):
    out = refused(tmp_path, "--port", "x")
    assert "*** FATAL CONFIG FILE ERROR ***" in out


def test_missing_working_directory(tmp_path):
    out = refused(tmp_path, "--dir", str(tmp_path / "gone"))
    assert "Can't chdir to '%s'" % (tmp_path / "gone") in out


def test_port_in_use(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        out = refused(tmp_path, *base(tmp_path, port))
    assert ("Could not create server TCP listening socket 127.0.0.1:%d: "
            "address already in use" % port) in out, out


def test_listener_after_another_fails(tmp_path):
    # The TCP listener is open when the unix socket fails: both close.
    sock = tmp_path / "no-such-dir" / "c.sock"
    out = refused(tmp_path, *base(tmp_path), "--unixsocket", str(sock))
    assert "Failed opening Unix socket %s" % sock in out, out


def test_nowhere_to_listen(tmp_path):
    out = refused(tmp_path, "--port", "0", "--dir", str(tmp_path))
    assert "Configured to not listen anywhere, exiting." in out


def test_unreadable_snapshot(tmp_path):
    # A directory where the snapshot should be: it cannot be read (a
    # mode the superuser could still read would prove nothing).
    os.mkdir(tmp_path / "dump.cuckoo")
    out = refused(tmp_path, *base(tmp_path))
    assert "Fatal error loading the snapshot" in out, out
    assert os.path.isdir(tmp_path / "dump.cuckoo")


def test_corrupt_snapshot(tmp_path):
    (tmp_path / "dump.cuckoo").write_bytes(b"not a snapshot at all" * 10)
    out = refused(tmp_path, *base(tmp_path))
    assert "Fatal error loading the snapshot" in out, out
    assert (tmp_path / "dump.cuckoo").read_bytes() == \
        b"not a snapshot at all" * 10


def test_tls_context_made_then_listener_fails(tmp_path, certs):
    # The TLS context exists when the unix socket fails: it is freed too.
    sock = tmp_path / "no-such-dir" / "c.sock"
    out = refused(tmp_path, *base(tmp_path), "--tls-port", str(free_port()),
                  *server_args(certs), "--unixsocket", str(sock))
    assert "Failed opening Unix socket %s" % sock in out, out


def test_tls_port_in_use(tmp_path, certs):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        out = refused(tmp_path, *base(tmp_path), "--tls-port", str(port),
                      *server_args(certs))
    assert ("Could not create server TLS listening socket 127.0.0.1:%d"
            % port) in out, out


def test_every_subsystem_freed_after_a_run(tmp_path, certs):
    d = Daemon("--slowlog-log-slower-than", "0",
               "--latency-monitor-threshold", "1", "--save", "3600 1",
               "--pidfile", "cuckood.pid", "--tls-port", str(free_port()),
               *server_args(certs), dir=str(tmp_path))
    d.start()
    try:
        c = d.raw()
        assert c.command("CF.ADD", "k", "a") == 1
        assert c.command("BGSAVE") is not None
        wait_until(lambda: b"rdb_bgsave_in_progress:0" in
                   c.command("INFO", "persistence"), what="the save")
        assert len(c.command("SLOWLOG", "GET", "100")) >= 3
        c.close()
        assert os.path.exists(tmp_path / "cuckood.pid")
        rc = d.stop()
        out = d.log_text()
        assert sanitizer_report(out) is None, out
        assert rc == 0, out
        assert "ready to exit, bye bye" in out
        assert not os.path.exists(tmp_path / "cuckood.pid")
    finally:
        d.cleanup()
