"""The append-only file under a write load and a kill -9 of the whole
process group (a rewrite child included), against the real cuckood:

- appendfsync always: every CF.ADD a client saw acknowledged is there after
  the restart (the replies of many clients wait for one fsync: group
  commit);
- appendfsync everysec: everything acknowledged more than 2 s before the
  kill is there;
- a rewrite running under the writes, and kill -9 while it runs;
- CONFIG SET appendonly yes at run time under writes, then kill -9;
- a full disk (a small tmpfs): write commands answer Redis's MISCONF while
  the AOF cannot be written, reads go on, and service comes back by itself
  once space is freed, nothing acknowledged lost.

Clients record what was acknowledged and when; the kill comes at a random
moment. No assertion depends on timing beyond the 2 s that everysec
allows by definition."""

import os
import random
import signal
import subprocess
import threading
import time

import pytest
import redis

from support.durable import missing
from support.proc import Daemon, shared_dir, use_redis_server, wait_until

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's own files")


class Server(Daemon):
    def info(self):
        return self.client().info("persistence")

    def kill_group(self):
        """kill -9 of the server's process group: it and its children."""
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self._close_log()


@pytest.fixture
def workdir():
    with shared_dir("cuckood-aofcrash-") as (d, servers):
        def make(*extra, dir=None):
            s = Server("--save", "", *extra, dir=dir or d,
                       preexec_fn=os.setpgrp)
            servers.append(s)
            return s

        yield d, make


class Load:
    """Clients adding unique items to filter f, each recording what was
    acknowledged and when (time.monotonic())."""

    def __init__(self, port, clients=8, batch=1):
        self.port = port
        self.acked = []  # (time, item)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.errors = []
        self.threads = [threading.Thread(target=self.run, args=(i, batch))
                        for i in range(clients)]

    def run(self, n, batch):
        try:
            c = redis.Redis(port=self.port, socket_timeout=30)
            c.execute_command("CF.RESERVE", "f%d" % n, 200000)
        except redis.RedisError as e:
            self.errors.append(e)
            return
        i = 0
        while not self.stop.is_set():
            items = ["c%d-%d" % (n, i + k) for k in range(batch)]
            i += batch
            try:
                if batch == 1:
                    r = [c.execute_command("CF.ADD", "f%d" % n, items[0])]
                else:
                    r = c.execute_command("CF.INSERT", "f%d" % n, "ITEMS",
                                          *items)
            except (redis.ConnectionError, redis.TimeoutError):
                return  # the server is gone: nothing more is acknowledged
            except redis.ResponseError as e:
                self.errors.append(e)
                continue
            now = time.monotonic()
            assert all(x == 1 for x in r), r
            with self.lock:
                self.acked += [(now, ("f%d" % n, it)) for it in items]

    def count(self):
        """How many adds were acknowledged so far."""
        with self.lock:
            return len(self.acked)

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def join(self):
        self.stop.set()
        for t in self.threads:
            t.join(60)


def kill_under_load(s, seconds, clients=8, batch=1, during=None):
    """Runs the load for a random time within seconds, calls during(s) in
    the middle when given, then kills the group: (kill time, acked)."""
    load = Load(s.port, clients, batch).start()
    # The sleeps are the test, not a wait for a state: the kill comes at
    # a random moment of the load.
    t = random.uniform(*seconds)
    time.sleep(t / 2)
    if during is not None:
        during(s)
    time.sleep(t / 2)
    s.kill_group()
    killed = time.monotonic()
    load.join()
    assert not load.errors, load.errors[:3]
    return killed, load.acked


@pytest.mark.parametrize("run", range(2))
def test_always_loses_nothing_acknowledged(workdir, run):
    d, make = workdir
    s = make("--appendonly", "yes", "--appendfsync", "always").start()
    _, acked = kill_under_load(s, (1.0, 2.5), clients=16)
    assert len(acked) > 100
    s.start()
    assert missing(s.client(), [p for _, p in acked]) == []


def test_everysec_loses_at_most_two_seconds(workdir):
    d, make = workdir
    s = make("--appendonly", "yes", "--appendfsync", "everysec").start()
    killed, acked = kill_under_load(s, (3.0, 5.0), batch=32)
    old = [p for t, p in acked if t < killed - 2.0]
    assert len(old) > 100
    s.start()
    assert missing(s.client(), old) == []


