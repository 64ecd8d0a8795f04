"""The core commands' exact replies, byte for byte where clients match on
them: argument and subcommand errors, CLIENT and HELLO, RESP3 framing,
AUTH before and without a password, SCAN and COMMAND LIST filters, and how
a connection ends (a half-closed client, QUIT before AUTH).

Run against redis-server with CUCKOOD_TEST_REDIS_SERVER=1 to check the
wording against Redis's; tests marked `cf` are skipped there, and so are
those of Redis 7.2's wording when the system's redis-server is older.
"""

import socket

import pytest

from support.proc import PASSWORD, use_redis_server
from support.resp import RespError

# cuckood answers as Redis 7.2 does (CLIENT SETINFO, HELLO's wording).
redis72 = pytest.mark.skipif(use_redis_server(),
                             reason="Redis 7.2's replies; the reference "
                                    "server may be older")

WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."


def err(reply):
    assert isinstance(reply, RespError), reply
    return reply.text


def test_unknown_command_arguments_are_cut_and_flattened(server):
    with server.raw() as c:
        # 128 bytes of arguments at the most; CR and LF become spaces.
        assert err(c.command("FOO", "x" * 200, "more")) == \
            "ERR unknown command 'FOO', with args beginning with: '%s' " % (
                "x" * 128)
        assert err(c.command("FOO", "a\r\nb")) == \
            "ERR unknown command 'FOO', with args beginning with: 'a  b' "
        assert c.command("PING") == "PONG"


@pytest.mark.parametrize("args,wording", [
    (["ECHO", "a", "b"], "ERR wrong number of arguments for 'echo' command"),
    (["SELECT"], "ERR wrong number of arguments for 'select' command"),
    (["CLIENT"], "ERR wrong number of arguments for 'client' command"),
    (["CLIENT", "SETNAME"],
     "ERR wrong number of arguments for 'client|setname' command"),
    (["CONFIG", "SET", "loglevel"],
     "ERR wrong number of arguments for 'config|set' command"),
    (["CLIENT", "NOPE"], "ERR unknown subcommand 'NOPE'. Try CLIENT HELP."),
    (["HELLO", "4"], "NOPROTO unsupported protocol version"),
    (["HELLO", "x"], "ERR Protocol version is not an integer or out of range"),
    (["HELLO", "3", "BOGUS"], "ERR Syntax error in HELLO option 'BOGUS'"),
    (["SCAN", "x"], "ERR invalid cursor"),
    (["SCAN", "0", "COUNT", "0"], "ERR syntax error"),
    (["SCAN", "0", "BOGUS", "1"], "ERR syntax error"),
    (["FLUSHALL", "BOGUS"], "ERR syntax error"),
    (["COMMAND", "LIST", "FILTERBY", "nope", "x"], "ERR syntax error"),
])
def test_error_wording(server, args, wording):
    with server.raw() as c:
        assert err(c.command(*args)) == wording
        assert c.command("PING") == "PONG"


def test_client_names(server):
    with server.raw() as c:
        assert c.command("CLIENT", "GETNAME") is None
        assert c.command("CLIENT", "SETNAME", "worker-1") == "OK"
        assert err(c.command("CLIENT", "SETNAME", "a b")) == \
            "ERR Client names cannot contain spaces, newlines or special " \
            "characters."
        assert c.command("CLIENT", "GETNAME") == b"worker-1"


@redis72
def test_client_library_fields(server):
    with server.raw() as c:
        cid = c.command("CLIENT", "ID")
        assert isinstance(cid, int) and cid > 0
        assert c.command("CLIENT", "SETNAME", "worker-1") == "OK"
        assert c.command("CLIENT", "SETINFO", "LIB-NAME", "mylib") == "OK"
        assert c.command("CLIENT", "SETINFO", "lib-ver", "1.2") == "OK"
        assert err(c.command("CLIENT", "SETINFO", "color", "red")) == \
            "ERR Unrecognized option 'color'"
        listed = c.command("CLIENT", "LIST").decode()
        mine = [ln for ln in listed.splitlines()
                if ln.startswith("id=%d " % cid)]
        assert len(mine) == 1, listed
        assert " name=worker-1 " in mine[0]
        assert mine[0].endswith(" lib-name=mylib lib-ver=1.2")
        assert c.command("CLIENT", "INFO").decode().startswith(
            "id=%d " % cid)


def test_hello_2_is_a_flat_array(server):
    with server.raw() as c:
        flat = c.command("HELLO", "2", "SETNAME", "hi")
        assert len(flat) == 14
        assert flat[0::2] == [b"server", b"version", b"proto", b"id",
                              b"mode", b"role", b"modules"]
        assert (flat[1], flat[5], flat[9], flat[11]) == \
            (b"redis", 2, b"standalone", b"master")
        assert c.command("CLIENT", "GETNAME") == b"hi"


