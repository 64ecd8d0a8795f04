"""Monitoring as Redis users do it: INFO's run_id, the latency monitor
(LATENCY LATEST / HISTORY / RESET / DOCTOR / HELP with
latency-monitor-threshold), the slow log (SLOWLOG GET / LEN / RESET / HELP
with slowlog-log-slower-than and slowlog-max-len), and Debian's
prometheus-redis-exporter scraping a running cuckood.
"""

import os
import re
import shutil
import subprocess
import time
import urllib.request

import pytest
import redis

from support.proc import free_port, use_redis_server, wait_until

EXPORTER = "prometheus-redis-exporter"


def slow_command(r):
    """Runs commands that take well over a millisecond: a SAVE of a
    60 MB filter (written and fsynced)."""
    if not r.exists("big"):
        r.execute_command("CF.RESERVE", "big", 40000000)
    assert r.save()


# ---- INFO run_id -----------------------------------------------------------

def test_run_id_is_40_hex_and_new_at_each_start(daemon):
    ids = []
    for _ in range(2):
        d = daemon()
        run_id = d.client().info("server")["run_id"]
        assert re.fullmatch(r"[0-9a-f]{40}", run_id), run_id
        ids.append(run_id)
        d.stop()
    assert ids[0] != ids[1]


# ---- LATENCY ---------------------------------------------------------------

def test_config_defaults(daemon):
    r = daemon().client()
    assert r.config_get("latency-monitor-threshold") == {
        "latency-monitor-threshold": "0"}
    assert r.config_get("slowlog-*") == {"slowlog-log-slower-than": "10000",
                                          "slowlog-max-len": "128"}


def test_latency_off_by_default_answers_empty(daemon):
    r = daemon().client()
    slow_command(r)
    assert r.execute_command("LATENCY", "LATEST") == []
    assert r.execute_command("LATENCY", "HISTORY", "command") == []
    assert r.execute_command("LATENCY", "RESET") == 0
    doctor = r.execute_command("LATENCY", "DOCTOR")
    assert b"disabled" in doctor and b"latency-monitor-threshold" in doctor
    helptext = r.execute_command("LATENCY", "HELP")
    assert any(b"LATEST" in line for line in helptext)


def test_latency_records_events_over_the_threshold(daemon):
    r = daemon("--latency-monitor-threshold", 1).client()
    before = int(time.time())
    slow_command(r)
    latest = {e[0]: e[1:] for e in r.execute_command("LATENCY", "LATEST")}
    # SAVE is a (non-fast) command, and a foreground snapshot write.
    assert b"command" in latest and b"rdb-save" in latest, latest
    for name in (b"command", b"rdb-save"):
        when, last_ms, max_ms = latest[name]
        assert when >= before and 1 <= last_ms <= max_ms
    hist = r.execute_command("LATENCY", "HISTORY", "rdb-save")
    assert len(hist) == 1 and hist[0][1] == latest[b"rdb-save"][1]
    assert r.execute_command("LATENCY", "HISTORY", "no-such-event") == []
    assert b"rdb-save" in r.execute_command("LATENCY", "DOCTOR")

    assert r.execute_command("LATENCY", "RESET", "rdb-save", "nope") == 1
    names = [e[0] for e in r.execute_command("LATENCY", "LATEST")]
    assert b"rdb-save" not in names and b"command" in names
    assert r.execute_command("LATENCY", "RESET") >= 1
    assert r.execute_command("LATENCY", "LATEST") == []


def test_latency_threshold_config_set(daemon):
    r = daemon().client()
    assert r.config_set("latency-monitor-threshold", 1)
    slow_command(r)
    assert r.execute_command("LATENCY", "LATEST") != []
    with pytest.raises(redis.ResponseError):
        r.config_set("latency-monitor-threshold", -1)
    with pytest.raises(redis.ResponseError):
        r.config_set("latency-monitor-threshold", "soon")
    with pytest.raises(redis.ResponseError, match="unknown subcommand"):
        r.execute_command("LATENCY", "NOPE")
    with pytest.raises(redis.ResponseError, match="wrong number"):
        r.execute_command("LATENCY", "HISTORY")


# ---- SLOWLOG ---------------------------------------------------------------

def entries(r, *count):
    return r.execute_command("SLOWLOG", "GET", *count)


