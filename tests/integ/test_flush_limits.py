"""FLUSHALL and snapshots, and the output buffer limits of clients that stop
reading.

FLUSHALL: as in Redis 7, with save points configured the (now empty)
dataset is saved by the command itself, so a crash before the next save
point cannot bring the flushed filters back; a background save running at
that moment is killed first (its image holds the old data). Without save
points FLUSHALL writes nothing. FLUSHDB saves nothing (as Redis).

Output limits: a client whose unread replies pass the hard limit of
client-output-buffer-limit, or stay over the soft limit for the soft
seconds, is closed, logged with Redis's wording and counted in INFO stats
(client_output_buffer_limit_disconnections).
"""

import os
import socket
import time

import pytest
import redis

from conftest import Daemon, encode_command, use_redis_server

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's snapshot file and CF.*")

DUMP = "dump.cuckoo"
CHUNK = 4 << 20  # bytes of one CF.SCANDUMP data chunk


def wait_until(pred, timeout=30.0, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(step)
    return pred()


@pytest.fixture
def daemon():
    made = []

    def make(*args):
        d = Daemon(extra_args=[str(a) for a in args]).start()
        made.append(d)
        return d

    yield make
    for d in made:
        d.cleanup()


def client(d):
    return redis.Redis(host="127.0.0.1", port=d.port, socket_timeout=60)


def kill9_restart(d):
    """kill -9 the daemon and start it again on the same directory."""
    d.proc.kill()
    d.proc.wait()
    d.proc = None
    d.log.close()
    return d.start()


def dump_path(d):
    return os.path.join(d.dir, DUMP)


def fill(r, key="f", n=1000):
    items = ["item-%d" % i for i in range(n)]
    assert r.execute_command("CF.INSERT", key, "CAPACITY", 10000, "ITEMS",
                             *items) == [1] * n


# ---- FLUSHALL --------------------------------------------------------------

def test_flushall_survives_kill9(daemon):
    d = daemon("--save", "3600 1")
    r = client(d)
    fill(r)
    r.select(3)
    fill(r, "other", 10)
    assert r.save()
    assert r.flushall()
    r.close()

    kill9_restart(d)
    r = client(d)
    assert r.dbsize() == 0
    assert r.execute_command("CF.EXISTS", "f", "item-7") == 0
    r.select(3)
    assert r.dbsize() == 0
    assert "DB saved on disk" in d.log_text()


def test_flushdb_does_not_save(daemon):
    """As in Redis: FLUSHDB only counts changes; the save points save it."""
    d = daemon("--save", "3600 1")
    r = client(d)
    fill(r)
    assert r.save()
    before = open(dump_path(d), "rb").read()
    assert r.flushdb()
    assert open(dump_path(d), "rb").read() == before
    assert r.info("persistence")["rdb_changes_since_last_save"] >= 1


def test_flushall_without_save_points_writes_nothing(daemon):
    d = daemon("--save", "")
    r = client(d)
    fill(r)
    assert r.flushall()
    assert not os.path.exists(dump_path(d))

    fill(r)
    assert r.save()
    before = open(dump_path(d), "rb").read()
    st = os.stat(dump_path(d))
    assert r.flushall()
    assert open(dump_path(d), "rb").read() == before
    assert os.stat(dump_path(d)).st_mtime_ns == st.st_mtime_ns
    # Nothing saved it: the old snapshot is what a restart loads, as with
    # redis-server and save "".
    r.close()
    kill9_restart(d)
    assert client(d).execute_command("CF.EXISTS", "f", "item-7") == 1


def big_keyspace(r):
    """A filter large enough that a background save of it takes a while."""
    assert r.execute_command("CF.RESERVE", "big", 40000000) == b"OK"
    fill(r)


def bgsave_then_flushall(r):
    p = r.pipeline(transaction=False)
    p.bgsave()
    p.info("persistence")
    p.flushall()
    started, info, flushed = p.execute()
    assert started
    assert info["rdb_bgsave_in_progress"] == 1  # the child was running
    assert flushed


def test_flushall_kills_a_running_bgsave(daemon):
    d = daemon("--save", "3600 1")
    r = client(d)
    big_keyspace(r)
    bgsave_then_flushall(r)
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 0
    assert "Killing it" in d.log_text()
    assert not [f for f in os.listdir(d.dir) if f.startswith("temp-")]
    r.close()

    kill9_restart(d)
    assert client(d).dbsize() == 0


def test_flushall_without_save_points_kills_a_running_bgsave(daemon):
    """The killed child's old image must not land after the flush."""
    d = daemon("--save", "")
    r = client(d)
    big_keyspace(r)
    bgsave_then_flushall(r)
    # Killed, not left to finish: no child runs, and none will write.
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 0
    assert not os.path.exists(dump_path(d))
