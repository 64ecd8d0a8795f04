"""Differential tests of the key commands cuckood already has: the same
sequence to cuckood and to redis-server with the module, replies compared
in RESP2 and RESP3."""

import pytest

from support.diff import only_cuckood, pair_fixture

pytestmark = only_cuckood


pair = pair_fixture()


def test_del_exists_type_rename(pair):
    pair.same("FLUSHALL")
    pair.same("CF.ADD", "a", "x")
    pair.same("CF.ADD", "b", "y")
    pair.same("EXISTS", "a", "b", "nope")
    # TYPE of a filter differs by design: the daemon answers RedisBloom's
    # MBbloomCF, the module its own type name (it loads beside RedisBloom).
    assert pair.both("TYPE", "a") == ("MBbloomCF", "cuckoo-cf")
    pair.same("TYPE", "nope")
    pair.same("RENAME", "a", "c")
    pair.same("RENAME", "nope", "d")
    pair.same("CF.EXISTS", "c", "x")
    pair.same("DEL", "c", "b", "nope")
    pair.same("DBSIZE")


def test_arity_and_unknown_errors(pair):
    pair.same("DEL")
    pair.same("RENAME", "a")
    pair.same("NOSUCHCOMMAND", "x")
    pair.same("FLUSHDB", "BOGUS")


def test_differences_are_seen(pair):
    """The comparison itself can fail: a reply that differs is caught."""
    pair.same("CF.ADD", "k", "x")
    ours, theirs = pair.both("CF.EXISTS", "k", "x")
    assert ours == theirs == 1
    with pytest.raises(AssertionError):
        pair.ours.client().execute_command("CF.ADD", "only-ours", "x")
        pair.same("EXISTS", "only-ours")
