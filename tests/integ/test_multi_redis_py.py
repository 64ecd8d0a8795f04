"""Transactions through redis-py as applications use them: pipeline() with
and without MULTI/EXEC, WATCH with its optimistic retry loop against a
concurrent writer, and errors as redis-py raises them.

Run against redis-server with CUCKOOD_TEST_REDIS_SERVER=1 to check the
non-CF expectations; tests marked `cf` are skipped there.
"""

import threading

import pytest
import redis


@pytest.fixture
def r(server):
    c = redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=30)
    c.flushall()
    yield c
    c.close()


def new_client(server):
    return redis.Redis(host="127.0.0.1", port=server.port, socket_timeout=30)


@pytest.mark.cf
def test_transaction_pipeline(r):
    p = r.pipeline()  # transaction=True: MULTI ... EXEC
    p.execute_command("CF.ADD", "t", "a")
    p.execute_command("CF.EXISTS", "t", "a")
    p.execute_command("CF.EXISTS", "t", "b")
    p.exists("t")
    assert p.execute() == [1, 1, 0, 1]
    stats = r.info("commandstats")
    assert stats["cmdstat_multi"]["calls"] >= 1
    assert stats["cmdstat_exec"]["calls"] >= 1


@pytest.mark.cf
def test_plain_pipeline(r):
    r.config_resetstat()
    p = r.pipeline(transaction=False)
    for i in range(100):
        p.execute_command("CF.ADD", "p", "i%d" % i)
    p.execute_command("CF.EXISTS", "p", "i7")
    assert p.execute() == [1] * 100 + [1]
    assert "cmdstat_exec" not in r.info("commandstats")


@pytest.mark.cf
def test_run_time_error_in_place(r):
    p = r.pipeline()
    p.execute_command("CF.ADD", "e", "a")
    p.execute_command("CF.DEL", "missing", "a")
    p.execute_command("CF.EXISTS", "e", "a")
    res = p.execute(raise_on_error=False)
    assert res[0] == 1 and res[2] == 1
    assert isinstance(res[1], redis.ResponseError)
    with pytest.raises(redis.ResponseError):
        p.execute_command("CF.DEL", "missing", "a")
        p.execute()


@pytest.mark.cf
def test_queue_time_error_aborts(r):
    p = r.pipeline()
    p.execute_command("CF.ADD", "q", "a")
    p.execute_command("CF.ADD", "q")  # wrong arity: refused when queued
    with pytest.raises(redis.ResponseError) as e:
        p.execute()
    assert "EXECABORT" in str(e.value) or "wrong number" in str(e.value)
    assert r.exists("q") == 0


@pytest.mark.cf
def test_watch_retry_with_concurrent_writer(r, server):
    """r.transaction(fn, key): redis-py's WATCH/MULTI/EXEC loop retries on
    WatchError while another client keeps writing the watched key."""
    r.execute_command("CF.RESERVE", "ctr", 100000)
    stop = threading.Event()
    writes = [0]

    def writer():
        w = new_client(server)
        i = 0
        while not stop.is_set():
            w.execute_command("CF.ADD", "ctr", "w%d" % i)
            i += 1
        writes[0] = i
        w.close()

    t = threading.Thread(target=writer)
    t.start()
    attempts = [0]
    try:
        def fn(pipe):
            attempts[0] += 1
            pipe.execute_command("CF.EXISTS", "ctr", "mine")
            # Give the writer time to change the key while it is watched,
            # for the first attempts.
            if attempts[0] < 3:
                w = new_client(server)
                w.execute_command("CF.ADD", "ctr", "x%d" % attempts[0])
                w.close()
            pipe.multi()
            pipe.execute_command("CF.ADD", "ctr", "mine")

        res = r.transaction(fn, "ctr")
    finally:
        stop.set()
        t.join()
    assert res == [1]
    assert attempts[0] >= 3  # two invalidated attempts at least
    assert r.execute_command("CF.EXISTS", "ctr", "mine") == 1


def test_watch_error_loop(r, server):
    other = new_client(server)
    try:
        with r.pipeline() as p:
            p.watch("k")
            other.delete("k")  # not a change: k does not exist
            p.multi()
            p.ping()
            assert p.execute() == [True]
    finally:
        other.close()


@pytest.mark.cf
def test_watch_error_raised(r, server):
    other = new_client(server)
    try:
        r.execute_command("CF.ADD", "k", "a")
        with r.pipeline() as p:
            p.watch("k")
            other.delete("k")
            p.multi()
            p.ping()
            with pytest.raises(redis.WatchError):
                p.execute()
    finally:
        other.close()


def test_discard_and_reset(r):
    with r.pipeline() as p:
        p.multi()
        p.ping()
        p.reset()  # DISCARD
    assert r.ping()
    for cmd in ("EXEC", "DISCARD"):
        with pytest.raises(redis.ResponseError,
                           match="%s without MULTI" % cmd):
            r.execute_command(cmd)


@pytest.mark.cf
def test_transactions_do_not_interleave(server):
    """Two clients each run EXEC of many writes to one key: every reply
    array is whole and the counts add up."""
    results = []

    def worker(tag):
        c = new_client(server)
        for n in range(20):
            p = c.pipeline()
            for i in range(50):
                p.execute_command("CF.ADD", "iv", "%s%d.%d" % (tag, n, i))
            results.append(p.execute())
        c.close()

    c = new_client(server)
    c.flushall()
    c.execute_command("CF.RESERVE", "iv", 100000, "BUCKETSIZE", 4,
                      "EXPANSION", 2)
    ts = [threading.Thread(target=worker, args=(t,)) for t in "ab"]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert len(results) == 40 and all(len(x) == 50 for x in results)
    info = c.execute_command("CF.INFO", "iv")
    fields = dict(zip(info[::2], info[1::2]))
    assert fields[b"Number of items inserted"] == 2000
    c.close()
