"""The append-only file against the real cuckood: the files of Redis 7's
multi-part layout after each step (start, BGREWRITEAOF, switching on at run
time), a rewrite child stopped, killed, or killed with its parent (kill -9
of the process group), BGSAVE and BGREWRITEAOF scheduling each other,
start-up refusals that name the file and change nothing, and the snapshot
being ignored once the AOF is on, as in Redis 7.

Where a test needs a child running, the server runs with
CUCKOOD_TEST_HOLD_CHILD set: each child stops itself (SIGSTOP) as it
starts, until the test sends SIGCONT, so no test depends on how long a
rewrite takes.

Run: python3 -m pytest tests/integ/test_aof.py (CUCKOOD_BIN names the
binary)."""

import os
import re
import signal

import pytest

from support.proc import (Daemon, run_binary, shared_dir, use_redis_server,
                          wait_until)

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's own files")

ADIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"


class Server(Daemon):
    def client(self, db=0):
        c = super().client(db=db)
        for name in ("BGSAVE", "BGREWRITEAOF", "SAVE"):
            c.set_response_callback(name, lambda r, **kw: r)
        return c

    def info(self):
        return self.client().info("persistence")

    def manifest(self):
        with open(os.path.join(self.dir, ADIR, MANIFEST)) as f:
            return f.read().splitlines()

    def files(self):
        return sorted(os.listdir(os.path.join(self.dir, ADIR)))

    def child_pid(self, nth=1, what="append only file rewriting"):
        """The pid of the nth child of what the log names, once it has
        stopped itself (hold=True)."""
        pids = wait_until(lambda: re.findall(
            r"Background %s started by pid (\d+)" % what,
            self.log_text())[nth - 1:], what="a child")
        pid = int(pids[0])
        wait_until(lambda: stopped(pid), what="the child to stop itself")
        return pid


def stopped(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0] == "T"


@pytest.fixture
def workdir():
    with shared_dir("cuckood-aof-") as (d, servers):
        def make(*extra, hold=False):
            env = dict(os.environ, CUCKOOD_TEST_HOLD_CHILD="1") \
                if hold else None
            s = Server("--save", "", *extra, dir=d, env=env)
            servers.append(s)
            return s

        yield d, make


def rewrite_idle(s):
    i = s.info()
    return not i["aof_rewrite_in_progress"] and not i["aof_rewrite_scheduled"]


def held_rewrite(make):
    """A server with the AOF on, a filter, and a rewrite whose child is
    stopped (SIGSTOP): (server, client, child pid)."""
    s = make("--appendonly", "yes", hold=True).start()
    c = s.client()
    c.execute_command("CF.ADD", "f", "a")
    c.execute_command("BGREWRITEAOF")
    return s, c, s.child_pid()


def test_start_creates_base_incr_manifest(workdir):
    d, make = workdir
    s = make("--appendonly", "yes").start()
    assert s.manifest() == ["file appendonly.aof.1.base.rdb seq 1 type b",
                            "file appendonly.aof.1.incr.aof seq 1 type i"]
    assert s.files() == ["appendonly.aof.1.base.rdb",
                         "appendonly.aof.1.incr.aof", MANIFEST]
    info = s.info()
    assert info["aof_enabled"] == 1
    assert info["aof_last_write_status"] == "ok"
    assert "Creating AOF base file appendonly.aof.1.base.rdb on server " \
        "start" in s.log_text()
    # a second start opens what is there
    s.stop()
    s.start()
    assert s.manifest() == ["file appendonly.aof.1.base.rdb seq 1 type b",
                            "file appendonly.aof.1.incr.aof seq 1 type i"]
    assert "Opening AOF incr file appendonly.aof.1.incr.aof on server " \
        "start" in s.log_text()


def test_bgrewriteaof_replaces_base_and_deletes_history(workdir):
    d, make = workdir
    s = make("--appendonly", "yes").start()
    c = s.client()
    c.execute_command("CF.ADD", "f", "a")
    assert c.execute_command("BGREWRITEAOF") == \
        b"Background append only file rewriting started"
    wait_until(lambda: rewrite_idle(s) and s.info()["aof_rewrites"] == 1)
    assert s.manifest() == ["file appendonly.aof.2.base.rdb seq 2 type b",
                            "file appendonly.aof.2.incr.aof seq 2 type i"]
    assert s.files() == ["appendonly.aof.2.base.rdb",
                         "appendonly.aof.2.incr.aof", MANIFEST]
    assert s.info()["aof_last_bgrewrite_status"] == "ok"
    # the base is the data: a restart has the filter back
    s.kill()
    s.start()
    assert s.client().execute_command("CF.EXISTS", "f", "a") == 1


