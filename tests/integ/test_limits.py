"""Output limits under pipelining: a read batch whose replies are far bigger
than its requests (CF.SCANDUMP returns up to 4 MB for 20 bytes) must not make
the server buffer the whole batch. Dispatching pauses once a client's pending
output passes a few megabytes (or its hard limit), and resumes as the client
reads; a client that does not read is closed at its hard limit.
"""

import pytest

from support.proc import wait_until
from support.resp import RespError, encode_command

pytestmark = pytest.mark.cf

CHUNK = 4 << 20  # bytes of one CF.SCANDUMP data chunk


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (field, pid))


def client(d):
    return d.client()


def big_filter(r, key="g"):
    """A filter whose first data chunk is a full 4 MB, with some items in
    it so the chunk is not all zeros; returns CF.SCANDUMP's reply for it
    (the next iterator and the chunk)."""
    # a fixed table (EXPANSION 0): its data chunks are CHUNK bytes, a
    # growable filter's at most one of its 2 MB segments
    assert r.execute_command("CF.RESERVE", key, 5000000, "EXPANSION",
                             0) == b"OK"
    r.execute_command("CF.INSERT", key, "ITEMS",
                      *["item-%d" % i for i in range(20000)])
    it, chunk = r.execute_command("CF.SCANDUMP", key, 1)
    assert it != 0 and len(chunk) == CHUNK
    assert chunk.count(0) < len(chunk)
    return [it, chunk]


def client_entry(r, name):
    for c in r.client_list():
        if c.get("name") == name:
            return c
    return None


def wait_until_paused(r, name):
    """Waits (bounded) until the server has stopped dispatching the batch
    of the client named name: part of it waits unparsed (qbuf) while its
    replies wait to be written (omem). Returns the CLIENT LIST entry."""
    def paused():
        e = client_entry(r, name)
        return e if e is not None and int(e["qbuf"]) > 0 and \
            int(e["omem"]) > 0 else None
    return wait_until(paused, what="the server to pause client " + name)


def test_non_reader_pipelining_big_replies_is_cut_off(daemon):
    d = daemon("--client-output-buffer-limit", "normal", "1mb", "0", "0")
    r = client(d)
    big_filter(r)
    hwm_before = status_kb(d.pid, "VmHWM")

    s = d.raw(rcvbuf=4096)
    n = 250  # 1 GB of replies, from 7 kB of requests in one write
    s.send(encode_command("CF.SCANDUMP", "g", 1) * n)

    def cut_off():
        return r.info("clients")["connected_clients"] == 1
    wait_until(cut_off, what="the non-reading client to be closed")
    assert "output buffer limits" in d.log_text()

    # The server held about one reply for it, never the whole batch.
    grew_kb = status_kb(d.pid, "VmHWM") - hwm_before
    assert grew_kb < 64 * 1024, "peak RSS grew by %d kB" % grew_kb
    stats = r.info("commandstats").get("cmdstat_cf.scandump", {})
    # 1 from big_filter, then the few run before the limit was passed.
    assert stats.get("calls", 0) < 10, stats

    # Everyone else is served as usual.
    assert r.ping()
    other = client(d)
    assert other.execute_command("CF.EXISTS", "g", "item-7") == 1
    it, chunk = other.execute_command("CF.SCANDUMP", "g", 1)
    assert len(chunk) == CHUNK
    other.close()
    s.close()


def test_stalled_reader_without_hard_limit_times_out(daemon):
    """No hard limit: a client that stops reading is held (bounded), and
    as in Redis the idle timeout counts it idle once neither its input nor
    its output moves, so it does not stay forever."""
    d = daemon("--timeout", "1")
    r = client(d)
    big_filter(r)
    s = d.raw(rcvbuf=4096)
    s.send(encode_command("CF.SCANDUMP", "g", 1) * 250)

    def gone():
        # r is closed by the timeout too while it sits idle; ask afresh
        probe = client(d)
        try:
            return probe.info("clients")["connected_clients"] == 1
        finally:
            probe.close()
    wait_until(gone, timeout=60, step=0.5,
               what="a client stuck with unread replies to be closed")
    probe = client(d)
    stats = probe.info("commandstats").get("cmdstat_cf.scandump", {})
    assert stats.get("calls", 0) < 10, stats  # held, never the whole batch
    probe.close()
    s.close()


def test_slow_reader_gets_every_reply_in_order(daemon):
    d = daemon()  # no output limit
    r = client(d)
    first = big_filter(r)

    rd = d.raw(rcvbuf=65536)
    assert rd.command("CLIENT", "SETNAME", "slow") == "OK"

    # 30 chunks (120 MB of replies) with markers between them, in one write.
    n = 30
    batch = b"".join(encode_command("CF.SCANDUMP", "g", 1) +
                     encode_command("ECHO", "marker-%d" % i)
                     for i in range(n))
    rd.send(batch + encode_command("PING"))

    # Before the client reads anything, the server has run only part of the
    # batch: the rest waits unparsed, and the output held stays small.
    e = wait_until_paused(r, "slow")
    assert int(e["omem"]) < 4 * CHUNK, e

    rd.recv_pause = 0.0005
    for i in range(n):
        got = rd.read()
        assert isinstance(got, list) and len(got) == 2, i
        assert got == first, "chunk %d differs" % i
        assert rd.read() == b"marker-%d" % i
    assert rd.read() == "PONG"
    # The connection is in a normal state again: commands and reads work.
    assert rd.command("ECHO", "after") == b"after"
    assert int(client_entry(r, "slow")["qbuf"]) == 0
    rd.close()


def paused_behind_big_replies(daemon, tail, n=6):
    """A daemon's client that sent n CF.SCANDUMPs of a big filter and then
    tail, paused until it reads; returns (a redis-py client, that raw
    connection) once the n big replies are read."""
    d = daemon()
    r = client(d)
    first = big_filter(r)
    rd = d.raw(rcvbuf=65536)
    assert rd.command("CLIENT", "SETNAME", "paused") == "OK"
    rd.send(encode_command("CF.SCANDUMP", "g", 1) * n + tail)
    wait_until_paused(r, "paused")
    for i in range(n):
        assert rd.read() == first, i
    return r, rd


def test_pause_keeps_protocol_error_order(daemon):
    r, rd = paused_behind_big_replies(
        daemon, encode_command("ECHO", "last") + b"*1\r\n$x\r\n" +
        encode_command("CF.ADD", "g2", "after-error"))
    assert rd.read() == b"last"
    err = rd.read()
    assert isinstance(err, RespError), err
    assert err.text.startswith("ERR Protocol error"), err
    assert rd.at_eof()
    assert r.exists("g2") == 0


def test_pause_keeps_quit_semantics(daemon):
    r, rd = paused_behind_big_replies(
        daemon, encode_command("QUIT") +
        encode_command("CF.ADD", "g2", "after-quit"))
    assert rd.read() == "OK"
    assert rd.at_eof()
    assert r.exists("g2") == 0
    assert r.info("clients")["connected_clients"] == 1
