"""hiredis against the daemon: starts a daemon with a Unix socket and one
with a password through the suites' launcher, then runs the hiredis
program (test_server.c, built beside the daemon; $CUCKOOD_HIREDIS_SUITE)
with where they listen in its environment. A missing program fails."""

import os
import stat
import subprocess

import pytest

from support.proc import PASSWORD


def test_hiredis_client(daemon):
    suite = os.environ.get("CUCKOOD_HIREDIS_SUITE")
    if not suite or not os.access(suite, os.X_OK):
        pytest.fail("hiredis suite not found at %r (set "
                    "CUCKOOD_HIREDIS_SUITE to the test_server program)"
                    % suite)
    plain = daemon("--unixsocket", "{dir}/sock", "--unixsocketperm", "700")
    sock = os.path.join(plain.dir, "sock")
    assert stat.S_IMODE(os.stat(sock).st_mode) == 0o700
    locked = daemon(password=PASSWORD)
    env = dict(os.environ, CUCKOOD_PORT=str(plain.port),
               CUCKOOD_UNIXSOCKET=sock, CUCKOOD_AUTH_PORT=str(locked.port),
               CUCKOOD_PASSWORD=PASSWORD)
    r = subprocess.run([suite], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=300)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0, "%s\nlogs:\n%s\n%s" % (
        out, plain.log_text()[-3000:], locked.log_text()[-3000:])
    assert "[  PASSED  ] 5 test(s)." in out, out
