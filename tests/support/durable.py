"""What the durability suites share: the failing, recording disk
(tests/fault/fsfault.c, preloaded into the daemon) and the check that
acknowledged items are there."""

import os

import pytest
import redis

from support.proc import wait_until


def fsfault_env(**vars):
    """The environment of a daemon on the preloaded disk, with vars set
    (CUCKOOD_FSFAULT: the control file; CUCKOOD_FSREC: the record). Skips
    the test when the library is not built (run through ctest)."""
    lib = os.environ.get("CUCKOOD_FSFAULT_LIB")
    if not lib:
        pytest.skip("CUCKOOD_FSFAULT_LIB is not set (run through ctest)")
    env = dict(os.environ)
    env["LD_PRELOAD"] = lib
    env.update(vars)
    # The library stands for the disk and is not instrumented: a
    # sanitized daemon must accept it before its runtime.
    env["ASAN_OPTIONS"] = ":".join(filter(None, [
        env.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))
    return env


def missing(c, pairs):
    """The (key, item) pairs of pairs the server does not hold (all of a
    key's when the key is not there)."""
    by_key = {}
    for key, item in pairs:
        by_key.setdefault(key, []).append(item)
    out = []
    for key, items in by_key.items():
        for k in range(0, len(items), 1000):
            part = items[k:k + 1000]
            try:
                got = c.execute_command("CF.MEXISTS", key, *part)
            except redis.ResponseError:
                got = [0] * len(part)
            out += [(key, x) for x, g in zip(part, got) if g != 1]
    return out


def bgsave(c):
    """BGSAVE, waited for: INFO's rdb_last_bgsave_status ("ok", "err")."""
    c.execute_command("BGSAVE")
    wait_until(lambda: c.info("persistence")["rdb_bgsave_in_progress"] == 0,
               what="the BGSAVE")
    return c.info("persistence")["rdb_last_bgsave_status"]
