"""redis-server processes with cuckoo.so loaded, for the module's tests:
each on a free port in its own temporary directory, ready when PING
answers, stopped with SHUTDOWN NOSAVE (or killed) at the end.

$CUCKOO_MODULE names the module (default build/module/cuckoo.so). In the
sanitizer build $CUCKOO_SERVER_PRELOAD names the ASan runtime, preloaded
into each redis-server (harness.module_server_env()); a sanitizer report in
a server's log (a leak shows at SHUTDOWN) then fails the test at cleanup."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest
import redis

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "integ"))
# The one free-port picker, wait loop and module locator of the suites.
from harness import (  # noqa: E402,F401
    free_port, module_path, module_server_env, sanitizer_report, wait_until)

REDIS_SERVER = shutil.which("redis-server")
REDIS_CLI = shutil.which("redis-cli")


def cluster_port():
    """A free port whose cluster bus port (+10000) is free too."""
    import random
    rnd = random.Random()
    for _ in range(200):
        p = rnd.randrange(20000, 55535)
        try:
            for q in (p, p + 10000):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                    s.bind(("127.0.0.1", q))
            return p
        except OSError:
            continue
    raise RuntimeError("no free port pair")


class Server:
    """One redis-server with the module. start() may be called again after
    stop() or kill() to restart it on the same port and directory."""

    def __init__(self, *extra, module_args=(), dirname=None, port=None):
        if REDIS_SERVER is None:
            pytest.fail("redis-server not installed (scripts/deps.sh test)")
        self.module = module_path()  # fails the test when it is missing
        self.own_dir = dirname is None
        self.dir = dirname or tempfile.mkdtemp(prefix="cuckoo-mod-")
        self.port = port or free_port()
        self.extra = list(extra)
        self.module_args = list(module_args)
        self.proc = None

    def argv(self):
        return ([REDIS_SERVER, "--port", str(self.port), "--bind",
                 "127.0.0.1", "--dir", self.dir, "--save", "",
                 "--enable-debug-command", "yes", "--latency-tracking", "no",
                 "--loadmodule", self.module] + self.module_args + self.extra)

    def start(self, expect_fail=False):
        self.log = open(os.path.join(self.dir, "log.txt"), "ab")
        self.proc = subprocess.Popen(self.argv(), cwd=self.dir,
                                     stdout=self.log,
                                     stderr=subprocess.STDOUT,
                                     env=module_server_env())
        if expect_fail:
            try:
                return self.proc.wait(20)
            except subprocess.TimeoutExpired:
                return None
        def answers():
            if self.proc.poll() is not None:
                raise RuntimeError("redis-server exited:\n" + self.log_text())
            try:
                return self.client().ping()
            except (redis.exceptions.BusyLoadingError,
                    redis.exceptions.ConnectionError, OSError):
                return False
        wait_until(answers, what="redis-server on port %d" % self.port)
        return self

    def client(self, **kw):
        return redis.Redis(host="127.0.0.1", port=self.port,
                           socket_timeout=120, **kw)

    def log_text(self, whole=False):
        try:
            with open(os.path.join(self.dir, "log.txt"), "rb") as f:
                text = f.read().decode(errors="replace")
        except FileNotFoundError:
            return ""
        return text if whole else text[-6000:]

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, save=False):
        if self.alive():
            try:
                self.client().shutdown(save=save, nosave=not save)
            except redis.exceptions.ConnectionError:
                pass
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None:
            self.log.close()
        self.proc = None

    def kill(self):
        if self.alive():
            self.proc.kill()
            self.proc.wait()
            self.log.close()
        self.proc = None

    def cleanup(self):
        sanitized = module_server_env() is not None
        if sanitized:
            self.stop()  # an exit, so that the leak check runs
        self.kill()
        report = (sanitizer_report(self.log_text(whole=True)) if sanitized
                  else None)
        if self.own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        assert report is None, "sanitizer report:\n" + report


@pytest.fixture
def servers():
    """Factory: servers(*extra, module_args=...) -> started Server; all are
    cleaned up after the test."""
    made = []

    def make(*extra, start=True, **kw):
        s = Server(*extra, **kw)
        made.append(s)
        return s.start() if start else s

    yield make
    cleanup_all(made)


def cleanup_all(servers):
    """cleanup() of every server, then the first failure (a sanitizer
    report), if any."""
    errors = []
    for s in servers:
        try:
            s.cleanup()
        except AssertionError as e:
            errors.append(e)
    if errors:
        raise errors[0]
