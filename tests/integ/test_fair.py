"""Bounded work per loop turn: one client's long pipeline does not keep
another client waiting until it has all run. cuckood runs a read slab's
worth of a client's commands (64 KiB) per loop turn, then polls the other
clients, as Redis runs one read's worth."""

import os
import signal
import socket
import threading

import pytest

from support.proc import Daemon, use_module, use_redis_server

pytestmark = pytest.mark.skipif(use_redis_server() or use_module(),
                                reason="cuckood's own loop")

N = 60000  # inline PINGs: 360 KB, which the kernel holds for a stopped server


def test_other_client_served_inside_a_long_pipeline():
    s = Daemon("--save", "").start()
    try:
        a = socket.create_connection(("127.0.0.1", s.port))
        b = socket.create_connection(("127.0.0.1", s.port))
        b.sendall(b"PING\r\n")
        assert b.recv(64) == b"+PONG\r\n"
        # The server stopped, A's whole pipeline and then B's request wait
        # in the kernel; resumed, the server finds both readable at once.
        os.kill(s.pid, signal.SIGSTOP)
        try:
            sender = threading.Thread(
                target=a.sendall, args=(b"PING\r\n" * N,))
            sender.start()
            sender.join(10)
            assert not sender.is_alive(), "the kernel did not take it all"
            b.sendall(b"*2\r\n$4\r\nINFO\r\n$5\r\nstats\r\n")
        finally:
            os.kill(s.pid, signal.SIGCONT)
        text = b""
        while not text.endswith(b"\r\n\r\n") or b"total_commands" not in text:
            chunk = b.recv(1 << 16)
            assert chunk
            text += chunk
        done = int(text.split(b"total_commands_processed:")[1]
                   .split(b"\r\n")[0])
        # B's INFO ran after a slab's worth of A's commands (11,000), not
        # after all of them (1 for B's PING, 1 for its INFO)
        assert done < N // 2, done
        got = 0
        while got < N * 7:
            chunk = a.recv(1 << 20)
            assert chunk
            got += len(chunk)
        assert got == N * 7  # every PONG came, in the end
    finally:
        s.stop()
