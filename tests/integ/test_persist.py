"""Persistence against the real cuckood: SAVE / BGSAVE / LASTSAVE, the final
save on SIGTERM, kill -9 at any moment of a background save, refusal to
start on a corrupt snapshot, a save target that cannot be written (MISCONF),
several databases, save points and stale temporary files.

Every daemon here runs in a directory the test owns, so that it can be
killed and started again on the same snapshot.

Run: pytest-3 tests/integ/test_persist.py  (CUCKOOD_BIN names the binary).
"""

import fcntl
import os
import random
import signal
import shutil
import subprocess
import tempfile
import time

import pytest
import redis

from support.proc import (Daemon, free_port, run_binary, shared_dir,
                          use_redis_server, wait_until)

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's snapshot file")

DUMP = "dump.cuckoo"
MISCONF = "MISCONF"


class Server(Daemon):
    """cuckood in a directory the test owns: started, killed and started
    again (on a new port each time) on the same snapshot."""

    def client(self, db=0):
        c = super().client(db=db)
        for name in ("SAVE", "BGSAVE"):  # the replies as they come
            c.set_response_callback(name, lambda r, **kw: r)
        return c

    def info(self):
        return self.client().info("persistence")


@pytest.fixture
def workdir():
    with shared_dir("cuckood-persist-") as (d, servers):
        def make(*extra, dir=None):
            s = Server(*extra, dir=dir or d)
            servers.append(s)
            return s

        yield d, make


def add_items(c, key, items):
    rep = c.execute_command("CF.INSERT", key, "ITEMS", *items)
    assert all(x == 1 for x in rep), rep


def all_exist(c, key, items):
    items = list(items)
    for i in range(0, len(items), 5000):
        rep = c.execute_command("CF.MEXISTS", key, *items[i:i + 5000])
        if not all(x == 1 for x in rep):
            return False
    return True


def wait_bgsave(s):
    return wait_until(lambda: (lambda i: None if i["rdb_bgsave_in_progress"]
                               else i)(s.info()), what="BGSAVE to finish")