def bgrewriteaof(s):
    c = s.client()
    c.set_response_callback("BGREWRITEAOF", lambda r, **kw: r)
    assert c.execute_command("BGREWRITEAOF") in (
        b"Background append only file rewriting started",
        b"Background append only file rewriting scheduled")


def test_rewrite_under_writes_then_restart(workdir):
    d, make = workdir
    s = make("--appendonly", "yes", "--appendfsync", "always").start()
    load = Load(s.port, 8).start()
    wait_until(lambda: load.count() >= 500, what="writes before the rewrite")
    bgrewriteaof(s)
    wait_until(lambda: s.info()["aof_rewrites"] == 1)
    after = load.count() + 500
    wait_until(lambda: load.count() >= after,
               what="writes after the rewrite, into the new increment")
    load.join()
    assert not load.errors
    lines = open(os.path.join(d, "appendonlydir",
                              "appendonly.aof.manifest")).read().splitlines()
    assert lines[0] == "file appendonly.aof.2.base.rdb seq 2 type b"
    assert [ln.split()[-1] for ln in lines[1:]] == ["i"], lines
    s.kill_group()
    s.start()
    assert missing(s.client(), [p for _, p in load.acked]) == []


@pytest.mark.parametrize("run", range(2))
def test_kill9_during_rewrite_under_writes(workdir, run):
    d, make = workdir
    s = make("--appendonly", "yes", "--appendfsync", "always").start()
    # enough data that the child is likely still writing when killed
    c = s.client()
    c.execute_command("CF.RESERVE", "big", 20000000)
    _, acked = kill_under_load(s, (0.6, 1.6), during=bgrewriteaof)
    s.start()
    assert missing(s.client(), [p for _, p in acked]) == []
    assert s.client().execute_command("EXISTS", "big") == 1


def test_switch_on_at_run_time_under_writes_then_kill9(workdir):
    d, make = workdir
    s = make("--appendfsync", "always").start()

    def switch_on(s):
        assert s.client().config_set("appendonly", "yes")
        wait_until(lambda: s.info()["aof_rewrite_in_progress"] == 0 and
                   s.info()["aof_rewrite_scheduled"] == 0)

    killed, acked = kill_under_load(s, (1.5, 2.5), during=switch_on)
    s.args += ["--appendonly", "yes"]
    s.start()
    # what was acknowledged once the AOF was on (the rewrite done) is
    # there; before it only the base, which holds everything up to its
    # fork, so everything acknowledged is
    assert missing(s.client(), [p for _, p in acked]) == []


def mount_tmpfs(path, size):
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size,
                        "tmpfs", path], capture_output=True)
    return r.returncode == 0


def test_full_disk_misconf_then_recovers(workdir):
    d, make = workdir
    mnt = os.path.join(d, "small")
    os.mkdir(mnt)
    if not mount_tmpfs(mnt, "2m"):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        s = make("--appendonly", "yes", "--appendfsync", "everysec",
                 dir=mnt).start()
        c = s.client()
        c.execute_command("CF.RESERVE", "f", 100000)
        filler = os.path.join(mnt, "filler")
        st = os.statvfs(mnt)
        with open(filler, "wb") as f:
            f.write(b"x" * (st.f_bavail * st.f_frsize - 64 * 1024))
        acked, err = [], None
        for i in range(100000):
            items = ["item-%d-%d" % (i, k) for k in range(50)]
            try:
                c.execute_command("CF.INSERT", "f", "ITEMS", *items)
            except redis.ResponseError as e:
                err = str(e)
                break
            acked += items
        assert err is not None and err.startswith(
            "MISCONF Errors writing to the AOF file: "), err
        assert "No space left on device" in err
        assert s.info()["aof_last_write_status"] == "err"
        # reads go on
        assert c.execute_command("CF.EXISTS", "f", acked[0]) == 1
        os.unlink(filler)
        wait_until(lambda: s.info()["aof_last_write_status"] == "ok",
                   what="the AOF write to succeed again")
        assert "AOF write error looks solved" in s.log_text()
        c.execute_command("CF.ADD", "f", "after")
        acked.append("after")
        s.kill_group()
        s.start()
        assert missing(s.client(), [("f", x) for x in acked]) == []
        s.kill_group()
    finally:
        subprocess.run(["umount", "-l", mnt], capture_output=True)