def test_resp3_framing(server):
    with server.raw() as c:
        c.send(b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n")
        assert [c.read_raw_line() for _ in range(5)] == \
            [b"%7", b"$6", b"server", b"$5", b"redis"]
        rest = [c.read() for _ in range(12)]  # the other six pairs
        assert rest[0] == b"version" and rest[3] == 3
        assert rest[-2:] == [b"modules", []]
        # CONFIG GET answers a map, a null is "_".
        c.send(b"*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$4\r\nport\r\n")
        port = str(server.port).encode()
        assert [c.read_raw_line() for _ in range(5)] == \
            [b"%1", b"$4", b"port", b"$%d" % len(port), port]
        c.send(b"*2\r\n$6\r\nCLIENT\r\n$7\r\nGETNAME\r\n")
        assert c.read_raw_line() == b"_"


def test_auth_without_a_password(server):
    with server.raw() as c:
        assert err(c.command("AUTH", "foo")) == \
            "ERR AUTH <password> called without any password configured " \
            "for the default user. Are you sure your configuration is " \
            "correct?"
        assert c.command("AUTH", "default", "anything") == "OK"
        assert err(c.command("AUTH", "someone", "anything")) == WRONGPASS


def test_before_authentication(auth_server):
    with auth_server.raw() as c:
        assert err(c.command("CLIENT", "ID")) == \
            "NOAUTH Authentication required."
        # Unknown commands are reported as such, as Redis does.
        assert err(c.command("NOPE")) == \
            "ERR unknown command 'NOPE', with args beginning with: "
        assert err(c.command("AUTH", "other", PASSWORD)) == WRONGPASS
    # QUIT works before authentication.
    with auth_server.raw() as c:
        assert c.command("QUIT") == "OK"
        assert c.at_eof()


@redis72
def test_hello_before_authentication(auth_server):
    with auth_server.raw() as c:
        assert err(c.command("HELLO", "2")) == \
            "NOAUTH HELLO must be called with the client already " \
            "authenticated, otherwise the HELLO <proto> AUTH <user> <pass> " \
            "option can be used to authenticate the client and select the " \
            "RESP protocol version at the same time"


def test_removing_the_password_lets_waiting_clients_in(daemon):
    d = daemon(password="s3cret")
    with d.raw() as waiting, d.raw() as admin:
        assert err(waiting.command("PING")) == \
            "NOAUTH Authentication required."
        assert admin.command("AUTH", "s3cret") == "OK"
        assert admin.command("CONFIG", "SET", "requirepass", "") == "OK"
        assert waiting.command("PING") == "PONG"
        assert admin.command("CONFIG", "SET", "requirepass", "s3cret") == \
            "OK"
    with d.raw() as c:
        assert err(c.command("PING")) == "NOAUTH Authentication required."


def test_half_closed_client_gets_every_reply(server):
    n = 20000
    with server.raw() as c:
        c.send(b"*1\r\n$4\r\nPING\r\n" * n)
        c.sock.shutdown(socket.SHUT_WR)
        for _ in range(n):
            assert c.read_raw_line() == b"+PONG"
        assert c.at_eof()


def test_command_list_filters(server):
    with server.raw() as c:
        assert sorted(c.command("COMMAND", "LIST", "FILTERBY", "PATTERN",
                                "fl*")) == [b"flushall", b"flushdb"]
        assert len(c.command("COMMAND", "LIST", "FILTERBY", "ACLCAT",
                             "connection")) >= 6


def test_info_sections(server):
    with server.raw() as c:
        everything = c.command("INFO").decode()
        assert "\r\nloading:0\r\n" in everything
        assert "# Memory\r\nused_memory:" in everything
        assert "cmdstat_" not in everything
        stats = c.command("INFO", "commandstats").decode()
        assert stats.startswith("# Commandstats\r\n")
        assert "cmdstat_ping:calls=" in stats
        assert "# Server" not in stats


@pytest.mark.cf
def test_keyspace_counts_and_wording(server):
    with server.raw() as c:
        assert c.command("SELECT", "5") == "OK"
        assert c.command("FLUSHALL") == "OK"
        for key in ("a", "b", b"c\0c"):
            assert c.command("CF.RESERVE", key, 100) == "OK"
        assert c.command("SCAN", "0", "COUNT", "1000", "MATCH", "a", "TYPE",
                         "MBbloomCF") == [b"0", [b"a"]]
        # EXISTS counts a key each time it is named.
        assert c.command("EXISTS", "a", "b", "b", "zz") == 3
        assert c.command("UNLINK", "zz") == 0
        assert err(c.command("RENAME", "nope", "x")) == "ERR no such key"
        assert c.command("SELECT", "6") == "OK"
        assert c.command("CF.RESERVE", "a", 100) == "OK"
        keyspace = c.command("INFO", "keyspace").decode()
        assert "db5:keys=3,expires=0,avg_ttl=0\r\n" in keyspace
        assert "db6:keys=1,expires=0,avg_ttl=0\r\n" in keyspace
        assert c.command("FLUSHALL") == "OK"