def test_killed_child_changes_nothing_listed(workdir):
    d, make = workdir
    s, c, child = held_rewrite(make)
    # the new increment is listed at the fork, the old base stays
    assert s.manifest() == ["file appendonly.aof.1.base.rdb seq 1 type b",
                            "file appendonly.aof.1.incr.aof seq 1 type i",
                            "file appendonly.aof.2.incr.aof seq 2 type i"]
    assert s.info()["aof_rewrite_in_progress"] == 1
    with pytest.raises(Exception, match="^Background append only file "
                       "rewriting already in progress$"):
        c.execute_command("BGREWRITEAOF")
    # SIGKILL ends a stopped process too; the server may reap it at once
    os.kill(child, signal.SIGKILL)
    wait_until(lambda: rewrite_idle(s))
    assert s.info()["aof_last_bgrewrite_status"] == "err"
    assert s.manifest() == ["file appendonly.aof.1.base.rdb seq 1 type b",
                            "file appendonly.aof.1.incr.aof seq 1 type i",
                            "file appendonly.aof.2.incr.aof seq 2 type i"]
    assert "Background AOF rewrite terminated by signal 9" in s.log_text()
    # the next one succeeds and retires both increments
    c.execute_command("BGREWRITEAOF")
    os.kill(s.child_pid(2), signal.SIGCONT)
    wait_until(lambda: rewrite_idle(s) and s.info()["aof_rewrites"] == 1)
    assert s.manifest() == ["file appendonly.aof.2.base.rdb seq 2 type b",
                            "file appendonly.aof.3.incr.aof seq 3 type i"]
    assert s.info()["aof_last_bgrewrite_status"] == "ok"


def test_kill9_of_the_group_during_rewrite_leaves_loadable_set(workdir):
    d, make = workdir
    s, c, child = held_rewrite(make)
    os.kill(child, signal.SIGCONT)
    wait_until(lambda: rewrite_idle(s))
    c.execute_command("BGREWRITEAOF")
    child = s.child_pid(2)
    listed = s.manifest()
    assert listed == ["file appendonly.aof.2.base.rdb seq 2 type b",
                      "file appendonly.aof.2.incr.aof seq 2 type i",
                      "file appendonly.aof.3.incr.aof seq 3 type i"]
    os.kill(child, signal.SIGKILL)
    s.kill()
    assert s.manifest() == listed
    s.start()
    assert s.client().execute_command("CF.EXISTS", "f", "a") == 1


def test_bgsave_and_rewrite_schedule_each_other(workdir):
    d, make = workdir
    s, c, child = held_rewrite(make)
    err = None
    try:
        c.execute_command("BGSAVE")
    except Exception as e:  # redis-py raises error replies
        err = str(e)
    assert err == ("Another child process is active (AOF?): can't BGSAVE "
                   "right now. Use BGSAVE SCHEDULE in order to schedule a "
                   "BGSAVE whenever possible."), err
    assert c.execute_command("BGSAVE", "SCHEDULE") == \
        b"Background saving scheduled"
    os.kill(child, signal.SIGCONT)
    os.kill(s.child_pid(1, "saving"), signal.SIGCONT)
    wait_until(lambda: s.info()["rdb_saves"] == 1, what="the scheduled save")
    wait_until(lambda: rewrite_idle(s))
    # and the other way round: a rewrite waits for a save
    c.execute_command("BGSAVE")
    saver = s.child_pid(2, "saving")
    assert c.execute_command("BGREWRITEAOF") == \
        b"Background append only file rewriting scheduled"
    assert s.info()["aof_rewrite_scheduled"] == 1
    os.kill(saver, signal.SIGCONT)
    os.kill(s.child_pid(2), signal.SIGCONT)
    wait_until(lambda: rewrite_idle(s) and s.info()["aof_rewrites"] == 2,
               what="the scheduled rewrite")


