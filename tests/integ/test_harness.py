"""The launcher itself (support.proc): it tells its own daemon from another
one answering on the same port, moves to another port when its port is taken,
a missing binary fails a suite, and a wait that times out says so.
"""

import os
import subprocess
import sys

import pytest

from support.proc import Daemon, PidMismatch, answering_pid, wait_until
from support.resp import RespError

HERE = os.path.dirname(os.path.abspath(__file__))


def test_answering_pid_is_the_started_process(server):
    assert server.alive()
    assert answering_pid(server.port) == server.pid


def test_pid_check_detects_a_daemon_it_did_not_start(server):
    # A process that never listens, pointed at the port of a daemon it did
    # not start (the fixture's): the port answers, with the wrong pid.
    other = Daemon(prefix=["sh", "-c", "exec sleep 60", "sh"])
    other.pick_port = lambda: server.port
    other.ATTEMPTS = 1
    try:
        with pytest.raises(PidMismatch) as e:
            other.start()
        msg = str(e.value)
        assert "answered by pid %d" % server.pid in msg, msg
        assert "(pid %d)" % other.pid in msg, msg
        assert not other.alive()  # the impostor's process was killed
    finally:
        other.cleanup()
    assert answering_pid(server.port) == server.pid


def test_start_moves_to_another_port_when_its_port_is_taken(server):
    ports = [server.port]  # taken by the fixture's daemon
    d = Daemon()
    d.pick_port = lambda: ports.pop() if ports else Daemon.pick_port()
    try:
        d.start()
        assert d.port != server.port
        assert answering_pid(d.port) == d.pid != server.pid
    finally:
        d.cleanup()
    assert answering_pid(server.port) == server.pid


def test_pid_check_authenticates(auth_server):
    rep = answering_pid(auth_server.port)
    assert isinstance(rep, RespError) and rep.text.startswith("NOAUTH"), rep
    assert answering_pid(auth_server.port, auth_server.password) == \
        auth_server.pid


def test_error_replies_are_values(server):
    with server.raw() as c:
        rep = c.command("NO-SUCH-COMMAND")
        assert isinstance(rep, RespError)
        assert rep == RespError(rep.text) and rep != RespError("ERR other")
        assert rep.text.startswith("ERR unknown command")
        assert c.command("PING") == "PONG"  # the connection goes on


def test_a_wait_that_times_out_fails_clearly():
    with pytest.raises(AssertionError,
                       match=r"timed out after 0.1s waiting for nothing "
                             r"\(last: 0\)"):
        wait_until(lambda: 0, timeout=0.1, what="nothing")
    assert wait_until(lambda: "value", timeout=0.1) == "value"


def test_a_missing_binary_fails_the_suite(tmp_path, is_redis):
    if is_redis:
        pytest.skip("the reference run uses the system's redis-server")
    env = dict(os.environ, CUCKOOD_BIN=str(tmp_path / "no-such-cuckood"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfs",
                        "-p", "no:cacheprovider",
                        os.path.join(HERE, "test_harness.py"),
                        "-k", "answering_pid_is_the_started_process"],
                       cwd=HERE, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=120)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 1, out
    assert "cuckood binary not found" in out, out
    assert "skipped" not in out, out
