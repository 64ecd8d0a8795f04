"""Every CF command on a key of another type answers WRONGTYPE in the
module, as RedisBloom's do, reads included; the key is left as it was."""

import pytest

from support.resp import RespError

# Each command with arguments that would succeed on a filter or a missing
# key, so that only the key's type can make it fail.
COMMANDS = [
    ("CF.RESERVE", "s", "100"),
    ("CF.ADD", "s", "a"),
    ("CF.ADDNX", "s", "a"),
    ("CF.INSERT", "s", "ITEMS", "a"),
    ("CF.INSERTNX", "s", "ITEMS", "a"),
    ("CF.EXISTS", "s", "a"),
    ("CF.MEXISTS", "s", "a", "b"),
    ("CF.DEL", "s", "a"),
    ("CF.COUNT", "s", "a"),
    ("CF.INFO", "s"),
    ("CF.SCANDUMP", "s", "0"),
    ("CF.LOADCHUNK", "s", "1", "x"),
    ("CF.LOADCHUNK", "s", "2", "x"),
    ("CF.COMPACT", "s"),
    ("CF.DEBUG", "s"),
]


@pytest.mark.parametrize("cmd", COMMANDS, ids=lambda c: " ".join(c[:3]))
def test_other_type_is_wrongtype(servers, cmd):
    r = servers().raw()
    assert r.command("SET", "s", "v") == "OK"
    reply = r.command(*cmd)
    assert isinstance(reply, RespError), reply
    assert reply.text.startswith("WRONGTYPE Operation against a key holding "
                                 "the wrong kind of value"), reply.text
    assert r.command("GET", "s") == b"v"


def test_every_cf_command_is_listed(servers):
    """A CF command added later must join the list above."""
    r = servers().raw()
    names = {n.decode().lower() if isinstance(n, bytes) else n.lower()
             for n in r.command("COMMAND", "LIST", "FILTERBY", "PATTERN",
                                "cf.*")}
    listed = {c[0].lower() for c in COMMANDS}
    assert names <= listed, names - listed