def test_switch_on_at_run_time_then_kill9(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    c.execute_command("CF.ADD", "f", "a")
    assert c.config_set("appendonly", "yes")
    wait_until(lambda: s.info()["aof_enabled"] == 1 and rewrite_idle(s))
    assert s.manifest() == ["file appendonly.aof.1.base.rdb seq 1 type b",
                            "file appendonly.aof.1.incr.aof seq 1 type i"]
    s.kill()
    s.args += ["--appendonly", "yes"]
    s.start()
    assert s.client().execute_command("CF.EXISTS", "f", "a") == 1


def test_snapshot_ignored_when_aof_on(workdir):
    """As Redis 7: with appendonly yes and no AOF yet, the start is empty
    (the snapshot is not read) and a base of that is written."""
    d, make = workdir
    s = make().start()
    c = s.client()
    c.execute_command("CF.ADD", "f", "a")
    assert c.execute_command("SAVE") == b"OK"
    s.stop()
    s.args += ["--appendonly", "yes"]
    s.start()
    assert s.client().execute_command("EXISTS", "f") == 0
    assert os.path.exists(os.path.join(d, "dump.cuckoo"))


@pytest.mark.parametrize("damage,why", [
    ("file appendonly.aof.1.base.rdb seq 1 type b\nfile x seq 1 type q\n",
     "Unknown AOF file type"),
    ("file appendonly.aof.1.base.rdb seq 1 type b\n"
     "file appendonly.aof.1.base.rdb seq 1 type b\n",
     "Found duplicate base file information"),
    ("", "Found an empty AOF manifest"),
])
def test_damaged_manifest_refuses_start(workdir, damage, why):
    d, make = workdir
    s = make("--appendonly", "yes").start()
    s.stop()
    path = os.path.join(d, ADIR, MANIFEST)
    with open(path, "w") as f:
        f.write(damage)
    before = {n: open(os.path.join(d, ADIR, n), "rb").read()
              for n in os.listdir(os.path.join(d, ADIR))}
    assert s.fail_to_start() == 1
    log = s.log_text()
    assert why in log and os.path.join(ADIR, MANIFEST) in log, log[-2000:]
    after = {n: open(os.path.join(d, ADIR, n), "rb").read()
             for n in os.listdir(os.path.join(d, ADIR))}
    assert after == before


def rewritten_and_stopped(make):
    """A server with the AOF on, a filter, one finished rewrite (base 2),
    stopped."""
    s = make("--appendonly", "yes").start()
    s.client().execute_command("CF.ADD", "f", "a")
    s.client().execute_command("BGREWRITEAOF")
    wait_until(lambda: rewrite_idle(s) and s.info()["aof_rewrites"] == 1)
    s.stop()
    return s


def test_damaged_base_refuses_start(workdir):
    d, make = workdir
    s = rewritten_and_stopped(make)
    base = os.path.join(d, ADIR, "appendonly.aof.2.base.rdb")
    data = bytearray(open(base, "rb").read())
    data[len(data) // 2] ^= 0xFF
    with open(base, "wb") as f:
        f.write(data)
    assert s.fail_to_start() == 1
    assert "appendonly.aof.2.base.rdb" in s.log_text()
    assert open(base, "rb").read() == bytes(data)


def check_aof(*args):
    p = run_binary("--check-aof", *args)
    return p.returncode, p.stdout.decode(errors="replace")


def test_check_aof_on_a_manifest(workdir):
    d, make = workdir
    s = rewritten_and_stopped(make)
    man = os.path.join(d, ADIR, MANIFEST)
    rc, out = check_aof(man)
    assert rc == 0, out
    assert out.splitlines() == [
        "Start checking Multi Part AOF",
        "Start to check BASE AOF (RDB format).",
        "BASE AOF appendonly.aof.2.base.rdb is valid",
        "Start to check INCR files.",
        "INCR AOF appendonly.aof.2.incr.aof is empty",
        "All AOF files and manifest are valid"]
    # a damaged base: named, not valid, left as it was (also with --fix)
    base = os.path.join(d, ADIR, "appendonly.aof.2.base.rdb")
    data = bytearray(open(base, "rb").read())
    data[-3] ^= 0x55
    open(base, "wb").write(data)
    for args in ((man,), ("--fix", man)):
        rc, out = check_aof(*args)
        assert rc == 1, out
        assert "BASE AOF appendonly.aof.2.base.rdb is not valid" in out
        assert open(base, "rb").read() == bytes(data)
    # a damaged manifest
    open(man, "w").write("file x seq 1 type q\n")
    rc, out = check_aof(man)
    assert rc == 1 and "Unknown AOF file type" in out, out
    rc, out = check_aof(os.path.join(d, ADIR, "nosuch.manifest"))
    assert rc == 1 and "Cannot open file" in out, out


def test_save_and_flushall_leave_a_rewrite_running(workdir):
    """As Redis: SAVE runs in the foreground during an AOF rewrite, and
    FLUSHALL kills only a snapshot child."""
    d, make = workdir
    s, c, child = held_rewrite(make)
    assert c.execute_command("SAVE") == b"OK"
    c.execute_command("FLUSHALL")
    assert s.info()["aof_rewrite_in_progress"] == 1
    os.kill(child, signal.SIGCONT)
    wait_until(lambda: rewrite_idle(s) and s.info()["aof_rewrites"] == 1)
    s.kill()
    s.start()
    assert s.client().execute_command("EXISTS", "f") == 0


def test_check_aof_manifest_torn_last_increment(workdir):
    d, make = workdir
    s = make("--appendonly", "yes", "--aof-load-truncated", "no").start()
    s.client().execute_command("CF.ADD", "f", "a")
    s.stop()
    man = os.path.join(d, ADIR, MANIFEST)
    incr = os.path.join(d, ADIR, "appendonly.aof.1.incr.aof")
    whole = open(incr, "rb").read()
    assert whole  # the CF.ADD is logged
    with open(incr, "ab") as f:
        f.write(b"*3\r\n$6\r\nCF.ADD\r\n$1\r\nf\r\n$1")  # torn
    # refused at start without aof-load-truncated, the file untouched
    assert s.fail_to_start() == 1
    assert "appendonly.aof.1.incr.aof" in s.log_text()
    assert open(incr, "rb").read().startswith(whole)
    rc, out = check_aof(man)
    assert rc == 1 and "is not valid. Use the --fix option" in out, out
    rc, out = check_aof("--fix", man)
    assert rc == 0, out
    assert "All AOF files and manifest are valid" in out
    assert open(incr, "rb").read() == whole
    s.start()
    assert s.client().execute_command("CF.EXISTS", "f", "a") == 1


def test_automatic_rewrite_on_growth(workdir):
    d, make = workdir
    s = make("--appendonly", "yes", "--auto-aof-rewrite-percentage", "100",
             "--auto-aof-rewrite-min-size", "64kb").start()
    c = s.client()
    assert s.info()["aof_rewrites"] == 0
    c.execute_command("CF.RESERVE", "f", 100000)
    for i in range(40):
        c.execute_command("CF.INSERT", "f", "ITEMS",
                          *["item-%d-%d" % (i, k) for k in range(200)])
    wait_until(lambda: s.info()["aof_rewrites"] >= 1,
               what="an automatic rewrite")
    assert "Starting automatic rewriting of AOF on" in s.log_text()
    wait_until(lambda: rewrite_idle(s))
    s.kill()
    s.start()
    assert s.client().execute_command("CF.EXISTS", "f", "item-39-199") == 1
    info = dict(zip(*[iter(s.client().execute_command("CF.INFO", "f"))] * 2))
    assert info[b"Number of items inserted"] == 40 * 200


def test_switch_on_continues_the_files_of_an_earlier_run(workdir):
    """As Redis 7: with appendonly no the manifest is still read, so
    switching on later names the next base and retires the old files."""
    d, make = workdir
    s = make("--appendonly", "yes").start()
    s.client().execute_command("CF.ADD", "f", "a")
    s.stop()
    s.args = ["--save", "", "--appendonly", "no"]
    s.start()
    c = s.client()
    c.execute_command("CF.ADD", "g", "b")
    assert c.config_set("appendonly", "yes")
    wait_until(lambda: s.info()["aof_enabled"] == 1 and rewrite_idle(s))
    assert s.manifest() == ["file appendonly.aof.2.base.rdb seq 2 type b",
                            "file appendonly.aof.2.incr.aof seq 2 type i"]
    assert s.files() == ["appendonly.aof.2.base.rdb",
                         "appendonly.aof.2.incr.aof", MANIFEST]


def test_damaged_manifest_stops_start_even_when_off(workdir):
    """Redis 7 reads the manifest at every start."""
    d, make = workdir
    s = make("--appendonly", "yes").start()
    s.stop()
    with open(os.path.join(d, ADIR, MANIFEST), "w") as f:
        f.write("file x seq 1 type q\n")
    s.args = ["--save", "", "--appendonly", "no"]
    assert s.fail_to_start() == 1
    assert "Unknown AOF file type" in s.log_text()
