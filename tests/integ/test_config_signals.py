"""CONFIG SET all-or-nothing, multi-value directives given as one word,
SIGHUP, and the ops/sec figure after CONFIG RESETSTAT: behaviours where
cuckood follows redis-server 7 (CUCKOOD_TEST_REDIS_SERVER=1 runs the
non-CF cases against it)."""

import os
import signal
import time

import pytest
import redis

from support.proc import wait_until


def client(d):
    return d.client(socket_timeout=10)


def test_config_set_is_all_or_nothing(daemon):
    d = daemon()
    r = client(d)
    before = r.config_get("maxclients")["maxclients"]
    timeout_before = r.config_get("timeout")["timeout"]
    # The second pair is bad: the first must not stay applied.
    with pytest.raises(redis.ResponseError):
        r.execute_command("CONFIG", "SET", "timeout", "77",
                          "maxclients", "not-a-number")
    assert r.config_get("timeout")["timeout"] == timeout_before
    assert r.config_get("maxclients")["maxclients"] == before
    # A good pair of pairs applies both.
    assert r.execute_command("CONFIG", "SET", "timeout", "78",
                             "maxclients", "500")
    assert r.config_get("timeout")["timeout"] == "78"
    assert r.config_get("maxclients")["maxclients"] == "500"


def test_config_set_duplicate_parameter(daemon):
    d = daemon()
    r = client(d)
    with pytest.raises(redis.ResponseError, match="duplicate parameter"):
        r.execute_command("CONFIG", "SET", "timeout", "5", "timeout", "6")
    assert r.config_get("timeout")["timeout"] == "0"


def test_config_set_refuses_embedded_nul(daemon, is_redis):
    if is_redis:
        pytest.skip("redis-server stores the bytes as they are")
    d = daemon()
    r = client(d)
    with pytest.raises(redis.ResponseError, match="NUL"):
        r.execute_command("CONFIG", "SET", "requirepass", b"ab\x00cd")
    # Not stored cut at the NUL: no password is required.
    assert r.ping()
    assert r.config_get("requirepass")["requirepass"] == ""


@pytest.mark.parametrize("form", [
    ["--save", "3600 1 300 100"],        # one word, as compose passes it
    ["--save", "3600", "1", "300", "100"],
    ["--save 3600 1 300 100"],           # the whole option as one word
])
def test_save_points_in_any_command_line_form(daemon, form):
    d = daemon(*form)
    assert client(d).config_get("save")["save"] == "3600 1 300 100"


def test_save_points_one_word_in_a_config_file(daemon):
    # The file goes first on the command line, as redis-server takes it.
    d = daemon("--port", "{port}", "--dir", "{dir}",
                     "--bind", "127.0.0.1", conf='save "60 1000 10 5"\n')
    assert client(d).config_get("save")["save"] == "60 1000 10 5"


def test_sighup_is_ignored(daemon, is_redis):
    d = daemon("--save", "3600", "1")
    r = client(d)
    if not is_redis:
        assert r.execute_command("CF.ADD", "hup", "item") == 1
    else:
        r.set("hup", "item")
    d.proc.send_signal(signal.SIGHUP)
    # Still serving after the signal (bounded poll, not a timing).
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        assert d.proc.poll() is None, "SIGHUP ended the server"
        assert r.ping()
        time.sleep(0.1)
    # SIGTERM still saves: the item is back after a restart.
    assert d.stop() == 0
    files = os.listdir(d.dir)
    assert any(f.startswith("dump.") for f in files), files


def test_ops_per_sec_sane_after_resetstat(daemon):
    d = daemon()
    r = client(d)
    pipe = r.pipeline(transaction=False)
    for _ in range(5000):
        pipe.ping()
    pipe.execute()
    # Let the once-a-second sample see those commands.
    wait_until(lambda: r.info("stats")["instantaneous_ops_per_sec"] > 0,
               what="a sample with commands in it")
    assert r.config_resetstat()
    # Across the next samples the rate never reads as a wrapped counter.
    deadline = time.monotonic() + 2.5
    seen = []
    while time.monotonic() < deadline:
        seen.append(r.info("stats")["instantaneous_ops_per_sec"])
        time.sleep(0.05)
    assert max(seen) < 10**9, max(seen)
