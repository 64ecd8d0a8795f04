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

from support.proc import (Daemon, RedisServer, shared_dir, use_redis_server,
                          wait_until)

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's own files")

MISCONF = "MISCONF Errors writing to the AOF file: Input/output error"


def fault_env(control):
    lib = os.environ.get("CUCKOOD_FSFAULT_LIB")
    if not lib:
        pytest.skip("CUCKOOD_FSFAULT_LIB is not set (run through ctest)")
    env = dict(os.environ)
    env["LD_PRELOAD"] = lib
    env["CUCKOOD_FSFAULT"] = control
    # The library stands for the disk and is not instrumented: a
    # sanitized daemon must accept it before its runtime.
    env["ASAN_OPTIONS"] = ":".join(filter(None, [
        env.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
    return env


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
    s = make(d, fault_env(control), "--appendonly", "yes",
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

    s.kill()
    s.env = None
    s.start()
    c = s.client()
    assert [x for x in acked if exists(c, "k", x) != 1] == []
    assert exists(c, "k", "refused") == 0
