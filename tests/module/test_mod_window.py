"""Filters with a window in the module: a replica that applies the
primary's writes late (it sleeps through them) still stamps the primary's
times, holds the same bytes (DEBUG DIGEST-VALUE) and forgets at the same
moment; the AOF logs each add with its absolute time and a restart from
it (or from the RDB) forgets what the wall clock says."""

import pathlib
import threading

import redis

from support.proc import replica_synced, wait_until

WINDOW = 8000  # ms: slices of 1000


def now_ms(c):
    s, us = c.execute_command("TIME")
    return int(s) * 1000 + int(us) // 1000


def test_late_replica_keeps_the_primary_times(servers):
    m = servers()
    r = servers("--replicaof", "127.0.0.1", str(m.port))
    mc, rc = m.client(), r.client()
    mc.execute_command("CF.RESERVE", "w", 1000, "WINDOW", WINDOW)
    replica_synced(m, r)
    # The replica sleeps 2.5 s (two and a half slices): the primary's adds
    # reach it late. Stamped with its own clock they would be two slices
    # younger there, and its bytes would differ.
    sleeper = threading.Thread(
        target=lambda: r.client().execute_command("DEBUG", "SLEEP", "2.5"))
    sleeper.start()

    def asleep():
        try:
            redis.Redis(port=r.port, socket_timeout=0.2).ping()
            return False
        except redis.exceptions.TimeoutError:
            return True
    wait_until(asleep, what="the replica to sleep")
    mc.execute_command("CF.ADD", "w", "a")
    mc.execute_command("CF.ADDNX", "w", "b")
    mc.execute_command("CF.INSERT", "w", "ITEMS", "c", "d")
    mc.execute_command("CF.INSERT", "w", "AT", now_ms(mc) - WINDOW + 4500,
                       "ITEMS", "soon")
    mc.execute_command("CF.DEL", "w", "d")
    sleeper.join()
    replica_synced(m, r)
    assert (rc.execute_command("DEBUG", "DIGEST-VALUE", "w") ==
            mc.execute_command("DEBUG", "DIGEST-VALUE", "w"))
    probe = ["a", "b", "c", "d", "never"]
    assert (rc.execute_command("CF.MEXISTS", "w", *probe) ==
            mc.execute_command("CF.MEXISTS", "w", *probe) ==
            [1, 1, 1, 0, 0])
    # "soon" is forgotten within a few seconds; once the primary says so,
    # the replica (asked after it) says so too
    wait_until(lambda: mc.execute_command("CF.EXISTS", "w", "soon") == 0,
               timeout=15, what="the primary to forget")
    assert rc.execute_command("CF.EXISTS", "w", "soon") == 0
    assert rc.execute_command("CF.EXISTS", "w", "a") == 1


def test_restart_from_aof_and_rdb(servers):
    m = servers("--appendonly", "yes", "--appendfsync", "always")
    mc = m.client()
    window = 20000  # slices and slack of 2500
    mc.execute_command("CF.RESERVE", "w", 1000, "WINDOW", window)
    t = now_ms(mc)
    # dated adds: one forgotten by the time of the restart, one kept for
    # 15 s more than that
    mc.execute_command("CF.INSERT", "w", "AT", t - window + 1000, "ITEMS",
                       "old")
    mc.execute_command("CF.INSERT", "w", "AT", t, "ITEMS", "mid")
    mc.execute_command("CF.ADD", "w", "new")
    assert mc.execute_command("CF.MEXISTS", "w", "old", "mid",
                              "new") == [1, 1, 1]
    aof = b"".join(p.read_bytes() for p in
                   (pathlib.Path(m.dir) / "appendonlydir").glob("*.incr.aof"))
    assert aof.count(b"\r\nAT\r\n") >= 3 and b"CF.ADD" not in aof
    digest = mc.execute_command("DEBUG", "DIGEST-VALUE", "w")
    # "old" is forgotten at most a window and a slice (the slack) after
    # its time: wait for that by the server's clock (a poll)
    wait_until(lambda: now_ms(mc) > t + 1000 + 2500 + 100, timeout=10)
    m.stop()
    m.start()
    mc = m.client()
    assert mc.execute_command("DEBUG", "DIGEST-VALUE", "w") == digest
    assert mc.execute_command("CF.MEXISTS", "w", "old", "mid",
                              "new") == [0, 1, 1]
    # and through the RDB (saved and loaded again in place)
    assert mc.execute_command("DEBUG", "RELOAD")
    assert mc.execute_command("CF.MEXISTS", "w", "old", "mid",
                              "new") == [0, 1, 1]
    assert mc.execute_command("CF.INFO", "w")[-9:-2] == [
        b"window", b"Window", window, b"Slack", 2500, b"Live items", 2]
