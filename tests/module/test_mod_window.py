"""Filters with a window in the module: a replica that applies the
primary's writes late (it sleeps through them) still stamps the primary's
times, holds the same bytes (DEBUG DIGEST-VALUE) and forgets at the same
moment; the AOF logs each add with its absolute time and a restart from
it (or from the RDB) forgets what the wall clock says. The module's timer
sweeps stale entries with no write at all, and after a clock jump (the
load argument cf-window-clock-offset) reclaims them a bounded number of
buckets per call while every answer stays exact."""

import pathlib
import threading

import redis

from support.proc import replica_synced, wait_until

WINDOW = 8000  # ms: slices of 1000


def info(c, key):
    rep = c.execute_command("CF.INFO", key)
    return {rep[i].decode() if isinstance(rep[i], bytes) else rep[i]:
            rep[i + 1] for i in range(0, len(rep), 2)}


def sweep_info(c):
    return c.info("cf_window")


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
    # "old" is forgotten at most a window and a slice (the slack) after
    # its time: wait for that by the server's clock (a poll), and for the
    # timer to reclaim its slot
    wait_until(lambda: now_ms(mc) > t + 1000 + 2500 + 100, timeout=10)
    wait_until(lambda: info(mc, "w")["Stale items"] == 0, timeout=10)
    digest = mc.execute_command("DEBUG", "DIGEST-VALUE", "w")
    m.stop()
    m.start()
    mc = m.client()
    # the replay stores "old" again (stale); the timer reclaims it as it
    # did before the restart, and the bytes are the same again
    wait_until(lambda: info(mc, "w")["Stale items"] == 0, timeout=10)
    assert mc.execute_command("DEBUG", "DIGEST-VALUE", "w") == digest
    assert mc.execute_command("CF.MEXISTS", "w", "old", "mid",
                              "new") == [0, 1, 1]
    # and through the RDB (saved and loaded again in place)
    assert mc.execute_command("DEBUG", "RELOAD")
    assert mc.execute_command("CF.MEXISTS", "w", "old", "mid",
                              "new") == [0, 1, 1]
    assert mc.execute_command("CF.INFO", "w")[-9:-2] == [
        b"window", b"Window", window, b"Slack", 2500, b"Live items", 2]


def test_timer_sweeps_without_writes(servers):
    m = servers()
    c = m.client()
    window = 2000  # slices of 250
    c.execute_command("CF.RESERVE", "w", 10000, "WINDOW", window)
    c.execute_command("CF.RESERVE", "other", 10000, "WINDOW", window)
    c.execute_command("SELECT", 3)
    c.execute_command("CF.RESERVE", "w3", 10000, "WINDOW", window)
    c.execute_command("CF.INSERT", "w3", "ITEMS", *range(300))
    c.execute_command("SELECT", 0)
    c.execute_command("CF.INSERT", "w", "ITEMS", *range(3000))
    # (items of the same fingerprint and buckets are one entry: a few
    # of 3,000 may share one)
    assert info(c, "w")["Live items"] > 2900
    # no write from here: reads give the clock, only the timer sweeps
    wait_until(lambda: info(c, "w")["Live items"] == 0, timeout=10)
    wait_until(lambda: info(c, "w")["Stale items"] == 0, timeout=10,
               what="the timer to sweep")
    c.execute_command("SELECT", 3)
    wait_until(lambda: info(c, "w3")["Stale items"] == 0, timeout=10,
               what="the timer to sweep database 3")
    assert c.execute_command("CF.EXISTS", "w3", 1) == 0
    s = sweep_info(c)
    assert s["cf_window_swept_entries"] > 3000
    assert s["cf_window_sweep_ticks"] > 0


def test_jump_reclaims_a_bounded_part_per_call(servers):
    m = servers()
    c = m.client()
    # 296,053 buckets: more than a timer tick's budget (16,384)
    c.execute_command("CF.RESERVE", "w", 1000000, "WINDOW", WINDOW)
    old = ["old%d" % i for i in range(20000)]
    for k in range(0, len(old), 2000):
        c.execute_command("CF.INSERT", "w", "ITEMS", *old[k:k + 2000])
    nb = info(c, "w")["Number of buckets"]
    assert nb > 16384 * 4
    m.stop(save=True)
    # an hour later by the module's clock
    m.module_args = ["cf-window-clock-offset", "3600000"]
    m.start()
    c = m.client()
    # forgotten (a false positive is the one way an absent item answers
    # 1: about 3 in a million here)
    assert sum(c.execute_command("CF.MEXISTS", "w", *old[:1000])) <= 1
    new = ["new%d" % i for i in range(2000)]
    c.execute_command("CF.INSERT", "w", "ITEMS", *new)
    assert c.execute_command("CF.MEXISTS", "w", *new) == [1] * len(new)
    assert sum(c.execute_command("CF.MEXISTS", "w", *old[:1000])) <= 1
    wait_until(lambda: info(c, "w")["Stale items"] == 0, timeout=30,
               what="the reclaim to end")
    assert info(c, "w")["Live items"] > len(new) - 20
    assert c.execute_command("CF.MEXISTS", "w", *new) == [1] * len(new)
    assert sum(c.execute_command("CF.MEXISTS", "w", *old)) <= 3
    most = sweep_info(c)["cf_window_most_buckets_per_call"]
    assert 0 < most <= 16384 < nb


def test_clock_offset_argument_refused_when_bad(servers):
    for bad in ("soon", "", "1e3", "99999999999999999999"):
        m = servers(module_args=["cf-window-clock-offset", bad], start=False)
        rc = m.fail_to_start()
        assert rc is not None and rc != 0
        assert ("cuckoo: bad module argument cf-window-clock-offset: not an "
                "integer (ms)") in m.log_text()