def test_slowlog_entries_as_redis(daemon):
    d = daemon("--slowlog-log-slower-than", 0)
    c = d.raw()  # one connection: every entry has its address
    assert c.command("CLIENT", "SETNAME", "watcher") == "OK"
    addr = re.search(r"addr=(\S+)", c.command("CLIENT", "INFO").decode())[1]
    t0, wall0 = time.monotonic(), int(time.time())
    c.command("CF.ADD", "f", "x" * 200)
    c.command("CF.MEXISTS", "f", *["i%d" % i for i in range(40)])
    c.command("AUTH", "not-the-password")  # an error: no password is set
    c.command("HELLO", 2, "AUTH", "default", "secret-pw")
    assert c.command("CONFIG", "SET", "timeout", 0, "requirepass",
                     "pw2") == "OK"
    assert c.command("AUTH", "pw2") == "OK"
    got = c.command("SLOWLOG", "GET", -1)
    took_us, wall1 = (time.monotonic() - t0) * 1e6, int(time.time())
    assert c.command("CONFIG", "SET", "slowlog-log-slower-than", -1) == "OK"
    assert c.command("CONFIG", "SET", "requirepass", "") == "OK"
    c.close()

    # Newest first; id, unix time, microseconds, argv, address, name. The
    # launcher's readiness check (another client) is logged too.
    ids = [e[0] for e in got]
    got = [e for e in got if e[5] == b"watcher"]
    assert ids == sorted(ids, reverse=True)
    for e in got:
        assert len(e) == 6
        # logged while the commands ran, each taking part of that time
        assert wall0 <= e[1] <= wall1, (e, wall0, wall1)
        assert 0 <= e[2] <= took_us, (e, took_us)
        assert e[4] == addr.encode() and e[5] == b"watcher"
    by_cmd = {e[3][0].lower(): e[3] for e in reversed(got)}
    add = by_cmd[b"cf.add"]
    assert add[:2] == [b"CF.ADD", b"f"]
    assert add[2] == b"x" * 128 + b"... (72 more bytes)"
    mex = by_cmd[b"cf.mexists"]
    assert len(mex) == 32 and mex[:3] == [b"CF.MEXISTS", b"f", b"i0"]
    assert mex[30] == b"i28" and mex[31] == b"... (11 more arguments)"
    flat = b" ".join(b" ".join(e[3]) for e in got)
    for secret in (b"not-the-password", b"secret-pw", b"pw2"):
        assert secret not in flat
    assert by_cmd[b"auth"] == [b"AUTH", b"(redacted)"]
    assert by_cmd[b"hello"] == [b"HELLO", b"2", b"AUTH", b"(redacted)",
                                b"(redacted)"]
    assert by_cmd[b"config"] == [b"CONFIG", b"SET", b"timeout", b"0",
                                 b"requirepass", b"(redacted)"]


def test_slowlog_len_get_reset_and_max_len(daemon):
    r = daemon("--slowlog-log-slower-than", 0,
                      "--slowlog-max-len", 5).client()
    for i in range(20):
        r.ping()
    assert r.execute_command("SLOWLOG", "LEN") == 5
    assert len(entries(r)) == 5
    assert len(entries(r, 2)) == 2
    assert len(entries(r, -1)) == 5
    assert entries(r, 0) == []
    last_id = entries(r, 1)[0][0]
    assert r.execute_command("SLOWLOG", "RESET") == b"OK"
    # The RESET itself ran after the log was cleared: it is the one entry,
    # and ids go on from where they were (as Redis).
    got = entries(r, -1)
    assert [e[3] for e in got] == [[b"SLOWLOG", b"RESET"]]
    assert got[0][0] > last_id
    with pytest.raises(redis.ResponseError, match="greater than or equal"):
        entries(r, -2)
    with pytest.raises(redis.ResponseError, match="not an integer"):
        entries(r, "many")
    with pytest.raises(redis.ResponseError):
        entries(r, 1, 2)
    assert any(b"RESET" in line
               for line in r.execute_command("SLOWLOG", "HELP"))


