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

import pytest
import redis

from support.proc import use_redis_server, wait_until
from support.resp import encode_command

pytestmark = pytest.mark.skipif(use_redis_server(),
                                reason="cuckood's snapshot file and CF.*")

DUMP = "dump.cuckoo"
CHUNK = 4 << 20  # bytes of one CF.SCANDUMP data chunk


def kill9_restart(d):
    """kill -9 the daemon and start it again on the same directory."""
    d.kill()
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
    r = d.client()
    fill(r)
    r.select(3)
    fill(r, "other", 10)
    assert r.save()
    assert r.flushall()
    assert d.log_text().count("DB saved on disk") == 2
    r.close()

    kill9_restart(d)
    r = d.client()
    assert r.dbsize() == 0
    assert r.execute_command("CF.EXISTS", "f", "item-7") == 0
    r.select(3)
    assert r.dbsize() == 0


def test_flushdb_does_not_save(daemon):
    """As in Redis: FLUSHDB only counts changes; the save points save it."""
    d = daemon("--save", "3600 1")
    r = d.client()
    fill(r)
    assert r.save()
    before = open(dump_path(d), "rb").read()
    assert r.flushdb()
    assert open(dump_path(d), "rb").read() == before
    assert r.info("persistence")["rdb_changes_since_last_save"] >= 1


def test_flushall_without_save_points_writes_nothing(daemon):
    d = daemon("--save", "")
    r = d.client()
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
    assert d.client().execute_command("CF.EXISTS", "f", "item-7") == 1


def big_keyspace(r):
    """A filter large enough that a background save of it takes a while."""
    assert r.execute_command("CF.RESERVE", "big", 40000000, "EXPANSION",
                             0) == b"OK"
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


@pytest.mark.parametrize("save", ["3600 1", ""])
def test_flushall_kills_a_running_bgsave(daemon, save):
    """The killed child's old image must not land after the flush."""
    d = daemon("--save", save)
    r = d.client()
    big_keyspace(r)
    bgsave_then_flushall(r)
    # Killed, not left to finish: no child runs, and none will write.
    assert r.info("persistence")["rdb_bgsave_in_progress"] == 0
    assert "Killing it" in d.log_text()
    assert not [f for f in os.listdir(d.dir) if f.startswith("temp-")]
    if not save:
        assert not os.path.exists(dump_path(d))
        return
    r.close()
    kill9_restart(d)  # FLUSHALL's own save is what loads
    assert d.client().dbsize() == 0


# ---- output buffer limits --------------------------------------------------

def big_filter(r, key="g"):
    """A filter whose first data chunk is a full 4 MB."""
    # a fixed table (EXPANSION 0): its data chunks are CHUNK bytes, a
    # growable filter's at most one of its 2 MB segments
    assert r.execute_command("CF.RESERVE", key, 5000000, "EXPANSION",
                             0) == b"OK"
    r.execute_command("CF.INSERT", key, "ITEMS",
                      *["item-%d" % i for i in range(20000)])
    it, chunk = r.execute_command("CF.SCANDUMP", key, 1)
    assert len(chunk) == CHUNK
    return [it, chunk]


def non_reader(d, n=250):
    """A raw socket that pipelines n CF.SCANDUMP (n x 4 MB of replies) in
    one write and never reads."""
    s = d.raw(rcvbuf=4096)
    s.send(encode_command("CLIENT", "SETNAME", "stuck") +
           encode_command("CF.SCANDUMP", "g", 1) * n)
    return s


def closed_for_limits(r):
    return r.info("stats")["client_output_buffer_limit_disconnections"] == 1


def stuck_entry(r):
    for c in r.client_list():
        if c.get("name") == "stuck":
            return c
    return None


def served_while_waiting(r, pred, timeout=30.0):
    """Waits for pred, checking on every poll that r is served."""
    def served_and(pred):
        assert r.execute_command("CF.EXISTS", "g", "item-7") == 1
        return pred()
    return wait_until(lambda: served_and(pred), timeout, what=pred.__name__)


@pytest.mark.parametrize("limit", ["32mb 0 0", "64mb 16mb 0"])
def test_non_reader_is_closed_at_the_hard_limit(daemon, limit):
    """A hard limit several replies above the pause threshold: the client
    that never reads used to be paused below it and kept forever."""
    d = daemon("--client-output-buffer-limit",
               "normal " + limit)
    r = d.client()
    big_filter(r)
    assert r.info("stats")["client_output_buffer_limit_disconnections"] == 0
    s = non_reader(d)
    served_while_waiting(r, lambda: closed_for_limits(r))
    assert stuck_entry(r) is None
    assert "scheduled to be closed ASAP for overcoming of output buffer " \
        "limits" in d.log_text()
    assert "name=stuck" in d.log_text()
    assert r.info("stats")["client_output_buffer_limit_disconnections"] == 1
    # The memory its replies held is back.
    assert r.info("memory")["mem_clients_normal"] < CHUNK
    # It ran about as many chunks as its limit holds, not its whole batch.
    calls = r.info("commandstats")["cmdstat_cf.scandump"]["calls"]
    assert calls < 30, calls
    assert r.ping()
    s.close()


def test_non_reader_is_closed_after_the_soft_seconds(daemon):
    """Soft limit only: over it, the client is paused (its output bounded),
    then closed once it stayed over for the soft seconds."""
    d = daemon("--client-output-buffer-limit",
               "normal 0 8mb 1")
    r = d.client()
    big_filter(r)
    s = non_reader(d)

    def over_soft():
        e = stuck_entry(r)
        return closed_for_limits(r) or (e is not None and
                                        int(e["omem"]) > 8 << 20)
    served_while_waiting(r, over_soft)
    e = stuck_entry(r)
    assert e is None or int(e["omem"]) < 8 * CHUNK  # paused, not all 1 GB
    served_while_waiting(r, lambda: closed_for_limits(r))
    assert stuck_entry(r) is None
    assert r.info("memory")["mem_clients_normal"] < CHUNK
    s.close()


def test_reader_under_the_limits_is_served(daemon):
    """A client that reads its replies keeps its connection under limits."""
    d = daemon("--client-output-buffer-limit",
               "normal 64mb 16mb 60")
    r = d.client()
    first = big_filter(r)
    other = d.client()
    for _ in range(20):
        assert other.execute_command("CF.SCANDUMP", "g", 1) == first
    assert r.info("stats")["client_output_buffer_limit_disconnections"] == 0


def test_limit_counter_reset_by_config_resetstat(daemon):
    d = daemon("--client-output-buffer-limit",
               "normal 1mb 0 0")
    r = d.client()
    big_filter(r)
    s = non_reader(d, 5)
    served_while_waiting(r, lambda: closed_for_limits(r))
    s.close()
    assert r.info("stats")["client_output_buffer_limit_disconnections"] == 1
    assert r.config_resetstat()
    assert r.info("stats")["client_output_buffer_limit_disconnections"] == 0