def read(path):
    with open(path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------

def test_save_kill9_restart(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    items = ["item-%d" % i for i in range(3000)]
    add_items(c, "f", items)
    c.execute_command("CF.RESERVE", "g", 50000, "BUCKETSIZE", 4)
    add_items(c, "g", items[:100])
    # a semi-sorted filter (13-bit fingerprints) keeps its encoding
    c.execute_command("CF.RESERVE", "h", 5000, "ERROR", "0.001",
                      "EXPANSION", "0")
    # and a growable pair (ERROR 0.001 that may grow) its two tables
    c.execute_command("CF.RESERVE", "p", 1000, "ERROR", "0.001")
    add_items(c, "p", items)
    add_items(c, "h", items)
    assert s.info()["rdb_changes_since_last_save"] > 0
    before = c.lastsave()
    assert c.execute_command("SAVE") == b"OK"
    assert s.info()["rdb_changes_since_last_save"] == 0
    assert c.lastsave() >= before
    s.kill()
    s.start()
    c = s.client()
    assert all_exist(c, "f", items)
    assert all_exist(c, "g", items[:100])
    assert c.execute_command("CF.EXISTS", "g", "item-2999") == 0
    info = c.execute_command("CF.INFO", "g")
    assert dict(zip(info[0::2], info[1::2]))[b"Bucket size"] == 4
    assert all_exist(c, "h", items)
    info = dict(zip(*[iter(c.execute_command("CF.INFO", "h"))] * 2))
    assert info[b"Encoding"] == b"semi-sorted"
    assert info[b"Fingerprint bits"] == 13
    assert info[b"Number of items inserted"] == len(items)
    assert all_exist(c, "p", items)
    info = dict(zip(*[iter(c.execute_command("CF.INFO", "p"))] * 2))
    assert info[b"Encoding"] == b"growable pair"
    assert info[b"Number of items inserted"] == len(items)
    assert "DB loaded from disk:" in s.log_text()


def test_sigterm_saves_and_exits_zero(workdir):
    d, make = workdir
    s = make().start()
    items = ["t%d" % i for i in range(2000)]
    add_items(s.client(), "f", items)
    # stop() waits (with a generous bound, not a timing assertion) for the
    # exit status: 0 after the final save.
    assert s.stop() == 0
    assert os.path.exists(os.path.join(d, DUMP))
    s.start()
    assert all_exist(s.client(), "f", items)


def test_shutdown_nosave_and_save(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    add_items(c, "f", ["a"])
    c.execute_command("SAVE")
    add_items(c, "f", ["b"])
    with pytest.raises(redis.ConnectionError):
        c.execute_command("SHUTDOWN", "NOSAVE")
    assert s.wait() == 0
    s.start()
    c = s.client()
    assert c.execute_command("CF.EXISTS", "f", "a") == 1
    assert c.execute_command("CF.EXISTS", "f", "b") == 0
    add_items(c, "f", ["c"])
    with pytest.raises(redis.ConnectionError):
        c.execute_command("SHUTDOWN", "SAVE")
    assert s.wait() == 0
    s2 = make("--save", "").start()  # SAVE saves even without save points
    assert s2.client().execute_command("CF.EXISTS", "f", "c") == 1
    add_items(s2.client(), "f", ["d"])
    assert s2.stop() == 0  # no save points: SIGTERM does not save
    s2.start()
    assert s2.client().execute_command("CF.EXISTS", "f", "d") == 0


def test_several_databases(workdir):
    d, make = workdir
    s = make().start()
    for db in (0, 3, 15):
        c = s.client(db)
        for k in range(db + 1):
            add_items(c, "k%d" % k, ["db%d-%d" % (db, i) for i in range(50)])
    assert s.stop() == 0
    s.start()
    for db in (0, 3, 15):
        c = s.client(db)
        assert c.dbsize() == db + 1
        for k in range(db + 1):
            assert all_exist(c, "k%d" % k,
                             ["db%d-%d" % (db, i) for i in range(50)])
    assert s.client(1).dbsize() == 0
    s.kill()
    # A snapshot with database 15 does not fit a server with 4 databases.
    out = refused(d, "--databases", "4")
    assert DUMP in out and "database 15" in out


def test_save_points_fire(workdir):
    d, make = workdir
    s = make("--save", "1", "1").start()
    c = s.client()
    first = c.lastsave()
    add_items(c, "f", ["x"])
    wait_until(lambda: c.lastsave() > first, what="LASTSAVE to change")
    wait_until(lambda: s.info()["rdb_changes_since_last_save"] == 0,
         what="the change counter to drop")
    assert s.info()["rdb_last_bgsave_status"] == "ok"
    s.kill()
    s.start()
    assert s.client().execute_command("CF.EXISTS", "f", "x") == 1


def test_loadchunk_counts_as_change(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    add_items(c, "src", ["p%d" % i for i in range(500)])
    chunks, it = [], 0
    while True:
        it, data = c.execute_command("CF.SCANDUMP", "src", it)
        if it == 0:
            break
        chunks.append((it, data))
    c.execute_command("SAVE")
    for it, data in chunks:
        before = s.info()["rdb_changes_since_last_save"]
        assert c.execute_command("CF.LOADCHUNK", "dst", it, data) == b"OK"
        assert s.info()["rdb_changes_since_last_save"] == before + 1
    assert s.stop() == 0
    s.start()
    assert all_exist(s.client(), "dst", ["p%d" % i for i in range(500)])


def dead_pid():
    """A pid no process can have: above the kernel's pid_max."""
    with open("/proc/sys/kernel/pid_max") as f:
        return int(f.read()) + 1


def test_stale_temp_files_removed(workdir):
    d, make = workdir
    stale = [DUMP + ".tmp-%d-0" % dead_pid(), DUMP + ".tmp-%d-7" % dead_pid()]
    for n in stale:
        with open(os.path.join(d, n), "wb") as f:
            f.write(b"half a snapshot")
    keep = os.path.join(d, "other.tmp-1-1")
    with open(keep, "wb") as f:
        f.write(b"not ours")
    # Another instance sharing the directory, writing right now: a live pid
    # in the name, or (another pid namespace) the lock its writer holds.
    live = os.path.join(d, DUMP + ".tmp-%d-2" % os.getpid())
    locked = os.path.join(d, DUMP + ".tmp-%d-3" % dead_pid())
    for n in (live, locked):
        with open(n, "wb") as f:
            f.write(b"being written")
    with open(locked, "ab") as lk:
        fcntl.flock(lk, fcntl.LOCK_EX | fcntl.LOCK_NB)
        s = make().start()
        for n in stale:
            assert not os.path.exists(os.path.join(d, n))
        assert read(keep) == b"not ours"
        assert read(live) == b"being written"
        assert read(locked) == b"being written"
        # Once its writer is gone, a save removes it.
        lk.close()
        assert s.client().execute_command("SAVE") == b"OK"
        assert not os.path.exists(locked)
        assert read(live) == b"being written"
    s.stop()
    os.unlink(live)


# ---------------------------------------------------------------------------
# Corrupt snapshots: refusal to start, the file untouched.

def refused(d, *extra):
    """Starts cuckood on d, expecting it to refuse; returns its output."""
    p = run_binary("--port", free_port(), "--dir", d, "--bind", "127.0.0.1",
                   *extra, cwd=d, stderr=subprocess.STDOUT, timeout=30)
    out = p.stdout.decode(errors="replace")
    assert p.returncode != 0, out
    assert "Ready to accept" not in out
    return out


@pytest.fixture(scope="module")
def good_snapshot():
    d = tempfile.mkdtemp(prefix="cuckood-persist-good-")
    s = Server(dir=d).start()
    c = s.client()
    for k in range(4):
        add_items(c, "f%d" % k, ["v%d" % i for i in range(300)])
    add_items(s.client(2), "other", ["z"])
    c.execute_command("SAVE")
    s.kill()
    s.cleanup()
    data = read(os.path.join(d, DUMP))
    shutil.rmtree(d, ignore_errors=True)
    return data


def _truncated(b):
    return b[:len(b) // 2]


def _bitflip(b):
    b = bytearray(b)
    b[len(b) // 2] ^= 0x10
    return bytes(b)


def _magic(b):
    return b"X" + b[1:]


def _version(b):
    return b[:8] + (99).to_bytes(4, "little") + b[12:]


def _zero(b):
    return b""


def _checksum(b):
    return b[:-1] + bytes([b[-1] ^ 0xFF])


def _short(b):
    return b[:10]


@pytest.mark.parametrize("mangle,words", [
    (_truncated, "checksum"), (_bitflip, "checksum"), (_magic, "magic"),
    (_version, "version"), (_zero, "empty"), (_checksum, "checksum"),
    (_short, "truncated")])
def test_corrupt_snapshot_refused(good_snapshot, mangle, words):
    d = tempfile.mkdtemp(prefix="cuckood-persist-bad-")
    try:
        path = os.path.join(d, DUMP)
        bad = mangle(good_snapshot)
        with open(path, "wb") as f:
            f.write(bad)
        st = os.stat(path)
        out = refused(d)
        assert DUMP in out and words in out, out
        assert read(path) == bad
        assert os.stat(path).st_mtime_ns == st.st_mtime_ns
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_good_snapshot_loads(good_snapshot, workdir):
    d, make = workdir
    with open(os.path.join(d, DUMP), "wb") as f:
        f.write(good_snapshot)
    s = make().start()
    assert s.client().dbsize() == 4
    assert s.client(2).execute_command("CF.EXISTS", "other", "z") == 1


def test_snapshot_is_a_directory_refused(workdir):
    d, make = workdir
    os.mkdir(os.path.join(d, DUMP))
    out = refused(d)
    assert DUMP in out


# ---------------------------------------------------------------------------
# A target that cannot be written.

def test_unwritable_target_misconf(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    add_items(c, "f", ["old"])
    assert c.execute_command("SAVE") == b"OK"
    old = read(os.path.join(d, DUMP))
    add_items(c, "f", ["new"])

    # Root ignores permissions, so the target is a directory instead.
    os.mkdir(os.path.join(d, "adir"))
    c.config_set("dbfilename", "adir")
    with pytest.raises(redis.ResponseError):
        c.execute_command("SAVE")
    assert s.info()["rdb_last_bgsave_status"] == "ok"  # as Redis
    assert c.execute_command("BGSAVE") == b"Background saving started"
    info = wait_bgsave(s)
    assert info["rdb_last_bgsave_status"] == "err"
    assert info["rdb_changes_since_last_save"] > 0

    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("CF.ADD", "f", "x")
    assert str(e.value).startswith(MISCONF)
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("DEL", "f")
    assert str(e.value).startswith(MISCONF)
    assert c.execute_command("CF.EXISTS", "f", "old") == 1
    assert c.execute_command("CF.EXISTS", "f", "new") == 1
    assert c.ping()
    assert read(os.path.join(d, DUMP)) == old
    assert not [n for n in os.listdir(d) if ".tmp-" in n]
    assert "Background saving error" in s.log_text()

    # SHUTDOWN cannot save there: it refuses and the server keeps serving.
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("SHUTDOWN")
    assert "Errors trying to SHUTDOWN" in str(e.value)
    assert c.execute_command("CF.EXISTS", "f", "old") == 1

    c.config_set("dbfilename", DUMP)
    assert c.execute_command("BGSAVE") == b"Background saving started"
    assert wait_bgsave(s)["rdb_last_bgsave_status"] == "ok"
    assert c.execute_command("CF.ADD", "f", "x") == 1
    s.kill()
    s.start()
    assert s.client().execute_command("CF.EXISTS", "f", "new") == 1


def test_sigterm_with_failing_save_exits_nonzero(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    add_items(c, "f", ["a"])
    os.mkdir(os.path.join(d, "adir"))
    c.config_set("dbfilename", "adir")
    assert s.stop() != 0
    assert "final save failed" in s.log_text()


def test_no_misconf_without_save_points(workdir):
    d, make = workdir
    os.mkdir(os.path.join(d, "adir"))
    s = make("--save", "").start()
    c = s.client()
    c.config_set("dbfilename", "adir")
    c.execute_command("BGSAVE")
    assert wait_bgsave(s)["rdb_last_bgsave_status"] == "err"
    assert c.execute_command("CF.ADD", "f", "x") == 1  # as Redis


def children(pid):
    """The pids whose parent is pid (from /proc/*/stat)."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and brackets.
        fields = stat[stat.rfind(")") + 2:].split()
        if int(fields[1]) == pid:
            out.append(int(name))
    return out


def proc_state(pid):
    """The state letter of pid, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2]


# ---------------------------------------------------------------------------
# kill -9 at random moments of a background save of a few hundred MB.

BIG = [("big0", 100000000), ("big1", 100000000), ("big2", 100000000)]


def test_bgsave_kill9_rounds(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    for name, cap in BIG:
        c.execute_command("CF.RESERVE", name, cap)
    c.execute_command("CF.RESERVE", "items", 200000)
    t0 = time.monotonic()
    c.execute_command("BGSAVE")
    wait_bgsave(s)
    save_time = time.monotonic() - t0
    confirmed = []  # items acknowledged before a save known complete
    rng = random.Random(4)
    mid_save = 0
    for rnd in range(20):
        c = s.client()
        batch = ["r%d-%d" % (rnd, i) for i in range(1000)]
        add_items(c, "items", batch)
        add_items(c, BIG[rnd % 3][0], batch[:100])
        before = s.info()["rdb_saves"]
        assert c.execute_command("BGSAVE") == b"Background saving started"
        # The loop keeps serving writes while the child saves.
        add_items(c, "items", ["during-%d" % rnd])
        if rnd % 5 == 4:
            wait_bgsave(s)  # some rounds surely complete
        else:
            time.sleep(rng.uniform(0, save_time * 1.3))
        info = s.info()
        if not info["rdb_bgsave_in_progress"] and info["rdb_saves"] > before:
            assert info["rdb_last_bgsave_status"] == "ok"
            confirmed.extend(batch)
        else:
            mid_save += 1
        kids = children(s.pid)
        s.kill()
        # The child dies with its parent (PR_SET_PDEATHSIG), not at once;
        # a file it still holds is not stale yet, so wait for it.
        for k in kids:
            wait_until(lambda: proc_state(k) in (None, "Z"), what="the child")
        s.start()
        c = s.client()
        assert all_exist(c, "items", confirmed), "round %d" % rnd
        assert c.dbsize() == 4
        assert not [n for n in os.listdir(d) if ".tmp-" in n]
    assert len(confirmed) >= 4000
    print("kill -9 rounds: %d during a save, %d after it" %
          (mid_save, len(confirmed) // 1000))


def test_sigterm_during_bgsave(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    for name, cap in BIG[:2]:
        c.execute_command("CF.RESERVE", name, cap)
    add_items(c, "f", ["during"])
    assert c.execute_command("BGSAVE") == b"Background saving started"
    assert s.info()["rdb_bgsave_in_progress"] == 1
    # BGSAVE SCHEDULE while one runs; a second plain BGSAVE is refused.
    assert c.execute_command("BGSAVE", "SCHEDULE") == \
        b"Background saving scheduled"
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("BGSAVE")
    assert "already in progress" in str(e.value)
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("SAVE")
    assert "already in progress" in str(e.value)
    assert s.stop() == 0  # the child is killed, then a foreground save
    assert not [n for n in os.listdir(d) if ".tmp-" in n]
    s.start()
    assert s.client().execute_command("CF.EXISTS", "f", "during") == 1
    assert s.client().dbsize() == 3


def test_bgsave_schedule_runs_after_the_current_one(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    c.execute_command("CF.RESERVE", "big0", BIG[0][1])
    assert c.execute_command("BGSAVE") == b"Background saving started"
    assert c.execute_command("BGSAVE", "SCHEDULE") == \
        b"Background saving scheduled"
    wait_until(lambda: s.info()["rdb_saves"] >= 2, what="the scheduled BGSAVE")
    assert s.info()["rdb_last_bgsave_status"] == "ok"


# ---------------------------------------------------------------------------
# A signal sent to a background save's child is the child's alone: it holds
# none of the daemon's handlers (which could pass the signal on to the
# parent's loop, so that a SIGTERM aimed at the child shut the server down)
# and blocks nothing.

def sig_masks(pid):
    """SigBlk, SigIgn and SigCgt of pid's main thread as integers."""
    masks = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("SigBlk", "SigIgn", "SigCgt"):
                masks[k] = int(v.strip(), 16)
    return masks


def bit(sig):
    return 1 << (int(sig) - 1)


def settled(pid):
    """The state of pid once it is stopped ("T") or ended ("Z", "gone")."""
    st = proc_state(pid)
    return st in ("T", "Z") and st or (st is None and "gone")


def stopped_bgsave_child(s, d):
    """Starts BGSAVEs until one's child is caught writing its temporary file
    (so it is past its set-up), and stops it there with SIGSTOP: its pid."""
    c = s.client()
    for _ in range(50):
        wait_bgsave(s)
        assert c.execute_command("BGSAVE") == b"Background saving started"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            kids = children(s.pid)
            tmp = [n for n in os.listdir(d) if ".tmp-" in n]
            mine = [k for k in kids
                    if any(n.startswith("%s.tmp-%d-" % (DUMP, k))
                           for n in tmp)]
            if mine:
                os.kill(mine[0], signal.SIGSTOP)
                # Stopped, or ended first (then try again).
                st = wait_until(lambda: settled(mine[0]),
                                what="the child to stop")
                if st == "T":
                    return mine[0]
                break
            if not s.info()["rdb_bgsave_in_progress"]:
                break
    raise AssertionError("never caught a background save's child")


def test_signal_to_bgsave_child_is_its_own(workdir):
    d, make = workdir
    s = make().start()
    c = s.client()
    c.execute_command("CF.RESERVE", "big0", BIG[0][1])
    add_items(c, "f", ["kept"])
    parent_before = sig_masks(s.pid)
    child = stopped_bgsave_child(s, d)
    masks = sig_masks(child)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGCHLD):
        assert not masks["SigCgt"] & bit(sig), \
            "the child still catches %s" % sig.name
    assert masks["SigBlk"] == 0, "the child blocks %x" % masks["SigBlk"]
    assert masks["SigIgn"] & bit(signal.SIGPIPE)
    assert sig_masks(s.pid)["SigBlk"] == parent_before["SigBlk"]
    # SIGTERM ends the child, not the server.
    os.kill(child, signal.SIGTERM)
    os.kill(child, signal.SIGCONT)
    info = wait_bgsave(s)
    assert info["rdb_last_bgsave_status"] == "err"
    assert "terminated by signal %d" % signal.SIGTERM in s.log_text()
    assert s.alive()
    assert c.ping()
    assert c.execute_command("CF.EXISTS", "f", "kept") == 1
    assert "Received SIGTERM" not in s.log_text()
    assert not [n for n in os.listdir(d) if ".tmp-" in n]
    # The next save works, and SIGTERM still reaches the server itself.
    assert c.execute_command("BGSAVE") == b"Background saving started"
    assert wait_bgsave(s)["rdb_last_bgsave_status"] == "ok"
    assert s.stop() == 0