def test_slowlog_thresholds(daemon):
    r = daemon().client()  # 10 ms: pings are not slow
    assert r.config_set("slowlog-log-slower-than", -1)
    slow_command(r)
    assert r.execute_command("SLOWLOG", "LEN") == 0
    assert r.config_set("slowlog-log-slower-than", 1000)  # 1 ms
    slow_command(r)  # CF.RESERVE answers "item exists"; SAVE is slow
    got = entries(r)
    assert [e[3] for e in got if e[3][0] == b"SAVE"], got
    assert all(e[2] >= 1000 for e in got)
    assert r.config_get("slowlog-log-slower-than") == {
        "slowlog-log-slower-than": "1000"}
    with pytest.raises(redis.ResponseError):
        r.config_set("slowlog-log-slower-than", "1.5")
    with pytest.raises(redis.ResponseError):
        r.config_set("slowlog-max-len", -1)


# ---- prometheus-redis-exporter ---------------------------------------------

class Exporter:
    def __init__(self, redis_port, workdir):
        self.binary = shutil.which(EXPORTER)
        if self.binary is None:
            pytest.fail("%s is not installed (bash scripts/deps.sh test)"
                        % EXPORTER)
        self.redis_port = redis_port
        self.log_path = os.path.join(workdir, "exporter.log")
        self.proc = None
        self.port = None

    def start(self):
        for _ in range(5):
            port = free_port()
            log = open(self.log_path, "ab")
            proc = subprocess.Popen(
                [self.binary,
                 "--redis.addr", "redis://127.0.0.1:%d" % self.redis_port,
                 "--web.listen-address", "127.0.0.1:%d" % port],
                stdout=log, stderr=subprocess.STDOUT)
            log.close()
            url = "http://127.0.0.1:%d/" % port

            def listening():
                if proc.poll() is not None:
                    return "exited"  # e.g. the port was taken meanwhile
                try:
                    urllib.request.urlopen(url, timeout=2).read()
                    return "up"
                except OSError:
                    return None
            if wait_until(listening, 15, what="the exporter") == "up":
                self.proc, self.port = proc, port
                return self
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        raise AssertionError("the exporter did not start:\n" + self.log())

    def scrape(self):
        with urllib.request.urlopen(
                "http://127.0.0.1:%d/metrics" % self.port, timeout=30) as f:
            text = f.read().decode()
        metrics = {}
        for line in text.splitlines():
            if not line or line.startswith("#"):
                continue
            name, value = line.rsplit(" ", 1)
            metrics[name] = float(value)
        return metrics

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


@pytest.mark.skipif(use_redis_server(), reason="CF commands")
def test_prometheus_redis_exporter(daemon):
    d = daemon("--latency-monitor-threshold", 1,
               "--slowlog-log-slower-than", 5000)
    r = d.client()
    adds = 25
    for i in range(adds):
        r.execute_command("CF.ADD", "seen", "user:%d" % i)
    r2 = d.client(db=2)
    for k in ("a", "b", "c"):
        r2.execute_command("CF.RESERVE", k, 1000)
    slow_command(r)  # a latency spike and a slow log entry

    exporter = Exporter(d.port, d.dir).start()
    try:
        exporter.scrape()
        m = exporter.scrape()  # the second sees the first's commands too
    finally:
        exporter.stop()
    log = exporter.log()

    assert m["redis_up"] == 1
    assert m['redis_exporter_last_scrape_error{err=""}'] == 0
    assert "level=error" not in log and "level=warning" not in log, log
    for db in range(16):
        n = d.client(db=db).dbsize()
        key = 'redis_db_keys{db="db%d"}' % db
        if n:
            assert m[key] == n, (db, m.get(key))
        else:
            assert m.get(key, 0) == 0
    assert m['redis_db_keys{db="db0"}'] == 2  # seen, big
    assert m['redis_db_keys{db="db2"}'] == 3
    assert m["redis_memory_used_bytes"] > 0
    assert m['redis_commands_total{cmd="cf.add"}'] == adds
    assert m["redis_slowlog_length"] >= 1
    assert "redis_slowlog_last_id" in m
    assert m["redis_last_slow_execution_duration_seconds"] >= 0.005
    assert m['redis_latency_spike_duration_seconds{event_name="command"}'] \
        >= 0.001
    assert m['redis_latency_spike_last{event_name="rdb-save"}'] > 0
    assert m["redis_connected_clients"] >= 1
