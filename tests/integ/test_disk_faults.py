"""A failing disk under the append-only file, against the real cuckood and,
for the same sequence, Debian's redis-server: a preload library
(tests/fault/fsfault.c) makes fdatasync fail with EIO while the test asks
it to, as a dying disk does.

With appendfsync everysec, Redis 7 refuses write commands with
"MISCONF Errors writing to the AOF file: ..." once its background fsync
has failed, logs "Fail to fsync the AOF file", reports
aof_last_write_status:err, and goes on serving reads. cuckood must do the
same (it used to ignore the result of its background fsync and acknowledge
every write), and take writes again once an fsync succeeds. Nothing
acknowledged is lost across a restart."""

import os

import pytest
import redis

from support.durable import bgsave, fsfault_env
from support.proc import (Daemon, RedisServer, shared_dir, use_redis_server,
                          wait_until)

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's own files")

MISCONF = "MISCONF Errors writing to the AOF file: Input/output error"


@pytest.fixture
def workdir():
    with shared_dir("cuckood-diskfault-") as (d, servers):
        yield d, servers


# The same write and read against each server: one item into one key.
KINDS = {
    "cuckood": (lambda d, env, *a: Daemon(*a, dir=d, env=env),
                lambda c, k, x: c.execute_command("CF.ADD", k, x),
                lambda c, k, x: c.execute_command("CF.EXISTS", k, x)),
    "redis": (lambda d, env, *a: RedisServer(*a, dir=d, env=env),
              lambda c, k, x: c.execute_command("SADD", k, x),
              lambda c, k, x: c.execute_command("SISMEMBER", k, x)),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_failed_fsync_refuses_writes_then_recovers(workdir, kind):
    d, servers = workdir
    make, add, exists = KINDS[kind]
    control = os.path.join(d, "fault")
    s = make(d, fsfault_env(CUCKOOD_FSFAULT=control), "--appendonly", "yes",
             "--appendfsync", "everysec", "--save", "")
    servers.append(s)
    s.start()
    c = s.client()
    acked = []
    for i in range(20):
        assert add(c, "k", "before-%d" % i) == 1
        acked.append("before-%d" % i)
    assert c.info("persistence")["aof_last_write_status"] == "ok"

    with open(control, "w") as f:
        f.write("fdatasync EIO\n")
    refused = []

    def refuses():
        x = "during-%d" % len(acked)
        try:
            assert add(c, "k", x) == 1
            acked.append(x)
            return False
        except redis.ResponseError as e:
            refused.append(str(e))
            return True
    # A write every 10 ms; the background fsync runs once a second.
    wait_until(refuses, timeout=20, step=0.01,
               what="a write refused after the failed fsync")
    assert refused == [MISCONF]
    assert os.path.getsize(control + ".count") > 0  # the disk did fail
    assert c.info("persistence")["aof_last_write_status"] == "err"
    assert "Fail to fsync the AOF file: Input/output error" in s.log_text()
    # Reads go on; writes stay refused while the disk keeps failing.
    assert exists(c, "k", acked[0]) == 1
    with pytest.raises(redis.ResponseError, match="^MISCONF"):
        add(c, "k", "refused")

    os.unlink(control)
    if kind == "cuckood":
        # Redis 7.0 leaves its refusal in place until the next write
        # succeeds, which the refusal itself prevents; cuckood tries the
        # fsync again once a second and takes writes when it works.
        wait_until(lambda: c.info("persistence")["aof_last_write_status"]
                   == "ok", timeout=20,
                   what="the fsync to succeed again")
        assert "AOF fsync error looks solved" in s.log_text()
        assert add(c, "k", "after") == 1
        acked.append("after")
    # everysec may lose what still waits in the buffer (its reply can go
    # first, as Redis's does behind a slow fsync): once written, nothing.
    wait_until(lambda: c.info("persistence")["aof_buffer_length"] == 0,
               what="the buffer written")

    s.kill()
    s.env = None
    s.start()
    c = s.client()
    assert [x for x in acked if exists(c, "k", x) != 1] == []
    assert exists(c, "k", "refused") == 0


def fault(control, line):
    """Makes the disk fail as line says (fsfault.c's control file); None
    lets every call through again."""
    if line is None:
        os.unlink(control)
    else:
        with open(control, "w") as f:
            f.write(line + "\n")


def failures(control):
    try:
        with open(control + ".count") as f:
            return len(f.read().split())
    except FileNotFoundError:
        return 0


def daemon(d, servers, control, *args):
    s = Daemon(*args, dir=d, env=fsfault_env(CUCKOOD_FSFAULT=control))
    servers.append(s)
    return s.start()


def restart_clean(s):
    """The same data directory, started again without the failing disk."""
    s.kill()
    s.env = None
    s.start()
    return s.client()


def test_always_exits_on_a_failed_fsync(workdir):
    """With always, a write whose fsync failed is never acknowledged: the
    server exits, as Redis does."""
    d, servers = workdir
    control = os.path.join(d, "fault")
    s = daemon(d, servers, control, "--appendonly", "yes",
               "--appendfsync", "always", "--save", "")
    c = s.client()
    assert c.execute_command("CF.ADD", "k", "before") == 1
    fault(control, "fdatasync EIO appendonlydir")
    with pytest.raises(redis.ConnectionError):
        c.execute_command("CF.ADD", "k", "unacknowledged")
    s.wait(timeout=10)
    assert s.proc.returncode == 1
    assert failures(control) > 0
    assert ("Can't persist AOF for fsync error when the AOF fsync policy "
            "is 'always': Input/output error") in s.log_text()
    fault(control, None)
    c = restart_clean(s)
    assert c.execute_command("CF.EXISTS", "k", "before") == 1


@pytest.mark.parametrize("line, reason", [
    ("write EIO appendonlydir", "Input/output error"),
    ("write ENOSPC appendonlydir", "No space left on device"),
    # a short write is cut back off the file and counts as a full disk
    ("write SHORT appendonlydir", "No space left on device"),
])
def test_everysec_failed_writes_refuse_then_recover(workdir, line, reason):
    d, servers = workdir
    control = os.path.join(d, "fault")
    s = daemon(d, servers, control, "--appendonly", "yes",
               "--appendfsync", "everysec", "--save", "")
    c = s.client()
    acked = []
    for i in range(10):
        assert c.execute_command("CF.ADD", "k", "a%d" % i) == 1
        acked.append("a%d" % i)
    fault(control, line)
    with pytest.raises(redis.ResponseError) as e:
        c.execute_command("CF.INSERT", "k", "ITEMS", *["x%d" % i
                                                      for i in range(50)])
        # the reply of the command whose write fails goes out first (as
        # Redis's): the next write is the one refused
        c.execute_command("CF.ADD", "k", "refused")
    assert str(e.value) == "MISCONF Errors writing to the AOF file: " + reason
    assert failures(control) > 0
    assert c.info("persistence")["aof_last_write_status"] == "err"
    assert c.execute_command("CF.EXISTS", "k", "a0") == 1  # reads go on
    fault(control, None)
    wait_until(lambda: c.info("persistence")["aof_last_write_status"] == "ok",
               what="the AOF write to succeed again")
    assert c.execute_command("CF.ADD", "k", "after") == 1
    acked.append("after")
    wait_until(lambda: c.info("persistence")["aof_buffer_length"] == 0,
               what="the buffer written")
    c = restart_clean(s)
    assert [x for x in acked if c.execute_command("CF.EXISTS", "k", x) != 1] \
        == []


def test_everysec_slow_fsync_delays_writes(workdir):
    """A background fsync that takes seconds: writes wait for it up to 2 s,
    then go ahead without it, and aof_delayed_fsync counts it (Redis's
    rule); nothing acknowledged is lost."""
    d, servers = workdir
    control = os.path.join(d, "fault")
    s = daemon(d, servers, control, "--appendonly", "yes",
               "--appendfsync", "everysec", "--save", "")
    c = s.client()
    fault(control, "fdatasync SLOW appendonlydir")
    acked = []

    def delayed():
        x = "s%d" % len(acked)
        assert c.execute_command("CF.ADD", "k", x) == 1
        acked.append(x)
        return c.info("persistence")["aof_delayed_fsync"] > 0
    wait_until(delayed, timeout=30, step=0.05,
               what="a write that went ahead of a slow fsync")
    assert "Asynchronous AOF fsync is taking too long" in s.log_text()
    fault(control, None)
    # everysec may lose what waits in the buffer behind a slow fsync (up to
    # 2 s, by definition): once the buffer is written, nothing.
    wait_until(lambda: c.info("persistence")["aof_buffer_length"] == 0 and
               c.info("persistence")["aof_pending_bio_fsync"] == 0,
               timeout=30, what="the buffer written")
    c = restart_clean(s)
    assert [x for x in acked if c.execute_command("CF.EXISTS", "k", x) != 1] \
        == []


@pytest.mark.parametrize("background", [False, True])
def test_failed_snapshot_keeps_the_old_one(workdir, background):
    """A snapshot whose fsync fails: the old file stays as it was, SAVE
    answers an error (BGSAVE's child fails: rdb_last_bgsave_status:err),
    the log says why, and the data set is still the old file's after a
    restart."""
    d, servers = workdir
    control = os.path.join(d, "fault")
    s = daemon(d, servers, control, "--appendonly", "no", "--save", "")
    c = s.client()
    c.execute_command("CF.ADD", "k", "saved")
    assert c.execute_command("SAVE") in (b"OK", "OK", True)
    path = os.path.join(d, "dump.cuckoo")
    with open(path, "rb") as f:
        old = f.read()
    c.execute_command("CF.ADD", "k", "not saved")
    fault(control, "fsync EIO .tmp-")
    if background:
        assert bgsave(c) == "err"
    else:
        with pytest.raises(redis.ResponseError):
            c.execute_command("SAVE")
    assert failures(control) > 0
    assert "Input/output error" in s.log_text()
    with open(path, "rb") as f:
        assert f.read() == old
    assert [n for n in os.listdir(d) if ".tmp-" in n] == []
    fault(control, None)
    c = restart_clean(s)
    assert c.execute_command("CF.EXISTS", "k", "saved") == 1
    assert c.execute_command("CF.COUNT", "k", "not saved") == 0


def test_reply_leaves_after_its_write(workdir):
    """A reply leaves only once its command is written to the AOF (as
    Redis sends replies after flushAppendOnlyFile()), so a crash of the
    process alone loses nothing acknowledged, whatever the fsync policy:
    with every AOF write made to take 3 s, a kill -9 right after a reply
    still finds its item after a restart. (appendfsync no: no background
    fsync can put the write off.)"""
    d, servers = workdir
    control = os.path.join(d, "fault")
    s = daemon(d, servers, control, "--appendonly", "yes",
               "--appendfsync", "no", "--save", "")
    c = s.client()
    assert c.execute_command("CF.ADD", "k", "before") == 1
    fault(control, "write SLOW appendonlydir")
    assert c.execute_command("CF.ADD", "k", "acknowledged") == 1
    c = restart_clean(s)
    assert c.execute_command("CF.EXISTS", "k", "acknowledged") == 1
    assert failures(control) > 0  # the write was held up
